"""TreeInner of GPU models on the GPU they were trained on.

A GPU booster routes rows on its GPU (``pred_leaf``); without this module the
per-(row, tree) arithmetic after it runs on the CPU. :class:`DeviceKernels`
runs :meth:`~skl_treeinner._kernels._compiled.Kernels.leaf_sums`,
:meth:`~skl_treeinner._kernels._compiled.Kernels.row_terms` (PreDecomp) and
:meth:`~skl_treeinner._kernels._compiled.Kernels.treeshap_of_targets` (TreeSHAP by
leaf patterns, where every leaf of the model splits on at most
:data:`~skl_treeinner._kernels.cpu._treeshap.MAX_DENSE_FEATURES` distinct features)
on the GPU instead, with
numba's CUDA target (``python -m pip install "skl-treeinner[gpu]"``, which
installs ``numba-cuda`` with the CUDA 12 compiler libraries; the GPU's driver
must be installed). The model's arrays go to the device once per model, each
chunk's leaves, targets and weights (and, for TreeSHAP, its rows) once per
call; what comes back is a sum per leaf, the sums per leaf and pattern (folded
into Shapley values on the host), or the rows' terms.

Where the target cannot run (no ``numba-cuda``, no GPU visible, more than
:data:`~skl_treeinner._kernels.cuda._residuals.MAX_OUTPUTS` outputs) the CPU
kernels do the work, with the same numbers. The device is checked before it
is trusted: per model and per sum (the per-leaf sums, the per-row terms,
TreeSHAP summed or per row), the first rows with
a nonzero result (:data:`CHECK_ROWS` of the first such chunk, more than one
block of the per-leaf sums) are scored both ways and compared (relative
:data:`CHECK_RTOL`). A device that disagrees, or fails (compiling, memory, a
launch), is not used again for that model and sum: a warning says so, and the
CPU's numbers are returned. The tests run the kernels on numba's CUDA
simulator against the CPU kernels.
"""

from __future__ import annotations

import functools
import threading
import warnings
import weakref

import numpy as np

from .._utils._validation import user_stacklevel
from ._compiled import Kernels, _rows
from ._structures import Rule, on_device

__all__ = ["DeviceKernels", "cuda_ready", "device_kernels_for"]

#: How closely the device must agree with the CPU kernels (relative).
CHECK_RTOL = 1e-9
#: The most sums per (leaf, pattern) on the device at once, per target: the
#: leaves go in groups within it.
MAX_PATTERN_SUMS = 1 << 24
#: The largest table of every leaf's Shapley vector per pattern (entries) kept
#: on the device for TreeSHAP per row; a larger model's rows go to the CPU.
MAX_TABLE = 1 << 25
#: One call on the device at a time: the selector's folds run in threads, and
#: one GPU gains nothing from several host threads launching on it (numba's
#: simulator refuses concurrent kernels).
_ONE_AT_A_TIME = threading.RLock()


def _check_rows() -> int:
    from .cuda._residuals import BLOCK_ROWS

    return 2 * BLOCK_ROWS + 1  # three blocks of the per-leaf sums


@functools.cache
def cuda_ready() -> bool:
    """Whether numba-cuda sees a GPU here (or numba's CUDA simulator is on).

    A GPU that numba-cuda cannot compile for, with the numpy installed beside
    it, is not ready: a trivial kernel is compiled once per process, and a
    failure warns once, naming the versions (see :func:`_compiles`).
    """
    try:
        from numba import config

        if not config.ENABLE_CUDASIM:
            # The gpu extra: numba's own CUDA target is deprecated, and needs
            # a CUDA toolkit of its own to compile.
            import numba_cuda  # noqa: F401
        from numba import cuda

        if not cuda.is_available():
            return False
    except Exception:  # noqa: BLE001 (no numba-cuda, no driver: the CPU it is)
        return False
    return _compiles()


def _compiles() -> bool:
    """Compile a trivial kernel; on failure warn once and return False.

    numba-cuda loads its numpy overloads at the first compilation, so a numpy
    it does not support fails there (numba-cuda 0.30.4 with numpy 2.5, which
    removed ``np.row_stack``), on every model; the gpu extra pins a numpy it
    supports.
    """
    from numba import cuda

    try:
        cuda.jit("void(float64[::1])")(_probe)
    except Exception as error:  # noqa: BLE001 (any failure: the CPU it is)
        warnings.warn(
            f"numba-cuda {_version('numba_cuda')} cannot compile for the GPU "
            f"here with numpy {np.__version__} ({error!r}); GPU models are "
            "scored on the CPU. Install the versions the gpu extra pins: "
            "python -m pip install 'skl-treeinner[gpu]'.",
            RuntimeWarning,
            stacklevel=user_stacklevel(),
        )
        return False
    return True


