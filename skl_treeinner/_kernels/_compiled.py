"""The compiled CPU kernels bound to one model, run over threads.

Role: the host side of ``cpu/``. After the booster has routed a chunk of rows
to leaves, TreeInner needs, for every (row, tree) pair, the margin before the
tree's iteration, the loss gradient there and a sum per leaf (or per row).
:mod:`skl_treeinner._kernels._numpy` does it in whole-array steps, each a pass
over a (rows x trees) intermediate on one core; it is the reference. When numba is
installed (``python -m pip install ".[numba]"``), :class:`Kernels` runs the
same arithmetic in one pass per row, in compiled code, on as many threads as
the booster would use (:func:`effective_threads`). The two agree to float
rounding, and the tests compare them.

The environment variable ``SKL_TREEINNER_KERNEL`` picks the path: ``auto``
(the default: numba when installed), ``numba`` (an ImportError naming the
extra when it is not) or ``numpy``.
"""

from __future__ import annotations

import copy
import os
import warnings
import weakref

import numpy as np

from .._model import _objectives as obj
from .._model._ensemble import TreeEnsemble
from .._utils._optional import import_optional
from ._row_blocks import in_threads as _in_threads
from ._row_blocks import rows_per_thread
from ._row_blocks import total as _total
from ._structures import ModelArrays, kernel_rows

__all__ = [
    "ENV_VAR",
    "Kernels",
    "backend",
    "effective_threads",
    "global_leaves",
    "kernels_for",
]

ENV_VAR = "SKL_TREEINNER_KERNEL"
_BACKENDS = ("auto", "numba", "numpy")

#: (row, tree) pairs below which one more TreeSHAP thread is not worth it.
TREESHAP_PAIRS_PER_THREAD = 1 << 14
#: Rows per call of a TreeSHAP kernel (its scratch per tree grows with them).
TREESHAP_ROW_BLOCK = 1 << 14


def backend() -> str:
    """Return ``"numba"`` or ``"numpy"``: the path ``SKL_TREEINNER_KERNEL`` picks.

    Raises
    ------
    ValueError
        If the variable holds something other than auto, numba or numpy.
    ImportError
        If it says numba and numba is not installed (naming the extra).
    """
    choice = os.environ.get(ENV_VAR, "auto").strip().lower() or "auto"
    if choice not in _BACKENDS:
        raise ValueError(
            f"{ENV_VAR}={choice!r} is not a kernel; set it to one of "
            f"{list(_BACKENDS)} or leave it unset."
        )
    if choice == "numpy":
        return "numpy"
    try:
        _numba()
    except ImportError:
        if choice == "numba":
            raise
        return "numpy"
    return "numba"


def _numba():
    # The compiled kernels, imported on first use (numba's import takes a
    # fraction of a second); the ImportError names the extra.
    import_optional("numba", extra="numba", purpose=f"{ENV_VAR}=numba")
    from .cpu import _residuals as cpu_residuals

    return cpu_residuals


def _cpu_treeshap():
    # TreeSHAP by leaf patterns, compiled likewise (only where _numba() ran).
    from .cpu import _treeshap as _cpu_treeshap

    return _cpu_treeshap


def effective_threads(requested: int | None = None) -> int:
    """Threads the kernels may use: what the booster would use, within limits.

    Parameters
    ----------
    requested : int or None
        The booster's own thread setting (``n_jobs``/``nthread``): None or 0
        for its default (every core), a positive count, or a negative one in
        joblib's sense (-1 every core, -2 all but one).

    Returns
    -------
    int
        At least 1, and never more than OpenMP's effective limit: the cores
        this process may use (cgroup quotas included), ``OMP_NUM_THREADS``,
        and limits set with threadpoolctl or by joblib in its workers, as
        scikit-learn's HistGradientBoosting counts them.
    """
    try:
        from sklearn.utils._openmp_helpers import _openmp_effective_n_threads
    except ImportError:  # pragma: no cover - scikit-learn moved its helper
        limit = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    else:
        limit = _openmp_effective_n_threads(only_physical_cores=False)
    limit = max(1, int(limit))
    if not requested:
        return limit
    if requested < 0:
        return max(1, limit + 1 + int(requested))
    return max(1, min(int(requested), limit))


