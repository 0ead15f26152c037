"""The cut-off: which features to keep, from fitted scores alone.

The selection is a pure function of the fitted statistics (the scores the
test reads, :func:`tested_scores`, their standard errors and p-values) and the
selector's ``alpha``, ``control``, ``threshold`` and ``max_features``, so that
:class:`~skl_treeinner.TreeInnerSelector` re-selects on ``set_params`` without
refitting (as ``SelectFromModel`` does for its threshold). Beside it: the
warning that a selection kept nothing (:func:`warn_if_empty`). The command
line reads its cut-off options with ``_cli_options``.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from scipy.stats import false_discovery_control
from sklearn.utils._param_validation import (
    Interval,
    RealNotInt,
    StrOptions,
    validate_parameter_constraints,
)

__all__ = [
    "ALPHA_CONSTRAINTS",
    "CURVE_RULES",
    "CUTOFF_STATISTICS",
    "CONTROLS",
    "CONTROL_CONSTRAINTS",
    "adjusted_pvalues",
    "adjusts",
    "check_control",
    "describe_rule",
    "check_alpha",
    "check_cutoff",
    "MAX_FEATURES_CONSTRAINTS",
    "THRESHOLD_CONSTRAINTS",
    "rank",
    "warn_if_empty",
    "resolve_max_features",
    "select",
    "t_statistics",
    "tested_scores",
    "threshold_value",
]

#: The fitted statistics the cut-off reads (a selector's attributes of these
#: names; also kept per repeat with ``n_repeats``).
CUTOFF_STATISTICS = (
    "scores_",
    "null_scores_",
    "scores_se_",
    "pvalues_",
    "group_scores_",
    "group_null_scores_",
    "group_scores_se_",
    "_group_sum_pvalues",
)

#: The rules ``max_features`` may name to choose k from a fitted refit curve
#: (:mod:`skl_treeinner._stats._refit_curve`).
CURVE_RULES = ("best", "1se")

#: What ``alpha`` may be: a significance level in (0, 1), or None (no test).
ALPHA_CONSTRAINTS = [Interval(Real, 0, 1, closed="neither"), None]
#: What ``threshold`` may be: a number, "mean", "median", "1.25*mean", a callable.
THRESHOLD_CONSTRAINTS = [Real, str, callable]
#: What ``max_features`` may be: a count, a fraction in (0, 1], a callable on X.
MAX_FEATURES_CONSTRAINTS = [
    StrOptions(set(CURVE_RULES)),
    Interval(Integral, 1, None, closed="left"),  # 0 would keep nothing
    Interval(RealNotInt, 0, 1, closed="right"),
    callable,
    None,
]


#: The errors ``alpha`` can bound when features are kept by their p-values,
#: and what each promises about the features with no effect on new rows.
CONTROLS = {
    "per_feature": "each is kept with probability at most alpha",
    "expected_false": (
        "on average at most one is kept, whatever the number of features "
        "(each tested at min(alpha, 1/n_features))"
    ),
    "family_wise": "the probability of keeping any is at most alpha (Holm)",
    "false_discovery": (
        "their expected share among the kept features is at most alpha "
        "(Benjamini-Hochberg)"
    ),
}
#: What ``control`` may be.
CONTROL_CONSTRAINTS = [StrOptions(set(CONTROLS))]


def check_control(control):
    """Check ``control`` as ``fit`` does; a value set after fit is checked at use."""
    validate_parameter_constraints(
        {"control": CONTROL_CONSTRAINTS},
        {"control": control},
        caller_name="TreeInnerSelector",
    )
    return control


def adjusted_pvalues(pvalues, control: str, alpha: float) -> np.ndarray:
    """P-values adjusted for the number of features, as ``control`` asks.

    A feature passes the test when its adjusted p-value is below ``alpha``:

    - ``"per_feature"``: the p-values themselves;
    - ``"expected_false"``: ``p · max(1, alpha · m)`` for m features, below
      ``alpha`` exactly when ``p < min(alpha, 1/m)``: at most ``m0 / m ≤ 1``
      false picks expected among the ``m0`` features with no effect (the
      per-family error rate), and never a looser test than ``alpha`` per
      feature;
    - ``"family_wise"``: Holm's step-down adjustment (the probability of any
      false pick is at most ``alpha``, under any dependence);
    - ``"false_discovery"``: Benjamini-Hochberg's
      (:func:`scipy.stats.false_discovery_control`).

    Adjusted values are capped at 1; a missing (NaN) p-value counts as a
    tested feature with p = 1 and stays NaN. The guarantees need each p-value
    of a feature with no effect to be valid at the level it is compared with
    (``alpha / m`` or ``1/m`` for many features): far in the tail, where the
    t-test's calibration is least known (see "Many columns" in the user
    guide).

    Examples
    --------
    >>> import numpy as np
    >>> p = np.array([0.001, 0.01, 0.03, 0.5])
    >>> adjusted_pvalues(p, "family_wise", 0.05).tolist()
    [0.004, 0.03, 0.06, 0.5]
    >>> adjusted_pvalues(p, "expected_false", 0.05).tolist()  # m=4: no change
    [0.001, 0.01, 0.03, 0.5]
    """
    p = np.asarray(pvalues, dtype=np.float64)
    m = p.size
    if control == "per_feature" or m == 0:
        return p.copy()
    missing = np.isnan(p)
    if missing.any():  # counted as tested and never kept: conservative
        adjusted = adjusted_pvalues(np.where(missing, 1.0, p), control, alpha)
        adjusted[missing] = np.nan
        return adjusted
    if control == "expected_false":
        return np.minimum(1.0, p * max(1.0, alpha * m))
    if control == "false_discovery":
        return false_discovery_control(p, method="bh")
    if control == "family_wise":
        order = np.argsort(p, kind="mergesort")
        steps = p[order] * (m - np.arange(m))
        adjusted = np.empty(m)
        adjusted[order] = np.minimum(1.0, np.maximum.accumulate(steps))
        return adjusted
    raise ValueError(f"control={control!r} is not one of {list(CONTROLS)}.")


def describe_rule(control: str, alpha, n_features: int) -> str:
    """Say in a few words which p-values pass: the rule the outputs print.

    Examples
    --------
    >>> describe_rule("expected_false", 0.05, 1000)
    'p < 0.001 = min(0.05, 1/1000): at most 1 false pick expected'
    >>> describe_rule("expected_false", 0.05, 12)  # up to 1/alpha: per feature
    'p < 0.05'
    >>> describe_rule("family_wise", 0.05, 1000)
    'Holm-adjusted p < 0.05'
    """
    if alpha is None:
        return "no test"
    if not adjusts(control, alpha, n_features):
        return f"p < {alpha:g}"
    if control == "expected_false":
        level = min(alpha, 1 / max(n_features, 1))
        return (
            f"p < {level:.3g} = min({alpha:g}, 1/{n_features}): at most 1 false "
            "pick expected"
        )
    names = {"family_wise": "Holm", "false_discovery": "Benjamini-Hochberg"}
    return f"{names[control]}-adjusted p < {alpha:g}"


def adjusts(control: str, alpha, n_features: int) -> bool:
    """Whether ``control`` changes any p-value for ``n_features`` features.

    ``"per_feature"`` never does, nor ``"expected_false"`` up to ``1/alpha``
    features; with ``alpha=None`` there is no test. Outputs show the adjusted
    p-values only where this is true.

    Examples
    --------
    >>> adjusts("expected_false", 0.05, 20), adjusts("expected_false", 0.05, 21)
    (False, True)
    """
    if alpha is None or control == "per_feature":
        return False
    return not (control == "expected_false" and alpha * n_features <= 1)


def check_alpha(alpha):
    """Check ``alpha`` as ``fit`` does; a value set after fit is checked at use."""
    validate_parameter_constraints(
        {"alpha": ALPHA_CONSTRAINTS}, {"alpha": alpha}, caller_name="TreeInnerSelector"
    )
    return alpha


def threshold_value(scores, threshold) -> float:
    """Read ``threshold`` as a number, as SelectFromModel does.

    A string is ``"mean"``, ``"median"`` or a scaled one such as
    ``"1.25*mean"`` of ``scores``; a callable receives ``scores``.
    """
    if callable(threshold):
        value = threshold(scores)
    elif isinstance(threshold, str):
        text = threshold.replace(" ", "")
        scale, star, reference = text.rpartition("*")
        references = {"mean": np.mean, "median": np.median}
        if reference not in references:
            raise ValueError(
                f"threshold={threshold!r} is not understood; use a number, "
                "'mean', 'median' or a scaled one such as '1.25*mean'."
            )
        try:
            factor = float(scale) if star else 1.0
        except ValueError as e:
            raise ValueError(
                f"threshold={threshold!r}: the scale {scale!r} is not a number; "
                "write it like '1.25*mean'."
            ) from e
        value = factor * references[reference](scores)
    else:
        value = threshold
    value = float(value)
    if np.isnan(value):
        raise ValueError(f"threshold evaluated to NaN from {threshold!r}.")
    return value


def resolve_max_features(
    max_features, n_features: int, X=None, *, unit="features"
) -> int | None:
    """Turn ``max_features`` into a count of features (``None``: no limit).

    A fraction keeps ``max(1, int(fraction * n_features))``; a callable is
    called on ``X`` (so it needs the fitted X) and must return an int in
    [0, n_features]. ``unit`` names what is counted in messages (``"feature
    groups"`` with feature groups).
    """
    k = max_features
    if k is None or isinstance(k, str):  # "best", "1se": the refit curve's k
        return None
    if callable(k):
        k = k(X)
        if not isinstance(k, Integral) or not 0 <= k <= n_features:
            raise ValueError(
                f"max_features(X) must return an int in [0, {n_features}], got {k!r}."
            )
        return int(k)
    if isinstance(k, Real) and not isinstance(k, Integral):
        return max(1, int(k * n_features))
    if k > n_features:
        raise ValueError(
            f"max_features={k} is larger than the {n_features} {unit} of X; "
            f"pass at most {n_features}, a fraction in (0, 1], or None."
        )
    return int(k)


def check_cutoff(threshold, max_features, X) -> None:
    """Refuse, before any fit, a threshold or max_features that cannot apply to X.

    A string threshold must be readable (``threshold_value``), an int
    ``max_features`` at most X's number of columns (where X says it: arrays,
    data frames, sparse matrices, DMatrix, Dask collections with known
    columns). Callables are left to the fit, which calls them on the scores
    or on X.
    """
    if isinstance(threshold, str):
        threshold_value(np.zeros(1), threshold)
    if isinstance(max_features, Integral) and not isinstance(max_features, bool):
        n_features = _n_columns(X)
        if n_features is not None:
            resolve_max_features(max_features, n_features)


def _n_columns(X):
    """X's number of columns where X knows it without computing, else None."""
    num_col = getattr(X, "num_col", None)  # xgboost.DMatrix
    if callable(num_col):
        return int(num_col())
    columns = getattr(X, "columns", None)
    if columns is not None and hasattr(X, "shape"):
        return len(columns)
    shape = getattr(X, "shape", None)
    if shape is None or len(shape) != 2:
        return None
    try:
        return int(shape[1])
    except (TypeError, ValueError):  # a Dask array of unknown width
        return None


