"""Kernels numba compiles for the CPU (the ``numba`` extra).

Each works on one block of rows and releases the GIL: the residuals and
their sums (``_residuals``), TreeSHAP by leaf patterns (``_treeshap``, with
the leaves' paths in ``_tree_paths``), and the test of a column's resampled
terms (``_permute``, ``_permute_shap`` with ``_shap_moments``).
"""
