"""The refit curve: how many of the best-ranked features a model needs.

``TreeInnerSelector(max_features="best" | "1se")`` chooses k from a curve of
a refit booster's held-out score against the number k of best-ranked
candidates (features, or feature groups). The curve is honest by
construction (a nested protocol): for every outer split of the selector,

1. the candidates are ranked on that split's **training rows alone**: they
   are split once more (half fitted, half scored, the halves drawn as the
   selector draws its own: by group, in time order or stratified), the
   booster is fitted and the features tested exactly as the selector tests
   them, and the candidates passing its cut-off are ordered by score;
2. for every k of a grid (:func:`k_grid`), the booster is refitted on the
   split's training rows with the top k candidates' columns (early stopping
   on the split's own carved rows) and scored on the split's held-out rows
   (k = 0: the intercept alone, scikit-learn's ``Dummy*``).

The held-out rows of a split are thus never fitted, stopped on or scored
while its ranking is made. The engines run the fits; this module holds
what needs none: the grid, the choice of k, the columns of the top k units,
the default scoring and the fitted ``cv_results_``.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "CURVE_RULES",
    "FrozenPredictions",
    "choose_k",
    "curve_results",
    "curve_rows",
    "format_curve",
    "default_scoring",
    "k_grid",
    "prefit_refusal",
    "top_columns",
]

#: The rules ``max_features`` may name to choose k from a fitted curve.
CURVE_RULES = ("best", "1se")


def k_grid(n_candidates: int, *, dense: int = 10, step: float = 1.3) -> np.ndarray:
    """Return the numbers of features a curve is evaluated at.

    Every k from 0 (the intercept alone) to ``dense``, where curves bend,
    then a geometric grid of ratio ``step`` up to ``n_candidates``, which is
    always included: 20 refits per split for 40 candidates, 28 for 1,000.

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


def default_scoring(classifier: bool, n_classes: int) -> str:
    """Return the curve's default score: R² or ROC AUC (one-vs-rest).

    ROC AUC rather than log loss: it reads the same at every class balance
    and is what the comparison pages report; pass ``scoring="neg_log_loss"``
    for calibrated probabilities.
    """
    if not classifier:
        return "r2"
    return "roc_auc" if n_classes <= 2 else "roc_auc_ovr"


def curve_results(ks, split_scores) -> dict:
    """Return ``cv_results_`` with RFECV's keys, from (n_splits, n_k) scores."""
    scores = np.atleast_2d(np.asarray(split_scores, dtype=np.float64))
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
        from sklearn.utils import ClassifierTags, RegressorTags, Tags, TargetTags

        classifier = self._estimator_type == "classifier"
        return Tags(
            estimator_type=self._estimator_type,
            target_tags=TargetTags(required=True),
            classifier_tags=ClassifierTags() if classifier else None,
            regressor_tags=None if classifier else RegressorTags(),
        )


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


def format_curve(results: dict, unit: str = "feature") -> str:
    """Return the refit curve as a text table (the command line's).

    >>> scores = [[0.0, 0.5, 0.52], [0.0, 0.44, 0.44]]  # two splits
    >>> print(format_curve(curve_results([0, 1, 2], scores)))
    refit curve (held-out score of the booster refitted on the top k features):
       k    mean    s.e.
       0  0.0000  0.0000
       1  0.4700  0.0212  1se
       2  0.4800  0.0283  best
    """
    lines = [
        f"refit curve (held-out score of the booster refitted on the top k {unit}s):",
        f"{'k':>4}  {'mean':>6}  {'s.e.':>6}",
    ]
    for row in curve_rows(results):
        mark = ("  " + ", ".join(row["rules"])) if row["rules"] else ""
        lines.append(f"{row['k']:>4}  {row['mean']:>6.4f}  {row['se']:>6.4f}{mark}")
    return "\n".join(lines)
