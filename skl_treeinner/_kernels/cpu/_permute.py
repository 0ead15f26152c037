"""The held-out randomization kernel, compiled by numba (the ``numba`` extra).

Imported only by :mod:`skl_treeinner._scoring._permutation`. For every held-out row,
every draw and every unit (a column, or columns resampled together), the
row's TreeInner term of the unit is recomputed with the unit's values taken
from another held-out row (the draw's source row) and every other value kept.
Only the trees that split on the unit can change: a row reaches the same
leaf of every other tree, and the unit's PreDecomp is zero there (Def. 1).
So each unit reroutes only its own trees, by the library's split rule
(:class:`~skl_treeinner._model._ensemble.SplitRule`), and carries the change of the
margin those trees make into the gradients of the later ones (Eq. 21). Every
row's own leaves are checked against the booster's first.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._residuals import gradient, same_values
from ._treeshap import takes_left

_jit = njit(nogil=True, cache=True)

OK = 0
#: A row's leaf by the split rule differs from the booster's own.
MISROUTED = 2


@_jit
def _leaf(X, i, src, u, root, unit_of, left, right, feature, threshold, miss, strict):
    """Return the leaf row i reaches from node ``root``, unit u's values from src."""
    node = root
    while left[node] >= 0:
        f = feature[node]
        row = src if unit_of[f] == u else i
        if takes_left(X[row, f], threshold[node], miss[node], strict):
            node = left[node]
        else:
            node = right[node]
    return node


@_jit
def _unit_sum(node, u, shift, unit_of, tab_ptr, tab_col, tab_val):
    """Return unit u's PreDecomp in ``node`` (its columns' path-table entries)."""
    s = 0.0
    for e in range(tab_ptr[node], tab_ptr[node + 1]):
        if unit_of[tab_col[e] - shift] == u:
            s += tab_val[e]
    return s


@_jit
def path_bound(offsets, left, right, n_trees):
    """Return the sum over trees of their deepest leaf's depth."""
    stack = np.empty(left.shape[0] + 1, np.int64)
    depth = np.empty(left.shape[0] + 1, np.int64)
    total = 0
    for t in range(n_trees):
        top, deepest = 0, 0
        stack[0], depth[0] = offsets[t], 0
        while top >= 0:
            node, d = stack[top], depth[top]
            top -= 1
            if left[node] >= 0:
                stack[top + 1], depth[top + 1] = left[node], d + 1
                stack[top + 2], depth[top + 2] = right[node], d + 1
                top += 2
            elif d > deepest:
                deepest = d
        total += deepest
    return total


