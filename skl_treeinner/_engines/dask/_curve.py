"""The refit curve's scores on Dask collections: refits predicted in partitions.

The same nested protocol as in memory (:mod:`skl_treeinner._stats._refit_curve`):
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

from ..._readers import read_model
from ..._stats._refit_curve import FrozenPredictions, score_intercept, score_refit
from ._collections import shared_object

__all__ = ["held_out_score", "intercept_score"]


def _partition_predictions(X, y, w, codes, job):
    """One partition's held-out rows of split j: predictions, targets, weights.

    ``job`` is ``(reader, j, columns, classifier)``: the refit read into
    memory predicts the rows itself, from its margins and the objective's
    link (a classifier's class probabilities), as its own ``predict``
    would; no Dask collection is predicted on.
    """
    reader, j, columns, classifier = job
    rows = np.flatnonzero(codes.role(j, "held-out"))
    X_rows = _safe_indexing(_safe_indexing(X, rows), list(columns), axis=1)
    margin = np.asarray(reader.raw_margin(X_rows)).reshape(rows.size, -1)
    objective = reader.ensemble.objective
    if classifier:
        out = objective.class_probabilities(margin)
    else:
        out = objective.mean(margin)
    w_rows = None if w is None else np.asarray(_safe_indexing(w, rows))
    return out, np.asarray(_safe_indexing(y, rows)), w_rows


def held_out_score(dask, est, rows, j, columns, scoring) -> float:
    """Score ``est`` (a refit on ``columns``) on split j's held-out rows.

    The rows are predicted in their partitions by the refit read into
    memory; for a classifier (``scoring.labels``, the user's class labels)
    the targets and predicted classes are decoded to them.
    """
    labels = scoring.labels
    job = shared_object(dask, (read_model(est), j, columns, labels is not None))
    parts = dask.compute(*rows.tasks(dask, _partition_predictions, job))
    out = np.concatenate([part[0] for part in parts])
    y = np.concatenate([part[1] for part in parts])
    w = None if parts[0][2] is None else np.concatenate([part[2] for part in parts])
    if labels is None:
        outputs = {"predict": out}
    else:
        outputs = {"predict_proba": out, "predict": labels[np.argmax(out, axis=1)]}
        y = labels[y.astype(np.int64)]
    frozen = FrozenPredictions(outputs, labels)
    return score_refit(scoring.scorer, frozen, np.zeros((y.size, 1)), y, w)


def _partition_targets(X, y, w, codes, j):
    """One partition's targets and weights of split j's training and held-out rows."""
    out = []
    for mask in (codes.training(j), codes.role(j, "held-out")):
        rows = np.flatnonzero(mask)
        w_rows = None if w is None else np.asarray(_safe_indexing(w, rows))
        out.append((np.asarray(_safe_indexing(y, rows)), w_rows))
    return out


def intercept_score(dask, rows, j, scoring) -> float:
    """Score the model of no feature (the prior or mean of j's training rows)."""
    parts = dask.compute(*rows.tasks(dask, _partition_targets, j))
    (y_train, w_train), (y_held, w_held) = (
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
        y_held = scoring.labels[y_held.astype(np.int64)]
    return score_intercept(scoring, y_train, w_train, y_held, w_held)
