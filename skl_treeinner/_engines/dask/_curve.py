"""The refit curve on Dask collections: rankings and refits on the cluster.

The same nested protocol as in memory (:mod:`skl_treeinner._refit_curve`):
for every split j, the booster is fitted on half of j's training rows and
the features scored on the other half (the rows' roles are drawn in every
task, :meth:`~skl_treeinner._engines.dask._codes.Codes.ranked`); the
candidates above the selector's threshold, best first, are refitted top k
at a time on j's training rows, with the booster's own Dask ``fit``, and
j's held-out rows are predicted in their partitions by the refit read into
memory (its margins and link, as its ``predict``) and scored. Only
predictions and targets of held-out rows (one number or one row of class
probabilities per row) and the targets of the training rows (for k = 0)
come into memory.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils import _safe_indexing

from ... import _inference
from ..._feature_groups import group_statistics
from ..._progress import progress
from ..._readers import read_model
from ..._refit_curve import (
    CurveScoring,
    FrozenPredictions,
    curve_results,
    k_grid,
    refit_points,
    score_refit,
)
from ._collections import shared_object

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


def _partition_predictions(X, y, w, codes, job):
    """One partition's held-out rows of split j: predictions, targets, weights.

    ``job`` is ``(reader, j, columns, classifier)``: the refit read into
    memory predicts the rows itself, from its margins and the objective's
    link (a classifier's class probabilities), as its own ``predict``
    would; no Dask collection is predicted on.
    """
    reader, j, columns, classifier = job
    rows = np.flatnonzero(codes.role(j, "test"))
    X_rows = _safe_indexing(_safe_indexing(X, rows), list(columns), axis=1)
    margin = np.asarray(reader.raw_margin(X_rows)).reshape(rows.size, -1)
    objective = reader.ensemble.objective
    if classifier:
        out = objective.class_probabilities(margin)
    else:
        out = objective.mean(margin)
    w_rows = None if w is None else np.asarray(_safe_indexing(w, rows))
    return out, np.asarray(_safe_indexing(y, rows)), w_rows


def _held_out(dask, est, rows, j, columns, *, labels):
    """Compute split j's held-out targets, weights and ``est``'s predictions.

    For a classifier (``labels``, the user's class labels), the targets
    and predicted classes decoded to them.
    """
    job = shared_object(dask, (read_model(est), j, columns, labels is not None))
    parts = dask.compute(*rows.tasks(dask, _partition_predictions, job))
    out = np.concatenate([part[0] for part in parts])
    y = np.concatenate([part[1] for part in parts])
    w = None if parts[0][2] is None else np.concatenate([part[2] for part in parts])
    if labels is None:
        return {"predict": out}, y, w
    outputs = {"predict_proba": out, "predict": labels[np.argmax(out, axis=1)]}
    return outputs, labels[y.astype(np.int64)], w


def _partition_targets(X, y, w, codes, j):
    """One partition's targets and weights of split j's training and held-out rows."""
    out = []
    for mask in (codes.fold != j, codes.role(j, "test")):
        rows = np.flatnonzero(mask)
        w_rows = None if w is None else np.asarray(_safe_indexing(w, rows))
        out.append((np.asarray(_safe_indexing(y, rows)), w_rows))
    return out


def _intercept(dask, rows, j, scoring):
    """Score the model of no feature (the prior or mean of j's training rows)."""
    parts = dask.compute(*rows.tasks(dask, _partition_targets, j))
    (y_train, w_train), (y_test, w_test) = (
        (
            np.concatenate([part[i][0] for part in parts]),
            None
            if parts[0][i][1] is None
            else np.concatenate([part[i][1] for part in parts]),
        )
        for i in (0, 1)
    )
    if scoring.labels is not None:
        y_train = scoring.labels[y_train.astype(np.int64)]
        y_test = scoring.labels[y_test.astype(np.int64)]
    dummy = scoring.dummy.fit(np.zeros((y_train.size, 1)), y_train, w_train)
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
