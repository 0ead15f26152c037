"""Fused per-(row, tree) kernels, compiled by numba (the ``numba`` extra).

Imported only by :mod:`skl_treeinner._kernels._compiled`, which decides when they run
and splits the rows over threads. Every kernel here works on one block of
rows, releases the GIL (``nogil``) and walks each row's leaves once: the
margin before every boosting iteration, the loss gradient there, and what the
caller wants of it (per-leaf sums, per-row terms, per-iteration gradients) in
one pass, without the (rows x trees) intermediates of the numpy reference in
:mod:`skl_treeinner._tree_inner`.

The gradients repeat those of :mod:`skl_treeinner._model._objectives`, one branch per
objective code (``_kernels.OBJECTIVE_CODES``); the tests check each against
its numpy original.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

_jit = njit(nogil=True, cache=True)

SQUARED_ERROR = 0
PSEUDO_HUBER = 1
SQUARED_LOG_ERROR = 2
LOGISTIC = 3
POISSON = 4
GAMMA = 5
TWEEDIE = 6
SOFTMAX = 7
HUBER = 8
FAIR = 9
ONE_VS_REST_LOGISTIC = 10
EXPONENTIAL = 11


@_jit
def _expit(x):
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


@_jit
def gradient1(code, prm, f, yi):
    """Loss gradient of a one-output objective at margin f for target yi."""
    if code == SQUARED_ERROR:
        return f - yi
    if code == PSEUDO_HUBER:
        z = f - yi
        return z / math.sqrt(1.0 + (z / prm) ** 2)
    if code == SQUARED_LOG_ERROR:
        p = max(f, -1.0 + 1e-6)
        return (math.log1p(p) - math.log1p(yi)) / (p + 1.0)
    if code == LOGISTIC:
        g = _expit(f) - yi
        return g * prm if yi == 1.0 else g
    if code == POISSON:
        return math.exp(f) - yi
    if code == GAMMA:
        return 1.0 - yi * math.exp(-f)
    if code == TWEEDIE:
        return -yi * math.exp((1.0 - prm) * f) + math.exp((2.0 - prm) * f)
    if code == HUBER:
        return min(max(f - yi, -prm), prm)
    if code == FAIR:
        z = f - yi
        return prm * z / (abs(z) + prm)
    # EXPONENTIAL
    return -yi * math.exp(-f) + (1.0 - yi) * math.exp(f)


@njit(nogil=True, cache=True, inline="always")
def same_values(X, row, src, cols, lo, hi):
    """Whether rows ``row`` and ``src`` of X hold the same values of ``cols[lo:hi]``.

    NaN equals NaN (both missing): the column test's kernels give a draw that
    lends a row its own values of a unit the row's own term, without a walk.
    """
    for q in range(lo, hi):
        a, v = X[row, cols[q]], X[src, cols[q]]
        if a != v and not (math.isnan(a) and math.isnan(v)):
            return False
    return True


@njit(nogil=True, cache=True, inline="always")
def gradient(code, prm, f, yi, g):
    """Fill g (n_outputs,) with the loss gradient at margins f for target yi."""
    if code == SOFTMAX:
        top = f[0]
        for k in range(1, f.shape[0]):
            top = max(top, f[k])
        total = 0.0
        for k in range(f.shape[0]):
            g[k] = math.exp(f[k] - top)
            total += g[k]
        for k in range(f.shape[0]):
            g[k] /= total
            if k == yi:
                g[k] -= 1.0
    elif code == ONE_VS_REST_LOGISTIC:
        s = prm
        for k in range(f.shape[0]):
            g[k] = s * (_expit(s * f[k]) - (1.0 if k == yi else 0.0))
    else:
        g[0] = gradient1(code, prm, f[0], yi)


@njit(nogil=True, cache=True, inline="always")
def _row_residuals(leaves, i, yi, walk, f, g, res):
    """res[t] = -g_{i,t}, the negative gradient tree t of row i was fitted to.

    ``walk``: :class:`~skl_treeinner._kernels._structures.Walk`.
    """
    value, intercept = walk.value, walk.intercept
    indptr, group = walk.indptr, walk.group
    code, prm = walk.code, walk.prm
    if intercept.shape[0] == 1:  # one output: scalars only
        m = intercept[0]
        for r in range(indptr.shape[0] - 1):
            # Every tree of iteration r was fitted at the margin before r.
            gr = gradient1(code, prm, m, yi)
            for t in range(indptr[r], indptr[r + 1]):
                res[t] = -gr
                m += value[leaves[i, t]]
        return
    for k in range(f.shape[0]):
        f[k] = intercept[k]
    for r in range(indptr.shape[0] - 1):
        gradient(code, prm, f, yi, g)
        for t in range(indptr[r], indptr[r + 1]):
            k = group[t]
            res[t] = -g[k]
            f[k] += value[leaves[i, t]]


@_jit
def residual_terms(leaves, y, w, walk, table, leaf_out, row_out):
    """Weighted negative gradients of every (row, tree), summed per leaf or per row.

    ``walk`` and ``table``: the model's
    :class:`~skl_treeinner._kernels._structures.Walk` and
    :class:`~skl_treeinner._kernels._structures.PathTable`. With an empty
    ``row_out``: leaf_out[leaf] += Σ_i w_i (-g_{i,t}) over the rows reaching
    each leaf (the table is not used). Otherwise: row_out[i, k] =
    Σ_t w_i (-g_{i,t}) / α_t · f_{t,k}(x_i), summed over outputs.
    """
    n, n_trees = leaves.shape
    n_outputs = walk.intercept.shape[0]
    group, inv_lr = walk.group, walk.inv_lr
    tab_ptr, tab_col, tab_val, n_features = table
    f = np.empty(n_outputs)
    g = np.empty(n_outputs)
    res = np.empty(n_trees)
    weighted = w.shape[0] > 0
    per_row = row_out.shape[0] > 0
    for i in range(n):
        _row_residuals(leaves, i, y[i], walk, f, g, res)
        wi = w[i] if weighted else 1.0
        if not per_row:
            for t in range(n_trees):
                leaf_out[leaves[i, t]] += wi * res[t]
            continue
        for t in range(n_trees):
            s = wi * res[t] * inv_lr[t]
            leaf = leaves[i, t]
            shift = group[t] * n_features
            for j in range(tab_ptr[leaf], tab_ptr[leaf + 1]):
                row_out[i, tab_col[j] - shift] += s * tab_val[j]


@_jit
def tree_residuals(leaves, y, w, walk, out):
    """out[c, t, i] = w_i (-g_{i,t}) / α_t at target y[c, i]: TreeSHAP's factors.

    Tree-major, so that the TreeSHAP kernels read each tree's rows in order.
    """
    channels, n = y.shape
    n_outputs = walk.intercept.shape[0]
    inv_lr = walk.inv_lr
    f = np.empty(n_outputs)
    g = np.empty(n_outputs)
    res = np.empty(leaves.shape[1])
    weighted = w.shape[0] > 0
    for c in range(channels):
        for i in range(n):
            _row_residuals(leaves, i, y[c, i], walk, f, g, res)
            wi = w[i] if weighted else 1.0
            for t in range(res.shape[0]):
                out[c, t, i] = wi * res[t] * inv_lr[t]


@_jit
def iteration_gradients(leaves, y, walk, out):
    """out[i, r, k] = gradient of output k at the margin before iteration r."""
    value, intercept = walk.value, walk.intercept
    indptr, group = walk.indptr, walk.group
    code, prm = walk.code, walk.prm
    n = leaves.shape[0]
    n_outputs = intercept.shape[0]
    f = np.empty(n_outputs)
    g = np.empty(n_outputs)
    for i in range(n):
        for k in range(n_outputs):
            f[k] = intercept[k]
        for r in range(indptr.shape[0] - 1):
            gradient(code, prm, f, y[i], g)
            for k in range(n_outputs):
                out[i, r, k] = g[k]
            for t in range(indptr[r], indptr[r + 1]):
                f[group[t]] += value[leaves[i, t]]


@_jit
def leaf_paths(leaves, table, out):
    """out[i, c] = Σ_t path_table[leaf_{i,t}, c]: PreDecomp of every row."""
    tab_ptr, tab_col, tab_val = table.ptr, table.col, table.val
    n, n_trees = leaves.shape
    for i in range(n):
        for t in range(n_trees):
            leaf = leaves[i, t]
            for j in range(tab_ptr[leaf], tab_ptr[leaf + 1]):
                out[i, tab_col[j]] += tab_val[j]


@_jit
def margins(leaves, walk, margin, scale):
    """Intercept plus the leaves' values per output, and their absolute sum."""
    value, intercept, group = walk.value, walk.intercept, walk.group
    n, n_trees = leaves.shape
    for i in range(n):
        for k in range(intercept.shape[0]):
            margin[i, k] = intercept[k]
            scale[i, k] = abs(intercept[k])
        for t in range(n_trees):
            v = value[leaves[i, t]]
            margin[i, group[t]] += v
            scale[i, group[t]] += abs(v)


@_jit
def global_leaves(local, offsets, out):
    """out[i, t] = offsets[t] + local[i, t], from the booster's own leaf ids."""
    n, n_trees = local.shape
    for i in range(n):
        for t in range(n_trees):
            out[i, t] = offsets[t] + np.int64(local[i, t])
