"""Fused per-(row, tree) kernels, compiled by numba (the ``numba`` extra).

Imported only by :mod:`skl_treeinner._kernels`, which decides when they run
and splits the rows over threads. Every kernel here works on one block of
rows, releases the GIL (``nogil``) and walks each row's leaves once: the
margin before every boosting iteration, the loss gradient there, and what the
caller wants of it (per-leaf sums, per-row terms, per-iteration gradients) in
one pass, without the (rows x trees) intermediates of the numpy reference in
:mod:`skl_treeinner._tree_inner`.

The gradients repeat those of :mod:`skl_treeinner._objectives`, one branch per
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
def _row_residuals(
    leaves, i, yi, value, intercept, indptr, group, code, prm, f, g, res
):
    """res[t] = -g_{i,t}, the negative gradient tree t of row i was fitted to."""
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
def residual_terms(
    leaves,
    y,
    w,
    value,
    intercept,
    indptr,
    group,
    code,
    prm,
    inv_lr,
    tab_ptr,
    tab_col,
    tab_val,
    n_features,
    leaf_out,
    row_out,
):
    """Weighted negative gradients of every (row, tree), summed per leaf or per row.

    With an empty ``row_out``: leaf_out[leaf] += Σ_i w_i (-g_{i,t}) over the rows
    reaching each leaf (the table and ``inv_lr`` are not used). Otherwise:
    row_out[i, k] = Σ_t w_i (-g_{i,t}) / α_t · f_{t,k}(x_i), summed over outputs.
    """
    n, n_trees = leaves.shape
    f = np.empty(intercept.shape[0])
    g = np.empty(intercept.shape[0])
    res = np.empty(n_trees)
    weighted = w.shape[0] > 0
    per_row = row_out.shape[0] > 0
    for i in range(n):
        _row_residuals(
            leaves, i, y[i], value, intercept, indptr, group, code, prm, f, g, res
        )
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
def iteration_gradients(leaves, y, value, intercept, indptr, group, code, prm, out):
    """out[i, r, k] = gradient of output k at the margin before iteration r."""
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
def leaf_paths(leaves, tab_ptr, tab_col, tab_val, out):
    """out[i, c] = Σ_t path_table[leaf_{i,t}, c]: PreDecomp of every row."""
    n, n_trees = leaves.shape
    for i in range(n):
        for t in range(n_trees):
            leaf = leaves[i, t]
            for j in range(tab_ptr[leaf], tab_ptr[leaf + 1]):
                out[i, tab_col[j]] += tab_val[j]


@_jit
def margins(leaves, value, intercept, group, margin, scale):
    """Intercept plus the leaves' values per output, and their absolute sum."""
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


# -- TreeSHAP by leaf patterns ---------------------------------------------------------
#
# Path-dependent TreeSHAP (paper 004, Algorithm 2) of one tree is a sum over its
# leaves: leaf l with value v, whose path splits on the distinct features U (d of
# them), adds to feature u the Shapley value of the product game
#     v(S) = v * prod_{k in S} o_k * prod_{k not in S} z_k,
# where z_k is the product of cover(child) / cover(node) over the path's splits on k
# and o_k is 1 when x takes the leaf's side at all of them, else 0:
#     phi_u = v (o_u - z_u) sum_s W(s, d) [t^s] prod_{k != u} (z_k + o_k t),
# W(s, d) = s! (d - 1 - s)! / d!. It depends on x only through the pattern of o
# bits, so it is tabulated once per (leaf, pattern): 2^d rows of d values.

OK = 0
TOO_DEEP = 1
MISROUTED = 2


@_jit
def _shapley_weights(d):
    """W(s, d) for s = 0..d-1."""
    w = np.empty(d)
    for s in range(d):
        w[s] = math.exp(math.lgamma(s + 1) + math.lgamma(d - s) - math.lgamma(d + 1))
    return w