def rank(pvalues, statistics) -> np.ndarray:
    """Rank of each unit by its test, 1 for the best.

    The smallest p-value first; p-values that tie (a float's 0 or 1 far in
    the tails, or units with no spread) by the larger t statistic
    (:func:`t_statistics`), then in column order. This is the order of
    the test itself: with one Student's t for all units, the p-value falls
    as t grows.

    Examples
    --------
    >>> rank([0.01, 0.0, 0.0, 0.5], [2.5, 9.0, 12.0, 0.1]).tolist()
    [3, 2, 1, 4]
    """
    pvalues = np.asarray(pvalues, dtype=np.float64)
    statistics = np.asarray(statistics, dtype=np.float64)
    # NaN p-values (a missing test) rank last, as p = 1.
    order = np.lexsort((-statistics, np.where(np.isnan(pvalues), 2.0, pvalues)))
    ranking = np.empty(order.size, dtype=np.int64)
    ranking[order] = np.arange(1, order.size + 1)
    return ranking


def tested_scores(scores, null_scores=None) -> np.ndarray:
    """Return the score the test and the cut-off read: ``scores - null_scores``.

    Under the test of a column (``null_scores`` given) a unit's score is
    compared with its score resampled; under the test of the model's use
    (``null_scores`` None), with zero.
    """
    scores = np.asarray(scores, dtype=np.float64)
    return scores if null_scores is None else scores - np.asarray(null_scores)


