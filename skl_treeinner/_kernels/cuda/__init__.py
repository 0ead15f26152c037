"""Kernels numba-cuda compiles for an NVIDIA GPU (the ``gpu`` extra).

The device twins of the CPU kernels' residual sums (``_residuals``) and
TreeSHAP by leaf patterns (``_treeshap``). Imported only by
:mod:`skl_treeinner._kernels._device`, which decides when they run.
"""
