"""TreeSHAP by leaf patterns, compiled by numba (the ``numba`` extra).

Imported only by :mod:`skl_treeinner._kernels._compiled`, which splits the trees over
threads. Path-dependent TreeSHAP (paper 004, Algorithm 2) of one tree is a sum
over its leaves: leaf l with value v, whose path splits on the distinct
features U (d of them), adds to feature u the Shapley value of the product game

    v(S) = v * prod_{k in S} o_k * prod_{k not in S} z_k,

where z_k is the product of cover(child) / cover(node) over the path's splits
on k and o_k is 1 when x takes the leaf's side at all of them, else 0:

    phi_u = v (o_u - z_u) sum_s W(s, d) [t^s] prod_{k != u} (z_k + o_k t),

W(s, d) = s! (d - 1 - s)! / d!. It depends on x only through the *pattern* of
o bits, so what TreeInner needs, Σ_i r_i φ(x_i), is a sum over (leaf, pattern)
of the residuals of the rows with that pattern times one Shapley vector:

* :func:`treeshap_terms`, any binary tree whose split rule is known: x's side
  at every split comes from the rule, and the leaf it leads to is checked
  against the booster's own. A leaf of few distinct path features tabulates
  all 2^d patterns once; a leaf of more (LightGBM's leaf-wise trees reach 20)
  sorts the rows by pattern and evaluates only the patterns that occur.
* :func:`oblivious_treeshap_terms`, symmetric trees (CatBoost): every row
  meets every level's split, and the number of the leaf it reaches holds its
  side at each level, so TreeSHAP is one vector per leaf, read off the
  booster's own leaves whatever the splits are (numerical, one-hot, CTR).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._tree_paths import leaf_paths, nodes_root_first, times_factor

_jit = njit(nogil=True, cache=True)

OK = 0
TOO_DEEP = 1
MISROUTED = 2
#: Most distinct features on one leaf's path: a pattern is an int64 of bits.
MAX_PATH_FEATURES = 62
#: Most distinct path features for which a leaf takes all 2^d patterns (a
#: table, or a fold of the sums); beyond it, or where sorting the rows by
#: pattern costs less (:func:`_dense`), it evaluates the patterns that occur.
MAX_DENSE_FEATURES = 12
#: Per row, a tree's pattern tables hold at most this many entries per row
#: scored (at least MIN_TABLE_ENTRIES); further leaves sort their rows.
TABLE_ENTRIES_PER_ROW = 8
MIN_TABLE_ENTRIES = 1 << 16


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
    for k in range(d):
        times_factor(poly, k, z[k], (pattern >> k) & 1)
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
            m = 0
            for k in range(d):
                if k != u:
                    times_factor(quot, m, z[k], (pattern >> k) & 1)
                    m += 1
        total = 0.0
        for s in range(d):
            total += quot[s] * weights[s]
        out[u] = v * (o - z[u]) * total


@_jit
def _fold_values(held, z, d, weights, v, work, out):
    """out[u] = Σ_pattern held[pattern] φ_u(pattern) of one leaf, all u.

    φ_u(p) = v (o_u − z_u) ℓ(∏_{k≠u} (z_k + o_k t)) with ℓ(q) = Σ_s W(s, d) q_s
    is linear in the weights, so the sum over the 2^d patterns folds the bits
    k ≠ u one at a time: with A[rest] the polynomial so far, folding bit k
    gives z_k (A[rest, 0] + A[rest, 1]) + t A[rest, 1]. About 3 d 2^d
    operations instead of the table's d² 2^d (``work``: 2^(d-1) x d floats).
    """
    q = d - 1
    for u in range(d):
        below = (1 << u) - 1
        for rest in range(1 << q):
            p0 = ((rest >> u) << (u + 1)) | (rest & below)
            work[rest, 0] = (1.0 - z[u]) * held[p0 | (1 << u)] - z[u] * held[p0]
        degree = 0
        for b in range(q - 1, -1, -1):
            k = b if b < u else b + 1
            half = 1 << b
            zk = z[k]
            for idx in range(half):
                work[idx, degree + 1] = work[idx + half, degree]
                for s in range(degree, 0, -1):
                    work[idx, s] = (
                        zk * (work[idx, s] + work[idx + half, s])
                        + work[idx + half, s - 1]
                    )
                work[idx, 0] = zk * (work[idx, 0] + work[idx + half, 0])
            degree += 1
        total = 0.0
        for s in range(d):
            total += work[0, s] * weights[s]
        out[u] = v * total


@_jit
def paths_within(trees, max_unique, out):
    """out[t] = whether no path of tree t splits on over ``max_unique`` features.

    ``trees``: :class:`~skl_treeinner._kernels._structures.Trees`.
    """
    offsets, left = trees.offsets, trees.left
    parent, feature = trees.parent, trees.feature
    seen = np.empty(max(feature.max() + 1, 1), dtype=np.int64)
    seen[:] = -1
    for t in range(offsets.shape[0] - 1):
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
        out[t] = ok


@_jit
def takes_left(x, thr, missing_left, strict):
    """Whether value x takes the left side of a split by the library's rule."""
    if math.isnan(x):
        return missing_left
    return x < thr if strict else x <= thr


