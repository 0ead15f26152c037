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

from typing import NamedTuple

import numpy as np
from numba import njit

from ._residuals import gradient, same_values
from ._treeshap import takes_left

_jit = njit(nogil=True, cache=True)

OK = 0
#: A row's leaf by the split rule differs from the booster's own.
MISROUTED = 2


class _Row(NamedTuple):
    """One row's scratch: the (unit, tree) pairs of its paths and its own terms.

    ``trees[ptr[u]:ptr[u + 1]]`` are the trees whose path for the row tests
    unit u (in boosting order), ``nodes`` where each path first tests it,
    ``own_s`` the unit's PreDecomp in the row's own leaf of each; ``go`` the
    side the row takes at that node (1 left, 0 right) where its own path
    tests the unit nowhere below (-1: it does). ``alt`` caches the leaf the
    other side leads to with the row's own values (-1: not walked yet; -2:
    that walk tests the unit again) and ``alt_s`` the unit's PreDecomp there.
    ``margin`` (rounds, outputs) the row's own margin before every round and
    ``own_g`` (rounds, channels, outputs) its gradients there. The ``path_``
    arrays and the rest are scratch.
    """

    path_unit: np.ndarray
    path_tree: np.ndarray
    path_node: np.ndarray
    path_s: np.ndarray
    path_go: np.ndarray
    trees: np.ndarray
    nodes: np.ndarray
    own_s: np.ndarray
    go: np.ndarray
    alt: np.ndarray
    alt_s: np.ndarray
    ptr: np.ndarray
    fill: np.ndarray
    margin: np.ndarray
    own_g: np.ndarray
    f: np.ndarray
    g: np.ndarray
    delta: np.ndarray
    pending: np.ndarray


@_jit
def _leaf(X, i, src, u, root, unit_of, left, right, feature, rule):
    """Return the leaf row i reaches from node ``root``, unit u's values from src."""
    threshold, miss, strict = rule
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
    """Return unit u's PreDecomp in ``node`` (its columns' path-table entries).

    The path table's CSR arrays (the fields of a ``PathTable``).
    """
    s = 0.0
    for e in range(tab_ptr[node], tab_ptr[node + 1]):
        if unit_of[tab_col[e] - shift] == u:
            s += tab_val[e]
    return s


@_jit
def path_bound(trees):
    """Return the sum over trees of their deepest leaf's depth."""
    offsets, left, right = trees.offsets, trees.left, trees.right
    stack = np.empty(left.shape[0] + 1, np.int64)
    depth = np.empty(left.shape[0] + 1, np.int64)
    total = 0
    for t in range(offsets.shape[0] - 1):
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
def permuted_terms(block, walk, trees, rule, table, units):
    """out[c, i, u] = mean over draws of row i's term of unit u, resampled.

    ``block`` (:class:`~skl_treeinner._kernels._structures.Block`) holds the
    rows, their draws and ``out``; ``walk``, ``trees``, ``rule`` and
    ``table`` are the model's, ``units`` the units
    (:mod:`skl_treeinner._kernels._structures`). Of the trees that split on a
    unit, only the ones whose path for the row tests it can change, and the
    row's own walk finds them. ``own[c, i, u]`` is row i's own term of unit u:
    a draw whose source row holds the same values of the unit (NaN alike)
    reaches the same leaves, so it takes that term without a walk; an empty
    ``own`` (no channel) walks every draw. Returns OK, or MISROUTED when the
    rule sends a row to another leaf than the booster (nothing is then
    trusted).
    """
    n_outputs = walk.intercept.shape[0]
    n_rounds = walk.indptr.shape[0] - 1
    n_units = units.tree_ptr.shape[0] - 1
    # A unit can change a row's leaf only in the trees whose path for the row
    # tests it: elsewhere the resampled row follows the same path to the same
    # leaf, where the unit's PreDecomp is zero (Def. 1). So each row's trees
    # of each unit are those: (unit, tree) pairs of its paths, by unit.
    cap = path_bound(trees)
    # Per entry of the row's trees, the unit's PreDecomp in the row's own
    # leaf; per round and channel, the row's own gradient. A resampled walk
    # that lands in the row's own leaf takes the first, and one whose earlier
    # trees left its margin as it was (delta exactly 0) takes the second: the
    # numbers the walk would compute, computed once per row instead of once a
    # draw.
    pair_i, pair_f = np.empty(cap, np.int64), np.empty(cap)
    row = _Row(
        pair_i, pair_i.copy(), pair_i.copy(), pair_f, pair_i.copy(), pair_i.copy(),
        pair_i.copy(), pair_f.copy(), pair_i.copy(), pair_i.copy(), pair_f.copy(),
        np.empty(n_units + 1, np.int64), np.empty(n_units, np.int64),
        np.empty((n_rounds, n_outputs)),
        np.empty((n_rounds, block.y.shape[0], n_outputs)), np.empty(n_outputs),
        np.empty(n_outputs), np.empty(n_outputs), np.empty(n_outputs),
    )  # fmt: skip
    for i in range(block.leaves.shape[0]):
        if not _own_paths(block, i, walk, trees, rule, table, units, row):
            return MISROUTED
        _draws(block, i, walk, trees, rule, table, units, row)
    return OK


