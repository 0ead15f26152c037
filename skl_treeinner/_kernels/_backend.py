"""The one place that chooses where a model's arithmetic runs: numpy, CPU or GPU.

Role: :func:`backend_for` picks, once per call of a scoring function, the
kernels that do the per-(row, tree) arithmetic after the booster has routed
the rows, and the scoring functions ask the :class:`Backend` it returns:

* the PreDecomp of rows and their margins (:attr:`Backend.paths`): the
  compiled CPU kernels (:mod:`skl_treeinner._kernels._compiled`) when numba is
  installed, else the numpy reference (:mod:`skl_treeinner._kernels._numpy`);
* the residual sums of TreeInner and TreeSHAP by leaf patterns
  (:attr:`Backend.sums`): a GPU model's GPU where numba's CUDA target runs
  (:mod:`skl_treeinner._kernels._device`, checked against the CPU), else the
  compiled CPU kernels where they know the objective's gradient, else numpy;
* the compiled CPU kernels themselves (:attr:`Backend.cpu`), or None: the
  column test's resampling and the booster-free TreeSHAP of
  :func:`~skl_treeinner.global_importance` need them.

``SKL_TREEINNER_KERNEL`` (:func:`~skl_treeinner._kernels._compiled.backend`)
forces numpy or numba.
"""

from __future__ import annotations

from .._model._ensemble import TreeEnsemble
from ._compiled import Kernels, kernels_for
from ._device import DeviceKernels, device_kernels_for
from ._numpy import NumpyKernels

__all__ = ["Backend", "backend_for"]


class Backend:
    """Where one model's arithmetic runs, chosen once (see the module doc).

    Attributes
    ----------
    paths : Kernels or NumpyKernels
        ``leaf_paths`` and ``margins``.
    sums : DeviceKernels, Kernels or NumpyKernels
        ``leaf_sums``, ``row_terms``, ``iteration_gradients`` and, where
        ``sums.patterns``, ``treeshap_of_targets``; ``sums.chunk_scale`` is
        how much larger its row chunks may be than the numpy path's.
    cpu : Kernels or None
        The compiled CPU kernels (None without numba).
    """

    def __init__(self, ens: TreeEnsemble, n_threads: int = 1, *, on_gpu: bool = False):
        numpy = NumpyKernels(ens)
        self.cpu: Kernels | None = kernels_for(ens, n_threads)
        self.paths: Kernels | NumpyKernels = self.cpu or numpy
        sums = self.cpu if self.cpu is not None and self.cpu.has_gradient else None
        if sums is not None and on_gpu:
            sums = device_kernels_for(sums) or sums
        self.sums: DeviceKernels | Kernels | NumpyKernels = sums or numpy


def backend_for(reader) -> Backend:
    """Return the :class:`Backend` of a read model, with its threads and device."""
    return Backend(reader.ensemble, reader.n_threads(), on_gpu=reader.on_gpu())