@_jit
def _dense(m, n, per_row):
    """Whether a leaf of m distinct path features indexes all 2^m patterns.

    Per row, a table of 2^m entries evaluated when first needed costs m² per
    pattern that occurs, as sorting does, without the sort: it only needs the
    memory (bounded by the caller). Summed over rows, folding the patterns
    costs about 2^m m operations, against n log n to sort the rows.
    """
    if m > MAX_DENSE_FEATURES:
        return False
    if per_row:
        return True
    sort = max(n, 64) * max(math.log2(max(n, 2)), 1.0)
    return (1 << m) * m <= 4.0 * sort


@_jit
def treeshap_terms(X, leaves, res, todo, trees, walk, rule, out_rounds, out_rows):
    """Σ_i res[c, t, i] φ_t(x_i) of the trees ``todo``, per round or per row.

    ``trees``, ``walk`` (the leaves' values) and ``rule`` are the model's
    (:mod:`skl_treeinner._kernels._structures`). ``res`` (C, n_trees, rows),
    tree-major so that each tree reads its rows' residuals in order, holds C
    channels (residuals of several targets, sharing every pattern's
    evaluation). With an empty ``out_rows``: out_rounds[c, round of t, k] +=
    Σ_i res[c, t, i] φ_{t,k}(x_i); otherwise out_rows[c, i, k] +=
    Σ_t res[c, t, i] φ_{t,k}(x_i). x's side at every split comes from the
    rule, and the leaf it leads to must be the booster's own (``leaves``).
    Returns OK, or TOO_DEEP when a path splits on more than
    MAX_PATH_FEATURES distinct features, or MISROUTED when a row's leaf
    differs from the booster's.
    """
    offsets, left, right, parent = trees.offsets, trees.left, trees.right, trees.parent
    feature, cover, tree_round = trees.feature, trees.cover, trees.tree_round
    threshold, missing_left, strict = rule
    value = walk.value
    channels, n = res.shape[0], res.shape[2]
    per_row = out_rows.shape[1] > 0
    poly = np.empty(MAX_PATH_FEATURES + 1)
    quot = np.empty(MAX_PATH_FEATURES + 1)
    vals = np.empty(MAX_PATH_FEATURES)
    keys = np.empty(n, dtype=np.int64)
    sums = np.empty(channels)
    table_budget = max(MIN_TABLE_ENTRIES, TABLE_ENTRIES_PER_ROW * n)
    n_features = out_rows.shape[2]
    local_of = np.full(n_features, -1, dtype=np.int64)
    local_feature = np.empty(n_features, dtype=np.int64)
    row_phi = np.empty(n_features)
    # W(s, m) and the fold's scratch of every leaf that takes all its patterns.
    shapley = np.zeros((MAX_DENSE_FEATURES + 1, MAX_DENSE_FEATURES + 1))
    for m in range(1, MAX_DENSE_FEATURES + 1):
        shapley[m, :m] = _shapley_weights(m)
    fold_work = np.empty((1 << (MAX_DENSE_FEATURES - 1), MAX_DENSE_FEATURES + 1))
    for t in todo:
        lo, hi = offsets[t], offsets[t + 1]
        size = hi - lo
        r = tree_round[t]
        # The leaves of the tree and their paths, root first.
        (leaf_ids, path_node, path_left, path_len, path_unique, uniq_feature,
         uniq_zero, n_unique, node_bit) = leaf_paths(
            lo, hi, left, parent, feature, cover
        )  # fmt: skip
        n_leaves = leaf_ids.shape[0]
        uniq_local = np.empty_like(uniq_feature)
        dense = np.zeros(n_leaves, dtype=np.bool_)
        table_start = np.zeros(n_leaves + 1, dtype=np.int64)
        n_sparse = 0
        for j in range(n_leaves):
            m = n_unique[j]
            if m > MAX_PATH_FEATURES:
                return TOO_DEEP
            # Per row, the tree's tables stay within TABLE_ENTRIES_PER_ROW
            # entries per row scored (memory), the rest sorts.
            width = m if per_row else 1
            dense[j] = (
                m > 0
                and _dense(m, n, per_row)
                and table_start[j] + (1 << m) * width <= table_budget
            )
            if m > 0 and not dense[j]:
                n_sparse += 1
            # Per row: a table of 2^m patterns x m values; summed over rows:
            # only the residuals per pattern, folded (_fold_values).
            table_start[j + 1] = table_start[j] + ((1 << m) * width if dense[j] else 0)
        table = np.empty(table_start[n_leaves] if per_row else 0)
        # The tree's distinct features, numbered locally (per-row sums).
        n_local = 0
        for j in range(n_leaves):
            for u in range(n_unique[j]):
                f = uniq_feature[j, u]
                if local_of[f] < 0:
                    local_of[f] = n_local
                    local_feature[n_local] = f
                    n_local += 1
                uniq_local[j, u] = local_of[f]
        for q in range(n_local):
            local_of[local_feature[q]] = -1  # clean for the next tree
        # Per row, a table entry is evaluated when a row first needs it: the
        # patterns that occur, not all 2^m (ready[at] once table[at:] holds it).
        ready = np.zeros(table_start[n_leaves] if per_row else 0, dtype=np.bool_)
        # Summed over rows: residual sums per (channel, leaf, pattern).
        counts = np.zeros((channels, 0 if per_row else table_start[n_leaves]))
        # The nodes root first, each before its children.
        order, tail = nodes_root_first(lo, hi, left, right)
        goes_left = np.empty(size, dtype=np.bool_)
        # Per node, the o bits so far of the leaves below it: cleared at each
        # split the row does not follow towards the node.
        pat = np.empty(size, dtype=np.int64)
        # Every row's side at every split, for the leaves evaluated by sort
        # (a byte per split: less than a pattern per such leaf).
        sides = np.empty((n if n_sparse else 0, size), dtype=np.bool_)
        for i in range(n):
            pat[0] = -1
            for k in range(tail):
                node = lo + order[k]
                if left[node] < 0:
                    continue
                here = takes_left(
                    X[i, feature[node]], threshold[node], missing_left[node], strict
                )
                goes_left[order[k]] = here
                above = pat[order[k]]
                off = above & ~(np.int64(1) << node_bit[order[k]])
                pat[left[node] - lo] = above if here else off
                pat[right[node] - lo] = off if here else above
            node = lo
            while left[node] >= 0:
                node = left[node] if goes_left[node - lo] else right[node]
            if node != leaves[i, t]:
                return MISROUTED
            if n_sparse:
                sides[i, :] = goes_left
            if per_row:  # φ(x_i) of the tree, then once per channel
                row_phi[:n_local] = 0.0
            for j in range(n_leaves):
                m = n_unique[j]
                if m == 0 or not dense[j]:
                    continue
                pattern = pat[leaf_ids[j] - lo] & ((np.int64(1) << m) - 1)
                if per_row:
                    at = table_start[j] + pattern * m
                    if not ready[at]:
                        _pattern_values(
                            value[leaf_ids[j]], uniq_zero[j], m, pattern,
                            shapley[m], poly, quot, table[at : at + m],
                        )  # fmt: skip
                        ready[at] = True
                    for u in range(m):
                        row_phi[uniq_local[j, u]] += table[at + u]
                else:
                    for c in range(channels):
                        counts[c, table_start[j] + pattern] += res[c, t, i]
            if per_row:
                for c in range(channels):
                    w = res[c, t, i]
                    for q in range(n_local):
                        out_rows[c, i, local_feature[q]] += w * row_phi[q]
        if not per_row:
            for j in range(n_leaves):
                if not dense[j]:
                    continue
                m = n_unique[j]
                at = table_start[j]
                for c in range(channels):
                    _fold_values(
                        counts[c, at : at + (1 << m)], uniq_zero[j], m, shapley[m],
                        value[leaf_ids[j]], fold_work, vals,
                    )  # fmt: skip
                    for u in range(m):
                        out_rounds[c, r, uniq_feature[j, u]] += vals[u]
        # Leaves of many path features: the rows sorted by pattern, and each
        # pattern that occurs evaluated once.
        for j in range(n_leaves):
            m = n_unique[j]
            if m == 0 or dense[j]:
                continue
            for i in range(n):
                pattern = (np.int64(1) << m) - 1
                for s in range(path_len[j]):
                    if sides[i, path_node[j, s] - lo] != path_left[j, s]:
                        pattern &= ~(np.int64(1) << path_unique[j, s])
                keys[i] = pattern
            order = np.argsort(keys)
            weights = _shapley_weights(m)
            a = 0
            while a < n:
                key = keys[order[a]]
                b = a
                sums[:] = 0.0
                while b < n and keys[order[b]] == key:
                    for c in range(channels):
                        sums[c] += res[c, t, order[b]]
                    b += 1
                if per_row or np.any(sums != 0.0):
                    _pattern_values(
                        value[leaf_ids[j]], uniq_zero[j], m, key, weights, poly,
                        quot, vals,
                    )  # fmt: skip
                    for c in range(channels):
                        if per_row:
                            for q in range(a, b):
                                i = order[q]
                                w = res[c, t, i]
                                for u in range(m):
                                    out_rows[c, i, uniq_feature[j, u]] += w * vals[u]
                        else:
                            for u in range(m):
                                out_rounds[c, r, uniq_feature[j, u]] += (
                                    sums[c] * vals[u]
                                )
                a = b
    return OK


