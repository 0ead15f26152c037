"""A library-neutral representation of a fitted tree ensemble.

Readers (one per boosting library, in :mod:`skl_treeinner._readers`) turn a
model into a :class:`TreeEnsemble` of flat numpy arrays. Everything downstream
(PreDecomp, TreeInner, ...) works on this representation only, so adding a
library means adding a reader and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy import sparse

from ._objectives import Objective

__all__ = ["SplitRule", "TreeEnsemble", "node_values_from_leaves", "subtree_sums"]


@dataclass(frozen=True, eq=False)
class SplitRule:
    """How a library sends a row to one side of each numerical split.

    Routing always uses the booster's own leaf routine; this rule serves what
    needs x's side at *every* split, not only on its path: TreeSHAP by leaf
    patterns (:mod:`skl_treeinner._kernels.cpu._residuals`), whose leaves are checked
    against the booster's own for every row.

    Parameters
    ----------
    threshold : ndarray of shape (n_nodes,)
        Split value of inner nodes, in the precision the library compares in.
    missing_left : ndarray of shape (n_nodes,), bool
        Side of NaN (and of the model's ``missing`` value) at each split.
    strict : bool
        ``x < threshold`` goes left (XGBoost) rather than ``x <= threshold``
        (LightGBM). Rows are compared in ``threshold``'s dtype; missing
        values are NaN.
    cover : ndarray of shape (n_nodes,) or None
        The node weights the library's own TreeSHAP weighs by, where they
        are not the ensemble's hessian covers: LightGBM weighs by training
        row counts (``internal_count``, ``leaf_count``). None: ``cover``.
    oblivious : bool
        Symmetric trees (CatBoost), laid out level by level so that the
        number of a row's leaf holds its side at every level: the sides come
        from the booster's own leaves, and ``threshold``/``missing_left``
        are unused (empty).
    """

    threshold: np.ndarray
    missing_left: np.ndarray
    strict: bool
    cover: np.ndarray | None = None
    oblivious: bool = False

    def kernel_arrays(self) -> tuple[np.ndarray, np.ndarray, bool]:
        """``(threshold, missing_left, strict)`` as the compiled kernels take them."""
        return (
            np.ascontiguousarray(self.threshold),
            np.ascontiguousarray(self.missing_left, dtype=np.bool_),
            bool(self.strict),
        )


@dataclass(frozen=True, eq=False)
class TreeEnsemble:
    """A fitted gradient-boosted tree ensemble as flat arrays.

    All trees are concatenated: the nodes of tree ``m`` are the global indices
    ``tree_offsets[m] <= t < tree_offsets[m + 1]``, and child pointers are
    global indices too (``-1`` at leaves). Trees are stored in boosting order.

    Parameters
    ----------
    tree_offsets : ndarray of shape (n_trees + 1,), int64
        Start of each tree's nodes; ``tree_offsets[-1] == n_nodes``.
    children_left, children_right : ndarray of shape (n_nodes,), int64
        Global index of each node's children, ``-1`` at leaves.
    feature : ndarray of shape (n_nodes,), int64
        Split feature of inner nodes (column index of X), ``-1`` at leaves.
    value : ndarray of shape (n_nodes,), float64
        p̂_m(t) for every node: at leaves the leaf value as the model predicts
        it (already multiplied by the learning rate); at inner nodes the
        shrunk, ℓ2-regularised value of Eq. 7, p̂ = -α G_t / (H_t + λ).
    cover : ndarray of shape (n_nodes,), float64
        Sum of training hessians H_t in each node.
    tree_group : ndarray of shape (n_trees,), int64
        Output (class) each tree contributes to; all zeros for single-output
        models.
    iteration_indptr : ndarray of shape (n_iterations + 1,), int64
        Trees of boosting iteration ``r`` are
        ``iteration_indptr[r] <= m < iteration_indptr[r + 1]``. All trees of
        one iteration were fitted to the gradient at the same margins.
    learning_rate : float or ndarray of shape (n_trees,)
        Shrinkage α_m of each tree (a float means the same for all). It is
        constant within an iteration; it varies across iterations only under
        a learning-rate schedule or training continued with another rate.
    reg_lambda : float
        ℓ2 penalty λ on leaf values.
    intercept : ndarray of shape (n_outputs,), float64
        Margin before the first tree (base score on the margin scale).
    objective : Objective
        Training loss, giving the gradients TreeInner needs.
    n_features : int
        Number of columns of X the model expects.
    feature_names : tuple of str or None
        Column names the model was trained with, if it knows them.
    split_rule : SplitRule or None
        The library's rule for the side of every split, where one rule covers
        them all (None with categorical splits, or where not read).

    Notes
    -----
    A reader must supply p̂ for inner nodes; :func:`node_values_from_leaves`
    computes it from the leaf values and hessian covers by the recurrence of
    Eq. 23, which is exact for ℓ2-regularised leaves.
    """

    tree_offsets: np.ndarray
    children_left: np.ndarray
    children_right: np.ndarray
    feature: np.ndarray
    value: np.ndarray
    cover: np.ndarray
    tree_group: np.ndarray
    iteration_indptr: np.ndarray
    learning_rate: np.ndarray
    reg_lambda: float
    intercept: np.ndarray
    objective: Objective
    n_features: int
    feature_names: tuple[str, ...] | None = None
    #: The library's rule for the side of numerical splits, where it has one
    #: for every split of the model (None: e.g. categorical splits).
    split_rule: SplitRule | None = None

    def __post_init__(self) -> None:
        n_nodes = self.value.shape[0]
        for name in ("children_left", "children_right", "feature", "cover"):
            if getattr(self, name).shape != (n_nodes,):
                raise ValueError(f"{name} must have shape ({n_nodes},)")
        off = self.tree_offsets
        if off[0] != 0 or off[-1] != n_nodes or np.any(np.diff(off) <= 0):
            raise ValueError("tree_offsets must rise from 0 to n_nodes")
        if self.tree_group.shape != (self.n_trees,):
            raise ValueError(f"tree_group must have shape ({self.n_trees},)")
        ind = self.iteration_indptr
        if ind[0] != 0 or ind[-1] != self.n_trees or np.any(np.diff(ind) <= 0):
            raise ValueError("iteration_indptr must rise from 0 to n_trees")
        if self.intercept.shape != (self.n_outputs,):
            raise ValueError(f"intercept must have shape ({self.n_outputs},)")
        if np.any((self.tree_group < 0) | (self.tree_group >= self.n_outputs)):
            raise ValueError("tree_group must index the model's outputs")
        inner = self.children_left >= 0
        if np.any(self.feature[inner] < 0) or np.any(
            self.feature[inner] >= self.n_features
        ):
            raise ValueError("every inner node must split on a valid feature")
        lr = np.broadcast_to(
            np.asarray(self.learning_rate, dtype=np.float64), (self.n_trees,)
        ).copy()
        object.__setattr__(self, "learning_rate", lr)
        if not np.all(lr > 0):
            raise ValueError("learning_rate must be positive")
        first = lr[self.iteration_indptr[:-1]]
        if not np.array_equal(np.repeat(first, np.diff(ind)), lr):
            raise ValueError("learning_rate must be constant within an iteration")

    def __getstate__(self):
        # Leave the cached properties (path table, parents, ...) out of
        # pickles: they are rebuilt where used, and pickles (a Dask graph)
        # stay the size of the arrays that define the ensemble.
        cached = {
            name
            for name, member in vars(type(self)).items()
            if isinstance(member, cached_property)
        }
        return {k: v for k, v in self.__dict__.items() if k not in cached}

    def __setstate__(self, state):
        self.__dict__.update(state)

    # -- shape -----------------------------------------------------------------
    @property
    def n_trees(self) -> int:
        """Number of trees."""
        return self.tree_offsets.shape[0] - 1

    @property
    def n_nodes(self) -> int:
        """Total number of nodes over all trees."""
        return self.value.shape[0]

    @property
    def n_outputs(self) -> int:
        """Number of margins the model predicts (classes for multi-class)."""
        return self.objective.n_outputs

    @property
    def n_iterations(self) -> int:
        """Number of boosting iterations (rounds)."""
        return self.iteration_indptr.shape[0] - 1

    @property
    def iteration_learning_rate(self) -> np.ndarray:
        """Shrinkage α of each boosting iteration, shape (n_iterations,)."""
        return self.learning_rate[self.iteration_indptr[:-1]]

    @property
    def treeshap_cover(self) -> np.ndarray:
        """Node weights the library's TreeSHAP weighs by, shape (n_nodes,).

        The split rule's own (:attr:`SplitRule.cover`) where it has them, else
        ``cover``.
        """
        rule = self.split_rule
        return self.cover if rule is None or rule.cover is None else rule.cover

    @property
    def is_leaf(self) -> np.ndarray:
        """Boolean mask of leaves, shape (n_nodes,)."""
        return self.children_left < 0

    @cached_property
    def tree_iteration(self) -> np.ndarray:
        """Boosting iteration of each tree, shape (n_trees,)."""
        return np.repeat(np.arange(self.n_iterations), np.diff(self.iteration_indptr))

    @cached_property
    def node_tree(self) -> np.ndarray:
        """Tree of each node, shape (n_nodes,)."""
        return np.repeat(np.arange(self.n_trees), np.diff(self.tree_offsets))

    @cached_property
    def parent(self) -> np.ndarray:
        """Global index of each node's parent, ``-1`` at roots and orphans."""
        parent = np.full(self.n_nodes, -1, dtype=np.int64)
        inner = np.flatnonzero(self.children_left >= 0)
        parent[self.children_left[inner]] = inner
        parent[self.children_right[inner]] = inner
        return parent

    @property
    def root_value(self) -> np.ndarray:
        """p̂_m(root) of every tree, shape (n_trees,)."""
        return self.value[self.tree_offsets[:-1]]

    @property
    def bias(self) -> np.ndarray:
        """Intercept plus Σ_m p̂_m(root) per output, shape (n_outputs,).

        The constant of local accuracy (Prop. 1): PreDecomp summed over
        features plus this bias equals the model's raw margin.
        """
        return self.intercept + np.bincount(
            self.tree_group, weights=self.root_value, minlength=self.n_outputs
        )

    # -- PreDecomp on leaves -------------------------------------------------------
    @cached_property
    def path_table(self) -> sparse.csr_matrix:
        """PreDecomp of every leaf, a sparse matrix (n_nodes, n_outputs * n_features).

        Row ``t`` (a leaf) holds f_{m,k}(x) for any x reaching ``t`` (Def. 1,
        Eq. 9): for each split on the path from the root, the change
        p̂(child taken) - p̂(split node) is credited to the split feature, in
        column ``group * n_features + feature`` where ``group`` is the output
        of the leaf's tree. Rows of inner nodes are empty.
        """
        parent = self.parent
        leaves = np.flatnonzero(self.is_leaf)
        col_offset = self.tree_group[self.node_tree] * self.n_features
        rows, cols, vals = [], [], []
        origin, cur = leaves, leaves
        # Walk up from every leaf at once: one step per depth level, never a
        # loop over rows or trees.
        while cur.size:
            par = parent[cur]
            has = par >= 0
            origin, cur, par = origin[has], cur[has], par[has]
            rows.append(origin)
            cols.append(col_offset[par] + self.feature[par])
            vals.append(self.value[cur] - self.value[par])
            cur = par
        shape = (self.n_nodes, self.n_outputs * self.n_features)
        if not rows:
            return sparse.csr_matrix(shape, dtype=np.float64)
        table = sparse.csr_matrix(
            (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
            shape=shape,
        )
        table.sum_duplicates()
        return table

    @cached_property
    def _round_columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """How trees map onto (iteration, output) pairs.

        ``None`` in the common case where each pair holds exactly one tree,
        in order (tree m is pair m). Otherwise ``(order, starts, key)``:
        ``order`` permutes trees so that those of one pair are contiguous,
        ``starts`` marks the first of each pair (for ``np.add.reduceat``), and
        ``key`` is the pair ``iteration * n_outputs + output`` of each tree.
        """
        key = self.tree_iteration * self.n_outputs + self.tree_group
        n_pairs = self.n_iterations * self.n_outputs
        if n_pairs == self.n_trees and np.array_equal(key, np.arange(n_pairs)):
            return None
        order = np.argsort(key, kind="stable")
        sorted_key = key[order]
        starts = np.flatnonzero(np.r_[True, sorted_key[1:] != sorted_key[:-1]])
        if starts.size != n_pairs:
            raise ValueError(
                "every boosting iteration must hold at least one tree per output"
            )
        return order, starts, key

    def iteration_margins(self, leaves: np.ndarray) -> np.ndarray:
        """Margin before every boosting iteration.

        Parameters
        ----------
        leaves : ndarray of shape (n_samples, n_trees), int64
            Global index of the leaf each row reaches in each tree.

        Returns
        -------
        ndarray of shape (n_samples, n_iterations, n_outputs), float64
            Entry ``[i, r, k]`` is the intercept plus all trees of iterations
            before r for output k: the margin f_[m-1](x_i) at which every tree
            of iteration r and output k was fitted.
        """
        n = leaves.shape[0]
        per_tree = self.value[leaves]  # (n, n_trees) per-tree predictions
        columns = self._round_columns
        if columns is None:
            per_round = per_tree
        else:
            order, starts, _ = columns
            per_round = np.add.reduceat(per_tree[:, order], starts, axis=1)
        per_round = per_round.reshape(n, self.n_iterations, self.n_outputs)
        # Margin before iteration r: intercept + sum over earlier iterations.
        margin = np.cumsum(per_round, axis=1)
        margin -= per_round
        margin += self.intercept
        return margin

    def margins(self, leaves: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Raw margin implied by the leaves reached, and its scale.

        Parameters
        ----------
        leaves : ndarray of shape (n_samples, n_trees), int64
            Global index of the leaf each row reaches in each tree.

        Returns
        -------
        margin : ndarray of shape (n_samples, n_outputs)
            The intercept plus the values of the leaves reached, per output:
            what the booster itself predicts as its raw margin (Prop. 1).
        scale : ndarray of shape (n_samples, n_outputs)
            The intercept's and the leaf values' absolute sum: float rounding
            of the margin is relative to it.
        """
        per_tree = self.value[leaves]
        n = leaves.shape[0]
        margin = np.empty((n, self.n_outputs))
        scale = np.empty((n, self.n_outputs))
        # Sums per output, not a product with a (trees x outputs) indicator:
        # BLAS threads beside a booster's spinning OpenMP threads were slow.
        for k in range(self.n_outputs):
            trees = per_tree[:, self.tree_group == k]
            margin[:, k] = trees.sum(axis=1)
            scale[:, k] = np.abs(trees).sum(axis=1)
        margin += self.intercept
        scale += np.abs(self.intercept)
        return margin, scale

    def iteration_gradients(self, leaves: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Gradient at the margin before every boosting iteration.

        Parameters
        ----------
        leaves : ndarray of shape (n_samples, n_trees), int64
            Global index of the leaf each row reaches in each tree.
        y : ndarray of shape (n_samples,)
            Target checked by the objective.

        Returns
        -------
        ndarray of shape (n_samples, n_iterations, n_outputs), float64
            Entry ``[i, r, k]`` is the k-th output's loss gradient for row i at
            :meth:`iteration_margins`: what every tree of iteration r and
            output k was fitted against.
        """
        return self.objective.gradient(self.iteration_margins(leaves), y)

    def per_tree(self, per_iteration: np.ndarray) -> np.ndarray:
        """Spread an (n_samples, n_iterations, n_outputs) array over trees.

        Returns an array of shape (n_samples, n_trees) whose column m is the
        entry of tree m's iteration and output.
        """
        n_pairs = self.n_iterations * self.n_outputs
        flat = per_iteration.reshape(per_iteration.shape[0], n_pairs)
        columns = self._round_columns
        return flat if columns is None else flat[:, columns[2]]

    def staged_gradients(self, leaves: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Gradient g_{i,m} of the loss at f_[m-1](x_i) for every row and tree.

        The per-tree view of :meth:`iteration_gradients`: an array of shape
        (n_samples, n_trees) whose column m is the gradient tree m was fitted
        against.
        """
        return self.per_tree(self.iteration_gradients(leaves, y))


def node_values_from_leaves(
    children_left: np.ndarray,
    children_right: np.ndarray,
    leaf_value: np.ndarray,
    cover: np.ndarray,
    reg_lambda: float,
) -> np.ndarray:
    """Inner-node values p̂ from leaf values by the recurrence of Eq. 23.

    p̂(t) = [(H_l + λ) p̂(l) + (H_r + λ) p̂(r)] / (H_t + λ), with hessian sums H
    in place of the counts of the paper's squared-error statement. If the
    leaves are p̂ = -α G / (H + λ) (Eq. 7), so is every inner node, since
    G_t = G_l + G_r. For any leaf values the result keeps local accuracy
    (Prop. 1), which only needs values to telescope along paths.

    Parameters
    ----------
    children_left, children_right : ndarray of shape (n_nodes,)
        Global child indices, ``-1`` at leaves; may hold several trees.
    leaf_value : ndarray of shape (n_nodes,)
        Values at leaves; entries at inner nodes are ignored.
    cover : ndarray of shape (n_nodes,)
        Hessian sum H_t of every node.
    reg_lambda : float
        ℓ2 penalty λ.

    Returns
    -------
    ndarray of shape (n_nodes,), float64
    """
    value = np.asarray(leaf_value, dtype=np.float64).copy()
    weight = np.asarray(cover, dtype=np.float64) + reg_lambda
    for t in _inner_levels_bottom_up(children_left, children_right):
        left, right = children_left[t], children_right[t]
        value[t] = (weight[left] * value[left] + weight[right] * value[right]) / (
            weight[t]
        )
    return value


def subtree_sums(
    children_left: np.ndarray, children_right: np.ndarray, leaf_value: np.ndarray
) -> np.ndarray:
    """Sum of the leaf values under every node (the leaf's own value at leaves).

    Readers use it to rebuild inner-node hessian sums H_t = H_l + H_r from
    leaf sums stored at a higher precision than the inner ones.
    """
    total = np.asarray(leaf_value, dtype=np.float64).copy()
    for t in _inner_levels_bottom_up(children_left, children_right):
        total[t] = total[children_left[t]] + total[children_right[t]]
    return total


def _inner_levels_bottom_up(children_left, children_right):
    """Yield the inner nodes of each depth, deepest first (any number of trees)."""
    n_nodes = children_left.shape[0]
    inner = children_left >= 0
    # Depth of every node from its root, top-down, one level at a time.
    depth = np.full(n_nodes, -1, dtype=np.int64)
    is_child = np.zeros(n_nodes, dtype=bool)
    is_child[children_left[inner]] = True
    is_child[children_right[inner]] = True
    level = np.flatnonzero(~is_child)
    d = 0
    while level.size:
        depth[level] = d
        level = level[inner[level]]
        level = np.concatenate([children_left[level], children_right[level]])
        d += 1
    for d in range(int(depth.max(initial=0)) - 1, -1, -1):
        yield np.flatnonzero((depth == d) & inner)
