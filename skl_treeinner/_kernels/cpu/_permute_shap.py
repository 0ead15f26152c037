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

from typing import NamedTuple

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


class _Layout(NamedTuple):
    """One tree's leaves, their paths' features and the units on each leaf.

    The nodes root first (``order[:n_order]``; empty where a path has over
    MAX_PATH_FEATURES features); per split its feature's local number on the
    leaves below (``node_bit``); per leaf its node, its m distinct path
    features' z, and its entries (``entry_ptr[j]:entry_ptr[j + 1]``): a unit,
    the mask of its local features and the features
    (``bits[bit_ptr[e]:bit_ptr[e + 1]]``); per leaf where its table of
    moments starts (``table_start[j + 1] == table_start[j]``: none, evaluated
    per row) and how many moments it has (``m_sum``).
    """

    order: np.ndarray
    n_order: int
    node_bit: np.ndarray
    leaf_ids: np.ndarray
    n_unique: np.ndarray
    uniq_zero: np.ndarray
    entry_ptr: np.ndarray
    entry_unit: np.ndarray
    entry_mask: np.ndarray
    bit_ptr: np.ndarray
    bits: np.ndarray
    table_start: np.ndarray
    m_sum: np.ndarray


class _Scratch(NamedTuple):
    """The kernel's scratch: W(s, m) for every m, polynomials, margins.

    ``slot_of[u]`` is unit u's place among the current tree's units (-1:
    none of them).
    """

    shapley: np.ndarray
    poly: np.ndarray
    work: np.ndarray
    prod: np.ndarray
    slot_of: np.ndarray
    f: np.ndarray
    g: np.ndarray


class _State(NamedTuple):
    """Per (row, draw, unit) of a block of rows a0..a0 + nr, over the rounds.

    ``same``: the draw lends the row its own values (its own term, no walk);
    ``delta``: how far the margin moved (``shifted``: nonzero), ``pending``
    the moves of the current round, ``touched[:n_touched[0]]`` the states it
    moved (``marked``); ``own_f`` and ``own_g`` each row's own margin and
    gradients before the round.
    """

    a0: int
    same: np.ndarray
    shifted: np.ndarray
    delta: np.ndarray
    pending: np.ndarray
    touched: np.ndarray
    n_touched: np.ndarray
    marked: np.ndarray
    own_f: np.ndarray
    own_g: np.ndarray


@_jit
def _node_patterns(x, lo, order, left, right, feature, rule, node_bit, pat):
    """pat[node - lo] = the o bits so far of the leaves below, for the row ``x``."""
    threshold, miss, strict = rule
    pat[0] = -1
    for k in range(order.shape[0]):
        node = lo + order[k]
        if left[node] < 0:
            continue
        here = takes_left(x[feature[node]], threshold[node], miss[node], strict)
        above = pat[order[k]]
        off = above & ~(np.int64(1) << node_bit[order[k]])
        pat[left[node] - lo] = above if here else off
        pat[right[node] - lo] = off if here else above