@_jit
def _own_paths(block, i, walk, trees, rule, table, units, row):
    """Fill ``row`` for row i of the block; False where the rule misroutes it."""
    X, leaves, y = block.X, block.leaves, block.y
    at = block.start + i
    offsets, left = trees.offsets, trees.left
    right, feature = trees.right, trees.feature
    threshold, missing_left, strict = rule
    value, intercept = walk.value, walk.intercept
    indptr, group = walk.indptr, walk.group
    unit_of, n_features = units.unit_of, table.n_features
    n_units = units.tree_ptr.shape[0] - 1
    n_outputs = intercept.shape[0]
    path_unit, path_tree, path_node = row.path_unit, row.path_tree, row.path_node
    path_s, tab_ptr, tab_col, tab_val = row.path_s, table.ptr, table.col, table.val
    path_go = row.path_go
    row_trees, row_nodes, own_s = row.trees, row.nodes, row.own_s
    row_ptr, fill, f, g = row.ptr, row.fill, row.f, row.g
    margin, own_g = row.margin, row.own_g
    # The booster's leaves must be the rule's, tree by tree; the walk notes
    # the units each path tests (once per path).
    m = 0
    for t in range(leaves.shape[1]):
        node = offsets[t]
        first = m
        while left[node] >= 0:
            col = feature[node]
            u = unit_of[col]
            added = False
            if u >= 0:
                seen = False
                for e in range(first, m):
                    if path_unit[e] == u:
                        seen = True
                        path_go[e] = -1  # tested again below: walk each draw
                        break
                if not seen:
                    path_unit[m] = u
                    path_tree[m] = t
                    path_node[m] = node
                    added = True
                    m += 1
            goes_left = takes_left(
                X[at, col], threshold[node], missing_left[node], strict
            )
            if added:  # the side the row takes where it first tests the unit
                path_go[m - 1] = 1 if goes_left else 0
            node = left[node] if goes_left else right[node]
        if node != leaves[i, t]:
            return False
        # Each unit's PreDecomp in the leaf (what _unit_sum adds up, in the
        # same order): one pass over the leaf's entries for the path's units.
        for e in range(first, m):
            path_s[e] = 0.0
        shift = group[t] * n_features
        for e in range(tab_ptr[node], tab_ptr[node + 1]):
            u = unit_of[tab_col[e] - shift]
            for q in range(first, m):
                if path_unit[q] == u:
                    path_s[q] += tab_val[e]
                    break
    for u in range(n_units + 1):
        row_ptr[u] = 0
    for e in range(m):
        row_ptr[path_unit[e] + 1] += 1
    for u in range(n_units):
        row_ptr[u + 1] += row_ptr[u]
        fill[u] = row_ptr[u]
    for e in range(m):  # trees in boosting order within each unit
        u = path_unit[e]
        q = fill[u]
        row_trees[q], row_nodes[q], own_s[q] = path_tree[e], path_node[e], path_s[e]
        row.go[q], row.alt[q] = path_go[e], -1
        fill[u] += 1
    # The row's own margin before every round, and its gradients there.
    for k in range(n_outputs):
        f[k] = intercept[k]
    for r in range(indptr.shape[0] - 1):
        for k in range(n_outputs):
            margin[r, k] = f[k]
        for c in range(y.shape[0]):
            gradient(walk.code, walk.prm, f, y[c, i], g)
            for k in range(n_outputs):
                own_g[r, c, k] = g[k]
        for t in range(indptr[r], indptr[r + 1]):
            f[group[t]] += value[leaves[i, t]]
    return True


