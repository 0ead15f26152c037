"""PreDecomp TreeInner of GPU models on the GPU they were trained on.

A GPU booster routes rows on its GPU (``pred_leaf``); without this module the
per-(row, tree) arithmetic after it runs on the CPU. :class:`DeviceKernels`
runs :meth:`~skl_treeinner._kernels.Kernels.leaf_sums` and
:meth:`~skl_treeinner._kernels.Kernels.row_terms` on the GPU instead, with
numba's CUDA target (``python -m pip install "skl-treeinner[gpu]"``, which
installs ``numba-cuda`` with the CUDA 12 compiler libraries; the GPU's driver
must be installed). The model's arrays go to the device once per model, each
chunk's leaves, targets and weights once per call; what comes back is a sum
per leaf, or the rows' terms.

Where the target cannot run (no ``numba-cuda``, no GPU visible, more than
:data:`~skl_treeinner._cuda_kernels.MAX_OUTPUTS` outputs) the CPU kernels do the
work, with the same numbers. The device is checked before it is trusted: per
model and per sum (the per-leaf sums, the per-row terms), the first rows with
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

from ._kernels import Kernels, _rows
from ._validation import user_stacklevel

__all__ = ["DeviceKernels", "cuda_ready", "device_kernels_for"]

#: How closely the device must agree with the CPU kernels (relative).
CHECK_RTOL = 1e-9
#: One call on the device at a time: the selector's folds run in threads, and
#: one GPU gains nothing from several host threads launching on it (numba's
#: simulator refuses concurrent kernels).
_ONE_AT_A_TIME = threading.RLock()


def _check_rows() -> int:
    from ._cuda_kernels import BLOCK_ROWS

    return 2 * BLOCK_ROWS + 1  # three blocks of the per-leaf sums


@functools.cache
def cuda_ready() -> bool:
    """Whether numba-cuda sees a GPU here (or numba's CUDA simulator is on)."""
    try:
        from numba import config

        if not config.ENABLE_CUDASIM:
            # The gpu extra: numba's own CUDA target is deprecated, and needs
            # a CUDA toolkit of its own to compile.
            import numba_cuda  # noqa: F401
        from numba import cuda

        return bool(cuda.is_available())
    except Exception:  # noqa: BLE001 (no numba-cuda, no driver: the CPU it is)
        return False


class _OnDevice:
    """One model's arrays on the device, and whether its sums are trusted.

    Kept per model; it holds no reference to the model (only device arrays and
    sizes), so that the cache's entry goes with the model.
    """

    def __init__(self, kernels: Kernels):
        from numba import cuda

        from . import _cuda_kernels

        ens = kernels.ensemble
        if ens.n_outputs > _cuda_kernels.MAX_OUTPUTS:
            raise ValueError(
                f"the device kernels keep at most {_cuda_kernels.MAX_OUTPUTS} "
                f"outputs, not {ens.n_outputs}"
            )
        self.cuda, self.k = cuda, _cuda_kernels
        self.n_nodes, self.n_features = ens.n_nodes, ens.n_features
        on = cuda.to_device
        value, intercept, indptr, group, code, params = kernels._walk
        ptr, col, val = kernels._table
        self.walk = (on(value), on(intercept), on(indptr), on(group), code, params)
        self.table = (on(kernels.inv_lr), on(ptr), on(col), on(val))
        self.offsets = on(np.ascontiguousarray(ens.tree_offsets, dtype=np.int64))
        self.none = (on(np.empty(0)), on(np.empty((0, 1))))
        #: Per method, whether the device agreed with the CPU (absent until
        #: checked on rows with a nonzero result).
        self.trusted: dict[str, bool] = {}

    def run(self, method, leaves, y, w) -> np.ndarray:
        """Run ``method`` ("leaf_sums" or "row_terms") on the device."""
        leaves, y = _rows(leaves, y)
        cuda, k = self.cuda, self.k
        weights = self.none[0]
        if w is not None:
            weights = cuda.to_device(np.ascontiguousarray(w, dtype=np.float64))
        n, n_trees = leaves.shape
        leaves = cuda.to_device(leaves)
        if method == "leaf_sums":
            res, row_out = cuda.device_array((n, n_trees)), self.none[1]
        else:
            res, row_out = self.none[1], cuda.device_array((n, self.n_features))
        k.residual_terms[k.launch(n)](
            leaves, cuda.to_device(y), weights, *self.walk, *self.table,
            self.n_features, res, row_out,
        )  # fmt: skip
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


class DeviceKernels:
    """The residual sums of :class:`~skl_treeinner._kernels.Kernels`, on a GPU.

    Built by :func:`device_kernels_for` for one caller (its CPU kernels, with
    their thread count, do the check and any fallback); :meth:`leaf_sums` and
    :meth:`row_terms` take and return what the CPU kernels' methods do.
    """

    def __init__(self, device: _OnDevice, host: Kernels):
        self.device = device
        self.host = host
        self.ensemble = host.ensemble
        self.has_gradient = host.has_gradient

    def leaf_sums(self, leaves, y, w=None) -> np.ndarray:
        """Σ_i w_i (-g_{i,m}) over the rows reaching each leaf: (n_nodes,)."""
        return self._checked("leaf_sums", leaves, y, w)

    def row_terms(self, leaves, y, w=None) -> np.ndarray:
        """Per-row TreeInner terms z_ik of the chunk, summed over outputs."""
        return self._checked("row_terms", leaves, y, w)

    def _checked(self, method, leaves, y, w):
        with _ONE_AT_A_TIME:
            trusted = self.device.trusted.get(method)
            if trusted is None:
                return self._check(method, leaves, y, w)
            if trusted:
                try:
                    return self._on_device(method, leaves, y, w)
                except Exception as error:  # noqa: BLE001 (any device failure)
                    self._distrust(method, f"failed ({error!r})")
        return getattr(self.host, method)(leaves, y, w)

    def _check(self, method, leaves, y, w) -> np.ndarray:
        """Score the chunk on the CPU, its first rows on the device too."""
        on_cpu = getattr(self.host, method)(leaves, y, w)
        head = min(_check_rows(), leaves.shape[0])
        part = leaves[:head], y[:head], None if w is None else w[:head]
        first = on_cpu[:head] if method == "row_terms" else None
        if first is None:
            first = getattr(self.host, method)(*part)
        scale = float(np.abs(first[np.isfinite(first)]).max(initial=0.0))
        if scale == 0.0:  # nothing to compare yet: check the next chunk
            return on_cpu
        try:
            on_gpu = self._on_device(method, *part)
        except Exception as error:  # noqa: BLE001 (any device failure)
            self._distrust(method, f"failed ({error!r})")
            return on_cpu
        atol = CHECK_RTOL * scale
        if np.allclose(on_gpu, first, rtol=CHECK_RTOL, atol=atol, equal_nan=True):
            self.device.trusted[method] = True
        else:
            largest = float(np.nanmax(np.abs(on_gpu - first), initial=np.inf))
            self._distrust(
                method, f"disagreed with the CPU (largest difference {largest:.3g})"
            )
        return on_cpu

    def _distrust(self, method, what) -> None:
        self.device.trusted[method] = False
        warnings.warn(
            f"The GPU's {method.replace('_', ' ')} {what} on this model; it is "
            "scored on the CPU. Please report it to skl-treeinner with your GPU, "
            "CUDA driver and numba-cuda versions.",
            RuntimeWarning,
            stacklevel=user_stacklevel(),
        )

    def _on_device(self, method, leaves, y, w) -> np.ndarray:
        return self.device.run(method, leaves, y, w)


_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def device_kernels_for(kernels: Kernels) -> DeviceKernels | None:
    """Return the GPU's kernels for ``kernels``' model, or None where they cannot run.

    The model's arrays go to the device once per model (and are checked once);
    the returned object binds them to this caller's CPU kernels.
    """
    if not kernels.has_gradient or not cuda_ready():
        return None
    from ._cuda_kernels import MAX_OUTPUTS

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