def t_statistics(tested, se) -> np.ndarray:
    """Return the test's t statistic ``tested / se``; 0 where there is no spread.

    A unit with no spread (``se`` 0: every term alike, e.g. a column no tree
    splits on) gives no evidence either way, as its p-value of 1 says.
    """
    tested = np.asarray(tested, dtype=np.float64)
    se = np.asarray(se, dtype=np.float64)
    out = np.zeros_like(tested)
    np.divide(tested, se, out=out, where=se > 0)
    return out


def select(
    values,
    threshold: float,
    max_count: int | None,
    *,
    ranking,
    pvalues=None,
    alpha=None,
) -> np.ndarray:
    """Keep the units whose tested score is above ``threshold``, at most ``max_count``.

    ``values`` are the tested scores (:func:`tested_scores`), kept where
    strictly above ``threshold``. With ``alpha``
    (and ``pvalues``, adjusted by :func:`adjusted_pvalues` where a
    multiple-testing ``control`` is chosen), a unit must also have a
    p-value strictly below ``alpha``. Of the units that pass, the
    ``max_count`` best by ``ranking`` (:func:`rank`, 1 for the best) are
    kept. Returns a boolean mask.
    """
    values = np.asarray(values)
    support = values > threshold
    if alpha is not None:
        support &= np.asarray(pvalues) < alpha
    if max_count is not None:  # the best max_count of those that pass
        passing = np.flatnonzero(support)
        order = passing[np.argsort(np.asarray(ranking)[passing], kind="mergesort")]
        support[order[max_count:]] = False
    return support


def warn_if_empty(mask, *, stacklevel: int) -> None:
    """Warn that ``transform`` keeps no column, when ``mask`` selects none.

    ``stacklevel`` counts from the caller of this function, as
    :func:`warnings.warn` counts from its own caller.
    """
    if not np.any(mask):
        warnings.warn(
            "No features were selected: either the data is too noisy or the "
            "selection test too strict.",
            UserWarning,
            stacklevel=stacklevel + 1,
        )
