"""TreeSHAP by leaf patterns of a GPU model, on its GPU.

The device twin of :func:`skl_treeinner._kernels.cpu._treeshap.treeshap_terms` for
models whose every leaf takes all its 2^m patterns (m distinct path features,
at most :data:`~skl_treeinner._kernels.cpu._treeshap.MAX_DENSE_FEATURES`). Imported
only by :mod:`skl_treeinner._kernels._device`, which lays the leaves out
(:func:`skl_treeinner._kernels._device_layout.flat_leaves`) and decides when it
runs. A row's o bits at a leaf are 1 except at the features of the splits on
the leaf's path where x takes the other side (x's side from the library's
rule, :func:`~skl_treeinner._kernels.cpu._treeshap.takes_left`, compiled for the
device); the row reaches the leaf when it takes the leaf's side at every one,
which must agree with the booster's own leaf (``misrouted`` is set where not).

* :func:`pattern_counts`, summed over rows: one thread per leaf adds the
  residuals of the rows per pattern, in row order (every sum has one owner:
  the same numbers on every run); the host folds them into Shapley values.
* :func:`row_patterns`, per row: one thread per row adds, tree by tree, the
  residual times the Shapley vector of the row's pattern at every leaf, read
  from the table of all patterns.
"""

from __future__ import annotations

from numba import cuda

from ..cpu._treeshap import takes_left


@cuda.jit(device=True)
def _pattern(X, i, leaf, flat, m, feature, rule):
    """Return ``(pattern, reached)``: row i's o bits at the leaf; whether it is x's."""
    path_len, path_node, path_left, path_bit = (
        flat.path_len, flat.path_node, flat.path_left, flat.path_bit
    )  # fmt: skip
    threshold, missing_left, strict = rule
    pattern = (1 << m) - 1
    reached = True
    for s in range(path_len[leaf]):
        node = path_node[leaf, s]
        here = takes_left(
            X[i, feature[node]], threshold[node], missing_left[node], strict
        )
        if here != path_left[leaf, s]:
            pattern &= ~(1 << path_bit[leaf, s])
            reached = False
    return pattern, reached


@cuda.jit
def pattern_counts(
    X, leaves, res, walk, first, flat, starts, feature, rule, counts, misrouted
):
    """counts[c, starts[L] - starts[first] + p] = Σ_(i of pattern p) res[c, i, t] / α_t.

    One thread per leaf L = first + thread of ``flat``
    (:class:`~skl_treeinner._kernels._device_layout.FlatLeaves`), while
    ``counts`` holds its 2^m sums; the rows are added in order.
    ``res[c, i, t]`` is w_i (-g_{i,t}) at target c
    (:func:`skl_treeinner._kernels.cuda._residuals.residual_terms`); ``walk``
    and ``rule`` are the model's, ``feature`` its split features.
    """
    leaf = first + cuda.grid(1)
    if leaf >= flat.n_unique.shape[0]:
        return
    m = flat.n_unique[leaf]
    a = starts[leaf] - starts[first]
    if a + (1 << m) > counts.shape[1]:
        return
    t = flat.leaf_tree[leaf]
    channels = counts.shape[0]
    for c in range(channels):
        for p in range(1 << m):
            counts[c, a + p] = 0.0
    scale = walk.inv_lr[t]
    for i in range(leaves.shape[0]):
        pattern, reached = _pattern(X, i, leaf, flat, m, feature, rule)
        if reached != (leaves[i, t] == flat.leaf_node[leaf]):
            misrouted[0] = 1
        for c in range(channels):
            counts[c, a + pattern] += res[c, i, t] * scale


@cuda.jit
def row_patterns(
    X, leaves, res, walk, flat, table, table_starts, feature, rule, out, misrouted
):
    """out[c, i, k] = Σ_t res[c, i, t] / α_t φ_{t,k}(x_i): one thread per row.

    φ_t(x_i) is the sum over tree t's leaves of the Shapley vector of the
    row's pattern there, ``table[table_starts[L] + p m : ... + m]``.
    """
    i = cuda.grid(1)
    if i >= leaves.shape[0]:
        return
    channels, n_features = out.shape[0], out.shape[2]
    for c in range(channels):
        for k in range(n_features):
            out[c, i, k] = 0.0
    tree_leaves = flat.tree_leaves
    for t in range(tree_leaves.shape[0] - 1):
        own = leaves[i, t]
        scale = walk.inv_lr[t]
        for leaf in range(tree_leaves[t], tree_leaves[t + 1]):
            m = flat.n_unique[leaf]
            pattern, reached = _pattern(X, i, leaf, flat, m, feature, rule)
            if reached != (own == flat.leaf_node[leaf]):
                misrouted[0] = 1
            at = table_starts[leaf] + pattern * m
            for c in range(channels):
                weight = res[c, i, t] * scale
                for u in range(m):
                    out[c, i, flat.uniq_feature[leaf, u]] += weight * table[at + u]
