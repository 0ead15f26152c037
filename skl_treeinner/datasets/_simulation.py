"""Fully simulated data: papers 000 (Sec. 4.1), 003 (Sec. 5) and 002 (Example 1)."""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import validate_params

from .._utils._optional import import_optional
from ._checks import RANDOM_STATE, check_n_samples, check_option, check_task

__all__ = [
    "make_cardinality_simulation",
    "make_paper_simulation",
    "make_unbiased_gain_example",
]

# --------------------------------------------------------------------------
# Paper 000, Sec. 4.1 ("Simulated Dataset")
# --------------------------------------------------------------------------


@validate_params(
    {
        # task and n_samples: check_task and check_n_samples, in the body.
        "random_state": RANDOM_STATE,
    },
    prefer_skip_nested_validation=True,
)
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
    TypeError
        If ``n_samples`` is not an int (a float is never rounded).
    sklearn.utils._param_validation.InvalidParameterError
        If ``random_state`` is not an int in [0, 2**32 - 1], a RandomState
        instance or None. It is both a ``ValueError`` and a ``TypeError``.

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
    check_task(task)
    n_samples = check_n_samples(
        n_samples,
        minimum=2,
        reason="; the noise level needs the variance of the signal over at least "
        "2 rows",
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
# High-cardinality noise: paper 003, Sec. 5, and paper 002, Sec. 4.2
# --------------------------------------------------------------------------

_CASES = ("null", "power")
_LEVELS = (10, 20, 50, 100)


@validate_params(
    {
        # case and n_samples: check_option and check_n_samples, in the body;
        # alpha's range only applies to the power case, checked there too.
        "alpha": [Real],
        "as_frame": ["boolean"],
        "random_state": RANDOM_STATE,
    },
    prefer_skip_nested_validation=True,
)
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
        Ignored by the null case, where it must still be a real number.
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
    sklearn.utils._param_validation.InvalidParameterError
        If ``alpha`` is not a real number (whatever the case), ``as_frame`` is
        not a bool, or ``random_state`` is not an int in [0, 2**32 - 1], a
        RandomState instance or None. It is both a ``ValueError`` and a
        ``TypeError``.
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
    check_option("case", case, _CASES)
    n_samples = check_n_samples(n_samples)
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


@validate_params(
    {
        # n_samples: check_n_samples, in the body.
        "random_state": RANDOM_STATE,
    },
    prefer_skip_nested_validation=True,
)
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
    sklearn.utils._param_validation.InvalidParameterError
        If ``random_state`` is not an int in [0, 2**32 - 1], a RandomState
        instance or None. It is both a ``ValueError`` and a ``TypeError``.

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
    n_samples = check_n_samples(n_samples)
    rng = check_random_state(random_state)
    x1 = (rng.random_sample(n_samples) < 0.5).astype(np.float64)
    x2 = np.floor(rng.random_sample(n_samples) * 6.0)
    x3 = rng.standard_normal(n_samples)
    y = 0.1 * x1 + rng.standard_normal(n_samples)
    relevant = np.array([True, False, False])
    return np.column_stack([x1, x2, x3]), y, relevant
