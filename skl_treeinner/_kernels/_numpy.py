"""The numpy reference of the kernels: whole-array steps, on one core.

Role: what :class:`~skl_treeinner._kernels._compiled.Kernels` computes, in numpy,
for a model whose arithmetic is not compiled (numba not installed, or
``SKL_TREEINNER_KERNEL=numpy``, or an objective without a compiled gradient).
Each step is a pass over a (rows x trees) intermediate: the residuals from
:meth:`~skl_treeinner._model._ensemble.TreeEnsemble.staged_gradients`, summed
per leaf with ``np.bincount`` or multiplied into the path table as a sparse
(rows x n_nodes) matrix. The compiled kernels agree with it to float
rounding, and the tests compare them.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from .._model._ensemble import TreeEnsemble

__all__ = ["NumpyKernels"]


class NumpyKernels:
    """The numpy reference bound to one ensemble (the interface of ``Kernels``).

    Every method takes a chunk of routed rows (``leaves`` of shape (rows,
    n_trees), global leaf indices). TreeSHAP by leaf patterns and the column
    test's resampling have no numpy version here (:attr:`patterns` is False):
    the booster's own TreeSHAP and a scoring of the resampled rows serve.
    """

    #: Row chunks as the readers size them (the intermediates are rows x trees).
    chunk_scale = 1
    #: No TreeSHAP by leaf patterns.
    patterns = False

    def __init__(self, ens: TreeEnsemble):
        self.ensemble = ens

    def _residuals(self, leaves, y, w) -> np.ndarray:
        """-g_{i,m} w_i for every row and tree of a chunk: (rows, n_trees)."""
        residual = self.ensemble.staged_gradients(leaves, y)
        np.negative(residual, out=residual)
        if w is not None:
            residual *= w[:, None]
        return residual

    def _by_leaf(self, leaves, data) -> sparse.csr_matrix:
        """Return a (rows x n_nodes) matrix of ``data`` at each row's leaves."""
        ens = self.ensemble
        return sparse.csr_matrix(
            (data, leaves.ravel(), np.arange(0, leaves.size + 1, ens.n_trees)),
            shape=(leaves.shape[0], ens.n_nodes),
        )

    def leaf_paths(self, leaves) -> np.ndarray:
        """PreDecomp of every row of the chunk: (rows, n_outputs * n_features)."""
        hit = self._by_leaf(leaves, np.ones(leaves.size))
        return (hit @ self.ensemble.path_table).toarray()

    def leaf_sums(self, leaves, y, w=None) -> np.ndarray:
        """Σ_i w_i (-g_{i,m}) over the rows reaching each leaf: (n_nodes,)."""
        residual = self._residuals(leaves, y, w)
        return np.bincount(
            leaves.ravel(), weights=residual.ravel(), minlength=self.ensemble.n_nodes
        )

    def row_terms(self, leaves, y, w=None) -> np.ndarray:
        """Per-row TreeInner terms z_ik of the chunk, summed over outputs.

        Each row's weighted residual over the learning rate at the leaves it
        reaches, times the path table (the PreDecomp of every leaf).
        """
        ens = self.ensemble
        residual = self._residuals(leaves, y, w)
        residual /= ens.learning_rate
        hit = self._by_leaf(leaves, residual.ravel())
        terms = (hit @ ens.path_table).toarray()
        return terms.reshape(-1, ens.n_outputs, ens.n_features).sum(axis=1)

    def margins(self, leaves) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`TreeEnsemble.margins`."""
        return self.ensemble.margins(leaves)

    def iteration_gradients(self, leaves, y) -> np.ndarray:
        """:meth:`TreeEnsemble.iteration_gradients`: (rows, R, K)."""
        return self.ensemble.iteration_gradients(leaves, y)