@_jit
def oblivious_treeshap_terms(leaves, res, todo, trees, walk, out_rounds, out_rows):
    """:func:`treeshap_terms` of symmetric trees, from the booster's leaves alone.

    Tree t of depth d is laid out as ``_readers._catboost._symmetric_tree``:
    level l splits on ``feature[2^l - 1]``, and leaf L = Σ_l b_l 2^l (b_l: the
    side at level l, 1 = right) is node 2^d - 1 + L; only the leaves' covers
    are read. A row in leaf L takes leaf J's side at level l exactly when bit
    l of L xor J is 0, so its TreeSHAP is Φ[L] = Σ_J φ_J(pattern of L xor J):
    one vector per leaf, evaluated for the leaves that hold rows. As
    CatBoost's ``ShapValues`` does, the path to J is taken from the last
    level up: path-dependent TreeSHAP depends on the order of the splits,
    and CatBoost's own values are the reference.
    """
    offsets, feature, cover = trees.offsets, trees.feature, trees.cover
    tree_round, value = trees.tree_round, walk.value
    channels, n = res.shape[0], res.shape[2]
    per_row = out_rows.shape[1] > 0
    poly = np.empty(MAX_PATH_FEATURES + 1)
    quot = np.empty(MAX_PATH_FEATURES + 1)
    vals = np.empty(MAX_PATH_FEATURES)
    for t in todo:
        lo, hi = offsets[t], offsets[t + 1]
        n_leaves = (hi - lo + 1) // 2
        d = 0
        while (1 << d) < n_leaves:
            d += 1
        if d == 0:
            continue  # one leaf: no feature moves the prediction
        first = lo + n_leaves - 1
        r = tree_round[t]
        # The distinct features of the levels.
        level_unique = np.empty(d, dtype=np.int64)
        uniq_feature = np.empty(d, dtype=np.int64)
        m = 0
        for level in range(d):
            f = feature[lo + (1 << level) - 1]
            u = -1
            for q in range(m):
                if uniq_feature[q] == f:
                    u = q
            if u < 0:
                u = m
                uniq_feature[u] = f
                m += 1
            level_unique[level] = u
        held = np.zeros((channels, n_leaves))  # residual sums per leaf
        occupied = np.zeros(n_leaves, dtype=np.bool_)
        for i in range(n):
            L = leaves[i, t] - first
            occupied[L] = True
            for c in range(channels):
                held[c, L] += res[c, t, i]
        # The leaves that hold rows (summed over rows: a nonzero residual).
        filled = np.empty(n_leaves, dtype=np.int64)
        n_filled = 0
        for L in range(n_leaves):
            if occupied[L] and (per_row or np.any(held[:, L] != 0.0)):
                filled[n_filled] = L
                n_filled += 1
        # Summed over rows, per leaf J: fold all 2^m patterns (about 3 m 2^m
        # operations) or evaluate the filled leaves' patterns (3 m² each).
        fold = not per_row and 3 * m * (1 << m) <= n_filled * 3 * m * m
        cum = np.zeros(n_leaves + 1)  # leaf covers, cumulated
        for L in range(n_leaves):
            cum[L + 1] = cum[L] + cover[first + L]
        phi = np.zeros((n_leaves if per_row else 0, m))
        weights = _shapley_weights(m)
        z = np.empty(m)
        by_pattern = np.empty((channels, (1 << m) if fold else 0))
        work = np.empty(((max(1 << (m - 1), 1)) if fold else 0, m + 1))
        for J in range(n_leaves):
            v = value[first + J]
            if v == 0.0 or n_filled == 0:
                continue  # an empty leaf (φ is proportional to v)
            # CatBoost's TreeSHAP walks the levels from the last split up
            # (bit d-1 at the root): a node at depth q holds the leaves that
            # share J's top q bits, a block of 2^(d-q) leaf numbers.
            z[:] = 1.0
            above = cum[n_leaves]
            for q in range(1, d + 1):
                start = (J >> (d - q)) << (d - q)
                below = cum[start + (1 << (d - q))] - cum[start]
                ratio = below / above if above > 0 else 0.0
                z[level_unique[d - q]] *= ratio
                above = below
            if fold:
                by_pattern[:, :] = 0.0
                for q in range(n_filled):
                    L = filled[q]
                    pattern = _pattern_of(L ^ J, d, m, level_unique)
                    for c in range(channels):
                        by_pattern[c, pattern] += held[c, L]
                for c in range(channels):
                    _fold_values(by_pattern[c], z, m, weights, v, work, vals)
                    for u in range(m):
                        out_rounds[c, r, uniq_feature[u]] += vals[u]
                continue
            for q in range(n_filled):
                L = filled[q]
                pattern = _pattern_of(L ^ J, d, m, level_unique)
                _pattern_values(v, z, m, pattern, weights, poly, quot, vals)
                if per_row:
                    for u in range(m):
                        phi[L, u] += vals[u]
                else:
                    for c in range(channels):
                        for u in range(m):
                            out_rounds[c, r, uniq_feature[u]] += held[c, L] * vals[u]
        if not per_row:
            continue
        for c in range(channels):
            for i in range(n):
                L = leaves[i, t] - first
                w = res[c, t, i]
                for u in range(m):
                    out_rows[c, i, uniq_feature[u]] += w * phi[L, u]
    return OK


@_jit
def _pattern_of(differ, d, m, level_unique):
    """Return the o bits of a row whose leaf number differs from J's in ``differ``."""
    pattern = (1 << m) - 1
    for level in range(d):
        if (differ >> level) & 1:
            pattern &= ~(1 << level_unique[level])
    return pattern
