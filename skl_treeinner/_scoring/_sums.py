"""The shared primitives of PreDecomp and TreeInner, below every engine.

Everything here works on a reader and rows that have passed ``reader.rows``,
in memory: one chunk of rows, one Dask partition or one split's held-out rows
alike. The public functions (:func:`~skl_treeinner.predecomp`,
:func:`~skl_treeinner.tree_inner`) and the selector reach these through an
engine (``_engines``), which decides where the rows are; the engines import
this module and nothing here imports an engine.

- :func:`predecomp_rows`, :func:`shaped`: PreDecomp of every row (Def. 1, Eq. 10).
- :func:`leaf_residual_sums`, :func:`scores_from_leaf_sums`: TreeInner as a
  map (per-leaf sums of the weighted residuals, which add over row
  partitions) and a reduce (one product with the path table), Eq. 21.
- :func:`partial_sums`, :func:`scores_from_sums`: the same map and reduce for
  either attribution (per-round sums for TreeSHAP).
- :func:`row_terms`: each row's term z_ik of the score, for the test (the
  target's noise in it: :mod:`skl_treeinner._scoring._noise`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy import sparse

from .._kernels._backend import backend_for
from .._readers._base import n_rows
from .._utils._progress import progress

__all__ = [
    "HeldOutTerms",
    "leaf_residual_sums",
    "partial_sums",
    "predecomp_row_terms",
    "predecomp_rows",
    "predecomp_scores",
    "gradient_ratio",
    "treeshap_terms_of",
    "row_terms",
    "scores_from_leaf_sums",
    "scores_from_sums",
    "shaped",
    "treeshap_terms",
]


class HeldOutTerms(NamedTuple):
    """One model's held-out rows, scored: what a split gives the test.

    Every engine's scoring of a split (or a partition) returns one, for the
    test of the model's use (``terms`` and ``noise``) and for the test of a
    column (also ``tested``, ``null`` and, with feature groups, the groups').
    """

    #: (n, n_columns): each row's TreeInner terms; their column sums are the
    #: scores.
    terms: np.ndarray
    #: The target's noise in what is tested (``(a2v, resid2, var)``,
    #: :func:`~skl_treeinner._scoring._noise.row_noise`): in ``terms`` for the
    #: test of the model's use, in ``tested`` for the test of a column; or None.
    noise: tuple | None
    #: The same noise of the feature groups' sums, or None.
    group_noise: tuple | None = None
    #: The test of a column: the terms less their mean with the column's
    #: values drawn from other held-out rows (what is tested), or None.
    tested: np.ndarray | None = None
    #: The same of the feature groups (members drawn together), or None.
    group_tested: np.ndarray | None = None
    #: (n_columns,): the drawn terms' sums (the score with no tie to y), or
    #: None.
    null: np.ndarray | None = None


def predecomp_rows(reader, X, n):
    """PreDecomp of X (already through ``reader.rows``): (n, n_outputs * p) values."""
    ens = reader.ensemble
    values = np.empty((n, ens.n_outputs * ens.n_features), dtype=np.float64)
    paths = backend_for(reader).paths
    for start, stop, _, leaves in reader.iter_leaves(X, scale=paths.chunk_scale):
        values[start:stop] = paths.leaf_paths(leaves)
    return values


def shaped(values, ens, *, return_bias):
    """(n, k * p) values as predecomp returns them, with the bias if asked."""
    n, p, k = values.shape[0], ens.n_features, ens.n_outputs
    if k == 1:
        values = values.reshape(n, p)
        bias = float(ens.bias[0])
    else:
        values = values.reshape(n, k, p).transpose(0, 2, 1)
        bias = ens.bias
    return (values, bias) if return_bias else values


def _chunks(reader, X, verbose, desc, scale=1):
    """Yield the reader's leaf chunks, behind a progress bar when ``verbose``."""
    chunks = reader.iter_leaves(X, scale=scale)
    if not verbose:
        return chunks
    return progress(
        chunks,
        total=reader.n_chunks(n_rows(X), scale=scale),
        desc=desc,
        verbose=verbose,
        unit="chunk",
    )


def predecomp_row_terms(reader, X, n, y, w, *, verbose=0):
    """z_ik = Σ_m α_m⁻¹ f_{m,k}(x_i)(-g_{i,m}) w_i for every row: (n, n_features).

    Per chunk, by the model's backend (:meth:`Kernels.row_terms
    <skl_treeinner._kernels._compiled.Kernels.row_terms>`; the numpy
    reference multiplies each row's weighted residuals over the learning rate
    at its leaves into the path table, as :func:`predecomp` does with ones).
    """
    z = np.empty((n, reader.ensemble.n_features), dtype=np.float64)
    sums = backend_for(reader).sums
    for start, stop, _, leaves in _chunks(
        reader, X, verbose, "tree_inner (predecomp, per sample)", sums.chunk_scale
    ):
        z[start:stop] = sums.row_terms(leaves, y[start:stop], _rows(w, start, stop))
    return z


def _rows(w, start, stop):
    return None if w is None else w[start:stop]


def predecomp_scores(reader, X, y, w, *, per_iteration=False, verbose=0):
    """Σ_m α_m⁻¹ Σ_i f_{m,k}(x_i)(-g_{i,m}) w_i through per-leaf residual sums."""
    leaf_residual = leaf_residual_sums(reader, X, y, w, verbose=verbose)
    return scores_from_leaf_sums(
        reader.ensemble, leaf_residual, per_iteration=per_iteration
    )


def leaf_residual_sums(reader, X, y, w, *, verbose=0):
    """Σ_i w_i (-g_{i,m}) over the rows reaching each leaf: (n_nodes,).

    The map step of TreeInner: sums over row partitions add up (an engine may
    compute one per partition); :func:`scores_from_leaf_sums` is the rest.
    """
    leaf_residual = np.zeros(reader.ensemble.n_nodes)
    sums = backend_for(reader).sums
    chunks = _chunks(reader, X, verbose, "tree_inner (predecomp)", sums.chunk_scale)
    for start, stop, _, leaves in chunks:
        leaf_residual += sums.leaf_sums(leaves, y[start:stop], _rows(w, start, stop))
    return leaf_residual


def scores_from_leaf_sums(ens, leaf_residual, *, per_iteration=False):
    """TreeInner from per-leaf residual sums: one product with the path table."""
    leaf_residual = leaf_residual / ens.learning_rate[ens.node_tree]
    if per_iteration:
        # Row r of this (n_iterations x n_nodes) matrix holds the residual sums
        # of the leaves of iteration r's trees (inner nodes hold 0 and their
        # rows of path_table are empty): one product gives every iteration.
        by_iteration = sparse.csr_matrix(
            (
                leaf_residual,
                (ens.tree_iteration[ens.node_tree], np.arange(ens.n_nodes)),
            ),
            shape=(ens.n_iterations, ens.n_nodes),
        )
        scores = np.asarray((by_iteration @ ens.path_table).todense())
        return scores.reshape(ens.n_iterations, ens.n_outputs, ens.n_features).sum(
            axis=1
        )
    scores = ens.path_table.T @ leaf_residual  # (n_outputs * n_features,)
    return scores.reshape(ens.n_outputs, ens.n_features).sum(axis=0)


def treeshap_terms(
    reader, X, y, w, *, per_iteration=False, per_sample=False, verbose=0
):
    """Σ_r α_r⁻¹ Σ_i φ_{r,k}(x_i)(-g_{i,r}) w_i with each iteration's TreeSHAP.

    All trees of one iteration and output were fitted to the same gradient and
    TreeSHAP is additive over trees, so one TreeSHAP pass per iteration gives
    the same sum as one per tree. With ``per_sample`` the sum over i is left
    out: one row of the result per row of X.

    With the compiled kernels and a model whose split rule covers X
    (XGBoost, LightGBM and scikit-learn models with numerical splits on dense
    X; CatBoost's symmetric trees always), each tree's TreeSHAP is evaluated
    per (leaf, pattern of split sides) and reduced with the residuals in one
    pass (:mod:`skl_treeinner._kernels.cpu._treeshap`); otherwise every round takes
    the booster's own TreeSHAP once per iteration
    (:meth:`ModelReader.iteration_shap`).
    """
    return treeshap_terms_of(
        reader,
        X,
        [y],
        w,
        per_iteration=per_iteration,
        per_sample=per_sample,
        verbose=verbose,
    )[0]


def treeshap_terms_of(
    reader, X, ys, w, *, per_iteration=False, per_sample=False, verbose=0
):
    """:func:`treeshap_terms` of several targets ``ys``, as a list.

    The rows are routed once and every TreeSHAP value is computed once for
    all targets: the residuals of each are a channel of one pass.
    """
    ens = reader.ensemble
    c = len(ys)
    if per_sample:
        out = np.zeros((c, n_rows(X), ens.n_features))
    else:
        out = np.zeros((c, ens.n_iterations, ens.n_features))
    n_chunks = reader.n_chunks(n_rows(X), scale=4)
    # Larger chunks than PreDecomp's: every chunk costs one TreeSHAP call per
    # iteration, and the boosters' per-call overhead adds up over hundreds.
    chunks = reader.iter_leaves(X, scale=4)
    sums = backend_for(reader).sums
    patterns = sums.patterns and reader.has_treeshap_rows(X)
    if patterns and verbose:
        chunks = progress(
            chunks,
            total=n_chunks,
            desc="tree_inner (treeshap), by leaf patterns",
            verbose=verbose,
            unit="chunk",
        )
    for chunk, (start, stop, X_chunk, leaves) in enumerate(chunks):
        target = out[:, start:stop] if per_sample else out
        booster_rounds = None  # all
        if patterns:
            got, booster_rounds = sums.treeshap_of_targets(
                reader.treeshap_rows(X_chunk),
                leaves,
                [y[start:stop] for y in ys],
                None if w is None else w[start:stop],
                per_sample,
            )
            if got is None:
                patterns = False  # the booster's own TreeSHAP from here on
            else:
                target += got
                if not booster_rounds.size:
                    continue
        residuals = []  # (n, R, K) per target, for the booster's TreeSHAP
        for y in ys:
            residual = sums.iteration_gradients(leaves, y[start:stop])
            residual *= -1.0 / ens.iteration_learning_rate[:, None]
            if w is not None:
                residual *= w[start:stop, None, None]
            residuals.append(residual)
        # The rounds with a tree the patterns cannot evaluate (or all).
        rounds = reader.iteration_shap(X_chunk, rounds=booster_rounds)
        if verbose:
            desc = "tree_inner (treeshap)"
            if n_chunks > 1:
                desc += f", rows {chunk + 1}/{n_chunks}"
            rounds = progress(
                rounds,
                total=ens.n_iterations
                if booster_rounds is None
                else booster_rounds.size,
                desc=desc,
                verbose=verbose,
                unit="iteration",
            )
        for r, phi in rounds:
            for j, residual in enumerate(residuals):
                if per_sample:
                    target[j] += np.einsum("ik,ikj->ij", residual[:, r, :], phi)
                else:
                    target[j, r] += np.einsum("ik,ikj->j", residual[:, r, :], phi)
    if per_sample or per_iteration:
        return list(out)
    return list(out.sum(axis=1))


def row_terms(reader, X, n, y, w, *, attribution, verbose=0):
    """Each row's term z_ik of the TreeInner score: (n, n_features).

    ``tree_inner(..., per_sample=True)`` of rows that passed ``reader.rows``,
    with either attribution; the column sums are the scores (Eq. 21).
    """
    if attribution == "treeshap":
        return treeshap_terms(reader, X, y, w, per_sample=True, verbose=verbose)
    return predecomp_row_terms(reader, X, n, y, w, verbose=verbose)


def partial_sums(reader, X, y, w, *, attribution):
    """Map rows that passed ``reader.rows`` to TreeInner's partial sums.

    Per-leaf residual sums (``"predecomp"``, shape (n_nodes,)) or per-round
    scores (``"treeshap"``, shape (n_iterations, n_features)). Sums of row
    partitions add up; :func:`scores_from_sums` turns their total into scores.
    An empty partition adds zeros.
    """
    ens = reader.ensemble
    if n_rows(X) == 0:
        if attribution == "treeshap":
            return np.zeros((ens.n_iterations, ens.n_features))
        return np.zeros(ens.n_nodes)
    if attribution == "treeshap":
        return treeshap_terms(reader, X, y, w, per_iteration=True)
    return leaf_residual_sums(reader, X, y, w)


def scores_from_sums(ens, total, *, attribution, per_iteration=False):
    """Reduce the added :func:`partial_sums` to TreeInner scores."""
    if attribution == "treeshap":
        return total if per_iteration else total.sum(axis=0)
    return scores_from_leaf_sums(ens, total, per_iteration=per_iteration)


def final_margins(reader, X, n):
    """Return the raw margins on X (already through ``reader.rows``): (n, k)."""
    ens = reader.ensemble
    margin = np.empty((n, ens.n_outputs))
    for start, stop, _, leaves in reader.iter_leaves(X):
        margin[start:stop] = ens.margins(leaves)[0]
    return margin


def gradient_ratio(reader, X, n, y, w) -> float:
    """Σ w g² at the model's margins over Σ w g² at its intercept alone, on (X, y).

    On the rows a booster was fitted on, boosting with a learning rate of at
    most 1 brings the gradients down; a ratio above 1 says the model is worse
    there than its intercept: it diverged (a learning rate above 1, a
    target its arithmetic overflowed). The margins are the intercept plus the
    leaves the rows reach, added in float64 (:func:`final_margins`), so that
    a model that could not split gives 1 to float64 rounding, not to the
    float32 rounding of the booster's own prediction; non-finite ones give
    ``inf``.
    """
    ens = reader.ensemble
    shape = (n, ens.n_outputs)
    final = final_margins(reader, X, n)
    start = np.broadcast_to(ens.intercept, shape).copy()
    weight = 1.0 if w is None else np.asarray(w, dtype=np.float64)[:, None]
    with np.errstate(over="ignore", invalid="ignore"):
        fitted = float(np.sum(weight * ens.objective.gradient(final, y) ** 2))
    intercept = float(np.sum(weight * ens.objective.gradient(start, y) ** 2))
    if not np.isfinite(fitted):
        return float("inf")
    if intercept <= 0:  # nothing left to fit: nothing to judge by
        return 0.0
    return fitted / intercept
