"""The host's share of TreeSHAP by leaf patterns on a GPU, compiled by numba.

Imported only by :mod:`skl_treeinner._kernels._device`. The device kernels
(:mod:`skl_treeinner._kernels.cuda._treeshap`) read every leaf of the model from flat
arrays, built here once per model (:func:`flat_leaves`): its tree, its path
root first, and its distinct path features with their z, as
:func:`skl_treeinner._kernels.cpu._tree_paths.leaf_paths` lays out one tree. Summed
over rows, the device adds the residuals per (leaf, pattern of o bits) and the
host folds each leaf's 2^m sums into Shapley values (:func:`fold_counts`, the
fold of :func:`skl_treeinner._kernels.cpu._treeshap.treeshap_terms`); per row, the
device looks each row's pattern up in a table of every leaf's Shapley vector
for each of its patterns (:func:`pattern_table`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from .cpu._tree_paths import depth_of, leaf_paths
from .cpu._treeshap import (
    MAX_DENSE_FEATURES,
    _fold_values,
    _pattern_values,
    _shapley_weights,
)

_jit = njit(nogil=True, cache=True)


class FlatLeaves(NamedTuple):
    """Every leaf of the model whose path splits, in tree and node order.

    Per leaf L: its tree and node; its path's splits root first (global
    nodes ``path_node[L, :path_len[L]]``, whether the path goes left, the bit
    of the split's feature in the leaf's pattern); its ``n_unique[L]``
    distinct path features and their z. Tree t's leaves are
    ``tree_leaves[t]:tree_leaves[t + 1]``.
    """

    leaf_tree: np.ndarray
    leaf_node: np.ndarray
    path_len: np.ndarray
    path_node: np.ndarray
    path_left: np.ndarray
    path_bit: np.ndarray
    n_unique: np.ndarray
    uniq_feature: np.ndarray
    uniq_zero: np.ndarray
    tree_leaves: np.ndarray


@_jit
def flat_leaves(trees):
    """Return ``(FlatLeaves, max_unique)`` of the model's :class:`Trees`.

    ``max_unique`` is the most distinct features of one path. A tree that is
    one leaf has no leaf here (its TreeSHAP is zero), and nor do nodes no path
    reaches (XGBoost keeps pruned nodes, parent -1).
    """
    offsets, left, parent = trees.offsets, trees.left, trees.parent
    feature, cover = trees.feature, trees.cover
    n_trees = offsets.shape[0] - 1
    n_leaves = 0
    width = 1
    for node in range(offsets[n_trees]):
        if left[node] < 0 and parent[node] >= 0:
            n_leaves += 1
            width = max(width, depth_of(node, parent))
    leaf_tree = np.empty(n_leaves, dtype=np.int64)
    leaf_node = np.empty(n_leaves, dtype=np.int64)
    path_len = np.zeros(n_leaves, dtype=np.int64)
    path_node = np.zeros((n_leaves, width), dtype=np.int64)
    path_left = np.zeros((n_leaves, width), dtype=np.bool_)
    path_bit = np.zeros((n_leaves, width), dtype=np.int64)
    n_unique = np.zeros(n_leaves, dtype=np.int64)
    uniq_feature = np.zeros((n_leaves, width), dtype=np.int64)
    uniq_zero = np.zeros((n_leaves, width))
    tree_leaves = np.zeros(n_trees + 1, dtype=np.int64)
    at = 0
    max_unique = 0
    for t in range(n_trees):
        lo, hi = offsets[t], offsets[t + 1]
        tree_leaves[t] = at
        if hi - lo <= 1:
            continue
        (ids, p_node, p_left, p_len, p_unique, u_feature, u_zero, n_u,
         _bits) = leaf_paths(lo, hi, left, parent, feature, cover)  # fmt: skip
        for j in range(ids.shape[0]):
            if p_len[j] == 0:  # unreachable (counted above as not a leaf)
                continue
            leaf_tree[at] = t
            leaf_node[at] = ids[j]
            d = p_len[j]
            path_len[at] = d
            path_node[at, :d] = p_node[j, :d]
            path_left[at, :d] = p_left[j, :d]
            path_bit[at, :d] = p_unique[j, :d]
            m = n_u[j]
            n_unique[at] = m
            uniq_feature[at, :m] = u_feature[j, :m]
            uniq_zero[at, :m] = u_zero[j, :m]
            max_unique = max(max_unique, m)
            at += 1
    tree_leaves[n_trees] = at
    flat = FlatLeaves(leaf_tree, leaf_node, path_len, path_node, path_left, path_bit,
                      n_unique, uniq_feature, uniq_zero, tree_leaves)  # fmt: skip
    return flat, max_unique


@_jit
def pattern_table(value, flat, starts):
    """Every leaf's Shapley vector for each of its 2^m patterns, flat.

    Leaf L's vector for pattern p is ``table[starts[L] + p * m : ... + m]``
    (m = n_unique[L] of :class:`FlatLeaves` ``flat``; ``starts`` the running
    sum of 2^m m), as
    :func:`~skl_treeinner._kernels.cpu._treeshap._pattern_values` gives it.
    """
    leaf_node, n_unique, uniq_zero = flat.leaf_node, flat.n_unique, flat.uniq_zero
    table = np.empty(starts[-1])
    poly = np.empty(MAX_DENSE_FEATURES + 1)
    quot = np.empty(MAX_DENSE_FEATURES + 1)
    for leaf in range(n_unique.shape[0]):
        m = n_unique[leaf]
        weights = _shapley_weights(m)
        for p in range(1 << m):
            at = starts[leaf] + p * m
            _pattern_values(
                value[leaf_node[leaf]], uniq_zero[leaf], m, p, weights, poly, quot,
                table[at : at + m],
            )  # fmt: skip
    return table


@_jit
def fold_counts(counts, first, last, flat, value, starts, tree_round, out):
    """out[c, round, k] += Σ_p counts(L, p) φ_k(L, p) over leaves first..last-1.

    ``counts[c, starts[L] - starts[first] + p]`` holds the residuals summed
    over the rows of pattern p at leaf L of :class:`FlatLeaves` ``flat``
    (``starts``: the running sum of 2^m); each leaf's 2^m sums fold as
    :func:`~skl_treeinner._kernels.cpu._treeshap._fold_values` folds them.
    """
    leaf_node, leaf_tree, n_unique = flat.leaf_node, flat.leaf_tree, flat.n_unique
    uniq_feature, uniq_zero = flat.uniq_feature, flat.uniq_zero
    shapley = np.zeros((MAX_DENSE_FEATURES + 1, MAX_DENSE_FEATURES + 1))
    for m in range(1, MAX_DENSE_FEATURES + 1):
        shapley[m, :m] = _shapley_weights(m)
    work = np.empty((1 << (MAX_DENSE_FEATURES - 1), MAX_DENSE_FEATURES + 1))
    vals = np.empty(MAX_DENSE_FEATURES)
    base = starts[first]
    for leaf in range(first, last):
        m = n_unique[leaf]
        a = starts[leaf] - base
        r = tree_round[leaf_tree[leaf]]
        for c in range(counts.shape[0]):
            _fold_values(
                counts[c, a : a + (1 << m)], uniq_zero[leaf], m, shapley[m],
                value[leaf_node[leaf]], work, vals,
            )  # fmt: skip
            for u in range(m):
                out[c, r, uniq_feature[leaf, u]] += vals[u]
