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
- :func:`row_terms`: each row's term z_ik of the score, for the test.
- :func:`row_noise`: how much of each row's term is the target's own noise,
  given the row's features (the test's model-based floor on the spread).
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
    "has_row_noise",
    "row_noise",
    "row_noise_sums",
    "terms_and_noise",
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
    #: :func:`row_noise`): in ``terms`` for the test of the model's use, in
    #: ``tested`` for the test of a column; or None.
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


def terms_and_noise(reader, X, n, y, w, *, attribution, sums, verbose=0):
    """Each row's terms (:func:`row_terms`) and :func:`row_noise_sums` of them.

    The noise of an affine loss needs the terms at y + 1 too; with TreeSHAP
    both come from one pass over the patterns (two residual channels). Other
    cases (PreDecomp, whose passes share nothing; a K-class softmax, whose K
    label passes would hold K term arrays at once) take one pass per target,
    as :func:`row_noise_sums` does alone.
    """
    objective = reader.ensemble.objective
    if attribution == "treeshap" and objective.affine_in_target:
        y1 = np.asarray(y, dtype=np.float64) + 1.0
        z, at_y1 = treeshap_terms_of(
            reader, X, [y, y1], w, per_sample=True, verbose=verbose
        )
    else:
        z = row_terms(reader, X, n, y, w, attribution=attribution, verbose=verbose)
        at_y1 = None
    noise = row_noise_sums(
        reader, X, n, y, w, attribution=attribution, terms=z, sums=sums, at_y1=at_y1
    )
    return z, noise


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


def has_row_noise(objective) -> bool:
    """Whether :func:`row_noise` has a model of the target's noise for a loss."""
    return objective.affine_in_target or objective.is_classifier


def row_noise(reader, X, n, y, w, *, attribution, terms):
    """Give the target's own noise in each row's term z_ik, given its features.

    Given x_i (and the model), the only chance left in z_ik is y_i's. Where the
    loss gradient is affine in y (``Objective.affine_in_target``: squared
    error, Poisson, gamma, Tweedie, log-loss), so is z_ik, with slope
    a_ik = z_ik(y_i + 1) - z_ik(y_i), and Var(z_ik | x_i) = a_ik² φ V(μ_i),
    with the loss's variance function V at the prediction μ_i and one
    dispersion φ for all rows, estimated by Σ (y_i - μ_i)² / Σ V(μ_i) over
    the scored rows (pooled, so that a rare large residual counts for every
    row; about 1 for 0/1 labels and a calibrated model). For other
    classifiers, with the model's probabilities p_ic of the labels c,

        Var(z_ik | x_i) = Σ_c p_ic z_ik(c)² - (Σ_c p_ic z_ik(c))²,

    where z_ik(c) is the term had the row's label been c (one pass of
    :func:`row_terms` per label). ``terms`` are the rows' own terms
    (:func:`row_terms` at y), which the caller has computed already.

    Returns
    -------
    (a2v, resid2, var) or None
        Per row: ``a2v`` of shape (n, n_features), ``resid2`` and ``var`` of
        shape (n,), such that Σ_i Var(z_ik | x_i) ≈ Σ_i a2v_ik · Σ_i resid2_i
        / Σ_i var_i: ``a2v = a² V``, ``resid2 = (y - μ)²``, ``var = V`` for
        affine losses, and the variance itself with ``resid2 = var = 1`` for
        the others. None for losses with neither (Huber, Fair, pseudo-Huber,
        squared log error).
    """
    return row_noise_sums(
        reader, X, n, y, w, attribution=attribution, terms=terms, sums=(None,)
    )[0]


def row_noise_sums(reader, X, n, y, w, *, attribution, terms, sums, at_y1=None):
    """:func:`row_noise` of sums of columns, one per entry of ``sums``.

    ``at_y1``: the row terms at y + 1 of an affine loss, where the caller
    has them (:func:`terms_and_noise`).

    Each entry is None (the columns themselves) or a
    :class:`~skl_treeinner._stats._feature_groups.ColumnSums` (a pipeline's output
    columns added into its input columns, columns into feature groups). The
    terms share the row's target, so the noise of a sum is that of the summed
    slopes (or of the summed terms per label), not the sum of the members'
    noise: exact, from the same one extra pass.

    Returns
    -------
    list
        One :func:`row_noise` result per entry of ``sums``, ``a2v`` of the
        entry's columns (all None for losses without a noise model).
    """
    objective = reader.ensemble.objective
    if not has_row_noise(objective):
        return [None] * len(sums)

    def summed(values, into):
        return values if into is None else into(values)

    if objective.affine_in_target:
        y = np.asarray(y, dtype=np.float64)
        if at_y1 is None:
            at_y1 = row_terms(reader, X, n, y + 1.0, w, attribution=attribution)
        slope = at_y1 - terms
        mean = objective.mean(final_margins(reader, X, n))
        var = objective.variance(mean)
        return [
            (summed(slope, into) ** 2 * var[:, None], (y - mean) ** 2, var)
            for into in sums
        ]
    prob = objective.class_probabilities(final_margins(reader, X, n))
    first = [0.0] * len(sums)
    second = [0.0] * len(sums)
    for c in range(prob.shape[1]):
        label = np.full(n, c, dtype=np.asarray(y).dtype)
        z = row_terms(reader, X, n, label, w, attribution=attribution)
        for j, into in enumerate(sums):
            zj = summed(z, into)
            first[j] = first[j] + prob[:, c, None] * zj**2
            second[j] = second[j] + prob[:, c, None] * zj
    return [
        (np.maximum(a - b**2, 0.0), np.ones(n), np.ones(n))
        for a, b in zip(first, second, strict=True)
    ]
