"""What the kernels take, as structures numba accepts.

Role: the structures the kernels take whole: a model's arrays, built once per
model, and the column test's units and blocks of rows. Every compiled kernel
(``cpu/``, ``cuda/``) takes these NamedTuples instead of their arrays one by
one: numba passes a NamedTuple of arrays to compiled code as it passes the
arrays, and ``cuda.jit`` kernels take them as launch arguments
(:func:`on_device` puts their arrays on the GPU).

* :class:`Walk`: a row's rounds, in boosting order. The leaves' values, the
  intercept, the trees of each round and their outputs give the margin before
  every round; the objective's code and parameter its loss gradient there;
  the learning rates turn a tree's gradient into its share of TreeInner
  (Paper 000, Eq. 21).
* :class:`PathTable`: the PreDecomp of every leaf (Def. 1), as CSR arrays.
* :class:`Trees`: the trees' shape (children, parents, split features), the
  covers TreeSHAP weighs by and each tree's round.
* :class:`Rule`: the library's split rule, which sends a value to one side of
  a split (:class:`~skl_treeinner._model._ensemble.SplitRule`).
* :class:`Units` and :class:`Block`: the column test's units (columns drawn
  together) and a block of held-out rows with their draws
  (:mod:`skl_treeinner._kernels.cpu._permute`).

:class:`ModelArrays` builds each on first use and keeps it: one per model,
shared by every caller of the model's kernels.
"""

from __future__ import annotations

import weakref
from functools import cached_property
from typing import NamedTuple

import numpy as np

__all__ = [
    "Block",
    "ModelArrays",
    "PathTable",
    "Rule",
    "Trees",
    "Units",
    "Walk",
    "kernel_rows",
    "on_device",
]

#: The objective's code where the compiled kernels have no gradient of it.
NO_GRADIENT = -1


class Walk(NamedTuple):
    """A row's rounds: margins, gradients and learning rates.

    ``value[leaf]`` is a leaf's value, ``intercept`` (n_outputs,) the margin
    before the first round; round r's trees are ``indptr[r]:indptr[r + 1]``,
    tree t adds to output ``group[t]``. ``code`` and ``prm`` name the
    objective's gradient in :mod:`skl_treeinner._kernels.cpu._residuals`
    (:data:`NO_GRADIENT`: none). ``inv_lr[t]`` = 1 / α_t.
    """

    value: np.ndarray
    intercept: np.ndarray
    indptr: np.ndarray
    group: np.ndarray
    code: int
    prm: float
    inv_lr: np.ndarray


class PathTable(NamedTuple):
    """PreDecomp of every leaf: row ``leaf`` of a CSR (n_nodes, K * p) matrix.

    Entries ``ptr[leaf]:ptr[leaf + 1]`` of ``col`` (output k's column j is
    k * n_features + j) and ``val``.
    """

    ptr: np.ndarray
    col: np.ndarray
    val: np.ndarray
    n_features: int


class Trees(NamedTuple):
    """The trees' shape: tree t's nodes are ``offsets[t]:offsets[t + 1]``.

    Children (``left[node] < 0`` at a leaf), parents (-1 at roots), split
    features, the covers TreeSHAP weighs by, and each tree's round.
    """

    offsets: np.ndarray
    left: np.ndarray
    right: np.ndarray
    parent: np.ndarray
    feature: np.ndarray
    cover: np.ndarray
    tree_round: np.ndarray


class Rule(NamedTuple):
    """The library's split rule: x goes left if x < thr (``strict``) or x <= thr.

    NaN goes to the ``missing_left`` side of each split.
    """

    threshold: np.ndarray
    missing_left: np.ndarray
    strict: bool


class Units(NamedTuple):
    """The column test's units: columns whose values are drawn together.

    ``unit_of[k]`` is model column k's unit (-1: none); unit u's columns are
    ``cols[col_ptr[u]:col_ptr[u + 1]]``, the trees that split on it
    ``trees[tree_ptr[u]:tree_ptr[u + 1]]`` (in boosting order), and tree t's
    units ``units[unit_ptr[t]:unit_ptr[t + 1]]`` (the transpose).
    """

    unit_of: np.ndarray
    col_ptr: np.ndarray
    cols: np.ndarray
    tree_ptr: np.ndarray
    trees: np.ndarray
    unit_ptr: np.ndarray
    units: np.ndarray

    @classmethod
    def of(cls, unit_of, tree_ptr, trees, n_trees) -> Units:
        """Build the units from each column's unit and each unit's trees (CSR)."""
        n_units = tree_ptr.size - 1
        unit_of = np.ascontiguousarray(unit_of, dtype=np.int64)
        # Each unit's columns, for the kernels' shortcut (a draw of equal values).
        cols = np.flatnonzero(unit_of >= 0)
        cols = cols[np.argsort(unit_of[cols], kind="stable")]
        col_ptr = np.zeros(n_units + 1, dtype=np.int64)
        np.add.at(col_ptr, unit_of[cols] + 1, 1)
        # The units of each tree (the transpose of each unit's trees).
        units = np.repeat(np.arange(n_units), np.diff(tree_ptr))
        by_tree = np.lexsort((units, trees))
        unit_ptr = np.zeros(n_trees + 1, dtype=np.int64)
        np.add.at(unit_ptr, trees + 1, 1)
        return cls(
            unit_of, np.cumsum(col_ptr), cols.astype(np.int64), _int64(tree_ptr),
            _int64(trees), np.cumsum(unit_ptr), units[by_tree].astype(np.int64),
        )  # fmt: skip


