"""The semi-synthetic protocol of paper 000 (Sec. 4.1, "Genomic ChIP Dataset")."""

from __future__ import annotations

import sys

import numpy as np
from scipy import sparse
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import validate_params

from ._checks import RANDOM_STATE, check_n_relevant, check_option, check_task

__all__ = ["load_semi_synthetic", "make_semi_synthetic"]

_LOADERS = ("breast_cancer", "diabetes", "digits", "wine")


def _numeric_matrix(X):
    """Check X for the semi-synthetic protocol; return (frame or None, values)."""
    if sparse.issparse(X):
        raise TypeError(
            "X is a sparse matrix; the semi-synthetic protocol permutes whole "
            "columns of a dense matrix. Pass X.toarray()."
        )
    pd = sys.modules.get("pandas")
    if pd is not None and isinstance(X, pd.DataFrame):
        bad = [
            f"{name!r} ({dtype})"
            for name, dtype in X.dtypes.items()
            if not pd.api.types.is_numeric_dtype(dtype)
        ]
        if bad:
            raise ValueError(
                f"X has non-numeric column(s) {', '.join(bad)}; the protocol "
                "min-max scales the relevant features and averages them. Encode "
                "them as numbers first (e.g. sklearn.preprocessing.OrdinalEncoder) "
                "or drop them."
            )
        frame = X
        values = X.to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        frame = None
        values = np.asarray(X)
        if values.dtype.kind not in "biuf":
            raise ValueError(
                f"X has dtype {values.dtype}, not a numeric one; the protocol "
                "min-max scales the relevant features and averages them. Encode "
                "the features as numbers first (e.g. "
                "sklearn.preprocessing.OrdinalEncoder)."
            )
        if values.ndim != 2:
            raise ValueError(
                f"X must be 2-D (n_samples, n_features), got shape {values.shape}; "
                "reshape a single feature with X.reshape(-1, 1)."
            )
        values = values.astype(np.float64, copy=False)
    n_samples, n_features = values.shape
    if n_samples < 2 or n_features < 2:
        raise ValueError(
            f"X has shape {values.shape}; the protocol needs at least 2 rows "
            "(the noise level is a variance) and 2 columns (one relevant, one "
            "noise)."
        )
    finite = np.isfinite(values)
    if not finite.all():
        cols = np.flatnonzero(~finite.all(axis=0))
        names = list(frame.columns[cols]) if frame is not None else cols.tolist()
        raise ValueError(
            f"X has NaN or infinite values in column(s) {names[:10]}"
            f"{' ...' if len(names) > 10 else ''}; the protocol min-max scales "
            "the relevant features and averages them. Impute them first (e.g. "
            "sklearn.impute.SimpleImputer) or drop those rows or columns."
        )
    return frame, values


def _semi_synthetic_target(Z, task, rng):
    """Draw y from the min-max scaled relevant columns Z as the paper's code does."""
    m = Z.mean(axis=1)
    n_samples = Z.shape[0]
    if task == "classification":
        # The code's sigmoid doubles its argument in place, then takes
        # exp(x) / (exp(x) + exp(-x)) = sigmoid(2 x): P(y = 1) = sigmoid(4 m).
        p = 1.0 / (1.0 + np.exp(-4.0 * m))
        return (rng.random_sample(n_samples) < p).astype(np.int64)
    # np.std(y) ** 2 * 100 is passed as the *standard deviation*.
    return m + rng.normal(0.0, 100.0 * np.var(m), size=n_samples)


