"""The refit curve on Dask collections: rankings and refits on the cluster.

The same nested protocol as in memory (:mod:`skl_treeinner._refit_curve`):
for every split j, the booster is fitted on half of j's training rows and
the features tested on the other half (the rows' roles are drawn in every
task, :meth:`~skl_treeinner._engines.dask._codes.Codes.ranked`); the
candidates passing the selector's cut-off, best first, are refitted top k
at a time on j's training rows, with the booster's own Dask ``fit``, and
their predictions of j's held-out rows are scored. Only predictions and
targets of held-out rows (one number or one row of class probabilities per
row) and the targets of the training rows (for k = 0) come into memory.
"""

from __future__ import annotations

import numpy as np

from ... import _inference
from ..._feature_groups import group_statistics
from ..._progress import progress
from ..._refit_curve import (
    FrozenPredictions,
    curve_results,
    default_scoring,
    k_grid,
    top_columns,
)
from ._codes import rows_of
from ._fits import take_columns

__all__ = ["dask_curve"]


def _statistics(sets, fgroups) -> dict:
    """Return one split's fitted statistics from its moments (columns', groups')."""
    test = _inference.score_test(sets[0])
    fitted = {
        "split_scores_": test.scores[None, :],
        "scores_": test.scores,
        "scores_se_": test.se,
        "pvalues_": test.pvalues,
        "n_scored_rows_": test.n_rows,
        "test_units_": "rows",
    }
    if fgroups is not None:
        fitted.update(group_statistics(fgroups, _inference.score_test(sets[1])))
    return fitted


def _held_out(dask, est, rows, j, columns, *, classifier):
    """Compute split j's held-out targets, weights and ``est``'s predictions."""
    X, y, w = rows_of(dask, rows, j, "test")
    # Persisted first: xgboost.dask 3.1's predict_proba fails to compute
    # ("pop from an empty set") on DataFrames from dd.from_delayed, which
    # the rows of a split are; they are 1/cv of the rows, let go here.
    X = take_columns(X, columns).persist()
    outputs = {"predict": est.predict(X)}
    if classifier:
        outputs["predict_proba"] = est.predict_proba(X)
    # One compute each: the predictions of a DataFrame may be a Dask array
    # of another graph kind, which Dask cannot compute together.
    outputs = {key: np.asarray(dask.compute(v)[0]) for key, v in outputs.items()}
    y, w = dask.compute(y, w)
    del X
    return outputs, np.asarray(y), None if w is None else np.asarray(w)


def _intercept(dask, rows, j, scorer, dummy):
    """Score the model of no feature (the prior or mean of j's training rows)."""
    parts = [rows_of(dask, rows, j, role) for role in ("fit", "stop", "test")]
    (fit_part, stop_part, test_part) = dask.compute(*[(y, w) for _, y, w in parts])
    y_train = np.concatenate([np.asarray(fit_part[0]), np.asarray(stop_part[0])])
    w_train = None
    if fit_part[1] is not None:
        w_train = np.concatenate([np.asarray(fit_part[1]), np.asarray(stop_part[1])])
    dummy = dummy.fit(np.zeros((y_train.size, 1)), y_train, w_train)
    y_test, w_test = np.asarray(test_part[0]), test_part[1]
    kwargs = {} if w_test is None else {"sample_weight": np.asarray(w_test)}
    return scorer(dummy, np.zeros((y_test.size, 1)), y_test, **kwargs)


def dask_curve(dask, plan, rows, n_splits, *, fit, score, fgroups, n_classes):
    """Return the refit curve's ``cv_results_`` on the cluster.

    ``fit(j, inner=..., columns=...)`` fits a fresh clone of the booster on
    split j's (inner) training rows, with retries; ``score(estimators,
    role)`` returns, per split, the moments of the columns' (and groups')
    terms on the rows of ``role``. ``n_classes`` is 0 for a regressor.
    """
    from sklearn.dummy import DummyClassifier, DummyRegressor
    from sklearn.metrics import check_scoring

    selector = plan.selector
    name = type(selector).__name__
    classifier = n_classes > 0
    rankers = [
        fit(j, inner=True)
        for j in progress(
            range(n_splits),
            desc=f"{name}: refit curve's rankings",
            verbose=selector.verbose,
            unit="split",
        )
    ]
    per_split = score(rankers, "inner-test")
    orders = [plan.candidates(_statistics(sets, fgroups)) for sets in per_split]
    ks = k_grid(max(order.size for order in orders))
    classes = np.arange(n_classes) if classifier else None
    scorer = check_scoring(
        None,
        scoring=(
            default_scoring(classifier, n_classes)
            if selector.scoring is None
            else selector.scoring
        ),
    )
    dummy = DummyClassifier(strategy="prior") if classifier else DummyRegressor()
    members = None if fgroups is None else fgroups.members
    scores = np.empty((n_splits, ks.size))
    tasks = [(j, i, k) for j in range(n_splits) for i, k in enumerate(ks)]
    for j, i, k in progress(
        tasks, desc=f"{name}: refit curve", verbose=selector.verbose, unit="refit"
    ):
        columns = top_columns(orders[j], min(k, orders[j].size), members)
        if columns.size == 0:
            scores[j, i] = _intercept(dask, rows, j, scorer, dummy)
            continue
        est = fit(j, columns=columns)
        outputs, y, w = _held_out(dask, est, rows, j, columns, classifier=classifier)
        kwargs = {} if w is None else {"sample_weight": w}
        frozen = FrozenPredictions(outputs, classes)
        scores[j, i] = scorer(frozen, np.zeros((y.size, 1)), y, **kwargs)
    return curve_results(ks, scores)