@_jit
def _other_side(X, at, u, root, goes_left, left, right, feature, rule, unit_of):
    """Return the leaf the side of ``root`` row ``at`` does not take leads to, or -2.

    ``goes_left``: the side the row takes at ``root``. -2 where the walk from
    the other side tests unit u again (a draw's value then decides more).
    """
    threshold, missing_left, strict = rule
    node = right[root] if goes_left else left[root]
    while left[node] >= 0:
        col = feature[node]
        if unit_of[col] == u:
            return -2
        if takes_left(X[at, col], threshold[node], missing_left[node], strict):
            node = left[node]
        else:
            node = right[node]
    return node


@_jit
def _draws(block, i, walk, trees, rule, table, units, row):
    """Add row i's resampled terms of every unit, over the draws, to ``out``."""
    X, leaves, perm, y, w, own, out = (
        block.X, block.leaves, block.perm, block.y, block.w, block.own, block.out
    )  # fmt: skip
    value, group, inv_lr = walk.value, walk.group, walk.inv_lr
    code, prm, tree_round = walk.code, walk.prm, trees.tree_round
    unit_of, col_ptr, unit_cols = units.unit_of, units.col_ptr, units.cols
    n_features = table.n_features
    n_units = units.tree_ptr.shape[0] - 1
    n_draws = perm.shape[0]
    n_outputs = walk.intercept.shape[0]
    channels = y.shape[0]
    row_ptr, delta, pending, f, g = row.ptr, row.delta, row.pending, row.f, row.g
    row_trees, row_nodes, own_s = row.trees, row.nodes, row.own_s
    go, alt, alt_s = row.go, row.alt, row.alt_s
    margin, own_g = row.margin, row.own_g
    left, right, feature = trees.left, trees.right, trees.feature
    threshold, missing_left, strict = rule
    tab_ptr, tab_col, tab_val = table.ptr, table.col, table.val
    shortcut = own.shape[0] > 0
    per_draw = 1.0 / n_draws
    at = block.start + i
    wi = w[i] if w.shape[0] > 0 else 1.0
    for b in range(n_draws):
        src = perm[b, at]
        for u in range(n_units):
            if row_ptr[u + 1] == row_ptr[u]:
                continue  # none of the row's paths tests it: its terms are 0
            lo_c, hi_c = col_ptr[u], col_ptr[u + 1]
            if shortcut and same_values(X, at, src, unit_cols, lo_c, hi_c):
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
                kk = group[t]
                node = row_nodes[q]
                same_side = False
                if go[q] >= 0:  # the own path tests the unit here only
                    x = X[src, feature[node]]
                    goes_left = takes_left(
                        x, threshold[node], missing_left[node], strict
                    )
                    same_side = goes_left == (go[q] == 1)
                    if not same_side and alt[q] == -1:  # first time: walk, keep
                        alt[q] = _other_side(X, at, u, node, go[q] == 1, left, right,
                                             feature, rule, unit_of)  # fmt: skip
                        if alt[q] >= 0:
                            alt_s[q] = _unit_sum(alt[q], u, kk * n_features, unit_of,
                                                 tab_ptr, tab_col, tab_val)  # fmt: skip
                if same_side:  # the row's own leaf
                    node = leaves[i, t]
                    s = own_s[q]
                elif go[q] >= 0 and alt[q] >= 0:  # the other side's, walked before
                    node = alt[q]
                    s = alt_s[q]
                    pending[kk] += value[node] - value[leaves[i, t]]
                else:
                    node = _leaf(X, at, src, u, node, unit_of, left, right, feature,
                                 rule)  # fmt: skip
                    if node == leaves[i, t]:
                        s = own_s[q]
                    else:
                        s = _unit_sum(node, u, kk * n_features, unit_of, tab_ptr,
                                      tab_col, tab_val)  # fmt: skip
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
