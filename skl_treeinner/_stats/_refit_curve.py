"""The refit curve: how many of the best-ranked features a model needs.

``TreeInnerSelector(max_features="best" | "1se")`` chooses k from a curve of
a refit booster's held-out score against the number k of best-ranked
candidates (features, or feature groups). The curve is honest by
construction (a nested protocol): for every outer split of the selector,

1. the candidates are ranked on that split's **training rows alone**: they
   are split once more (half fitted, half scored, the halves drawn as the
   selector draws its own: by group, in time order or stratified), the
   booster is fitted and the features scored as the selector scores them,
   and those whose tested score is above its threshold are ordered by
   their test (the selector's ``ranking_`` rule);
2. for every k of a grid (:func:`k_grid`), the booster is refitted on the
   split's training rows with the top k candidates' columns (early stopping
   on the split's own carved rows) and scored on the split's held-out rows
   (k = 0: the intercept alone, scikit-learn's ``Dummy*``), in the user's
   class labels (:class:`Decoded`).

The held-out rows of a split are thus never fitted, stopped on or scored
while its ranking is made. The engines run the fits; this module holds
what needs none: the grid, the choice of k, the columns of the top k units,
the scorer and the fitted ``cv_results_``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._cutoff import CURVE_RULES

__all__ = [
    "CURVE_RULES",
    "CurveScoring",
    "Decoded",
    "FrozenPredictions",
    "check_curve_scoring",
    "curve_scorer",
    "choose_k",
    "curve_results",
    "curve_rows",
    "format_curve",
    "score_intercept",
    "score_refit",
    "scoring_name",
    "k_grid",
    "refit_points",
    "prefit_refusal",
    "top_columns",
]


def k_grid(n_candidates: int, *, dense: int = 10, step: float = 1.3) -> np.ndarray:
    """Return the numbers of features a curve is evaluated at.

    Every k from 0 (the intercept alone) to ``dense``, where curves bend,
    then a geometric grid of ratio ``step`` up to ``n_candidates``, which is
    always included: 11 refits per split for 11 to 13 candidates, 15 for
    30, 28 for 1,000 (k = 0 is the intercept alone, no refit).

    Examples
    --------
    >>> k_grid(25).tolist()
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 17, 22, 25]
    >>> k_grid(3).tolist()
    [0, 1, 2, 3]
    """
    n = int(n_candidates)
    ks = list(range(0, min(n, dense) + 1))
    k = dense
    while k < n:
        k = min(n, max(k + 1, int(round(k * step))))
        ks.append(k)
    return np.asarray(sorted(set(ks)), dtype=np.int64)


def choose_k(n_features, mean, se, rule: str) -> int:
    """Return the k a rule keeps, from a curve's mean scores and standard errors.

    ``"best"``: the k of the highest mean (the smallest such k on ties);
    ``"1se"``: the smallest k whose mean is within one standard error of the
    best mean (the one-standard-error rule of Breiman et al., 1984, §3.4.3).

    Examples
    --------
    >>> choose_k([0, 1, 2, 4], [0.0, 0.5, 0.58, 0.6], [0.01, 0.03, 0.03, 0.03], "best")
    4
    >>> choose_k([0, 1, 2, 4], [0.0, 0.5, 0.58, 0.6], [0.01, 0.03, 0.03, 0.03], "1se")
    2
    """
    ks = np.asarray(n_features)
    mean = np.asarray(mean, dtype=np.float64)
    se = np.asarray(se, dtype=np.float64)
    best = int(np.argmax(mean))  # the first of equal maxima: the smallest k
    if rule == "best":
        return int(ks[best])
    if rule == "1se":
        within = np.flatnonzero(mean >= mean[best] - se[best])
        return int(ks[within.min()])
    raise ValueError(f"rule={rule!r} is not one of {CURVE_RULES}.")


def curve_standard_error(results: dict) -> np.ndarray:
    """Return the standard error of each mean: the splits' standard deviation / √splits.

    The splits' held-out rows are disjoint, but their training rows overlap,
    so this understates the error of the mean somewhat (as RFECV's and
    probatus' curves do); it is what the one-standard-error rule compares.
    """
    n_splits = sum(key.startswith("split") for key in results)
    return np.asarray(results["std_test_score"]) / np.sqrt(max(n_splits, 1))


def top_columns(order, k: int, members=None) -> np.ndarray:
    """Return the columns of the top ``k`` units of ``order``, in X's order.

    ``order`` lists unit indices best first: columns, or feature groups
    when ``members`` (the groups' column indices) is given.
    """
    top = np.asarray(order, dtype=np.int64)[: int(k)]
    if members is not None:
        top = (
            np.concatenate([members[g] for g in top])
            if top.size
            else np.empty(0, dtype=np.int64)
        )
    return np.sort(top)


def prefit_refusal(max_features) -> ValueError:
    """Return the error a prefit selector raises for a curve rule, before scoring."""
    return ValueError(
        f"max_features={max_features!r} chooses k from refits of the booster on "
        "training rows its ranking never scored; with prefit=True the selector "
        "fits nothing. Fit with prefit=False, or choose k yourself "
        "(max_features=int)."
    )


def curve_scorer(scoring, classifier: bool, labels=None):
    """Return the scorer of the curve's refits (:func:`scoring_name` names it).

    ``scoring=None``: R² for a regressor, minus the log loss for a
    classifier (over every class in ``labels``, so a held-out part lacking
    a class is still scored). The log loss, a proper scoring rule, rather
    than ROC AUC: a refit on noise columns predicts over-confidently and
    loses log loss against the prior, while its AUC only wanders around
    0.5, so on null data "best" picked noise with ROC AUC
    (``benchmarks/refit_curve.py``; docs/how-it-works.md, "The refit
    curve"). Otherwise scikit-learn's
    ``check_scoring``: a scorer name or a callable, higher is better.
    """
    from sklearn.metrics import check_scoring, log_loss, make_scorer

    if scoring is None and not classifier:
        return check_scoring(None, scoring="r2")
    if scoring is None:
        return make_scorer(
            log_loss,
            greater_is_better=False,
            response_method="predict_proba",
            labels=np.asarray(labels),
        )
    return check_scoring(None, scoring=scoring)


def scoring_name(scoring, classifier: bool) -> str:
    """Return how plots and tables name the curve's score."""
    if scoring is None:
        return "minus log loss" if classifier else "R²"
    if isinstance(scoring, str):
        return scoring
    return getattr(scoring, "__name__", "") or "score"


def check_curve_scoring(scoring, weighted: bool) -> None:
    """Refuse, before any fit, a ``scoring`` the refits could not use.

    An unknown scorer name, and a callable that takes no ``sample_weight``
    when the rows are weighted (its scores would silently ignore them).
    """
    import inspect

    from sklearn.metrics import get_scorer

    if isinstance(scoring, str):
        get_scorer(scoring)  # scikit-learn's ValueError names the valid ones
        return
    if scoring is None or not weighted:
        return
    try:
        params = inspect.signature(scoring).parameters.values()
    except (TypeError, ValueError):  # a builtin: let it be tried
        return
    if not any(
        p.name == "sample_weight" or p.kind is inspect.Parameter.VAR_KEYWORD
        for p in params
    ):
        raise ValueError(
            "scoring is a callable without a sample_weight argument, but the "
            "rows are weighted: the refit curve's scores would ignore the "
            "weights. Accept sample_weight=None in the callable, or use "
            "sklearn.metrics.make_scorer."
        )


def score_intercept(scoring, y_train, w_train, y_test, w_test) -> float:
    """Score the model of no feature (k = 0) on held-out rows.

    ``scoring.dummy`` (the prior of the classes, or the mean) is fitted on
    a split's training rows ``y_train`` (weights ``w_train``) and scored
    on its held-out rows; targets in the user's class labels.
    """
    from sklearn.base import clone

    dummy = clone(scoring.dummy).fit(np.zeros((y_train.size, 1)), y_train, w_train)
    zeros = np.zeros((y_test.size, 1))
    return score_refit(scoring.scorer, dummy, zeros, y_test, w_test)


def score_refit(scorer, model, X, y, sample_weight=None) -> float:
    """Score one refit (or the intercept) on held-out rows, weighted if given."""
    kwargs = {} if sample_weight is None else {"sample_weight": sample_weight}
    try:
        return float(scorer(model, X, y, **kwargs))
    except (ValueError, AttributeError, TypeError) as e:
        raise ValueError(
            f"The refit curve's scoring failed on a split's held-out rows: "
            f"{str(e).rstrip('.')}. Pass a scoring that suits the estimator and "
            "is defined on every held-out part (a class may be missing from "
            "one), such as the default (None); for a binary score on labels "
            "other than 0/1, make_scorer(..., pos_label=...)."
        ) from e


class Decoded:
    """A classifier fitted on encoded labels 0..K-1, speaking the user's labels.

    The selector encodes class labels before fitting (XGBoost requires
    it); scorers (``pos_label``, ``labels``) must see the user's labels, so
    the refit is scored through this view: ``classes_`` the labels,
    ``predict`` decoded, probabilities in the same column order.
    """

    _estimator_type = "classifier"

    def __init__(self, model, labels):
        self.model, self.classes_ = model, np.asarray(labels)

    def predict(self, X):
        return self.classes_[np.asarray(self.model.predict(X)).astype(np.int64)]

    def predict_proba(self, X):
        return self.model.predict_proba(X)

    def __sklearn_tags__(self):
        return _tags(True)


def _tags(classifier: bool):
    from sklearn.utils import ClassifierTags, RegressorTags, Tags, TargetTags

    return Tags(
        estimator_type="classifier" if classifier else "regressor",
        target_tags=TargetTags(required=True),
        classifier_tags=ClassifierTags() if classifier else None,
        regressor_tags=None if classifier else RegressorTags(),
    )


class CurveScoring(NamedTuple):
    """How a refit is scored: scorer, model of no feature, class labels or None."""

    scorer: object
    dummy: object
    labels: object

    @classmethod
    def make(cls, scoring, labels=None) -> CurveScoring:
        """Build it from ``scoring``: a regressor's, or a classifier's (``labels``)."""
        from sklearn.dummy import DummyClassifier, DummyRegressor

        classifier = labels is not None
        return cls(
            curve_scorer(scoring, classifier, labels),
            DummyClassifier(strategy="prior") if classifier else DummyRegressor(),
            labels,
        )


def refit_points(orders, ks, members=None):
    """Return the columns each split refits per k, and each distinct refit once.

    ``keys[j][i]`` is ``(j, columns)`` for split j at ``ks[i]``: a split with
    fewer candidates than k refits all of them, so its larger k share one
    refit, listed once in ``points`` (in order of first use).
    """
    keys = [
        [(j, tuple(top_columns(order, k, members))) for k in ks]
        for j, order in enumerate(orders)
    ]
    return keys, list(dict.fromkeys(key for row in keys for key in row))


def curve_results(ks, split_scores) -> dict:
    """Return ``cv_results_`` with RFECV's keys, from (n_splits, n_k) scores."""
    scores = np.atleast_2d(np.asarray(split_scores, dtype=np.float64))
    bad = np.argwhere(~np.isfinite(scores))
    if bad.size:
        i, j = bad[0]
        raise ValueError(
            f"The refit curve's scoring gave {scores[i, j]} on the held-out rows "
            f"of split {i + 1} at k = {int(np.asarray(ks)[j])}: it is not defined "
            "there (a class missing from those rows, say). Pass a scoring "
            "defined on every held-out part, such as the default (None)."
        )
    results = {
        "n_features": np.asarray(ks, dtype=np.int64),
        "mean_test_score": scores.mean(axis=0),
        "std_test_score": scores.std(axis=0),
    }
    for i, row in enumerate(scores):
        results[f"split{i}_test_score"] = row
    return results


class FrozenPredictions:
    """A fitted model's held-out predictions, posing as the model for a scorer.

    scikit-learn's scorers call ``predict``/``predict_proba``/
    ``decision_function`` on the estimator and X they are given; where the
    predictions were computed elsewhere (on a Dask cluster), this hands them
    back whatever X is, so that any scorer applies unchanged.
    """

    def __init__(self, outputs: dict, classes=None):
        self._outputs = outputs
        if classes is not None:
            self.classes_ = np.asarray(classes)
            self._estimator_type = "classifier"
        else:
            self._estimator_type = "regressor"

    def _output(self, method):
        if method not in self._outputs:
            raise AttributeError(method)
        return self._outputs[method]

    def predict(self, X):
        return self._output("predict")

    def predict_proba(self, X):
        return self._output("predict_proba")

    def __sklearn_tags__(self):
        return _tags(self._estimator_type == "classifier")


def curve_rows(results: dict) -> list[dict]:
    """One record per k of ``cv_results_``: k, mean, s.e., and the rules at it.

    The rows the command line prints and writes (``--out``): ``rules`` lists
    the rules of :data:`CURVE_RULES` that keep this k.
    """
    ks = np.asarray(results["n_features"])
    mean = np.asarray(results["mean_test_score"], dtype=np.float64)
    se = curve_standard_error(results)
    chosen = {rule: choose_k(ks, mean, se, rule) for rule in CURVE_RULES}
    return [
        {
            "k": int(k),
            "mean": float(m),
            "se": float(s),
            "rules": [rule for rule in CURVE_RULES if chosen[rule] == k],
        }
        for k, m, s in zip(ks, mean, se, strict=True)
    ]


def format_curve(results: dict, unit: str = "feature", score: str = "score") -> str:
    """Return the refit curve as a text table (the command line's).

    >>> scores = [[0.0, 0.5, 0.52], [0.0, 0.44, 0.44]]  # two splits
    >>> print(format_curve(curve_results([0, 1, 2], scores)))
    refit curve (held-out score of the booster refitted on the top k features):
       k      mean    s.e.
       0    0.0000  0.0000
       1    0.4700  0.0212  1se
       2    0.4800  0.0283  best
    """
    lines = [
        f"refit curve (held-out {score} of the booster refitted on the top k {unit}s):",
        f"{'k':>4}  {'mean':>8}  {'s.e.':>6}",
    ]
    for row in curve_rows(results):
        mark = ("  " + ", ".join(row["rules"])) if row["rules"] else ""
        lines.append(f"{row['k']:>4}  {row['mean']:>8.4f}  {row['se']:>6.4f}{mark}")
    return "\n".join(lines)