@_jit
def _tree_layout(lo, hi, trees, unit_of, rows):
    """Return tree ``lo:hi``'s :class:`_Layout` for a block of ``rows`` rows."""
    (leaf_ids, _, _, _, _, uniq_feature, uniq_zero, n_unique, node_bit) = leaf_paths(
        lo, hi, trees.left, trees.parent, trees.feature, trees.cover
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
            return _Layout(np.empty(0, np.int64), 0, node_bit, leaf_ids, n_unique,
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
    order, tail = nodes_root_first(lo, hi, trees.left, trees.right)
    return _Layout(order, tail, node_bit, leaf_ids, n_unique, uniq_zero,
                   entry_ptr, entry_unit, entry_mask, bit_ptr, bits, table_start,
                   m_sum)  # fmt: skip


@_jit
def permuted_treeshap_terms(block, walk, trees, rule, units):
    """out[c, i, u] = mean over draws of row i's TreeSHAP term of unit u, resampled.

    The arguments are :func:`~skl_treeinner._kernels.cpu._permute.permuted_terms`'
    (:mod:`skl_treeinner._kernels._structures`), without the path table: the
    trees' shape for TreeSHAP and the units of each tree (those on any of its
    paths, ``units.units[units.unit_ptr[t]:units.unit_ptr[t + 1]]``) serve.
    Returns OK, MISROUTED (a row's leaf by the split rule is not the
    booster's) or TOO_DEEP (a path over MAX_PATH_FEATURES features).
    """
    leaves, perm, y = block.leaves, block.perm, block.y
    intercept, indptr = walk.intercept, walk.indptr
    group, value = walk.group, walk.value
    tree_unit_ptr, tree_units = units.unit_ptr, units.units
    n, n_trees = leaves.shape
    n_draws = perm.shape[0]
    channels = y.shape[0]
    n_outputs = intercept.shape[0]
    n_rounds = indptr.shape[0] - 1
    n_units = units.col_ptr.shape[0] - 1
    block_rows = max(
        1, min(n, STATES_PER_BLOCK // max(n_draws * n_units * n_outputs, 1))
    )
    shapley = np.zeros((MAX_PATH_FEATURES + 1, MAX_PATH_FEATURES + 1))
    for m in range(1, MAX_PATH_FEATURES + 1):
        shapley[m, :m] = _shapley_weights(m)
    scratch = _Scratch(
        shapley, np.empty(MAX_PATH_FEATURES + 1), np.empty(MAX_PATH_FEATURES + 1),
        np.empty(MAX_PATH_FEATURES + 1), np.full(n_units, -1, np.int64),
        np.empty(n_outputs), np.empty(n_outputs),
    )  # fmt: skip
    g = scratch.g
    for a0 in range(0, n, block_rows):
        nr = min(block_rows, n - a0)
        state = _block_state(block, a0, nr, walk, units)
        own_f, own_g = state.own_f, state.own_g
        for r in range(n_rounds):
            for i in range(nr):
                for c in range(channels):
                    gradient(walk.code, walk.prm, own_f[i], y[c, a0 + i], g)
                    for k in range(n_outputs):
                        own_g[i, c, k] = g[k]
            state.n_touched[0] = 0
            for t in range(indptr[r], indptr[r + 1]):
                lo_u, hi_u = tree_unit_ptr[t], tree_unit_ptr[t + 1]
                if hi_u == lo_u:
                    continue
                for s in range(lo_u, hi_u):
                    scratch.slot_of[tree_units[s]] = s - lo_u
                status = _tree_terms(block, t, nr, walk, trees, rule, units, scratch,
                                     state)  # fmt: skip
                for s in range(lo_u, hi_u):
                    scratch.slot_of[tree_units[s]] = -1
                if status != OK:
                    return status
            _end_round(state)
            for i in range(nr):
                for t in range(indptr[r], indptr[r + 1]):
                    own_f[i, group[t]] += value[leaves[a0 + i, t]]
        _add_own(block, state)
    return OK


@_jit
def _block_state(block, a0, nr, walk, units):
    """Return the :class:`_State` of rows a0..a0 + nr before the first round."""
    X, perm, own = block.X, block.perm, block.own
    col_ptr, unit_cols = units.col_ptr, units.cols
    n_draws, n_units = perm.shape[0], col_ptr.shape[0] - 1
    n_outputs = walk.intercept.shape[0]
    # Per (row, draw, unit): whether the draw lends the row's own values
    # (the row's own term, no walk), and how far the margin moved.
    same = np.zeros((nr, n_draws, n_units), np.bool_)
    if own.shape[0] > 0:
        for i in range(nr):
            row = block.start + a0 + i
            for b in range(n_draws):
                src = perm[b, row]
                for u in range(n_units):
                    same[i, b, u] = same_values(
                        X, row, src, unit_cols, col_ptr[u], col_ptr[u + 1]
                    )
    own_f = np.empty((nr, n_outputs))
    for i in range(nr):
        for k in range(n_outputs):
            own_f[i, k] = walk.intercept[k]
    return _State(
        a0, same, np.zeros((nr, n_draws, n_units), np.bool_),
        np.zeros((nr, n_draws, n_units, n_outputs)),
        np.zeros((nr, n_draws, n_units, n_outputs)),
        np.empty(nr * n_draws * n_units, np.int64), np.zeros(1, np.int64),
        np.zeros((nr, n_draws, n_units), np.bool_), own_f,
        np.empty((nr, block.y.shape[0], n_outputs)),
    )  # fmt: skip


@_jit
def _end_round(state):
    """Move the margins of the next rounds by the round's leaves."""
    n_draws, n_units, n_outputs = state.delta.shape[1:]
    delta, pending = state.delta, state.pending
    for e in range(state.n_touched[0]):
        idx = state.touched[e]
        i, rest = divmod(idx, n_draws * n_units)
        b, u = divmod(rest, n_units)
        state.marked[i, b, u] = False
        for k in range(n_outputs):
            delta[i, b, u, k] += pending[i, b, u, k]
            pending[i, b, u, k] = 0.0
            if delta[i, b, u, k] != 0.0:
                state.shifted[i, b, u] = True


@_jit
def _add_own(block, state):
    """Draws that lend a row its own values take the row's own terms."""
    if block.own.shape[0] == 0:
        return
    own, out, same, a0 = block.own, block.out, state.same, state.a0
    nr, n_draws, n_units = same.shape
    per_draw = 1.0 / n_draws
    for i in range(nr):
        for b in range(n_draws):
            for u in range(n_units):
                if same[i, b, u]:
                    for c in range(own.shape[0]):
                        out[c, a0 + i, u] += own[c, a0 + i, u] * per_draw


@_jit
def _tree_terms(block, t, nr, walk, trees, rule, units, scratch, state):
    """Tree t's resampled terms of its units for the block's rows a0..a0+nr.

    Returns the status; the (row, draw, unit) states whose margin the tree
    moved are appended to ``state.touched`` (``pending`` holds the moves
    until the round ends). The structures are unpacked once, here: a field
    read inside the loops over rows and draws would cost a reference count
    each time.
    """
    lo, hi = trees.offsets[t], trees.offsets[t + 1]
    lay = _tree_layout(lo, hi, trees, units.unit_of, nr)
    if lay.n_order == 0:
        return TOO_DEEP
    X, leaves, perm, y, w, out = (
        block.X, block.leaves, block.perm, block.y, block.w, block.out
    )  # fmt: skip
    left, right, feature = trees.left, trees.right, trees.feature
    value, kk, inv_lr_t = walk.value, walk.group[t], walk.inv_lr[t]
    code, prm = walk.code, walk.prm
    shapley, poly, work, prod, slot_of, f, g = scratch
    a0, same, shifted, delta = state.a0, state.same, state.shifted, state.delta
    pending, touched, marked = state.pending, state.touched, state.marked
    n_touched, own_f, own_g = state.n_touched, state.own_f, state.own_g
    order, node_bit, leaf_ids = lay.order[: lay.n_order], lay.node_bit, lay.leaf_ids
    n_unique, uniq_zero, entry_ptr = lay.n_unique, lay.uniq_zero, lay.entry_ptr
    entry_unit, entry_mask, bit_ptr = lay.entry_unit, lay.entry_mask, lay.bit_ptr
    bits, table_start, m_sum = lay.bits, lay.table_start, lay.m_sum
    tree_units = units.units[units.unit_ptr[t] : units.unit_ptr[t + 1]]
    n_leaves = leaf_ids.shape[0]
    n_slots = tree_units.shape[0]
    n_draws, n_units = same.shape[1], same.shape[2]
    channels = y.shape[0]
    per_draw = 1.0 / n_draws
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
        row = block.start + a0 + i
        _node_patterns(X[row], lo, order, left, right, feature, rule, node_bit, pat)
        own_leaf = leaves[a0 + i, t]
        for s in range(n_slots):
            own_phi[s] = 0.0
        # The row's moments and own TreeSHAP of each unit (a draw changes it
        # only on the leaves where the unit's o bits differ).
        for j in range(n_leaves):
            m = n_unique[j]
            full = (np.int64(1) << m) - 1
            p = pat[leaf_ids[j] - lo] & full
            if p == full and leaf_ids[j] != own_leaf:
                return MISROUTED
            if m_sum[j] == 0:
                continue
            if table_start[j + 1] > table_start[j]:
                at = table_start[j] + p * m_sum[j]
                fresh = not ready[at]
                ready[at] = True
            else:
                at = n_table + mom_start[j]
                fresh = True
            mom_at[j] = at
            if fresh:  # the row's moments of every unit on the leaf (module doc)
                pattern_poly(uniq_zero, j, m, p, poly)
                off = at
                for e in range(entry_ptr[j], entry_ptr[j + 1]):
                    b0, b1 = bit_ptr[e], bit_ptr[e + 1]
                    unit_moments(uniq_zero, j, m, p, bits[b0:b1], shapley, poly,
                                 work, store, off)  # fmt: skip
                    off += b1 - b0
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
        wi = w[a0 + i] if w.shape[0] > 0 else 1.0
        for b in range(n_draws):
            src = perm[b, row]
            differs = False
            for s in range(n_slots):
                if not same[i, b, tree_units[s]]:
                    differs = True
            if not differs:
                continue
            _node_patterns(X[src], lo, order, left, right, feature, rule, node_bit,
                           spat)  # fmt: skip
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
                u = tree_units[s]
                if same[i, b, u]:
                    continue
                nl = new_leaf[s]
                if nl != own_leaf:
                    pending[i, b, u, kk] += value[nl] - value[own_leaf]
                    if not marked[i, b, u]:
                        marked[i, b, u] = True
                        touched[n_touched[0]] = (i * n_draws + b) * n_units + u
                        n_touched[0] += 1
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
    return OK