def global_leaves(local, offsets, n_threads: int = 1) -> np.ndarray:
    """Global node indices from a booster's per-tree leaf ids.

    Parameters
    ----------
    local : ndarray of shape (n_samples, n_trees)
        Leaf id of each row in each tree as the booster reports it (XGBoost's
        float32 node ids, LightGBM's int32 leaf numbers).
    offsets : ndarray of shape (n_trees,), int64
        What turns tree t's ids into indices of the ensemble's arrays.

    Returns
    -------
    ndarray of shape (n_samples, n_trees), int64
    """
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    if backend() != "numba" or local.dtype.kind not in "fiu":
        leaves = np.asarray(local).astype(np.int64)
        leaves += offsets
        return leaves
    kernel = _numba().global_leaves
    local = np.ascontiguousarray(local)
    if local.dtype not in (np.float32, np.int32, np.uint32):  # uint32: CatBoost
        local = local.astype(np.int64)
    out = np.empty(local.shape, dtype=np.int64)

    def work(a, b):
        kernel(local[a:b], offsets, out[a:b])

    _in_threads(work, local.shape[0], n_threads, rows_per_thread(local.shape[1]))
    return out


def _objective_spec(objective: obj.Objective) -> tuple[int, float] | None:
    """Return the kernel's code and parameter of an objective (None: not compiled)."""
    k = _numba()
    spec = {
        obj.SquaredError: (k.SQUARED_ERROR, ()),
        obj.PseudoHuber: (k.PSEUDO_HUBER, ("slope",)),
        obj.SquaredLogError: (k.SQUARED_LOG_ERROR, ()),
        obj.Logistic: (k.LOGISTIC, ("scale_pos_weight",)),
        obj.Poisson: (k.POISSON, ()),
        obj.Gamma: (k.GAMMA, ()),
        obj.Tweedie: (k.TWEEDIE, ("power",)),
        obj.Softmax: (k.SOFTMAX, ()),
        obj.Huber: (k.HUBER, ("delta",)),
        obj.Fair: (k.FAIR, ("c",)),
        obj.OneVsRestLogistic: (k.ONE_VS_REST_LOGISTIC, ("sigmoid",)),
        obj.Exponential: (k.EXPONENTIAL, ()),
    }.get(type(objective))
    if spec is None:
        return None
    code, names = spec
    params = float(getattr(objective, names[0])) if names else 0.0
    return code, params


