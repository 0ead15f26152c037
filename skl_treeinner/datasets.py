"""Data sets with a known ground truth, to check feature selection against.

The generators return the features, the target and a boolean mask of the
features the target truly depends on, so that any score of the features can be
judged by how well it ranks the relevant ones first (ROC AUC of the scores
against the mask, as in paper 000, Sec. 4).

- :func:`make_paper_simulation`: the simulated data of paper 000, Sec. 4.1.
- :func:`make_semi_synthetic`, :func:`load_semi_synthetic`: paper 000's
  semi-synthetic protocol (Sec. 4.1, "Genomic ChIP Dataset") applied to any
  real feature matrix, or to scikit-learn's bundled data sets.
- :func:`make_cardinality_simulation`: the null and power cases of paper 003,
  Sec. 5 (categorical noise with 10 to 100 levels).
- :func:`make_unbiased_gain_example`: Example 1 of paper 002, Sec. 4.2.

Every generator is seeded by ``random_state`` and returns ``X, y, relevant``.
"""

from __future__ import annotations

import numbers
import sys

import numpy as np
from scipy import sparse
from sklearn.utils import check_random_state

from ._optional import import_optional

__all__ = [
    "load_semi_synthetic",
    "make_cardinality_simulation",
    "make_paper_simulation",
    "make_semi_synthetic",
    "make_unbiased_gain_example",
]

_TASKS = ("regression", "classification")


def make_paper_simulation(task="regression", n_samples=2000, random_state=None):
    """Make the simulated data of paper 000 (Sec. 4.1) as its published code does.

    Fifty independent discrete features; feature ``j`` (0-based) is uniform on
    {0, 1, ..., j + 1}, so the noise features (most of them) take many more
    distinct values than the relevant ones, the case where in-sample
    split-gain importance is biased toward noise. Five relevant features
    are drawn at random from the first ten. Every feature is min-max scaled
    to [0, 1], and with ``m`` the mean of the five scaled relevant features:

    - ``task="classification"``: ``P(y = 1 | x) = exp(m) / (exp(m) + exp(-m))``,
      that is ``sigmoid(2 m)``;
    - ``task="regression"``: ``y = m + eps`` with
      ``eps ~ Normal(0, sd = 100 * Var(m))``.

    Parameters
    ----------
    task : {"regression", "classification"}, default="regression"
        Which target to generate.
    n_samples : int, default=2000
        Number of rows. The paper uses 1000 to fit and 1000 to score on.
    random_state : int, RandomState instance or None, default=None
        Seeds the features, the choice of relevant features and the target.

    Returns
    -------
    X : ndarray of shape (n_samples, 50), float64
        Scaled features, each in [0, 1].
    y : ndarray of shape (n_samples,)
        Float64 target for regression, int64 labels in {0, 1} for
        classification.
    relevant : ndarray of shape (50,), bool
        True for the five features the target depends on.

    Raises
    ------
    ValueError
        If ``task`` is not one of the two tasks or ``n_samples < 2``.

    Notes
    -----
    This follows the authors' code (``04_generate_all_simulation_data.ipynb``
    of https://github.com/nalzok/TreeInner), which differs from the paper's
    text in two ways we keep: the noise's *standard deviation* is
    ``100 * Var(m)`` (the text says variance, and the noise is far louder
    than the text suggests), and the features are min-max scaled before ``m``
    is taken (the text divides by j).

    Two deliberate differences from the code, both immaterial:

    - Scaling. The code fits ``MinMaxScaler`` on the training half and applies
      it to both halves. Here every feature is divided by its known range
      ``j + 1`` (its minimum is 0). The two agree whenever the training rows
      contain each feature's smallest and largest value, which with 1000
      rows fails with probability below 1e-8 per data set. Scaling by the
      known range makes the rows exchangeable, so any split of the
      returned rows into training and scoring parts reproduces the paper's
      setting.
    - ``Var(m)`` is the sample variance of ``m`` (``np.var``, ddof=0) over all
      ``n_samples`` rows, where the code takes it separately over each half
      of 1000 rows.

    Random numbers come from :func:`sklearn.utils.check_random_state`, so the
    data differ from the authors' files for the same seed.

    References
    ----------
    Y. Sun, "Individualized and Global Feature Attributions for Gradient
    Boosted Trees in the Presence of ℓ2 Regularization", AISTATS 2023,
    Sec. 4.1 ("Simulated Dataset") and Table 4. The design is from
    X. Li et al., "A Debiased MDI Feature Importance Measure for Random
    Forests", NeurIPS 2019.

    Examples
    --------
    >>> from skl_treeinner.datasets import make_paper_simulation
    >>> X, y, relevant = make_paper_simulation("classification", random_state=0)
    >>> X.shape, y.shape, int(relevant.sum()), bool(relevant[10:].any())
    ((2000, 50), (2000,), 5, False)
    >>> sorted(set(y.tolist()))
    [0, 1]
    >>> float(X.min()), float(X.max())
    (0.0, 1.0)
    """
    _check_task(task)
    n_samples = int(n_samples)
    if n_samples < 2:
        raise ValueError(
            f"n_samples={n_samples} is too small; the noise level needs the "
            "variance of the signal over at least 2 rows."
        )
    rng = check_random_state(random_state)
    n_features, n_relevant, pool = 50, 5, 10
    levels = np.arange(n_features) + 2  # feature j takes j + 2 values
    X = np.floor(rng.random_sample((n_samples, n_features)) * levels)
    X /= levels - 1  # min-max scaling by the known range {0, ..., j + 1}
    relevant = np.zeros(n_features, dtype=bool)
    relevant[rng.choice(pool, size=n_relevant, replace=False)] = True
    m = X[:, relevant].mean(axis=1)
    if task == "classification":
        p = 1.0 / (1.0 + np.exp(-2.0 * m))
        y = (rng.random_sample(n_samples) < p).astype(np.int64)
    else:
        y = m + rng.normal(0.0, 100.0 * np.var(m), size=n_samples)
    return X, y, relevant


