"""Unbiased gain (paper 002, Sec. 5.1, Eq. 5), one method of ``global_importance``.

For each split, the training gradient sums recovered from the model meet the
gradient and hessian sums of rows drawn from the given (held-out) rows; see
:func:`skl_treeinner.global_importance` for the formula and its scale.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

from .._readers._base import slice_rows

__all__ = ["unbiased_gain"]


def _staged_gradient_hessian(ens, leaves, y):
    """Gradient and hessian at the margin before every tree, each (rows, n_trees).

    The margin before the trees of boosting iteration r is the intercept plus
    all trees of earlier iterations, per output (as in
    :meth:`TreeEnsemble.iteration_gradients`).
    """
    margin = ens.iteration_margins(leaves)
    objective = ens.objective
    try:
        hess = objective.hessian(margin, y)
    except NotImplementedError as e:
        raise ValueError(
            f"method='unbiased_gain' needs the hessian of the {objective.name!r} "
            "objective, which is not implemented. Use method='tree_inner', which "
            "needs gradients only."
        ) from e
    return ens.per_tree(objective.gradient(margin, y)), ens.per_tree(hess)


def _memberships(parent, leaves):
    """Every (row, node) pair with the row inside the node: leaves and ancestors.

    Returns ``rows`` and ``nodes`` (int64, same length), one pair per row and
    node on the row's path in every tree, found by walking up all paths at
    once, one depth level per step.
    """
    n_rows_, n_trees = leaves.shape
    rows_out = []
    nodes_out = []
    rows = np.repeat(np.arange(n_rows_), n_trees)
    nodes = leaves.ravel()
    while nodes.size:
        rows_out.append(rows)
        nodes_out.append(nodes)
        nodes = parent[nodes]
        keep = nodes >= 0
        rows, nodes = rows[keep], nodes[keep]
    return np.concatenate(rows_out), np.concatenate(nodes_out)


def _allocate(rng, chunk_counts, sizes, n_repeats):
    """Split each node's sample size over row chunks, as a uniform draw would.

    A uniform draw of s rows out of the N rows in a node takes a
    multivariate-hypergeometric number of them from each chunk; drawn one
    chunk after the other (vectorised over nodes), it is a sequence of
    hypergeometric draws. Returns an array (n_repeats, n_chunks, 2, n_nodes).
    """
    n_chunks = len(chunk_counts)
    shape = (n_repeats, n_chunks) + sizes.shape
    if n_chunks == 1:
        return np.broadcast_to(sizes, shape)
    out = np.zeros(shape, dtype=np.int64)
    remaining = np.broadcast_to(sizes, (n_repeats,) + sizes.shape).copy()
    population = np.sum(chunk_counts, axis=0)
    for c, counts in enumerate(chunk_counts):
        good = np.broadcast_to(counts, remaining.shape)
        bad = np.broadcast_to(population - counts, remaining.shape)
        out[:, c] = rng.hypergeometric(good, bad, remaining)
        remaining -= out[:, c]
        population = population - counts
    return out


def unbiased_gain(reader, X, y, w, *, random_state, n_repeats):
    """Σ over splits on k of Eq. 5 (times 2n), averaged over n_repeats draws."""
    ens = reader.ensemble
    seed = check_random_state(random_state).randint(np.iinfo(np.int32).max)
    rng = np.random.default_rng(seed)
    n_nodes = ens.n_nodes
    inner = np.flatnonzero(~ens.is_leaf)
    left, right = ens.children_left[inner], ens.children_right[inner]
    parent = ens.parent
    # Training gradient sums from p̂ = -α G / (H + λ) (Eq. 7).
    train_g = -ens.value * (ens.cover + ens.reg_lambda)
    train_g /= ens.learning_rate[ens.node_tree]

    # Pass 1: how many given rows reach every node, per chunk of rows.
    chunk_counts, bounds = [], []
    for start, stop, _, leaves in reader.iter_leaves(X):
        pairs = _memberships(parent, leaves)
        chunk_counts.append(np.bincount(pairs[1], minlength=n_nodes))
        bounds.append((start, stop))
        if len(bounds) == 1:
            routed = leaves, pairs  # reused below when there is one chunk
        else:
            routed = None  # route again rather than keep every chunk's leaves
    counts = np.sum(chunk_counts, axis=0)
    k = np.minimum(counts[left], counts[right])
    # Each node is drawn from twice: as the parent I of its own split (role 0)
    # and as a child of its parent's split (role 1); both with that split's k.
    sizes = np.zeros((2, n_nodes), dtype=np.int64)
    sizes[0, inner] = k
    sizes[1, left] = k
    sizes[1, right] = k
    alloc = _allocate(rng, chunk_counts, sizes, n_repeats)

    # Pass 2: draw the rows and sum their gradients and hessians.
    grad_sum = np.zeros((n_repeats, 2, n_nodes))
    hess_sum = np.zeros((n_repeats, 2, n_nodes))
    for c, (start, stop) in enumerate(bounds):
        if routed is None:
            leaves = reader.apply(slice_rows(X, start, stop))
            rows, nodes = _memberships(parent, leaves)
        else:
            leaves, (rows, nodes) = routed
        grad, hess = _staged_gradient_hessian(ens, leaves, y[start:stop])
        # Pairs sorted by node, so that each node's rows are one block.
        by_node = np.argsort(nodes, kind="stable")
        rows, nodes = rows[by_node], nodes[by_node]
        tree = ens.node_tree[nodes]
        g, h = grad[rows, tree], hess[rows, tree]
        if w is not None:
            g *= w[start + rows]
            h *= w[start + rows]
        rank_base = np.arange(nodes.size) - np.searchsorted(nodes, nodes)
        for rep in range(n_repeats):
            for role in (0, 1):
                # Shuffle within each block (keys node + u/2 stay inside the
                # block); the first s rows of a shuffled block are the draw.
                key = rng.random(nodes.size)
                key *= 0.5
                key += nodes
                order = np.argsort(key, kind="stable")
                take = order[rank_base < alloc[rep, c, role][nodes]]
                grad_sum[rep, role] += np.bincount(
                    nodes[take], weights=g[take], minlength=n_nodes
                )
                hess_sum[rep, role] += np.bincount(
                    nodes[take], weights=h[take], minlength=n_nodes
                )

    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = grad_sum / hess_sum  # G'/H', (n_repeats, 2, n_nodes)
        gain = (
            train_g[left] * ratio[:, 1, left]
            + train_g[right] * ratio[:, 1, right]
            - train_g[inner] * ratio[:, 0, inner]
        )
    gain[:, k == 0] = 0.0
    gain[~np.isfinite(gain)] = 0.0
    scores = np.bincount(
        ens.feature[inner], weights=gain.mean(axis=0), minlength=ens.n_features
    )
    return scores
