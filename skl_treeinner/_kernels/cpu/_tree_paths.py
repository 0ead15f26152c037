"""What the TreeSHAP kernels share: trees' leaves and paths, a leaf's polynomial.

Imported by :mod:`skl_treeinner._kernels.cpu._treeshap` (TreeSHAP by leaf patterns),
:mod:`skl_treeinner._kernels.cpu._shap_moments` and
:mod:`skl_treeinner._kernels.cpu._permute_shap` (the resampling kernel for the test
of a column). They lay out every tree's leaves the same way (a split's
feature has one local number on every leaf below it, so a row's o bits of
all leaves come from one pass over the nodes), and build a leaf's product
of factors (z_k + o_k t) one factor at a time (:func:`times_factor`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

_jit = njit(nogil=True, cache=True)


@_jit
def depth_of(node, parent):
    """Return the number of splits above ``node`` (0 for a root or a pruned node)."""
    d = 0
    p = parent[node]
    while p >= 0:
        d += 1
        p = parent[p]
    return d


@_jit
def leaf_paths(lo, hi, left, parent, feature, cover):
    """Each leaf of the tree in nodes [lo, hi): its path and its distinct features.

    Returns ``(leaf_ids, path_node, path_left, path_len, path_unique,
    uniq_feature, uniq_zero, n_unique, node_bit)``: per leaf j (in node
    order) its node, its path's splits root first (``path_node[j, :path_len[j]]``,
    whether the path goes left at each, and the local number of each split's
    feature), its ``n_unique[j]`` distinct path features in the order they
    first appear from the root with their z (the product of cover(child) /
    cover(node) over the path's splits on each); per split (``node - lo``)
    its feature's local number, the same for every leaf below it.
    """
    size = hi - lo
    n_leaves = 0
    depth = 0
    for node in range(lo, hi):
        if left[node] < 0:
            n_leaves += 1
            depth = max(depth, depth_of(node, parent))
    width = max(depth, 1)
    leaf_ids = np.empty(n_leaves, dtype=np.int64)
    path_node = np.empty((n_leaves, width), dtype=np.int64)
    path_left = np.empty((n_leaves, width), dtype=np.bool_)
    path_len = np.zeros(n_leaves, dtype=np.int64)
    path_unique = np.empty((n_leaves, width), dtype=np.int64)
    uniq_feature = np.empty((n_leaves, width), dtype=np.int64)
    uniq_zero = np.empty((n_leaves, width))
    n_unique = np.zeros(n_leaves, dtype=np.int64)
    node_bit = np.zeros(size, dtype=np.int64)
    j = 0
    for node in range(lo, hi):
        if left[node] >= 0:
            continue
        leaf_ids[j] = node
        d = depth_of(node, parent)
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
            node_s = path_node[j, s]
            f = feature[node_s]
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
            node_bit[node_s - lo] = u
        n_unique[j] = m
        j += 1
    return (leaf_ids, path_node, path_left, path_len, path_unique, uniq_feature,
            uniq_zero, n_unique, node_bit)  # fmt: skip


@_jit
def nodes_root_first(lo, hi, left, right):
    """Return ``(order, count)``: the nodes (``node - lo``), each before its children.

    Nodes no path reaches (if any) are left out: ``order[:count]``.
    """
    order = np.empty(hi - lo, dtype=np.int64)
    order[0] = 0
    tail = 1
    k = 0
    while k < tail:
        node = lo + order[k]
        if left[node] >= 0:
            order[tail] = left[node] - lo
            order[tail + 1] = right[node] - lo
            tail += 2
        k += 1
    return order, tail


@njit(nogil=True, cache=True, inline="always")
def times_factor(poly, deg, z, o):
    """poly[:deg + 2] = poly[:deg + 1] times (z + o t), in place (o is 0 or 1)."""
    poly[deg + 1] = poly[deg] if o else 0.0
    for s in range(deg, 0, -1):
        poly[s] = z * poly[s] + (poly[s - 1] if o else 0.0)
    poly[0] = z * poly[0]