@_jit
def _pattern_values(v, z, d, pattern, weights, poly, quot, out):
    """out[u] = phi_u of one leaf for the o bits of ``pattern``."""
    poly[0] = 1.0
    for s in range(1, d + 1):
        poly[s] = 0.0
    for k in range(d):
        o = (pattern >> k) & 1
        for s in range(k + 1, 0, -1):
            poly[s] = z[k] * poly[s] + (poly[s - 1] if o else 0.0)
        poly[0] = z[k] * poly[0]
    for u in range(d):
        o = (pattern >> u) & 1
        if o:  # divide by (t + z_u): exact, leading coefficient 1
            quot[d - 1] = poly[d]
            for s in range(d - 1, 0, -1):
                quot[s - 1] = poly[s] - z[u] * quot[s]
        elif z[u] != 0.0:
            for s in range(d):
                quot[s] = poly[s] / z[u]
        else:  # the product of the other factors, directly
            quot[0] = 1.0
            for s in range(1, d):
                quot[s] = 0.0
            m = 0
            for k in range(d):
                if k == u:
                    continue
                ok = (pattern >> k) & 1
                for s in range(m + 1, 0, -1):
                    quot[s] = z[k] * quot[s] + (quot[s - 1] if ok else 0.0)
                quot[0] = z[k] * quot[0]
                m += 1
        total = 0.0
        for s in range(d):
            total += quot[s] * weights[s]
        out[u] = v * (o - z[u]) * total


@_jit
def tabulable_trees(offsets, left, parent, feature, max_unique, max_table, out):
    """out[t] = whether tree t's leaf patterns can be tabulated.

    No path splits on more than ``max_unique`` distinct features, and the
    tree's table (2^m · m values per leaf of m distinct path features) holds
    at most ``max_table`` values: :func:`treeshap_terms`' limits.
    """
    seen = np.empty(max(feature.max() + 1, 1), dtype=np.int64)
    seen[:] = -1
    for t in range(offsets.shape[0] - 1):
        total = 0
        ok = True
        for node in range(offsets[t], offsets[t + 1]):
            if left[node] >= 0:
                continue
            m = 0
            p = parent[node]
            while p >= 0:
                f = feature[p]
                if seen[f] != node:  # marked by this leaf: counted once
                    seen[f] = node
                    m += 1
                p = parent[p]
            if m > max_unique:
                ok = False
                break
            total += (1 << m) * m
        out[t] = ok and total <= max_table


@_jit
def _goes_left(x, thr, missing_left, strict):
    if math.isnan(x):
        return missing_left
    return x < thr if strict else x <= thr