class Block(NamedTuple):
    """A block of held-out rows for the column test's kernels.

    ``X`` holds every held-out row (float64, :func:`kernel_rows`; NaN missing);
    the block's rows are rows ``start + i`` of it, with their ``leaves``
    (rows, n_trees), targets ``y`` (C channels, (C, rows)), weights ``w``
    (empty: none), own terms ``own`` (C, rows, n_units; empty: none) and
    the output ``out`` (C, rows, n_units). ``perm[b, start + i]`` is the
    row of X that lends row i its unit's values in draw b.
    """

    X: np.ndarray
    start: int
    leaves: np.ndarray
    perm: np.ndarray
    y: np.ndarray
    w: np.ndarray
    own: np.ndarray
    out: np.ndarray

    def part(self, a, b, leaves) -> Block:
        """Return this block's rows ``a`` to ``b`` as a block, with their ``leaves``."""
        return self._replace(
            start=self.start + a, leaves=leaves, y=self.y[:, a:b],
            w=self.w[a:b] if self.w.size else self.w,
            own=self.own[:, a:b] if self.own.size else self.own,
            out=self.out[:, a:b],
        )  # fmt: skip


def _int64(a) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.int64)


def _float64(a) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float64)


class ModelArrays:
    """One model's kernel structures, each built on first use and kept.

    Holds the model weakly (a cache keyed by the model may keep this), so
    build what is needed while the model is alive.

    Parameters
    ----------
    ens : TreeEnsemble
    objective_spec : tuple of (int, float) or None
        The objective's code and parameter for the compiled gradients, or
        None where they have none.
    """

    def __init__(self, ens, objective_spec):
        self._ens = weakref.ref(ens)
        self._spec = objective_spec

    @property
    def ensemble(self):
        ens = self._ens()
        if ens is None:  # pragma: no cover - callers hold the model
            raise RuntimeError("the model of these kernel arrays is gone")
        return ens

    @property
    def has_gradient(self) -> bool:
        """Whether the objective's gradient is compiled."""
        return self._spec is not None

    @cached_property
    def walk(self) -> Walk:
        """:class:`Walk` of the model."""
        ens = self.ensemble
        code, prm = self._spec if self._spec is not None else (NO_GRADIENT, 0.0)
        return Walk(
            _float64(ens.value),
            _float64(ens.intercept),
            _int64(ens.iteration_indptr),
            _int64(ens.tree_group),
            int(code),
            float(prm),
            _float64(1.0 / ens.learning_rate),
        )

    @cached_property
    def table(self) -> PathTable:
        """:class:`PathTable` of the model (its PreDecomp)."""
        ens = self.ensemble
        table = ens.path_table
        return PathTable(
            table.indptr.astype(np.int64, copy=False),
            table.indices.astype(np.int64, copy=False),
            table.data,
            int(ens.n_features),
        )

    @cached_property
    def trees(self) -> Trees:
        """:class:`Trees` of the model."""
        ens = self.ensemble
        return Trees(
            _int64(ens.tree_offsets),
            _int64(ens.children_left),
            _int64(ens.children_right),
            _int64(ens.parent),
            _int64(ens.feature),
            _float64(ens.treeshap_cover),
            _int64(ens.tree_iteration),
        )

    @property
    def rule(self) -> Rule | None:
        """:class:`Rule` of the model, or None where its rule is not known.

        Read from the ensemble's split rule at every call: what the kernels
        check the booster's routing against is the rule the ensemble holds
        now. Thresholds are float64 for every library (XGBoost's float32 ones
        convert exactly, and so do its rows, :func:`kernel_rows`): one type of
        rule and rows, so each kernel is compiled for one dtype only.
        """
        rule = self.ensemble.split_rule
        if rule is None:
            return None
        threshold, missing_left, strict = rule.kernel_arrays()
        return Rule(_float64(threshold), missing_left, strict)


def kernel_rows(X) -> np.ndarray:
    """Return the rows as the CPU kernels read them: C-contiguous float64 (exact)."""
    return _float64(X)


def on_device(structure, cuda):
    """Return the same structure with its arrays on the GPU (its numbers kept)."""
    return type(structure)(
        *(cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in structure)
    )