class Kernels:
    """The compiled kernels bound to one ensemble, run over threads.

    Built by :func:`kernels_for`; every method takes a chunk of routed rows
    (``leaves`` of shape (rows, n_trees), global leaf indices) and splits its
    rows over ``n_threads`` threads, each running a GIL-free kernel on its
    block; per-leaf sums are added up per thread and then over threads.
    """

    #: How much larger the row chunks are than the numpy path's: the kernels
    #: keep no (rows x trees) float intermediates, only the leaves.
    chunk_scale = 4
    #: TreeSHAP by leaf patterns, where the objective's gradient is compiled.
    patterns = True

    def __init__(self, ens: TreeEnsemble, n_threads: int):
        self._k = _numba()
        self.ensemble = ens
        self.n_threads = max(1, int(n_threads))
        #: The model's arrays as the kernels take them, shared by every copy.
        self.arrays = ModelArrays(ens, _objective_spec(ens.objective))
        #: Whether the objective's gradient is compiled (else only
        #: :meth:`leaf_paths` and :meth:`margins` apply).
        self.has_gradient = self.arrays.has_gradient

    def _run(self, work, n: int) -> list:
        per_thread = rows_per_thread(self.ensemble.n_trees)
        return _in_threads(work, n, self.n_threads, per_thread)

    @staticmethod
    def _weights(w, start, stop) -> np.ndarray:
        if w is None:
            return np.empty(0)
        return np.ascontiguousarray(w[start:stop], dtype=np.float64)

    def leaf_sums(self, leaves, y, w=None) -> np.ndarray:
        """Σ_i w_i (-g_{i,m}) over the rows reaching each leaf: (n_nodes,).

        The per-leaf residual sums of :func:`~skl_treeinner.tree_inner`, not
        yet divided by the learning rate.
        """
        n_nodes = self.ensemble.n_nodes
        no_rows = np.empty((0, 1))

        def work(kernel, a, b):
            out = np.zeros(n_nodes)
            kernel(a, b, out, no_rows)
            return out

        return _total(self._residual_terms(work, leaves, y, w))

    def row_terms(self, leaves, y, w=None) -> np.ndarray:
        """Per-row TreeInner terms z_ik of the chunk, summed over outputs."""
        out = np.zeros((leaves.shape[0], self.ensemble.n_features))
        no_leaves = np.empty(0)

        def work(kernel, a, b):
            kernel(a, b, no_leaves, out[a:b])

        self._residual_terms(work, leaves, y, w)
        return out

    def _residual_terms(self, work, leaves, y, w) -> list:
        """Run ``work(kernel, start, stop)`` over row blocks, one thread each.

        ``kernel(start, stop, leaf_out, row_out)`` runs the compiled
        ``residual_terms`` on rows start:stop.
        """
        leaves, y = _rows(leaves, y)
        walk, table = self.arrays.walk, self.arrays.table

        def kernel(a, b, leaf_out, row_out):
            self._k.residual_terms(
                leaves[a:b], y[a:b], self._weights(w, a, b), walk, table, leaf_out,
                row_out,
            )  # fmt: skip

        return self._run(lambda a, b: work(kernel, a, b), leaves.shape[0])

    def treeshap_terms(self, X, leaves, residual, per_row) -> np.ndarray | None:
        """Σ_i residual[i, t] φ_t(x_i) by leaf patterns, or None where it cannot.

        :meth:`treeshap_split` for every tree: None also where some tree
        cannot be tabulated (its rounds are then the booster's to do).
        """
        got, booster_rounds = self.treeshap_split(X, leaves, residual, per_row)
        return None if got is None or booster_rounds.size else got

    def treeshap_split(self, X, leaves, residual, per_row):
        """Σ_i residual[i, t] φ_t(x_i) by leaf patterns, but for the rounds left over.

        Parameters
        ----------
        X : ndarray of shape (rows, n_features)
            The rows as :meth:`ModelReader.treeshap_rows` gives them.
        leaves : ndarray of shape (rows, n_trees)
            The booster's leaves of those rows: the rule's must be the same.
        residual : ndarray of shape (rows, n_trees) or (C, rows, n_trees)
            The factor of each row's TreeSHAP values in each tree; C channels
            (the residuals of several targets) share one pass, each pattern
            evaluated once for all of them.
        per_row : bool
            Return (rows, n_features) sums over trees instead of
            (n_iterations, n_features) sums over rows (with C channels, C
            such arrays stacked).

        Returns
        -------
        (sums, rounds) : the sums over every tree of the rounds not in
        ``rounds``, and the rounds (int array) whose TreeSHAP the booster
        must give: those with a path splitting on more than
        ``MAX_PATH_FEATURES`` (62) distinct features, which no model in the
        tests reached. ``(None, None)`` where the rule sent a row to another
        leaf than the booster (warned: it never happened in the tests, and
        would be a bug to report); that check covers the splits on each
        row's path, and the rule is the same at every split. Symmetric trees
        (``SplitRule.oblivious``) need neither X nor a check: every row's
        side at every split is in the number of its leaf.
        """
        stacked = np.ndim(residual) == 3
        residual = residual if stacked else residual[None]
        # Tree-major for the kernels: (C, n_trees, rows).
        by_tree = np.ascontiguousarray(residual.transpose(0, 2, 1), dtype=np.float64)
        got, booster_rounds = self._treeshap(X, leaves, by_tree, per_row)
        if got is None or stacked:
            return got, booster_rounds
        return got[0], booster_rounds

    def treeshap_of_targets(self, X, leaves, ys, w, per_row):
        """:meth:`treeshap_split` with the residuals of TreeInner at targets ``ys``.

        residual[c, i, t] = w_i (-g_{i,t}) / α_t at target ys[c] (Eq. 21),
        computed in the kernel's own tree-major layout, without the (rows,
        iterations, outputs) gradients; results stacked over targets.
        """
        leaves = np.ascontiguousarray(leaves, dtype=np.int64)
        ens = self.ensemble
        y = np.ascontiguousarray(np.atleast_2d(ys), dtype=np.float64)
        by_tree = np.empty((y.shape[0], ens.n_trees, leaves.shape[0]))
        w = np.empty(0) if w is None else np.ascontiguousarray(w, dtype=np.float64)
        walk = self.arrays.walk

        def work(a, b):
            self._k.tree_residuals(
                leaves[a:b], y[:, a:b], w[a:b] if w.size else w, walk,
                by_tree[:, :, a:b],
            )  # fmt: skip

        self._run(work, leaves.shape[0])
        return self._treeshap(X, leaves, by_tree, per_row)

    def _treeshap(self, X, leaves, residual, per_row):
        # residual: (C, n_trees, rows), C-contiguous float64.
        ts = _cpu_treeshap()
        ens = self.ensemble
        leaves = np.ascontiguousarray(leaves, dtype=np.int64)
        channels = residual.shape[0]
        n, p = leaves.shape[0], ens.n_features
        if n == 0:
            empty = np.zeros((channels, 0 if per_row else ens.n_iterations, p))
            return empty, np.zeros(0, dtype=np.int64)
        kernel, trees_done, booster_rounds = self._treeshap_kernel(
            ts, X, leaves, residual
        )
        parts, out = self._treeshap_threads(
            ts, kernel, trees_done, shape=(channels, n, p), per_row=per_row
        )
        statuses = {status for status, _ in parts}
        if ts.MISROUTED in statuses:
            warnings.warn(
                "The booster's split rule, applied at every split for TreeSHAP, "
                "sent a row to another leaf than the booster's own routing; "
                "TreeSHAP was computed with the booster's own routine instead "
                "(slower, same definition). Please report it to skl-treeinner "
                "with the library's version.",
                UserWarning,
                stacklevel=3,
            )
            return None, None
        if ts.TOO_DEEP in statuses:  # pragma: no cover - filtered above
            return None, None
        if per_row:
            return out, booster_rounds
        return _total([part for _, part in parts]), booster_rounds

    def _treeshap_kernel(self, ts, X, leaves, residual):
        """Return the TreeSHAP kernel for rows [a, b), and the trees it covers.

        ``kernel(todo, a, b, rounds, rows)`` (the trees ``todo``); the other
        rounds (paths over ``MAX_PATH_FEATURES`` distinct features) go to the
        booster.
        """
        ens = self.ensemble
        trees, walk = self.arrays.trees, self.arrays.walk
        if ens.split_rule.oblivious:
            booster_rounds = np.zeros(0, dtype=np.int64)
            trees_done = np.arange(ens.n_trees)

            def kernel(todo, a, b, rounds, rows):
                return ts.oblivious_treeshap_terms(
                    leaves[a:b], residual[:, :, a:b], todo, trees, walk, rounds, rows
                )
        else:
            within = self._paths_within(ts)
            booster_rounds = np.unique(trees.tree_round[~within])
            trees_done = np.flatnonzero(~np.isin(trees.tree_round, booster_rounds))
            rule = self.arrays.rule
            X = kernel_rows(X)

            def kernel(todo, a, b, rounds, rows):
                return ts.treeshap_terms(
                    X[a:b], leaves[a:b], residual[:, :, a:b], todo, trees, walk, rule,
                    rounds, rows,
                )  # fmt: skip

        return kernel, trees_done, booster_rounds

    def _treeshap_threads(self, ts, kernel, trees_done, *, shape, per_row):
        """Run ``kernel`` in threads: ``(statuses and parts, per-row terms)``.

        ``shape`` is (channels, rows, features).
        """
        channels, n, p = shape

        def blocks(a, b):
            # Rows in blocks of TREESHAP_ROW_BLOCK: the kernels' scratch per
            # tree (sides of every split, pattern tables) grows with them.
            step = TREESHAP_ROW_BLOCK
            return [(s, min(s + step, b)) for s in range(a, b, step)]

        none = np.zeros((channels, 0, p))
        if per_row:
            # Threads split the rows: each row's sum over trees is made by one
            # thread in tree order, the same numbers for any thread count.
            out = np.zeros((channels, n, p))

            def work(a, b):
                status = ts.OK
                for s, e in blocks(a, b):
                    status = max(status, kernel(trees_done, s, e, none, out[:, s:e]))
                return status, None

            # TREESHAP_PAIRS_PER_THREAD (row, tree) pairs at least per thread.
            per_thread = rows_per_thread(trees_done.size, TREESHAP_PAIRS_PER_THREAD)
            parts = _in_threads(work, n, self.n_threads, per_thread)
        else:
            # Threads split the trees, each with TREESHAP_PAIRS_PER_THREAD
            # (row, tree) pairs at least: with few rows a thread is not worth it.
            def work(a, b):
                rounds = np.zeros((channels, self.ensemble.n_iterations, p))
                status = ts.OK
                for s, e in blocks(0, n):
                    status = max(status, kernel(trees_done[a:b], s, e, rounds, none))
                return status, rounds

            trees_per_thread = -(-TREESHAP_PAIRS_PER_THREAD // max(n, 1))
            parts = _in_threads(
                work, max(trees_done.size, 1), self.n_threads, trees_per_thread
            )
            out = None
        return parts, out

    def resampling(self, attribution, units):
        """Return the column test's kernel ``kernel(block)`` and its status when well.

        The kernel (:mod:`skl_treeinner._kernels.cpu._permute` for PreDecomp,
        :mod:`skl_treeinner._kernels.cpu._permute_shap` for TreeSHAP) adds, for
        a :class:`~skl_treeinner._kernels._structures.Block` of rows, each
        row's mean term of each of ``units`` with the unit's values drawn, and
        returns a status. ``(None, None)`` where a TreeSHAP path splits on more
        features than the kernel takes.
        """
        arrays = self.arrays
        walk, trees, rule = arrays.walk, arrays.trees, arrays.rule
        if attribution == "predecomp":
            from .cpu import _permute as kp

            table = arrays.table

            def kernel(block):
                return kp.permuted_terms(block, walk, trees, rule, table, units)

            return kernel, kp.OK
        from .cpu import _permute_shap as ks

        if not self._paths_within(_cpu_treeshap()).all():
            return None, None

        def kernel(block):
            return ks.permuted_treeshap_terms(block, walk, trees, rule, units)

        return kernel, ks.OK

    def resample(self, kernel, block) -> list:
        """Run :meth:`resampling`'s ``kernel`` on a chunk's rows, over threads.

        ``block`` holds the chunk (``start``: its first row in ``block.X``;
        its ``leaves``, ``y``, ``w``, ``own`` and ``out``); each thread takes
        a block of its rows. Returns the threads' statuses.
        """
        leaves = np.ascontiguousarray(block.leaves, dtype=np.int64)

        def work(a, b):
            return kernel(block.part(a, b, leaves[a:b]))

        return _in_threads(work, leaves.shape[0], self.n_threads, 256)

    def _paths_within(self, ts) -> np.ndarray:
        """Return, per tree, whether its TreeSHAP kernels take it.

        They take a tree whose every path splits on at most
        ``MAX_PATH_FEATURES`` distinct features.
        """
        within = np.empty(self.ensemble.n_trees, dtype=np.bool_)
        ts.paths_within(self.arrays.trees, ts.MAX_PATH_FEATURES, within)
        return within

    def iteration_gradients(self, leaves, y) -> np.ndarray:
        """:meth:`TreeEnsemble.iteration_gradients`, fused: (rows, R, K)."""
        leaves, y = _rows(leaves, y)
        ens = self.ensemble
        out = np.empty((leaves.shape[0], ens.n_iterations, ens.n_outputs))

        walk = self.arrays.walk

        def work(a, b):
            self._k.iteration_gradients(leaves[a:b], y[a:b], walk, out[a:b])

        self._run(work, leaves.shape[0])
        return out

    def leaf_paths(self, leaves) -> np.ndarray:
        """PreDecomp of every row of the chunk: (rows, n_outputs * n_features)."""
        leaves = np.ascontiguousarray(leaves, dtype=np.int64)
        ens = self.ensemble
        out = np.zeros((leaves.shape[0], ens.n_outputs * ens.n_features))
        table = self.arrays.table

        def work(a, b):
            self._k.leaf_paths(leaves[a:b], table, out[a:b])

        self._run(work, leaves.shape[0])
        return out

    def margins(self, leaves) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`TreeEnsemble.margins`, fused."""
        leaves = np.ascontiguousarray(leaves, dtype=np.int64)
        n, k = leaves.shape[0], self.ensemble.n_outputs
        margin, scale = np.empty((n, k)), np.empty((n, k))

        walk = self.arrays.walk

        def work(a, b):
            self._k.margins(leaves[a:b], walk, margin[a:b], scale[a:b])

        self._run(work, n)
        return margin, scale


def _rows(leaves, y):
    return (
        np.ascontiguousarray(leaves, dtype=np.int64),
        np.ascontiguousarray(y, dtype=np.float64),
    )


_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def kernels_for(ens: TreeEnsemble, n_threads: int = 1) -> Kernels | None:
    """Return the compiled kernels of ``ens``, or None where numpy is to run.

    None when :func:`backend` says numpy. One :class:`Kernels` is kept per
    ensemble (its arrays are prepared once); each caller gets its own shallow
    copy with its own thread count, so that concurrent callers sharing a
    model (the read cache shares its ensemble) never change each other's.
    """
    if backend() != "numba":
        return None
    kernels = _CACHE.get(ens)
    if kernels is None:
        kernels = Kernels(ens, n_threads)
        # An entry must not keep its key alive: only callers' copies hold it.
        kernels.ensemble = None
        _CACHE[ens] = kernels
    mine = copy.copy(kernels)
    mine.ensemble = ens
    mine.n_threads = max(1, int(n_threads))
    return mine