@_jit
def treeshap_terms(
    X,
    leaves,
    res,
    trees,
    offsets,
    left,
    right,
    parent,
    feature,
    value,
    cover,
    threshold,
    missing_left,
    strict,
    tree_round,
    max_unique,
    max_table,
    out_rounds,
    out_rows,
):
    """Σ_i res[i, t] φ_t(x_i) of the given trees, per round or per row.

    With an empty ``out_rows``: out_rounds[round of t, k] += Σ_i res[i, t] φ_{t,k}
    (x_i); otherwise out_rows[i, k] += Σ_t res[i, t] φ_{t,k}(x_i). x's side at
    every split comes from ``threshold`` (``x < thr`` if ``strict`` else
    ``x <= thr``; NaN goes to the ``missing_left`` side), and the
    leaf it leads to must be the booster's own (``leaves``). Returns OK, or
    TOO_DEEP when a path splits on more than ``max_unique`` distinct features
    or a tree's table would hold more than ``max_table`` values, or MISROUTED
    when a row's leaf differs from the booster's.
    """
    n = X.shape[0]
    per_row = out_rows.shape[0] > 0
    poly = np.empty(max_unique + 1)
    quot = np.empty(max_unique + 1)
    for t in trees:
        lo, hi = offsets[t], offsets[t + 1]
        size = hi - lo
        # The leaves of the tree and their paths, root first.
        n_leaves = 0
        depth = 0
        for node in range(lo, hi):
            if left[node] < 0:
                n_leaves += 1
                d = 0
                p = parent[node]
                while p >= 0:
                    d += 1
                    p = parent[p]
                depth = max(depth, d)
        leaf_ids = np.empty(n_leaves, dtype=np.int64)
        path_node = np.empty((n_leaves, max(depth, 1)), dtype=np.int64)
        path_left = np.empty((n_leaves, max(depth, 1)), dtype=np.bool_)
        path_unique = np.empty((n_leaves, max(depth, 1)), dtype=np.int64)
        path_len = np.zeros(n_leaves, dtype=np.int64)
        uniq_feature = np.empty((n_leaves, max(depth, 1)), dtype=np.int64)
        uniq_zero = np.empty((n_leaves, max(depth, 1)))
        n_unique = np.zeros(n_leaves, dtype=np.int64)
        table_start = np.zeros(n_leaves + 1, dtype=np.int64)
        j = 0
        for node in range(lo, hi):
            if left[node] >= 0:
                continue
            leaf_ids[j] = node
            d = 0
            child = node
            p = parent[node]
            while p >= 0:
                d += 1
                child, p = p, parent[p]
            path_len[j] = d
            # Fill root first: walk again, writing from the end.
            child = node
            p = parent[node]
            s = d - 1
            while p >= 0:
                path_node[j, s] = p
                path_left[j, s] = left[p] == child
                child, p = p, parent[p]
                s -= 1
            m = 0
            for s in range(d):
                f = feature[path_node[j, s]]
                node_s = path_node[j, s]
                child_s = path_node[j, s + 1] if s + 1 < d else node
                ratio = cover[child_s] / cover[node_s] if cover[node_s] > 0 else 0.0
                u = -1
                for q in range(m):
                    if uniq_feature[j, q] == f:
                        u = q
                if u < 0:
                    u = m
                    uniq_feature[j, u] = f
                    uniq_zero[j, u] = 1.0
                    m += 1
                uniq_zero[j, u] *= ratio
                path_unique[j, s] = u
            if m > max_unique:
                return TOO_DEEP
            n_unique[j] = m
            table_start[j + 1] = table_start[j] + (1 << m) * m
            j += 1
        if table_start[n_leaves] > max_table:
            return TOO_DEEP
        table = np.empty(table_start[n_leaves])
        for j in range(n_leaves):
            m = n_unique[j]
            if m == 0:
                continue
            weights = _shapley_weights(m)
            for pattern in range(1 << m):
                at = table_start[j] + pattern * m
                _pattern_values(
                    value[leaf_ids[j]],
                    uniq_zero[j],
                    m,
                    pattern,
                    weights,
                    poly,
                    quot,
                    table[at : at + m],
                )
        counts = np.zeros(table_start[n_leaves])  # per (leaf, pattern), at its start
        goes_left = np.empty(size, dtype=np.bool_)
        r = tree_round[t]
        for i in range(n):
            for node in range(lo, hi):
                if left[node] >= 0:
                    goes_left[node - lo] = _goes_left(
                        X[i, feature[node]],
                        threshold[node],
                        missing_left[node],
                        strict,
                    )
            node = lo
            while left[node] >= 0:
                node = left[node] if goes_left[node - lo] else right[node]
            if node != leaves[i, t]:
                return MISROUTED
            w = res[i, t]
            for j in range(n_leaves):
                m = n_unique[j]
                if m == 0:
                    continue
                pattern = (1 << m) - 1
                for s in range(path_len[j]):
                    if goes_left[path_node[j, s] - lo] != path_left[j, s]:
                        pattern &= ~(1 << path_unique[j, s])
                at = table_start[j] + pattern * m
                if per_row:
                    for u in range(m):
                        out_rows[i, uniq_feature[j, u]] += w * table[at + u]
                else:
                    counts[at] += w
        if per_row:
            continue
        for j in range(n_leaves):
            m = n_unique[j]
            for pattern in range(1 << m):
                at = table_start[j] + pattern * m
                c = counts[at]
                if c == 0.0:
                    continue
                for u in range(m):
                    out_rounds[r, uniq_feature[j, u]] += c * table[at + u]
    return OK
