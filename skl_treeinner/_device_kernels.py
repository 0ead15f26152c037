"""PreDecomp TreeInner of GPU models on the GPU they were trained on.

A GPU booster routes rows on its GPU (``pred_leaf``); without this module the
per-(row, tree) arithmetic after it runs on the CPU. :class:`DeviceKernels`
runs :meth:`~skl_treeinner._kernels.Kernels.leaf_sums` and
:meth:`~skl_treeinner._kernels.Kernels.row_terms` on the GPU instead, with
numba's CUDA target (``python -m pip install "skl-treeinner[gpu]"``, which
installs ``numba-cuda``; CUDA itself comes with the GPU's driver). The model's
arrays go to the device once per model, each chunk's leaves, targets and
weights once per call; what comes back is a sum per leaf, or the rows' terms.

Where the target cannot run (no ``numba-cuda``, no GPU visible, more than
:data:`~skl_treeinner._cuda_kernels.MAX_OUTPUTS` outputs) the CPU kernels do the
work, with the same numbers. Before a model's first device result is used,
the first rows are scored both ways and compared (relative 1e-9), once for the
per-leaf sums and once for the per-row terms: a device that disagrees is not
trusted again for that model and sum, with a warning, and the
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

__all__ = ["DeviceKernels", "cuda_ready", "device_kernels_for"]

#: Rows scored on both sides before a model's device results are used.
CHECK_ROWS = 256
#: How closely the device must agree with the CPU kernels (relative).
CHECK_RTOL = 1e-9
#: One call on the device at a time: the selector's folds run in threads, and
#: one GPU gains nothing from several host threads launching on it (numba's
#: simulator refuses concurrent kernels).
_ONE_AT_A_TIME = threading.Lock()


@functools.cache
def cuda_ready() -> bool:
    """Whether numba's CUDA target can run here (a GPU, or the simulator)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # numba's own CUDA target is deprecated
            from numba import cuda

            return bool(cuda.is_available())
    except Exception:  # noqa: BLE001 (no numba, no CUDA library: the CPU it is)
        return False


class DeviceKernels:
    """The residual sums of :class:`~skl_treeinner._kernels.Kernels`, on a GPU.

    Built by :func:`device_kernels_for`; :meth:`leaf_sums` and
    :meth:`row_terms` take and return what the CPU kernels' methods do.
    """

    def __init__(self, kernels: Kernels):
        from numba import cuda

        from . import _cuda_kernels

        self._cuda = cuda
        self._k = _cuda_kernels
        self.host = kernels
        self.ensemble = kernels.ensemble
        self.has_gradient = kernels.has_gradient
        #: Per method, whether the device agreed with the CPU on the first
        #: rows it was given (absent until checked).
        self.trusted: dict[str, bool] = {}
        on = cuda.to_device
        value, intercept, indptr, group, code, params = kernels._walk
        ptr, col, val = kernels._table
        self._walk = (on(value), on(intercept), on(indptr), on(group), code, params)
        self._table = (on(kernels.inv_lr), on(ptr), on(col), on(val))
        self._none = (on(np.empty(0)), on(np.empty((0, 1))))

    def leaf_sums(self, leaves, y, w=None) -> np.ndarray:
        """Σ_i w_i (-g_{i,m}) over the rows reaching each leaf: (n_nodes,)."""
        return self._checked("leaf_sums", leaves, y, w)

    def row_terms(self, leaves, y, w=None) -> np.ndarray:
        """Per-row TreeInner terms z_ik of the chunk, summed over outputs."""
        return self._checked("row_terms", leaves, y, w)

    def _checked(self, method, leaves, y, w):
        if method not in self.trusted:
            self._check(method, leaves, y, w)
        if not self.trusted[method]:
            return getattr(self.host, method)(leaves, y, w)
        return self._on_device(method, leaves, y, w)

    def _check(self, method, leaves, y, w) -> None:
        head = slice(0, min(CHECK_ROWS, leaves.shape[0]))
        part = leaves[head], y[head], None if w is None else w[head]
        on_cpu = getattr(self.host, method)(*part)
        on_gpu = self._on_device(method, *part)
        scale = float(np.abs(on_cpu).max(initial=0.0))
        self.trusted[method] = bool(
            np.allclose(on_gpu, on_cpu, rtol=CHECK_RTOL, atol=CHECK_RTOL * scale)
        )
        if not self.trusted[method]:
            warnings.warn(
                "The GPU's residual sums disagreed with the CPU kernels' on the "
                f"first {head.stop} rows (largest difference "
                f"{float(np.abs(on_gpu - on_cpu).max()):.3g}); this model is "
                "scored on the CPU. Please report it to skl-treeinner with your "
                "GPU, CUDA driver and numba-cuda versions.",
                RuntimeWarning,
                stacklevel=5,
            )

    def _on_device(self, method, leaves, y, w) -> np.ndarray:
        with _ONE_AT_A_TIME:
            return self._launch(method, leaves, y, w)

    def _launch(self, method, leaves, y, w) -> np.ndarray:
        leaves, y = _rows(leaves, y)
        k, cuda = self._k, self._cuda
        weights = self._none[0] if w is None else cuda.to_device(np.asarray(w, float))
        leaves = cuda.to_device(leaves)
        n, n_trees = leaves.shape
        ens = self.ensemble
        if method == "leaf_sums":
            res, row_out = cuda.device_array((n, n_trees)), self._none[1]
        else:
            res, row_out = self._none[1], cuda.to_device(np.zeros((n, ens.n_features)))
        k.residual_terms[k.launch(n)](
            leaves, cuda.to_device(y), weights, *self._walk, *self._table,
            ens.n_features, res, row_out,
        )  # fmt: skip
        if method != "leaf_sums":
            return row_out.copy_to_host()
        partial = cuda.to_device(np.zeros((-(-n // k.BLOCK_ROWS), ens.n_nodes)))
        k.leaf_block_sums[k.launch(partial.shape[0] * n_trees)](
            leaves, res, k.BLOCK_ROWS, partial
        )
        out = cuda.device_array(ens.n_nodes)
        k.block_totals[k.launch(ens.n_nodes)](partial, out)
        return out.copy_to_host()


_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def device_kernels_for(kernels: Kernels) -> DeviceKernels | None:
    """Return the GPU's kernels for ``kernels``' model, or None where they cannot run.

    One :class:`DeviceKernels` is kept per model (its arrays are copied to the
    device once, and checked once).
    """
    if not kernels.has_gradient or not cuda_ready():
        return None
    from ._cuda_kernels import MAX_OUTPUTS

    ens = kernels.ensemble
    if ens.n_outputs > MAX_OUTPUTS:
        return None
    device = _CACHE.get(ens)
    if device is None:
        device = _CACHE[ens] = DeviceKernels(kernels)
    return device