@_jit
def permuted_terms(
    X,
    start,
    leaves,
    perm,
    y,
    w,
    value,
    intercept,
    indptr,
    group,
    tree_round,
    code,
    prm,
    inv_lr,
    offsets,
    left,
    right,
    feature,
    threshold,
    missing_left,
    strict,
    unit_of,
    unit_ptr,
    unit_trees,
    col_ptr,
    unit_cols,
    tab_ptr,
    tab_col,
    tab_val,
    n_features,
    own,
    out,
):
    """out[c, i, u] = mean over draws of row i's term of unit u, resampled.

    Rows ``i`` of the block are rows ``start + i`` of ``X`` (the rows in the
    split rule's dtype, NaN missing); ``leaves``, ``y`` (C channels of
    targets, shape (C, rows)), ``w`` and ``out`` (C, rows, n_units) are the
    block's. ``perm[b, start + i]`` is the row of X that lends row i its
    unit values in draw b. ``unit_of[k]`` is the unit of model column k (or
    -1); ``unit_ptr`` has one entry more than there are units (the trees
    that split on unit u, ``unit_trees[unit_ptr[u]:unit_ptr[u + 1]]``, are
    not walked: of those, only the ones whose path for the row tests u can
    change, and the row's own walk finds them), and
    ``unit_cols[col_ptr[u]:col_ptr[u + 1]]`` are its columns.
    ``own[c, i, u]`` is row i's own term of unit u (the block's rows): a
    draw whose source row holds the same values of the unit (NaN alike)
    reaches the same leaves, so it takes that term without a walk; an empty
    ``own`` (no channel) walks every draw.
    Returns OK, or MISROUTED when the rule sends a row to another leaf than
    the booster (nothing is then trusted).
    """
    n, n_trees = leaves.shape
    n_draws = perm.shape[0]
    channels = y.shape[0]
    n_outputs = intercept.shape[0]
    n_rounds = indptr.shape[0] - 1
    n_units = unit_ptr.shape[0] - 1
    margin = np.empty((n_rounds, n_outputs))
    f = np.empty(n_outputs)
    g = np.empty(n_outputs)
    delta = np.empty(n_outputs)
    pending = np.empty(n_outputs)
    weighted = w.shape[0] > 0
    shortcut = own.shape[0] > 0
    per_draw = 1.0 / n_draws
    # A unit can change a row's leaf only in the trees whose path for the row
    # tests it: elsewhere the resampled row follows the same path to the same
    # leaf, where the unit's PreDecomp is zero (Def. 1). So each row's trees
    # of each unit are those: (unit, tree) pairs of its paths, by unit.
    cap = path_bound(offsets, left, right, n_trees)
    path_unit = np.empty(cap, np.int64)
    path_tree = np.empty(cap, np.int64)
    path_node = np.empty(cap, np.int64)
    row_trees = np.empty(cap, np.int64)
    # Where each row's path first tests the unit: above it the resampled
    # row follows the row's own path, so its walk starts there.
    row_nodes = np.empty(cap, np.int64)
    # Per entry of row_trees, the unit's PreDecomp in the row's own leaf; per
    # round and channel, the row's own gradient. A resampled walk that lands
    # in the row's own leaf takes the first, and one whose earlier trees left
    # its margin as it was (delta exactly 0) takes the second: the numbers
    # the walk would compute, computed once per row instead of once a draw.
    own_s = np.empty(cap)
    own_g = np.empty((n_rounds, channels, n_outputs))
    row_ptr = np.empty(n_units + 1, np.int64)
    fill = np.empty(n_units, np.int64)
    for i in range(n):
        row = start + i
        # The booster's leaves must be the rule's, tree by tree; the walk
        # notes the units each path tests (once per path).
        m = 0
        for t in range(n_trees):
            node = offsets[t]
            first = m
            while left[node] >= 0:
                col = feature[node]
                u = unit_of[col]
                if u >= 0:
                    seen = False
                    for e in range(first, m):
                        if path_unit[e] == u:
                            seen = True
                            break
                    if not seen:
                        path_unit[m] = u
                        path_tree[m] = t
                        path_node[m] = node
                        m += 1
                if takes_left(X[row, col], threshold[node], missing_left[node], strict):
                    node = left[node]
                else:
                    node = right[node]
            if node != leaves[i, t]:
                return MISROUTED
        for u in range(n_units + 1):
            row_ptr[u] = 0
        for e in range(m):
            row_ptr[path_unit[e] + 1] += 1
        for u in range(n_units):
            row_ptr[u + 1] += row_ptr[u]
            fill[u] = row_ptr[u]
        for e in range(m):  # trees in boosting order within each unit
            u = path_unit[e]
            row_trees[fill[u]] = path_tree[e]
            row_nodes[fill[u]] = path_node[e]
            fill[u] += 1
        for u in range(n_units):
            for q in range(row_ptr[u], row_ptr[u + 1]):
                t = row_trees[q]
                own_s[q] = _unit_sum(
                    leaves[i, t], u, group[t] * n_features, unit_of, tab_ptr,
                    tab_col, tab_val,
                )  # fmt: skip
        # The row's own margin before every round, and its gradients there.
        for k in range(n_outputs):
            f[k] = intercept[k]
        for r in range(n_rounds):
            for k in range(n_outputs):
                margin[r, k] = f[k]
            for c in range(channels):
                gradient(code, prm, f, y[c, i], g)
                for k in range(n_outputs):
                    own_g[r, c, k] = g[k]
            for t in range(indptr[r], indptr[r + 1]):
                f[group[t]] += value[leaves[i, t]]
        wi = w[i] if weighted else 1.0
        for b in range(n_draws):
            src = perm[b, row]
            for u in range(n_units):
                if row_ptr[u + 1] == row_ptr[u]:
                    continue  # none of the row's paths tests it: its terms are 0
                if shortcut and same_values(
                    X, row, src, unit_cols, col_ptr[u], col_ptr[u + 1]
                ):
                    for c in range(channels):
                        out[c, i, u] += own[c, i, u] * per_draw
                    continue
                for k in range(n_outputs):
                    delta[k] = 0.0
                    pending[k] = 0.0
                current = -1
                unshifted = True  # every delta[k] is exactly 0
                for q in range(row_ptr[u], row_ptr[u + 1]):
                    t = row_trees[q]
                    r = tree_round[t]
                    if r != current:  # the trees of a round share its margin
                        for k in range(n_outputs):
                            delta[k] += pending[k]
                            pending[k] = 0.0
                            if delta[k] != 0.0:
                                unshifted = False
                        current = r
                    node = _leaf(
                        X, row, src, u, row_nodes[q], unit_of, left, right, feature,
                        threshold, missing_left, strict,
                    )  # fmt: skip
                    kk = group[t]
                    if node == leaves[i, t]:
                        s = own_s[q]
                    else:
                        s = _unit_sum(
                            node, u, kk * n_features, unit_of, tab_ptr, tab_col,
                            tab_val,
                        )  # fmt: skip
                        pending[kk] += value[node] - value[leaves[i, t]]
                    if s == 0.0:
                        continue
                    scale = wi * inv_lr[t] * s * per_draw
                    if unshifted:
                        for c in range(channels):
                            out[c, i, u] -= scale * own_g[r, c, kk]
                        continue
                    for k in range(n_outputs):
                        f[k] = margin[r, k] + delta[k]
                    for c in range(channels):
                        gradient(code, prm, f, y[c, i], g)
                        out[c, i, u] -= scale * g[kk]
    return OK
