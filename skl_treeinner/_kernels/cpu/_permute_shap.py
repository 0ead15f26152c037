"""The column test's resampling kernel for TreeSHAP, compiled by numba.

Imported only by :mod:`skl_treeinner._scoring._permutation`. As
:mod:`skl_treeinner._kernels.cpu._permute` does for PreDecomp, it recomputes
every held-out row's TreeInner term of every unit (a column, or columns drawn
together) with the unit's values taken from another held-out row, every other
value kept, without scoring the rows again.

A row's o bit of a feature on a leaf's path
(:mod:`skl_treeinner._kernels.cpu._treeshap`) depends on its value of that
feature alone, so drawing unit U's values changes only the o bits of U's
features, and U's TreeSHAP on each leaf follows from moments of the row's own
bits computed once per row and leaf
(:mod:`skl_treeinner._kernels.cpu._shap_moments`), tabulated per pattern as rows
share patterns; a draw then costs a few operations per leaf whose bits of U it
changes. The draw's leaf in the tree is the one whose o bits are all 1 (the
row's own leaf where none of U's leaves is). Trees run in boosting order over a
block of rows, each (row, draw, unit) carrying the change of the margin its
leaves made into the gradients of the later rounds (Eq. 21).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._residuals import gradient, gradient1, same_values
from ._shap_moments import drawn_value, pattern_poly, unit_moments
from ._tree_paths import leaf_paths, nodes_root_first
from ._treeshap import (
    MAX_DENSE_FEATURES,
    MAX_PATH_FEATURES,
    MIN_TABLE_ENTRIES,
    MISROUTED,
    OK,
    TABLE_ENTRIES_PER_ROW,
    TOO_DEEP,
    _shapley_weights,
    takes_left,
)

_jit = njit(nogil=True, cache=True)

#: At most this many (row, draw, unit, output) states in a block of rows.
STATES_PER_BLOCK = 1 << 19


@_jit
def _node_patterns(X, row, lo, order, n_order, left, right, feature, threshold,
                   miss, strict, node_bit, pat):  # fmt: skip
    """pat[node - lo] = the o bits so far of the leaves below, for row ``row``."""
    pat[0] = -1
    for k in range(n_order):
        node = lo + order[k]
        if left[node] < 0:
            continue
        here = takes_left(X[row, feature[node]], threshold[node], miss[node], strict)
        above = pat[order[k]]
        off = above & ~(np.int64(1) << node_bit[order[k]])
        pat[left[node] - lo] = above if here else off
        pat[right[node] - lo] = off if here else above


@_jit
def _tree_layout(lo, hi, left, right, parent, feature, cover, unit_of, rows):
    """One tree's leaves, their paths' features and the units on each leaf.

    Returns ``(order, n_order, node_bit, leaf_ids, n_unique, uniq_zero,
    entry_ptr, entry_unit, entry_mask, bit_ptr, bits, table_start, m_sum)``:
    the nodes root first; per split its feature's local number on the
    leaves below; per leaf its node, its m distinct path features' z, and
    its entries (``entry_ptr[j]:entry_ptr[j + 1]``): a unit, the mask of its
    local features and the features (``bits[bit_ptr[e]:bit_ptr[e + 1]]``);
    per leaf where its table of moments starts (``table_start[j + 1] ==
    table_start[j]``: none, evaluated per row) and how many moments it has.
    Returns an empty ``order`` when a path has over MAX_PATH_FEATURES features.
    """
    (leaf_ids, _, _, _, _, uniq_feature, uniq_zero, n_unique, node_bit) = leaf_paths(
        lo, hi, left, parent, feature, cover
    )  # fmt: skip
    n_leaves = leaf_ids.shape[0]
    width = uniq_feature.shape[1]
    entry_ptr = np.zeros(n_leaves + 1, np.int64)
    entry_unit = np.empty(n_leaves * width, np.int64)
    entry_mask = np.empty(n_leaves * width, np.int64)
    bit_ptr = np.zeros(n_leaves * width + 1, np.int64)
    bits = np.empty(n_leaves * width, np.int64)
    table_start = np.zeros(n_leaves + 1, np.int64)
    m_sum = np.zeros(n_leaves, np.int64)
    budget = max(MIN_TABLE_ENTRIES, TABLE_ENTRIES_PER_ROW * rows)
    n_entries = 0
    n_bits = 0
    for j in range(n_leaves):
        m = n_unique[j]
        if m > MAX_PATH_FEATURES:
            return (np.empty(0, np.int64), 0, node_bit, leaf_ids, n_unique,
                    uniq_zero, entry_ptr, entry_unit, entry_mask, bit_ptr,
                    bits, table_start, m_sum)  # fmt: skip
        # The units on the leaf, each with its local features.
        for q in range(m):
            unit = unit_of[uniq_feature[j, q]]
            if unit < 0:
                continue
            known = False
            for e in range(entry_ptr[j], n_entries):
                if entry_unit[e] == unit:
                    known = True
            if known:
                continue
            entry_unit[n_entries] = unit
            mask = np.int64(0)
            for q2 in range(q, m):
                if unit_of[uniq_feature[j, q2]] == unit:
                    mask |= np.int64(1) << q2
                    bits[n_bits] = q2
                    n_bits += 1
            entry_mask[n_entries] = mask
            n_entries += 1
            bit_ptr[n_entries] = n_bits
        entry_ptr[j + 1] = n_entries
        m_sum[j] = bit_ptr[n_entries] - bit_ptr[entry_ptr[j]]
        dense = (
            m_sum[j] > 0
            and m <= MAX_DENSE_FEATURES
            and table_start[j] + (1 << m) * m_sum[j] <= budget
        )
        table_start[j + 1] = table_start[j] + ((1 << m) * m_sum[j] if dense else 0)
    order, tail = nodes_root_first(lo, hi, left, right)
    return (order, tail, node_bit, leaf_ids, n_unique, uniq_zero, entry_ptr,
            entry_unit, entry_mask, bit_ptr, bits, table_start, m_sum)  # fmt: skip


@_jit
def permuted_treeshap_terms(
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
    code,
    prm,
    inv_lr,
    offsets,
    left,
    right,
    parent,
    feature,
    cover,
    threshold,
    missing_left,
    strict,
    unit_of,
    col_ptr,
    unit_cols,
    tree_unit_ptr,
    tree_units,
    own,
    out,
):
    """out[c, i, u] = mean over draws of row i's TreeSHAP term of unit u, resampled.

    The arguments are :func:`~skl_treeinner._kernels.cpu._permute.permuted_terms`'
    (``X`` every held-out row, the block's ``leaves``, ``y`` (C, rows),
    ``w``, ``own`` and ``out`` (C, rows, n_units), ``perm[b, start + i]``
    the row lending row i its unit values in draw b), with the trees' shape
    for TreeSHAP (``parent``, ``cover``) in place of the path table, and
    the units of each tree (``tree_units[tree_unit_ptr[t]:tree_unit_ptr[t +
    1]]``, those on any of its paths) in place of each unit's trees.
    Returns OK, MISROUTED (a row's leaf by the split rule is not the
    booster's) or TOO_DEEP (a path over MAX_PATH_FEATURES features).
    """
    n, n_trees = leaves.shape
    n_draws = perm.shape[0]
    channels = y.shape[0]
    n_outputs = intercept.shape[0]
    n_rounds = indptr.shape[0] - 1
    n_units = col_ptr.shape[0] - 1
    shortcut = own.shape[0] > 0
    weighted = w.shape[0] > 0
    per_draw = 1.0 / n_draws
    block = max(1, min(n, STATES_PER_BLOCK // max(n_draws * n_units * n_outputs, 1)))
    shapley = np.zeros((MAX_PATH_FEATURES + 1, MAX_PATH_FEATURES + 1))
    for m in range(1, MAX_PATH_FEATURES + 1):
        shapley[m, :m] = _shapley_weights(m)
    poly = np.empty(MAX_PATH_FEATURES + 1)
    work = np.empty(MAX_PATH_FEATURES + 1)
    prod = np.empty(MAX_PATH_FEATURES + 1)
    slot_of = np.full(n_units, -1, np.int64)
    f = np.empty(n_outputs)
    g = np.empty(n_outputs)
    for a0 in range(0, n, block):
        nr = min(block, n - a0)
        # Per (row, draw, unit): whether the draw lends the row's own values
        # (the row's own term, no walk), and how far the margin moved.
        same = np.zeros((nr, n_draws, n_units), np.bool_)
        if shortcut:
            for i in range(nr):
                row = start + a0 + i
                for b in range(n_draws):
                    src = perm[b, row]
                    for u in range(n_units):
                        same[i, b, u] = same_values(
                            X, row, src, unit_cols, col_ptr[u], col_ptr[u + 1]
                        )
        delta = np.zeros((nr, n_draws, n_units, n_outputs))
        pending = np.zeros((nr, n_draws, n_units, n_outputs))
        shifted = np.zeros((nr, n_draws, n_units), np.bool_)
        touched = np.empty(nr * n_draws * n_units, np.int64)
        marked = np.zeros((nr, n_draws, n_units), np.bool_)
        own_f = np.empty((nr, n_outputs))
        own_g = np.empty((nr, channels, n_outputs))
        for i in range(nr):
            for k in range(n_outputs):
                own_f[i, k] = intercept[k]
        for r in range(n_rounds):
            for i in range(nr):
                for c in range(channels):
                    gradient(code, prm, own_f[i], y[c, a0 + i], g)
                    for k in range(n_outputs):
                        own_g[i, c, k] = g[k]
            n_touched = 0
            for t in range(indptr[r], indptr[r + 1]):
                lo_u, hi_u = tree_unit_ptr[t], tree_unit_ptr[t + 1]
                if hi_u == lo_u:
                    continue
                for s in range(lo_u, hi_u):
                    slot_of[tree_units[s]] = s - lo_u
                status, n_touched = _tree_terms(
                    X, start, a0, nr, t, leaves, perm, y, w, weighted, value,
                    group[t], inv_lr[t], offsets, left, right, parent, feature,
                    cover, threshold, missing_left, strict, unit_of, slot_of,
                    tree_units[lo_u:hi_u], shapley, poly, work, prod, same,
                    shifted, delta, pending, touched, marked, n_touched, own_f,
                    own_g, code, prm, f, g, per_draw, channels, out,
                )  # fmt: skip
                for s in range(lo_u, hi_u):
                    slot_of[tree_units[s]] = -1
                if status != OK:
                    return status
            # The round's leaves move the margins of the next rounds.
            for e in range(n_touched):
                idx = touched[e]
                i, rest = divmod(idx, n_draws * n_units)
                b, u = divmod(rest, n_units)
                marked[i, b, u] = False
                for k in range(n_outputs):
                    delta[i, b, u, k] += pending[i, b, u, k]
                    pending[i, b, u, k] = 0.0
                    if delta[i, b, u, k] != 0.0:
                        shifted[i, b, u] = True
            for i in range(nr):
                for t in range(indptr[r], indptr[r + 1]):
                    own_f[i, group[t]] += value[leaves[a0 + i, t]]
        if shortcut:
            for i in range(nr):
                for b in range(n_draws):
                    for u in range(n_units):
                        if same[i, b, u]:
                            for c in range(channels):
                                out[c, a0 + i, u] += own[c, a0 + i, u] * per_draw
    return OK


@_jit
def _tree_terms(
    X, start, a0, nr, t, leaves, perm, y, w, weighted, value, kk, inv_lr_t,
    offsets, left, right, parent, feature, cover, threshold, miss, strict,
    unit_of, slot_of, units, shapley, poly, work, prod, same, shifted, delta,
    pending, touched, marked, n_touched, own_f, own_g, code, prm, f, g,
    per_draw, channels, out,
):  # fmt: skip
    """Tree t's resampled terms of its units for the block's rows a0..a0+nr.

    Returns ``(status, n_touched)``: the (row, draw, unit) states whose
    margin the tree moved are appended to ``touched`` (``pending`` holds the
    moves until the round ends).
    """
    lo, hi = offsets[t], offsets[t + 1]
    (order, n_order, node_bit, leaf_ids, n_unique, uniq_zero, entry_ptr,
     entry_unit, entry_mask, bit_ptr, bits, table_start, m_sum) = _tree_layout(
        lo, hi, left, right, parent, feature, cover, unit_of, nr
    )  # fmt: skip
    if n_order == 0:
        return TOO_DEEP, n_touched
    n_leaves = leaf_ids.shape[0]
    n_slots = units.shape[0]
    n_draws = perm.shape[0]
    n_units = slot_of.shape[0]
    n_table = table_start[n_leaves]
    # The moments M_U: per leaf of few features a table over its patterns,
    # filled as rows meet them; per other leaf the row's own, after it.
    mom_start = np.zeros(n_leaves + 1, np.int64)
    for j in range(n_leaves):
        mom_start[j + 1] = mom_start[j] + m_sum[j]
    store = np.empty(n_table + mom_start[n_leaves])
    ready = np.zeros(n_table, np.bool_)
    mom_at = np.empty(n_leaves, np.int64)  # where the row's moments of leaf j are
    pat = np.empty(hi - lo, np.int64)
    spat = np.empty(hi - lo, np.int64)
    phi = np.empty(n_slots)
    own_phi = np.empty(n_slots)
    # Per leaf, the o bits of every unit's features.
    unit_bits = np.zeros(n_leaves, np.int64)
    for j in range(n_leaves):
        for e in range(entry_ptr[j], entry_ptr[j + 1]):
            unit_bits[j] |= entry_mask[e]
    new_leaf = np.empty(n_slots, np.int64)
    for i in range(nr):
        row = start + a0 + i
        _node_patterns(X, row, lo, order, n_order, left, right, feature, threshold,
                       miss, strict, node_bit, pat)  # fmt: skip
        own_leaf = leaves[a0 + i, t]
        for s in range(n_slots):
            own_phi[s] = 0.0
        for j in range(n_leaves):
            m = n_unique[j]
            full = (np.int64(1) << m) - 1
            p = pat[leaf_ids[j] - lo] & full
            if p == full and leaf_ids[j] != own_leaf:
                return MISROUTED, n_touched
            if m_sum[j] == 0:
                continue
            # The row's moments of every unit on the leaf (module doc).
            if table_start[j + 1] > table_start[j]:
                at = table_start[j] + p * m_sum[j]
                fresh = not ready[at]
                ready[at] = True
            else:
                at = n_table + mom_start[j]
                fresh = True
            mom_at[j] = at
            if fresh:
                pattern_poly(uniq_zero, j, m, p, poly)
                off = at
                for e in range(entry_ptr[j], entry_ptr[j + 1]):
                    nb = bit_ptr[e + 1] - bit_ptr[e]
                    unit_moments(uniq_zero, j, m, p, bits, bit_ptr[e], nb, shapley,
                                  poly, work, store, off)  # fmt: skip
                    off += nb
            # The row's own TreeSHAP of each unit (a draw changes it only on
            # the leaves where the unit's o bits differ).
            v = value[leaf_ids[j]]
            off = at
            for e in range(entry_ptr[j], entry_ptr[j + 1]):
                nb = bit_ptr[e + 1] - bit_ptr[e]
                s = slot_of[entry_unit[e]]
                if nb == 1:
                    k = bits[bit_ptr[e]]
                    own_phi[s] += v * (((p >> k) & 1) - uniq_zero[j, k]) * store[off]
                else:
                    own_phi[s] += drawn_value(v, uniq_zero, j, store, off, bits,
                                               bit_ptr[e], nb, p, prod)  # fmt: skip
                off += nb
        wi = w[a0 + i] if weighted else 1.0
        for b in range(n_draws):
            src = perm[b, row]
            differs = False
            for s in range(n_slots):
                if not same[i, b, units[s]]:
                    differs = True
            if not differs:
                continue
            _node_patterns(X, src, lo, order, n_order, left, right, feature,
                           threshold, miss, strict, node_bit, spat)  # fmt: skip
            for s in range(n_slots):
                phi[s] = own_phi[s]
                new_leaf[s] = own_leaf
            for j in range(n_leaves):
                p = pat[leaf_ids[j] - lo]
                sp = spat[leaf_ids[j] - lo]
                changed = (p ^ sp) & unit_bits[j]
                if changed == 0:
                    continue  # the same o bits of every unit: as the row's own
                full = (np.int64(1) << n_unique[j]) - 1
                p &= full
                sp &= full
                v = value[leaf_ids[j]]
                off = mom_at[j]
                for e in range(entry_ptr[j], entry_ptr[j + 1]):
                    nb = bit_ptr[e + 1] - bit_ptr[e]
                    mask = entry_mask[e]
                    if changed & mask:
                        drawn = (p & ~mask) | (sp & mask)
                        s = slot_of[entry_unit[e]]
                        if nb == 1:  # M_U does not depend on U's own bit
                            k = bits[bit_ptr[e]]
                            o_drawn = (drawn >> k) & 1
                            phi[s] += v * (o_drawn - ((p >> k) & 1)) * store[off]
                        else:
                            phi[s] += drawn_value(
                                v, uniq_zero, j, store, off, bits, bit_ptr[e], nb,
                                drawn, prod,
                            ) - drawn_value(
                                v, uniq_zero, j, store, off, bits, bit_ptr[e], nb,
                                p, prod,
                            )  # fmt: skip
                        if drawn == full:
                            new_leaf[s] = leaf_ids[j]
                    off += nb
            for s in range(n_slots):
                u = units[s]
                if same[i, b, u]:
                    continue
                nl = new_leaf[s]
                if nl != own_leaf:
                    pending[i, b, u, kk] += value[nl] - value[own_leaf]
                    if not marked[i, b, u]:
                        marked[i, b, u] = True
                        touched[n_touched] = (i * n_draws + b) * n_units + u
                        n_touched += 1
                if phi[s] == 0.0:
                    continue
                scale = wi * inv_lr_t * phi[s] * per_draw
                if not shifted[i, b, u]:
                    for c in range(channels):
                        out[c, a0 + i, u] -= scale * own_g[i, c, kk]
                    continue
                if f.shape[0] == 1:  # one output: scalars
                    fi = own_f[i, 0] + delta[i, b, u, 0]
                    for c in range(channels):
                        gi = gradient1(code, prm, fi, y[c, a0 + i])
                        out[c, a0 + i, u] -= scale * gi
                    continue
                for k in range(f.shape[0]):
                    f[k] = own_f[i, k] + delta[i, b, u, k]
                for c in range(channels):
                    gradient(code, prm, f, y[c, a0 + i], g)
                    out[c, a0 + i, u] -= scale * g[kk]
    return OK, n_touched