def _probe(out):  # pragma: no cover (compiled, never launched)
    out[0] = 1.0


def _version(module: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(module.replace("_", "-"))
    except metadata.PackageNotFoundError:
        return "(not installed)"


class _OnDevice:
    """One model's arrays on the device, and whether its sums are trusted.

    Kept per model; it holds no reference to the model (only device arrays and
    sizes), so that the cache's entry goes with the model.
    """

    def __init__(self, kernels: Kernels):
        from numba import cuda

        from .cuda import _residuals as cuda_residuals

        ens = kernels.ensemble
        if ens.n_outputs > cuda_residuals.MAX_OUTPUTS:
            raise ValueError(
                f"the device kernels keep at most {cuda_residuals.MAX_OUTPUTS} "
                f"outputs, not {ens.n_outputs}"
            )
        self.cuda, self.k = cuda, cuda_residuals
        self.n_nodes, self.n_features = ens.n_nodes, ens.n_features
        self.walk = on_device(kernels.arrays.walk, cuda)
        self.table = on_device(kernels.arrays.table, cuda)
        self.offsets = cuda.to_device(kernels.arrays.trees.offsets)
        self.none = (cuda.to_device(np.empty(0)), cuda.to_device(np.empty((0, 1))))
        self.n_trees, self.n_iterations = ens.n_trees, ens.n_iterations
        #: Per method, whether the device agreed with the CPU (absent until
        #: checked on rows with a nonzero result).
        self.trusted: dict[str, bool] = {}
        #: TreeSHAP's layout of the leaves (None until asked; False where the
        #: model's leaves cannot all take their 2^m patterns).
        self.shap: _ShapLayout | bool | None = None

    def takes_shap(self, kernels: Kernels, per_row: bool) -> bool:
        """Whether TreeSHAP by leaf patterns (per row or summed) runs here."""
        if self.shap is None:
            self.shap = _ShapLayout.of(kernels, self.cuda, self.walk)
        if not self.shap:
            return False
        return not per_row or self.shap.has_table()

    def _weights(self, w):
        if w is None:
            return self.none[0]
        return self.cuda.to_device(np.ascontiguousarray(w, dtype=np.float64))

    def _residual_terms(self, leaves, y, weights, res_out, row_out) -> None:
        """Launch the device's ``residual_terms`` kernel, one row a thread."""
        k = self.k
        k.residual_terms[k.launch(leaves.shape[0])](
            leaves, self.cuda.to_device(y), weights, self.walk, self.table, res_out,
            row_out,
        )  # fmt: skip

    def _residuals(self, leaves, ys, w):
        """w_i (-g_{i,t}) at every target, on the device: (targets, rows, trees)."""
        weights = self._weights(w)
        ys = np.ascontiguousarray(np.atleast_2d(ys), dtype=np.float64)
        res = self.cuda.device_array((ys.shape[0], leaves.shape[0], self.n_trees))
        for c in range(ys.shape[0]):
            self._residual_terms(leaves, ys[c], weights, res[c], self.none[1])
        return res

    def run_treeshap(self, X, leaves, ys, w, per_row) -> np.ndarray | None:
        """TreeSHAP's terms on the device, as the CPU kernels give them.

        None where a row's leaf by the split rule is not the booster's.
        """
        cuda, layout = self.cuda, self.shap
        if not isinstance(layout, _ShapLayout):  # given up in another thread
            return None
        leaves = cuda.to_device(np.ascontiguousarray(leaves, dtype=np.int64))
        res = self._residuals(leaves, ys, w)
        X = cuda.to_device(np.ascontiguousarray(X))
        misrouted = cuda.to_device(np.zeros(1, dtype=np.int32))
        if per_row:
            out = layout.per_row(X, leaves, res, misrouted)
        else:
            out = np.zeros((res.shape[0], self.n_iterations, self.n_features))
            layout.summed(X, leaves, res, out, misrouted)
        return None if misrouted.copy_to_host()[0] else out

    def run(self, method, leaves, y, w) -> np.ndarray:
        """Run ``method`` ("leaf_sums" or "row_terms") on the device."""
        leaves, y = _rows(leaves, y)
        cuda, k = self.cuda, self.k
        weights = self._weights(w)
        n, n_trees = leaves.shape
        leaves = cuda.to_device(leaves)
        if method == "leaf_sums":
            res, row_out = cuda.device_array((n, n_trees)), self.none[1]
        else:
            res, row_out = self.none[1], cuda.device_array((n, self.n_features))
        self._residual_terms(leaves, y, weights, res, row_out)
        if method != "leaf_sums":
            return row_out.copy_to_host()
        rows = k.block_rows(n, self.n_nodes)
        partial = cuda.device_array((-(-n // rows), self.n_nodes))
        k.leaf_block_sums[k.launch(partial.shape[0] * n_trees)](
            leaves, res, self.offsets, rows, partial
        )
        out = cuda.device_array(self.n_nodes)
        k.block_totals[k.launch(self.n_nodes)](partial, out)
        return out.copy_to_host()


class _ShapLayout:
    """A model's leaves on the device for TreeSHAP by leaf patterns.

    Every leaf whose path splits, flat (:func:`~skl_treeinner.\
_device_layout.flat_leaves`); for TreeSHAP per row, the table of every
    leaf's Shapley vector per pattern, built on first use.
    """

    @classmethod
    def of(cls, kernels: Kernels, cuda, walk) -> _ShapLayout | bool:
        """Return the layout, or False where a leaf has too many path features."""
        from ._device_layout import flat_leaves
        from .cpu._treeshap import MAX_DENSE_FEATURES

        ens = kernels.ensemble
        rule = ens.split_rule
        if rule is None or rule.oblivious:
            return False
        flat, max_unique = flat_leaves(kernels.arrays.trees)
        if max_unique > MAX_DENSE_FEATURES:
            return False
        return cls(kernels, cuda, walk, flat)

    def __init__(self, kernels: Kernels, cuda, walk, flat):
        arrays = kernels.arrays
        self.cuda, self.walk = cuda, walk
        self.n_features = kernels.ensemble.n_features
        #: The leaves on the host (the host's share) and on the device.
        self.flat, self.flat_on = flat, on_device(flat, cuda)
        self.starts = np.concatenate([[0], np.cumsum(1 << flat.n_unique)])
        self.starts_on = cuda.to_device(self.starts)
        self.value = arrays.walk.value
        self.tree_round = arrays.trees.tree_round
        self.feature = cuda.to_device(arrays.trees.feature)
        # The library's own threshold dtype, as the device's rows have it.
        self.rule = on_device(Rule(*kernels.ensemble.split_rule.kernel_arrays()), cuda)
        self.table: tuple | bool | None = None

    def has_table(self) -> bool:
        """Build the per-row table once, if it fits :data:`MAX_TABLE`."""
        if self.table is None:
            from ._device_layout import pattern_table

            n_unique = self.flat.n_unique
            starts = np.concatenate([[0], np.cumsum((1 << n_unique) * n_unique)])
            self.table = False
            if starts[-1] <= MAX_TABLE:
                table = pattern_table(self.value, self.flat, starts)
                self.table = (self.cuda.to_device(table), self.cuda.to_device(starts))
        return bool(self.table)

    def per_row(self, X, leaves, res, misrouted):
        """Each row's TreeSHAP terms: (targets, rows, features), on the host."""
        from .cuda import _residuals as cuda_residuals
        from .cuda import _treeshap as cuda_treeshap

        n = leaves.shape[0]
        out = self.cuda.device_array((res.shape[0], n, self.n_features))
        cuda_treeshap.row_patterns[cuda_residuals.launch(n)](
            X, leaves, res, self.walk, self.flat_on, *self.table, self.feature,
            self.rule, out, misrouted,
        )  # fmt: skip
        return out.copy_to_host()

    def summed(self, X, leaves, res, out, misrouted) -> None:
        """out[c, round, k] += the terms summed over rows, leaves in groups."""
        from ._device_layout import fold_counts
        from .cuda import _residuals as cuda_residuals
        from .cuda import _treeshap as cuda_treeshap

        starts, n_leaves = self.starts, self.flat.n_unique.shape[0]
        first = 0
        while first < n_leaves:
            end = np.searchsorted(starts, starts[first] + MAX_PATTERN_SUMS, "right")
            last = max(first + 1, min(int(end) - 1, n_leaves))
            counts = self.cuda.device_array(
                (res.shape[0], starts[last] - starts[first])
            )
            cuda_treeshap.pattern_counts[cuda_residuals.launch(last - first)](
                X, leaves, res, self.walk, first, self.flat_on, self.starts_on,
                self.feature, self.rule, counts, misrouted,
            )  # fmt: skip
            fold_counts(
                counts.copy_to_host(), first, last, self.flat, self.value, starts,
                self.tree_round, out,
            )  # fmt: skip
            first = last


class DeviceKernels:
    """The residual sums of the CPU kernels, on a GPU.

    The methods of :class:`~skl_treeinner._kernels._compiled.Kernels` that
    the device runs.

    Built by :func:`device_kernels_for` for one caller (its CPU kernels, with
    their thread count, do the check and any fallback); :meth:`leaf_sums`,
    :meth:`row_terms`, :meth:`treeshap_of_targets` and
    :meth:`iteration_gradients` take and return what the CPU kernels' methods
    do.
    """

    #: Row chunks as the CPU kernels' (:attr:`Kernels.chunk_scale`).
    chunk_scale = Kernels.chunk_scale
    #: TreeSHAP by leaf patterns (on the CPU where the device cannot).
    patterns = True

    def __init__(self, device: _OnDevice, host: Kernels):
        self.device = device
        self.host = host
        self.ensemble = host.ensemble
        self.has_gradient = host.has_gradient

    def leaf_sums(self, leaves, y, w=None) -> np.ndarray:
        """Σ_i w_i (-g_{i,m}) over the rows reaching each leaf: (n_nodes,)."""
        return self._checked("leaf_sums", (leaves, y, w))

    def row_terms(self, leaves, y, w=None) -> np.ndarray:
        """Per-row TreeInner terms z_ik of the chunk, summed over outputs."""
        return self._checked("row_terms", (leaves, y, w))

    def treeshap_of_targets(self, X, leaves, ys, w, per_row):
        """TreeSHAP's TreeInner at targets ``ys``, summed per round or per row.

        As :meth:`~skl_treeinner._kernels._compiled.Kernels.treeshap_of_targets`:
        ``(terms, rounds left to the booster)``, or ``(None, None)`` where the
        split rule misroutes a row (the CPU kernels warn).
        """
        method = "treeshap_rows" if per_row else "treeshap"
        with _ONE_AT_A_TIME:
            try:
                ready = self.device.takes_shap(self.host, per_row)
            except Exception as error:  # noqa: BLE001 (no device memory, ...)
                layout = self.device.shap
                if per_row and isinstance(layout, _ShapLayout):
                    layout.table = False  # the sums over rows may still run
                else:
                    self.device.shap = False
                self._distrust(method, f"failed ({error!r})")
                ready = False
        if not ready:
            return self.host.treeshap_of_targets(X, leaves, ys, w, per_row)
        out = self._checked(method, (X, leaves, ys, w))
        return (None, None) if out is None else (out, np.zeros(0, dtype=np.int64))

    def iteration_gradients(self, leaves, y) -> np.ndarray:
        """Return the CPU kernels' ``iteration_gradients`` (the booster's TreeSHAP)."""
        return self.host.iteration_gradients(leaves, y)

    def _checked(self, method, args):
        # The CPU's work runs outside the lock: the selector's other folds
        # go on meanwhile.
        trusted = self.device.trusted.get(method)
        if trusted is None:
            return self._check(method, args)
        if trusted:
            with _ONE_AT_A_TIME:
                try:
                    out = self._on_device(method, args)
                except Exception as error:  # noqa: BLE001 (any device failure)
                    self._distrust(method, f"failed ({error!r})")
                    out = None
            if out is not None:
                return out
        return self._on_host(method, args)  # misrouted rows: the CPU warns

    def _check(self, method, args) -> np.ndarray | None:
        """Score the chunk on the CPU, its first rows on the device too."""
        on_cpu = self._on_host(method, args)
        if on_cpu is None:
            return None
        leaves = args[1] if method.startswith("treeshap") else args[0]
        head = min(_check_rows(), leaves.shape[0])
        part = _head(args, head)
        if method == "row_terms":
            first = on_cpu[:head]
        elif method == "treeshap_rows":
            first = on_cpu[:, :head]
        else:
            first = self._on_host(method, part)
        scale = 0.0 if first is None else _scale(first)
        if scale == 0.0:  # nothing to compare yet: check the next chunk
            return on_cpu
        with _ONE_AT_A_TIME:
            if method not in self.device.trusted:  # not checked by another thread
                self._compare(method, part, first, scale)
        return on_cpu

    def _compare(self, method, part, first, scale) -> None:
        """Trust the device with ``method`` if it gives ``first`` on ``part``."""
        try:
            on_gpu = self._on_device(method, part)
        except Exception as error:  # noqa: BLE001 (any device failure)
            self._distrust(method, f"failed ({error!r})")
            return
        if on_gpu is None and method.startswith("treeshap"):
            if not isinstance(self.device.shap, _ShapLayout):
                return  # given up in another thread, which warned
        if on_gpu is not None and np.allclose(
            on_gpu, first, rtol=CHECK_RTOL, atol=CHECK_RTOL * scale, equal_nan=True
        ):
            self.device.trusted[method] = True
            return
        largest = np.inf
        if on_gpu is not None:
            largest = float(np.nanmax(np.abs(on_gpu - first), initial=np.inf))
        self._distrust(
            method, f"disagreed with the CPU (largest difference {largest:.3g})"
        )

    def _distrust(self, method, what) -> None:
        self.device.trusted[method] = False
        warnings.warn(
            f"The GPU's {_NAMES[method]} {what} on this model; it is "
            "scored on the CPU. Please report it to skl-treeinner with your GPU, "
            "CUDA driver and numba-cuda versions.",
            RuntimeWarning,
            stacklevel=user_stacklevel(),
        )

    def _on_host(self, method, args) -> np.ndarray | None:
        if method.startswith("treeshap"):
            # No rounds are left to the booster: a model the device takes has
            # at most MAX_DENSE_FEATURES distinct features on every path.
            out, _ = self.host.treeshap_of_targets(*args, method == "treeshap_rows")
            return out
        return getattr(self.host, method)(*args)

    def _on_device(self, method, args) -> np.ndarray | None:
        with warnings.catch_warnings():
            # numba-cuda warns of every launch of fewer than 128 blocks (a
            # small model, chunk or check); ours are sized on purpose, and the
            # warning would reach users (or, under -W error, fail the launch).
            warnings.filterwarnings("ignore", message=_LOW_OCCUPANCY)
            if method.startswith("treeshap"):
                return self.device.run_treeshap(*args, method == "treeshap_rows")
            return self.device.run(method, *args)


#: numba-cuda's warning of a small grid (its text starts with a terminal code).
_LOW_OCCUPANCY = r".*will likely result in GPU under-utilization"

#: What the warnings call each sum.
_NAMES = {
    "leaf_sums": "leaf sums",
    "row_terms": "row terms",
    "treeshap": "TreeSHAP sums",
    "treeshap_rows": "TreeSHAP row terms",
}


def _head(args, k):
    """Return the first k rows of every argument (of each target in a list)."""

    def rows(a):
        if a is None:
            return None
        if isinstance(a, list):
            return [rows(b) for b in a]
        return a[:k]

    return tuple(rows(a) for a in args)


def _scale(values) -> float:
    return float(np.abs(values[np.isfinite(values)]).max(initial=0.0))


_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def device_kernels_for(kernels: Kernels) -> DeviceKernels | None:
    """Return the GPU's kernels for ``kernels``' model, or None where they cannot run.

    The model's arrays go to the device once per model (and are checked once);
    the returned object binds them to this caller's CPU kernels.
    """
    if not kernels.has_gradient or not cuda_ready():
        return None
    from .cuda._residuals import MAX_OUTPUTS

    ens = kernels.ensemble
    if ens.n_outputs > MAX_OUTPUTS:
        return None
    with _ONE_AT_A_TIME:
        device = _CACHE.get(ens)
        if device is None:
            try:
                device = _OnDevice(kernels)
            except Exception as error:  # noqa: BLE001 (no memory, no context)
                device = False  # and never tried again for this model
                warnings.warn(
                    f"The model could not be put on the GPU ({error!r}); it is "
                    "scored on the CPU.",
                    RuntimeWarning,
                    stacklevel=user_stacklevel(),
                )
            _CACHE[ens] = device
    return DeviceKernels(device, kernels) if device else None