# --------------------------------------------------------------------------
# Semi-synthetic data: paper 000, Sec. 4.1 ("Genomic ChIP Dataset")
# --------------------------------------------------------------------------

_LOADERS = ("breast_cancer", "diabetes", "digits", "wine")


def _check_task(task):
    if task not in _TASKS:
        raise ValueError(
            f"task={task!r} is not supported; choose one of {list(_TASKS)}."
        )


def _check_n_relevant(n_relevant):
    if isinstance(n_relevant, bool) or not isinstance(n_relevant, numbers.Integral):
        raise TypeError(
            f"n_relevant must be an int, got {n_relevant!r} "
            f"({type(n_relevant).__name__}); pass the number of relevant "
            "features, e.g. n_relevant=5."
        )
    return int(n_relevant)


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
      ``X_out`` as noise. :func:`load_semi_synthetic` drops them instead.

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
    _check_task(task)
    n_relevant = _check_n_relevant(n_relevant)
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


def load_semi_synthetic(name, *, task="regression", n_relevant=5, random_state=None):
    """Load a scikit-learn data set through the semi-synthetic protocol of paper 000.

    Reads the features of one of the data sets bundled with scikit-learn (no
    download) and passes them to :func:`make_semi_synthetic`: random
    relevant columns kept as they are, every other column permuted
    independently, and a new target drawn from the relevant columns as the
    paper's code does (Sec. 4.1, "Genomic ChIP Dataset"). The data set's own
    target is discarded.

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
        :func:`make_semi_synthetic` does for ``task`` and ``n_relevant``.
    TypeError
        If ``n_relevant`` is not an int.

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

    if name not in _LOADERS:
        raise ValueError(
            f"Unknown data set name={name!r}; choose one of {list(_LOADERS)} "
            "(scikit-learn's bundled data sets), or pass your own matrix to "
            "make_semi_synthetic."
        )
    X = np.asarray(getattr(sk_datasets, f"load_{name}")().data, dtype=np.float64)
    X = X[:, X.min(axis=0) < X.max(axis=0)]
    return make_semi_synthetic(
        X, task=task, n_relevant=n_relevant, random_state=random_state
    )


# --------------------------------------------------------------------------
# High-cardinality noise: paper 003, Sec. 5, and paper 002, Sec. 4.2
# --------------------------------------------------------------------------

_CASES = ("null", "power")
_LEVELS = (10, 20, 50, 100)


def _check_n_samples(n_samples):
    if isinstance(n_samples, bool) or not isinstance(n_samples, numbers.Integral):
        raise TypeError(
            f"n_samples must be an int, got {n_samples!r} ({type(n_samples).__name__})."
        )
    if n_samples < 1:
        raise ValueError(f"n_samples={n_samples} must be at least 1.")
    return int(n_samples)


def make_cardinality_simulation(
    case="null", *, n_samples=6000, alpha=0.2, as_frame=False, random_state=None
):
    """Make the null or power simulation of paper 003 (Sec. 5).

    Five independent features: ``x0 ~ Normal(0, 1)``, and ``x1 .. x4``
    categorical, uniform over 10, 20, 50 and 100 levels (coded 0, 1, ...).
    The binary target is

    - ``case="null"`` (Sec. 5.1): ``y ~ Bernoulli(0.5)``, independent of every
      feature, so no feature is relevant;
    - ``case="power"`` (Sec. 5.2): ``y ~ Bernoulli(0.5 + alpha)`` when
      ``x1`` is in {0, ..., 4} and ``Bernoulli(0.5 - alpha)`` when ``x1`` is in
      {5, ..., 9}, so only ``x1`` is relevant.

    Split-gain importance of a boosted model fitted on these data favours
    ``x3`` and ``x4`` (many levels, many candidate splits) though they are
    noise; an out-of-sample score should give them about zero.

    Parameters
    ----------
    case : {"null", "power"}, default="null"
        Which target to generate.
    n_samples : int, default=6000
        Number of rows (6000 in the paper).
    alpha : float, default=0.2
        Effect size of the power case, in (0, 0.5] (0.2 in the paper).
        Ignored by the null case.
    as_frame : bool, default=False
        If True, return a pandas DataFrame with columns ``x0 .. x4``, where
        ``x1 .. x4`` have the ``category`` dtype (categories ``0 .. k - 1``,
        all listed even if a level happens not to be drawn), ready for
        XGBoost's ``enable_categorical=True``, LightGBM, or
        HistGradientBoosting's ``categorical_features="from_dtype"``.
    random_state : int, RandomState instance or None, default=None
        Seeds the features and the target. The same seed gives the same
        values with and without ``as_frame``.

    Returns
    -------
    X : ndarray of shape (n_samples, 5), float64, or pandas.DataFrame
        ``x0`` then the integer codes of ``x1 .. x4``.
    y : ndarray of shape (n_samples,), int64
        Labels in {0, 1}.
    relevant : ndarray of shape (5,), bool
        All False for the null case; True for ``x1`` only in the power case.

    Raises
    ------
    ValueError
        If ``case`` is unknown, ``n_samples < 1``, or ``alpha`` is not in
        (0, 0.5] for the power case.
    TypeError
        If ``n_samples`` is not an int.
    ImportError
        If ``as_frame=True`` and pandas is not installed.

    Notes
    -----
    The paper (following Strobl et al., 2007) does not say how the
    categories are labelled; the power case's rule only needs ``x1``'s
    levels to be 0, ..., 9, which is the coding used here for every
    categorical feature. With ``as_frame=False`` the codes are floats, so a
    model sees them as ordered numbers (split by thresholds), not as
    categories.

    References
    ----------
    A. I. Adler and A. Painsky, "Feature Importance in Gradient Boosting Trees
    with Cross-Validation Feature Selection", Entropy 24(5), 2022, Sec. 5.1
    (null case) and Sec. 5.2 (power case). The design is from C. Strobl et
    al., "Bias in random forest variable importance measures: Illustrations,
    sources and a solution", BMC Bioinformatics 8, 2007.

    Examples
    --------
    >>> from skl_treeinner.datasets import make_cardinality_simulation
    >>> X, y, relevant = make_cardinality_simulation("power", random_state=0)
    >>> X.shape, y.shape, relevant.tolist()
    ((6000, 5), (6000,), [False, True, False, False, False])
    >>> [len(set(X[:, j].tolist())) for j in range(1, 5)]
    [10, 20, 50, 100]
    >>> X, y, _ = make_cardinality_simulation(as_frame=True, random_state=0)
    >>> [str(dtype) for dtype in X.dtypes]
    ['float64', 'category', 'category', 'category', 'category']
    """
    if case not in _CASES:
        raise ValueError(
            f"case={case!r} is not supported; choose one of {list(_CASES)}."
        )
    n_samples = _check_n_samples(n_samples)
    if case == "power" and not 0.0 < alpha <= 0.5:
        raise ValueError(
            f"alpha={alpha!r} is out of range for the power case; "
            "P(y = 1) = 0.5 +/- alpha must be a probability and differ from "
            "0.5, so choose 0 < alpha <= 0.5 (the paper uses 0.2)."
        )
    pd = (
        import_optional("pandas", extra="pandas", purpose="as_frame=True")
        if as_frame
        else None
    )
    rng = check_random_state(random_state)
    levels = np.array(_LEVELS)
    x0 = rng.standard_normal(n_samples)
    codes = np.floor(rng.random_sample((n_samples, levels.size)) * levels)
    codes = codes.astype(np.int64)
    relevant = np.zeros(1 + levels.size, dtype=bool)
    if case == "null":
        p = np.full(n_samples, 0.5)
    else:
        relevant[1] = True
        p = np.where(codes[:, 0] <= 4, 0.5 + alpha, 0.5 - alpha)
    y = (rng.random_sample(n_samples) < p).astype(np.int64)
    if not as_frame:
        return np.column_stack([x0, codes.astype(np.float64)]), y, relevant
    columns = {"x0": x0}
    for j, k in enumerate(_LEVELS):
        columns[f"x{j + 1}"] = pd.Categorical.from_codes(
            codes[:, j], categories=np.arange(k)
        )
    return pd.DataFrame(columns), y, relevant


def make_unbiased_gain_example(n_samples=1000, *, random_state=None):
    """Make Example 1 of paper 002 (Sec. 4.2): a weak binary signal among noise.

    Three independent features: ``x1`` binary, ``x2`` categorical with 6
    equally likely levels (coded 0, ..., 5) and ``x3 ~ Normal(0, 1)``; the
    target is ``y = 0.1 * x1 + eps`` with ``eps ~ Normal(0, 1)``. Only ``x1``
    is relevant, yet in-sample gain importance ranks ``x2`` and ``x3`` (more
    candidate splits) above it; the paper's unbiased gain and out-of-sample
    TreeInner should not.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of rows. The paper does not give it; its Figure 1 shows 1000
        repetitions, which is not the number of rows.
    random_state : int, RandomState instance or None, default=None
        Seeds the features and the noise.

    Returns
    -------
    X : ndarray of shape (n_samples, 3), float64
        Columns ``x1`` (values 0 and 1), ``x2`` (integer codes 0 .. 5) and
        ``x3``.
    y : ndarray of shape (n_samples,), float64
        Regression target.
    relevant : ndarray of shape (3,), bool
        ``[True, False, False]``.

    Raises
    ------
    ValueError
        If ``n_samples < 1``.
    TypeError
        If ``n_samples`` is not an int.

    Notes
    -----
    The paper leaves three choices open, made here as follows: ``x1`` is
    Bernoulli(0.5) on {0, 1}; ``x2``'s six levels are coded 0, ..., 5 and
    returned as numbers (a model splits them by thresholds; wrap the column
    in a categorical dtype for native categorical splits); ``n_samples``
    defaults to 1000.

    References
    ----------
    Z. Zhang, T. Zhang and J. Li, "Unbiased Gradient Boosting Decision Tree
    with Unbiased Feature Importance", IJCAI 2023, Sec. 4.2, Example 1 and
    Figure 1.

    Examples
    --------
    >>> from skl_treeinner.datasets import make_unbiased_gain_example
    >>> X, y, relevant = make_unbiased_gain_example(random_state=0)
    >>> X.shape, y.shape, relevant.tolist()
    ((1000, 3), (1000,), [True, False, False])
    >>> sorted(set(X[:, 0].tolist())), sorted(set(X[:, 1].tolist()))
    ([0.0, 1.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
    """
    n_samples = _check_n_samples(n_samples)
    rng = check_random_state(random_state)
    x1 = (rng.random_sample(n_samples) < 0.5).astype(np.float64)
    x2 = np.floor(rng.random_sample(n_samples) * 6.0)
    x3 = rng.standard_normal(n_samples)
    y = 0.1 * x1 + rng.standard_normal(n_samples)
    relevant = np.array([True, False, False])
    return np.column_stack([x1, x2, x3]), y, relevant
