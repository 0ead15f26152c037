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
    CurveScoring,
    FrozenPredictions,
    curve_results,
    k_grid,
    refit_points,
    score_refit,
)
from ._codes import rows_of
from ._fits import take_columns

__all__ = ["dask_curve", "moments_statistics"]


def moments_statistics(sets, fgroups) -> dict:
    """Return the fitted statistics of rows' moments (the columns', groups').

    ``split_scores_`` is of these rows as one split; the selector sets the
    per-split ones.
    """
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


def _held_out(dask, est, rows, j, columns, *, labels):
    """Compute split j's held-out targets, weights and ``est``'s predictions.

    For a classifier (``labels``, the user's class labels), the targets
    and predicted classes decoded to them.
    """
    X, y, w = rows_of(dask, rows, j, "test")
    # Persisted first: xgboost.dask 3.1's predict_proba fails to compute
    # ("pop from an empty set") on DataFrames from dd.from_delayed, which
    # the rows of a split are; they are 1/cv of the rows, let go here.
    X = take_columns(X, columns).persist()
    outputs = {"predict": est.predict(X)}
    if labels is not None:
        outputs["predict_proba"] = est.predict_proba(X)
    # One compute each: the predictions of a DataFrame may be a Dask array
    # of another graph kind, which Dask cannot compute together.
    outputs = {key: np.asarray(dask.compute(v)[0]) for key, v in outputs.items()}
    y, w = dask.compute(y, w)
    del X
    y = np.asarray(y)
    if labels is not None:
        outputs["predict"] = labels[outputs["predict"].astype(np.int64)]
        y = labels[y.astype(np.int64)]
    return outputs, y, None if w is None else np.asarray(w)


def _intercept(dask, rows, j, scoring):
    """Score the model of no feature (the prior or mean of j's training rows)."""
    parts = [rows_of(dask, rows, j, role) for role in ("fit", "stop", "test")]
    (fit_part, stop_part, test_part) = dask.compute(*[(y, w) for _, y, w in parts])
    y_train = np.concatenate([np.asarray(fit_part[0]), np.asarray(stop_part[0])])
    y_test = np.asarray(test_part[0])
    if scoring.labels is not None:
        y_train = scoring.labels[y_train.astype(np.int64)]
        y_test = scoring.labels[y_test.astype(np.int64)]
    w_train = None
    if fit_part[1] is not None:
        w_train = np.concatenate([np.asarray(fit_part[1]), np.asarray(stop_part[1])])
    dummy = scoring.dummy.fit(np.zeros((y_train.size, 1)), y_train, w_train)
    w_test = None if test_part[1] is None else np.asarray(test_part[1])
    zeros = np.zeros((y_test.size, 1))
    return score_refit(scoring.scorer, dummy, zeros, y_test, w_test)


def dask_curve(dask, plan, rows, n_splits, *, fit, score, fgroups, labels):
    """Return the refit curve's ``cv_results_`` on the cluster.

    ``fit(j, inner=..., columns=...)`` fits a fresh clone of the booster on
    split j's (inner) training rows, with retries; ``score(estimators,
    role)`` returns, per split, the moments of the columns' (and groups')
    terms on the rows of ``role``. ``labels``: the user's class labels, or
    None for a regressor.
    """
    selector = plan.selector
    name = type(selector).__name__
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
    orders = [plan.candidates(moments_statistics(sets, fgroups)) for sets in per_split]
    ks = k_grid(max(order.size for order in orders))
    scoring = CurveScoring.make(selector.scoring, labels)
    members = None if fgroups is None else fgroups.members
    keys, points = refit_points(orders, ks, members)
    done = {}
    for j, columns in progress(
        points, desc=f"{name}: refit curve", verbose=selector.verbose, unit="refit"
    ):
        if not columns:
            done[j, columns] = _intercept(dask, rows, j, scoring)
            continue
        est = fit(j, columns=np.asarray(columns, dtype=np.int64))
        outputs, y, w = _held_out(dask, est, rows, j, columns, labels=labels)
        frozen = FrozenPredictions(outputs, labels)
        zeros = np.zeros((y.size, 1))
        done[j, columns] = score_refit(scoring.scorer, frozen, zeros, y, w)
    return curve_results(ks, [[done[key] for key in row] for row in keys])
