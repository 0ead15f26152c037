"""Node values p̂, learning rates α and λ of XGBoost trees.

XGBoost stores each leaf value already multiplied by the learning rate and, at
inner nodes, the unshrunk weight w_t = -G_t / (H_t + λ) together with H_t
(``base_weights`` and ``sum_hessian``). This module holds what turns those
arrays into the node values of Eq. 23, independently of the reader instance:

- :func:`leaf_settings` reads the settings that shape leaf values from
  ``save_config()``'s ``tree_train_param`` (eta, lambda, alpha,
  max_delta_step, monotone constraints);
- :class:`NodeStats` holds the per-node statistics of all trees;
- :func:`node_values` computes p̂ by the recurrence of Eq. 23, checks it
  against ``eta * base_weights``, and, where the configuration does not
  describe the trees (a model loaded from a file, or eta or lambda changed
  during training), recovers λ and each tree's learning rate from the trees.

:mod:`._xgboost` imports from here; nothing here imports from it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .._model._ensemble import SplitRule, node_values_from_leaves

__all__ = [
    "LeafSettings",
    "NodeStats",
    "TreeNodes",
    "leaf_settings",
    "node_values",
    "tree_nodes",
]


@dataclass(frozen=True)
class LeafSettings:
    """The training settings of an XGBoost booster that shape its leaf values.

    Attributes
    ----------
    eta : float
        The learning rate of each tree: ``eta / num_parallel_tree``.
    lam : float
        The ℓ2 regularisation λ (``lambda``).
    alpha : float
        The ℓ1 regularisation (``alpha``).
    max_delta_step : float
        The bound on leaf weights; 0 for none.
    has_monotone : bool
        Whether any monotone constraint is set.
    """

    eta: float
    lam: float
    alpha: float
    max_delta_step: float
    has_monotone: bool


def leaf_settings(tree_train_param: dict, num_parallel_tree: int) -> LeafSettings:
    """Read the leaf-value settings of a ``save_config()`` dict.

    Parameters
    ----------
    tree_train_param : dict
        ``config["learner"]["gradient_booster"]["tree_train_param"]``.
    num_parallel_tree : int
        The trees grown per output in each round (a boosted forest).

    Returns
    -------
    LeafSettings
        The settings, with eta divided by ``num_parallel_tree``.
    """
    # Each tree of a boosted forest is shrunk by eta / num_parallel_tree.
    eta = float(tree_train_param["eta"]) / num_parallel_tree
    lam = float(tree_train_param["lambda"])
    alpha = float(tree_train_param["alpha"])
    max_delta_step = float(tree_train_param["max_delta_step"])
    monotone = tree_train_param.get("monotone_constraints", "")
    monotone = re.sub(r"[^0-9-]", " ", monotone)
    has_monotone = any(int(v) != 0 for v in monotone.split())
    return LeafSettings(
        eta=eta,
        lam=lam,
        alpha=alpha,
        max_delta_step=max_delta_step,
        has_monotone=has_monotone,
    )


class NodeStats:
    """Per-node statistics of all trees, to recover p̂, λ and α exactly.

    XGBoost stores leaf values (shrunk) and, at inner nodes, the unshrunk
    weight w_t = -G_t / (H_t + λ) together with H_t. Since G_t = G_l + G_r,
    these determine λ and each tree's learning rate α_m without the training
    configuration, which XGBoost does not save with the model.

    Parameters
    ----------
    left, right : ndarray of shape (n_nodes,)
        Global node ids of the children; -1 at leaves.
    is_leaf : ndarray of shape (n_nodes,)
        Whether each node is a leaf.
    leaf_value : ndarray of shape (n_nodes,)
        The (shrunk) leaf values; 0 at inner nodes.
    cover : ndarray of shape (n_nodes,)
        The hessian sums H_t (``sum_hessian``).
    weight : ndarray of shape (n_nodes,)
        The unshrunk weights w_t (``base_weights``).
    tree : ndarray of shape (n_nodes,)
        The tree of each node.
    """

    def __init__(self, left, right, is_leaf, *, leaf_value, cover, weight, tree):
        self.left, self.right, self.is_leaf = left, right, is_leaf
        self.leaf_value, self.cover = leaf_value, cover
        self.weight, self.tree = weight, tree
        self.inner = np.flatnonzero(~is_leaf)
        self.n_trees = int(tree[-1]) + 1

    def values(self, lam: float) -> np.ndarray:
        """p̂ at every node: leaf values, then the Eq. 23 recurrence."""
        return node_values_from_leaves(
            self.left, self.right, self.leaf_value, self.cover, lam
        )

    def _errors(self, value, learning_rate):
        t = self.inner
        scale = np.zeros(self.n_trees)
        np.maximum.at(scale, self.tree, np.abs(value))
        err = np.abs(value[t] - learning_rate[self.tree[t]] * self.weight[t])
        return err / (1e-4 * scale[self.tree[t]] + 1e-12)

    def consistent(self, value, learning_rate) -> bool:
        """Whether p̂ = α_m · w_t at every inner node, to float32 precision."""
        return self.inner.size == 0 or bool(
            np.all(self._errors(value, learning_rate) <= 1)
        )

    def worst_tree(self, value, learning_rate) -> int:
        """Tree of the inner node that fits p̂ = α_m · w_t worst."""
        return int(self.tree[self.inner[np.argmax(self._errors(value, learning_rate))]])

    def infer_lambda(self, default: float) -> float:
        """λ from inner nodes whose children are inner nodes too.

        -w_t (H_t + λ) = -w_l (H_l + λ) - w_r (H_r + λ) gives, per node,
        λ (w_t - w_l - w_r) = w_l H_l + w_r H_r - w_t H_t; solved by least
        squares over all such nodes. Trees of depth <= 1 carry no such node;
        then ``default`` is kept.
        """
        t = self.inner
        left, right = self.left[t], self.right[t]
        both = ~self.is_leaf[left] & ~self.is_leaf[right]
        t, left, right = t[both], left[both], right[both]
        if t.size == 0:
            return default
        w, h = self.weight, self.cover
        d = w[t] - w[left] - w[right]
        rhs = w[left] * h[left] + w[right] * h[right] - w[t] * h[t]
        if not np.any(d):
            return default
        lam = max(float(d @ rhs / (d @ d)), 0.0)
        return default if abs(lam - default) <= 1e-4 * max(1.0, default) else lam

    def infer_learning_rate(self, value, default: float, indptr) -> np.ndarray:
        """α by least squares of p̂ on w over the inner nodes of each iteration.

        All trees of one boosting iteration share a learning rate; returns it
        per tree, shape (n_trees,).
        """
        t = self.inner
        n_iter = len(indptr) - 1
        iteration = np.repeat(np.arange(n_iter), np.diff(indptr))[self.tree[t]]
        num = np.bincount(iteration, value[t] * self.weight[t], n_iter)
        den = np.bincount(iteration, self.weight[t] ** 2, n_iter)
        rate = np.full(n_iter, default)
        has = den > 0
        rate[has] = num[has] / den[has]
        # Keep the configured value exactly where it fits.
        rate[np.abs(rate / default - 1) <= 1e-5] = default
        return np.repeat(rate, np.diff(indptr))


def node_values(
    stats: NodeStats, settings: LeafSettings, indptr: np.ndarray, n_trees: int
) -> tuple[np.ndarray, np.ndarray, float, list[str]]:
    """Node values p̂, each tree's learning rate and λ of an XGBoost model.

    The configured eta and lambda are used where they describe the trees
    (p̂ = eta · w_t at every inner node); otherwise both are inferred from the
    trees, unless a setting that breaks the identities (alpha, a binding
    max_delta_step, monotone constraints) explains the mismatch.

    Parameters
    ----------
    stats : NodeStats
        The per-node statistics of all trees.
    settings : LeafSettings
        The settings read from ``save_config()`` by :func:`leaf_settings`.
    indptr : ndarray of shape (n_iterations + 1,)
        The trees of each boosting iteration (``iteration_indptr``).
    n_trees : int
        The number of trees.

    Returns
    -------
    value : ndarray of shape (n_nodes,)
        p̂ at every node.
    learning_rate : ndarray of shape (n_trees,)
        The learning rate α of each tree.
    lam : float
        The ℓ2 regularisation λ.
    lost : list of str
        The settings under which p̂ = -αG/(H+λ) no longer holds exactly.

    Raises
    ------
    ValueError
        If no learning rate per tree and λ fit the trees.
    """
    eta, lam = settings.eta, settings.lam
    lost = []
    if settings.alpha > 0:
        lost.append(f"reg_alpha={settings.alpha:g} (L1 shrinks leaf values)")
    if settings.has_monotone:
        lost.append("monotone_constraints (leaf values were bounded)")
    learning_rate = np.full(n_trees, eta)
    value = stats.values(lam)
    max_delta_step = settings.max_delta_step
    if max_delta_step > 0:
        weights = np.where(stats.is_leaf, value / eta, stats.weight)
        if np.any(np.abs(weights) >= max_delta_step * (1 - 1e-6)):
            lost.append(
                f"max_delta_step={max_delta_step:g} (some leaf values were clipped)"
            )
    if not lost and not stats.consistent(value, learning_rate):
        # The configuration does not describe these trees: the model was
        # loaded from a file (XGBoost saves no training parameters), or
        # eta or lambda changed during training. Infer both from the trees.
        lam = stats.infer_lambda(default=lam)
        value = stats.values(lam)
        learning_rate = stats.infer_learning_rate(value, eta, indptr)
        if not stats.consistent(value, learning_rate):
            raise ValueError(
                f"Tree {stats.worst_tree(value, learning_rate)} of the XGBoost "
                "model does not have ℓ2-regularised node values p̂ = -αG/(H+λ) "
                "with one learning rate per tree, so PreDecomp and TreeInner "
                "cannot be computed exactly. This happens with reg_lambda "
                "changed between training continuations, leaf-refreshing "
                "updaters (process_type='update'), and, for a model loaded "
                "from a file (which keeps no training parameters), with "
                "reg_alpha > 0, a binding max_delta_step or monotone "
                "constraints. Refit without them."
            )
    return value, learning_rate, lam, lost


class TreeNodes(NamedTuple):
    """The trees of an XGBoost model as flat arrays (global node indices)."""

    offsets: np.ndarray
    sizes: np.ndarray
    left: np.ndarray
    right: np.ndarray
    is_leaf: np.ndarray
    feature: np.ndarray
    cover: np.ndarray
    leaf_value: np.ndarray
    base_weights: np.ndarray
    #: ``x < split_conditions`` (in float32) goes left, missing by
    #: ``default_left``; None where a tree has categorical splits.
    split_rule: SplitRule | None


def tree_nodes(trees: list) -> TreeNodes:
    """Read the UBJSON trees of a model into flat arrays (:class:`TreeNodes`)."""
    sizes = np.array([len(t["left_children"]) for t in trees], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)])

    def cat(key, dtype):
        return np.concatenate([np.asarray(t[key], dtype=dtype) for t in trees])

    shift = np.repeat(offsets[:-1], sizes)
    left = cat("left_children", np.int64)
    right = cat("right_children", np.int64)
    is_leaf = left < 0
    left = np.where(is_leaf, -1, left + shift)
    right = np.where(is_leaf, -1, right + shift)
    feature = np.where(is_leaf, -1, cat("split_indices", np.int64))
    cover = cat("sum_hessian", np.float64)
    leaf_value = np.where(is_leaf, cat("split_conditions", np.float64), 0.0)
    base_weights = cat("base_weights", np.float64)
    split_rule = None
    if not any(np.any(np.asarray(t["split_type"]) != 0) for t in trees):
        split_rule = SplitRule(
            threshold=np.where(
                is_leaf, 0.0, cat("split_conditions", np.float32)
            ).astype(np.float32),
            missing_left=cat("default_left", np.uint8).astype(bool),
            strict=True,
        )
    return TreeNodes(
        offsets,
        sizes,
        left,
        right,
        is_leaf,
        feature,
        cover,
        leaf_value,
        base_weights,
        split_rule,
    )
