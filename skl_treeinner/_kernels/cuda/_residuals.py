"""The per-leaf and per-row residual sums of a GPU model, on its GPU.

The device twin of :func:`skl_treeinner._kernels.cpu._residuals.residual_terms`
(numba's CUDA target: the ``numba-cuda`` package on a machine with a GPU, or
numba's CUDA simulator where ``NUMBA_ENABLE_CUDASIM=1``). Imported only by
:mod:`skl_treeinner._kernels._device`, which decides when it runs.

One thread per row walks the row's leaves in boosting order, as the CPU
kernel does: the margin before every iteration, the loss gradient there
(the same compiled :func:`~skl_treeinner._kernels.cpu._residuals.gradient`, which
numba compiles for the device too) and its weighted negative: times the
learning rate's inverse and the leaf's PreDecomp, it is added to the row's
terms (Paper 000, Eq. 21); for the per-leaf sums it is kept per (row, tree)
and summed per leaf in a fixed order (:func:`leaf_block_sums`,
:func:`block_totals`), so that the same call gives the same numbers to the
last bit, as the CPU kernels do.
"""

from __future__ import annotations

from numba import cuda, float64

from ..cpu._residuals import gradient

#: The most outputs (classes) a thread keeps margins and gradients of; models
#: with more are scored on the CPU.
MAX_OUTPUTS = 32
#: Threads per block of every launch.
THREADS_PER_BLOCK = 128
#: Rows one thread sums per tree into a leaf's partial sum, at the least.
BLOCK_ROWS = 256
#: The most partial sums (blocks x nodes) kept on the device at once; blocks
#: grow beyond :data:`BLOCK_ROWS` rows to stay within it.
MAX_PARTIAL = 1 << 22


@cuda.jit
def residual_terms(leaves, y, w, walk, table, res_out, row_out):
    """One row per thread: its weighted negative gradients, per tree or per row.

    ``walk`` and ``table`` are the model's
    :class:`~skl_treeinner._kernels._structures.Walk` and
    :class:`~skl_treeinner._kernels._structures.PathTable` on the device.
    With an empty ``row_out``: res_out[i, t] = w_i (-g_{i,t}), summed per leaf
    by :func:`leaf_block_sums`. Otherwise row_out[i, k] =
    Σ_t w_i (-g_{i,t}) / α_t · f_{t,k}(x_i), summed over outputs, as
    :func:`skl_treeinner._kernels.cpu._residuals.residual_terms` does.
    """
    value, intercept = walk.value, walk.intercept
    indptr, group = walk.indptr, walk.group
    code, prm, inv_lr = walk.code, walk.prm, walk.inv_lr
    tab_ptr, tab_col, tab_val, n_features = table
    i = cuda.grid(1)
    if i >= leaves.shape[0]:
        return
    n_outputs = intercept.shape[0]
    f = cuda.local.array(MAX_OUTPUTS, float64)[:n_outputs]
    g = cuda.local.array(MAX_OUTPUTS, float64)[:n_outputs]
    for k in range(n_outputs):
        f[k] = intercept[k]
    wi = w[i] if w.shape[0] > 0 else 1.0
    yi = y[i]
    per_row = row_out.shape[0] > 0
    if per_row:
        for c in range(row_out.shape[1]):
            row_out[i, c] = 0.0
    for r in range(indptr.shape[0] - 1):
        # Every tree of iteration r was fitted at the margin before r.
        gradient(code, prm, f, yi, g)
        for t in range(indptr[r], indptr[r + 1]):
            k = group[t]
            leaf = leaves[i, t]
            residual = wi * -g[k]
            f[k] += value[leaf]
            if not per_row:
                res_out[i, t] = residual
                continue
            s = residual * inv_lr[t]
            shift = k * n_features
            for j in range(tab_ptr[leaf], tab_ptr[leaf + 1]):
                row_out[i, tab_col[j] - shift] += s * tab_val[j]


@cuda.jit
def leaf_block_sums(leaves, res, offsets, block_rows, partial):
    """partial[b, leaf] = Σ res[i, t] over the rows i of block b reaching the leaf.

    One thread per (tree, block of ``block_rows`` rows), the trees varying
    fastest: it zeroes, then fills, its tree's nodes (``offsets[t]`` to
    ``offsets[t + 1]``) of its block's row of ``partial``, adding its rows in
    order. Every entry has one owner, so the sums are the same on every run
    (atomic adds are not).
    """
    j = cuda.grid(1)
    n, n_trees = leaves.shape
    t = j % n_trees
    b = j // n_trees
    if b >= partial.shape[0]:
        return
    for node in range(offsets[t], offsets[t + 1]):
        partial[b, node] = 0.0
    for i in range(b * block_rows, min(n, (b + 1) * block_rows)):
        partial[b, leaves[i, t]] += res[i, t]


@cuda.jit
def block_totals(partial, out):
    """out[node] = Σ_b partial[b, node], the blocks in order: one thread a node."""
    node = cuda.grid(1)
    if node >= out.shape[0]:
        return
    total = 0.0
    for b in range(partial.shape[0]):
        total += partial[b, node]
    out[node] = total


def block_rows(n_rows: int, n_nodes: int) -> int:
    """Rows per block of :func:`leaf_block_sums`.

    :data:`BLOCK_ROWS`, or more where the partial sums would exceed
    :data:`MAX_PARTIAL` entries.
    """
    blocks = max(1, min(-(-n_rows // BLOCK_ROWS), MAX_PARTIAL // max(n_nodes, 1)))
    return max(1, -(-n_rows // blocks))


def launch(n: int) -> tuple[int, int]:
    """Blocks and threads per block that cover ``n`` threads."""
    return max(1, -(-n // THREADS_PER_BLOCK)), THREADS_PER_BLOCK