@validate_params(
    {
        # X: _numeric_matrix (which refuses sparse X, saying what to pass);
        # task and n_relevant: check_task and check_n_relevant (n_relevant's
        # range depends on X), in the body.
        "X": ["array-like", "sparse matrix"],
        "random_state": RANDOM_STATE,
    },
    prefer_skip_nested_validation=True,
)
def make_semi_synthetic(X, *, task="regression", n_relevant=5, random_state=None):
    """Apply the semi-synthetic protocol of paper 000 (Sec. 4.1) to a real matrix.

    The paper's "Genomic ChIP Dataset" turns real features into a data set
    with a known ground truth, keeping the features' real marginal
    distributions and the real dependence among the relevant ones:

    1. ``n_relevant`` columns are drawn at random as the relevant features;
    2. every other column is permuted independently, which breaks its link
       to the relevant columns and to the other noise columns (a noise
       feature can no longer look relevant through correlation);
    3. with ``m`` the row mean of the relevant columns min-max scaled to
       [0, 1], the target is drawn as the authors' code does:

       - ``task="classification"``: ``P(y = 1 | x) = sigmoid(4 m)``;
       - ``task="regression"``: ``y = m + eps`` with
         ``eps ~ Normal(0, sd = 100 * Var(m))``.

    Parameters
    ----------
    X : ndarray or pandas.DataFrame of shape (n_samples, n_features)
        Real, numeric, finite features. A DataFrame comes back as a
        DataFrame with the same columns, dtypes and index; other array-likes
        (polars frames included) are read with :func:`numpy.asarray` and come
        back as an ndarray of the same dtype.
    task : {"regression", "classification"}, default="regression"
        Which target to generate. The original target of the data set plays
        no part.
    n_relevant : int, default=5
        Number of relevant features (5 in the paper). At least 1, at most the
        number of non-constant columns, and fewer than ``n_features`` so that
        at least one noise feature remains.
    random_state : int, RandomState instance or None, default=None
        Seeds the choice of relevant features, the permutations and the
        target.

    Returns
    -------
    X_out : ndarray or pandas.DataFrame of shape (n_samples, n_features)
        Same type as ``X``. Relevant columns are ``X``'s own, row for row; every
        other column holds ``X``'s values in an independent random order.
    y : ndarray of shape (n_samples,)
        Float64 target for regression, int64 labels in {0, 1} for
        classification.
    relevant : ndarray of shape (n_features,), bool
        True for the columns the target depends on.

    Raises
    ------
    TypeError
        If ``X`` is sparse or ``n_relevant`` is not an int.
    ValueError
        If ``task`` is unknown, ``X`` is not 2-D, has fewer than 2 rows or
        columns, non-numeric columns, NaN or infinite values, or if
        ``n_relevant`` is out of range.
    sklearn.utils._param_validation.InvalidParameterError
        If ``X`` is not array-like, or ``random_state`` is not an int in
        [0, 2**32 - 1], a RandomState instance or None. It is both a
        ``ValueError`` and a ``TypeError``.

    See Also
    --------
    load_semi_synthetic : The protocol applied to scikit-learn's bundled data.
    make_paper_simulation : The paper's other (fully simulated) data set.

    Notes
    -----
    This follows the authors' code (``04_generate_all_simulation_data.ipynb``,
    cells "Classification1" and "Regression1", of
    https://github.com/nalzok/TreeInner), which differs from the paper's text
    in two ways we keep:

    - classification uses ``P(y = 1) = sigmoid(4 m)`` (the code's ``sigmoid``
      doubles its argument, then takes ``exp(x) / (exp(x) + exp(-x))``), where
      the text writes ``Logistic(2 m - 1)``;
    - the noise's *standard deviation* is ``100 * Var(m)`` (the text says
      variance).

    Deliberate differences from the code:

    - ``X_out`` keeps ``X``'s units. The code returns the min-max scaled
      features; here scaling is used only to compute ``m``. Tree ensembles
      are invariant to increasing affine maps of a feature (the same rows go
      to the same side of every split), and the real values and column names
      stay readable.
    - The code scales, permutes and draws ``y`` separately for a given
      training and validation file (scaler fitted on the training file). Here
      all rows are processed at once (min, max and ``Var(m)`` over all rows);
      split the returned rows into training and scoring parts afterwards.
    - Constant columns are never drawn as relevant (a constant feature cannot
      carry signal, and min-max scaling divides by its range); they stay in
      ``X_out`` as noise. :func:`~skl_treeinner.datasets.load_semi_synthetic` drops them
      instead.

    Random numbers come from :func:`sklearn.utils.check_random_state`.

    References
    ----------
    Y. Sun, "Individualized and Global Feature Attributions for Gradient
    Boosted Trees in the Presence of ℓ2 Regularization", AISTATS 2023,
    Sec. 4.1 ("Genomic ChIP Dataset"). The protocol is from X. Li et al.,
    "A Debiased MDI Feature Importance Measure for Random Forests",
    NeurIPS 2019.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_wine
    >>> from skl_treeinner.datasets import make_semi_synthetic
    >>> X = load_wine().data
    >>> X_out, y, relevant = make_semi_synthetic(
    ...     X, task="classification", n_relevant=3, random_state=0
    ... )
    >>> X_out.shape, y.shape, int(relevant.sum())
    ((178, 13), (178,), 3)
    >>> bool(np.array_equal(X_out[:, relevant], X[:, relevant]))
    True
    >>> bool(np.array_equal(np.sort(X_out, axis=0), np.sort(X, axis=0)))
    True
    """
    check_task(task)
    n_relevant = check_n_relevant(n_relevant)
    frame, values = _numeric_matrix(X)
    n_samples, n_features = values.shape
    candidates = np.flatnonzero(values.min(axis=0) < values.max(axis=0))
    if not 1 <= n_relevant <= candidates.size or n_relevant >= n_features:
        raise ValueError(
            f"n_relevant={n_relevant} is out of range for X with {n_features} "
            f"columns, {candidates.size} of them non-constant; choose "
            f"1 <= n_relevant <= {min(candidates.size, n_features - 1)} "
            "(relevant features must vary, and at least one noise feature "
            "must remain)."
        )
    rng = check_random_state(random_state)
    relevant = np.zeros(n_features, dtype=bool)
    relevant[rng.choice(candidates, size=n_relevant, replace=False)] = True
    noise = np.flatnonzero(~relevant)
    # One independent uniform permutation per noise column, without a loop
    # over rows: argsort of i.i.d. uniforms along each column.
    order = np.argsort(rng.random_sample((n_samples, noise.size)), axis=0)

    low, high = values[:, relevant].min(axis=0), values[:, relevant].max(axis=0)
    Z = (values[:, relevant] - low) / (high - low)
    y = _semi_synthetic_target(Z, task, rng)

    if frame is None:
        X_out = np.array(X, copy=True)
        X_out[:, noise] = np.take_along_axis(X_out[:, noise], order, axis=0)
    else:
        X_out = frame.copy()
        for k, j in enumerate(noise):  # a loop over columns, not rows
            X_out.isetitem(j, frame.iloc[:, j].array.take(order[:, k]))
    return X_out, y, relevant


@validate_params(
    {
        # name, task and n_relevant: check_option, check_task and
        # check_n_relevant, in the body.
        "random_state": RANDOM_STATE,
    },
    prefer_skip_nested_validation=True,
)
def load_semi_synthetic(name, *, task="regression", n_relevant=5, random_state=None):
    """Load a scikit-learn data set through the semi-synthetic protocol of paper 000.

    Reads the features of one of the data sets bundled with scikit-learn (no
    download) and passes them to
    :func:`~skl_treeinner.datasets.make_semi_synthetic`: random relevant
    columns kept as they are, every other column permuted independently, and a
    new target drawn from the relevant columns as the paper's code does
    (Sec. 4.1, "Genomic ChIP Dataset"). The data set's own target is discarded.

    - ``"breast_cancer"``: 569 rows, 30 features
      (:func:`sklearn.datasets.load_breast_cancer`);
    - ``"diabetes"``: 442 rows, 10 features
      (:func:`sklearn.datasets.load_diabetes`);
    - ``"digits"``: 1797 rows, 61 of its 64 pixels (see Notes)
      (:func:`sklearn.datasets.load_digits`);
    - ``"wine"``: 178 rows, 13 features (:func:`sklearn.datasets.load_wine`).

    Parameters
    ----------
    name : {"breast_cancer", "diabetes", "digits", "wine"}
        Which bundled data set to use.
    task : {"regression", "classification"}, default="regression"
        Which target to generate.
    n_relevant : int, default=5
        Number of relevant features (5 in the paper).
    random_state : int, RandomState instance or None, default=None
        Seeds the choice of relevant features, the permutations and the
        target.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), float64
        The data set's features, noise columns permuted.
    y : ndarray of shape (n_samples,)
        Float64 target for regression, int64 labels in {0, 1} for
        classification.
    relevant : ndarray of shape (n_features,), bool
        True for the columns the target depends on.

    Raises
    ------
    ValueError
        If ``name`` is not one of the four data sets, or as
        :func:`~skl_treeinner.datasets.make_semi_synthetic` does for ``task``
        and ``n_relevant``.
    TypeError
        If ``n_relevant`` is not an int.
    sklearn.utils._param_validation.InvalidParameterError
        If ``random_state`` is not an int in [0, 2**32 - 1], a RandomState
        instance or None. It is both a ``ValueError`` and a ``TypeError``.

    See Also
    --------
    make_semi_synthetic : The protocol, for any numeric matrix.

    Notes
    -----
    Columns that are constant over the whole data set are dropped before
    anything else: digits has three pixels that are always 0 (pixels 0, 32
    and 39 of the 8 x 8 image), so it comes back with 61 of its 64 columns in
    their original order. A constant noise column would be unusable by any
    tree and would get a score of exactly 0 from every method, tying in the
    AUC and favouring methods that score noise negatively or positively for
    no reason. The other three data sets have no constant column.

    ``diabetes`` is read with scikit-learn's default ``scaled=True``
    (mean-centred, scaled columns); any increasing affine map of the columns
    gives the same target and the same trees.

    References
    ----------
    Y. Sun, "Individualized and Global Feature Attributions for Gradient
    Boosted Trees in the Presence of ℓ2 Regularization", AISTATS 2023,
    Sec. 4.1 ("Genomic ChIP Dataset").

    Examples
    --------
    >>> from skl_treeinner.datasets import load_semi_synthetic
    >>> X, y, relevant = load_semi_synthetic("digits", random_state=0)
    >>> X.shape, y.shape, int(relevant.sum())
    ((1797, 61), (1797,), 5)
    >>> X, y, relevant = load_semi_synthetic(
    ...     "breast_cancer", task="classification", random_state=0
    ... )
    >>> X.shape, sorted(set(y.tolist()))
    ((569, 30), [0, 1])
    """
    from sklearn import datasets as sk_datasets

    check_option(
        "name",
        name,
        _LOADERS,
        hint=" (scikit-learn's bundled data sets), or pass your own matrix to "
        "make_semi_synthetic",
    )
    check_task(task)
    check_n_relevant(n_relevant)  # its range is checked once X is read
    X = np.asarray(getattr(sk_datasets, f"load_{name}")().data, dtype=np.float64)
    X = X[:, X.min(axis=0) < X.max(axis=0)]
    return make_semi_synthetic(
        X, task=task, n_relevant=n_relevant, random_state=random_state
    )
