"""Compile the GPU kernels for a real GPU, on a machine without one.

The tests run ``skl_treeinner._kernels.cuda._residuals`` and ``_treeshap`` on
numba's CUDA simulator, which runs Python and would accept code that
numba-cuda cannot compile for a device. This script compiles every kernel to
PTX for a compute capability (9.0, an H100, by default) with the real CUDA
target. It needs ``numba-cuda`` and the
CUDA compiler libraries, not a GPU::

    python -m pip install "numba-cuda[cu12]"
    python benchmarks/compile_cuda.py [--cc 9.0]

numba-cuda asks the current device for its compute capability when it
compiles a function a kernel calls (the objectives' gradients); without a GPU
a stand-in device answers with ``--cc``.
"""

from __future__ import annotations

import argparse
import re
import types


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cc", default="9.0", help="compute capability, e.g. 8.0")
    cc = tuple(int(part) for part in parser.parse_args().cc.split("."))

    from numba import boolean, cuda, float32, float64, int32, int64

    if not cuda.is_available():  # else the GPU answers for itself
        import numba.cuda.dispatcher as dispatcher

        device = types.SimpleNamespace(compute_capability=cc)
        dispatcher.get_current_device = lambda: device

    from numba.core.types import NamedTuple

    from skl_treeinner._kernels._device_layout import FlatLeaves
    from skl_treeinner._kernels._structures import PathTable, Rule, Walk
    from skl_treeinner._kernels.cuda import _residuals as ck
    from skl_treeinner._kernels.cuda import _treeshap as cs

    # C-contiguous arrays, as the calls pass them.
    f1, f2, f3 = float64[::1], float64[:, ::1], float64[:, :, ::1]
    i1, i2, b1, b2 = int64[::1], int64[:, ::1], boolean[::1], boolean[:, ::1]
    # The model's structures (_kernels/_structures.py); XGBoost's rows and
    # thresholds are float32.
    walk = NamedTuple((f1, f1, i1, i1, int64, float64, f1), Walk)
    table = NamedTuple((i1, i1, f1, int64), PathTable)
    # The device keeps the library's own threshold dtype.
    rule = NamedTuple((float32[::1], b1, boolean), Rule)
    flat = NamedTuple((i1, i1, i1, i2, b2, i2, i1, i2, f2, i1), FlatLeaves)
    x = float32[:, ::1]
    signatures = {
        "residual_terms": (ck, (i2, f1, f1, walk, table, f2, f2)),
        "leaf_block_sums": (ck, (i2, f2, i1, int64, f2)),
        "block_totals": (ck, (f2, f1)),
        "pattern_counts": (cs, (
            x, i2, f3, walk, int64, flat, i1, i1, rule, f2, int32[::1],
        )),
        "row_patterns": (cs, (
            x, i2, f3, walk, flat, f1, i1, i1, rule, f3, int32[::1],
        )),
    }  # fmt: skip
    for name, (module, signature) in signatures.items():
        kernel = getattr(module, name).py_func
        ptx, _ = cuda.compile_ptx(kernel, signature, cc=cc)
        atomics = sorted(set(re.findall(r"\b(?:atom|red)\.[a-z.0-9]+", ptx)))
        print(f"{name}: {len(ptx):,} characters of PTX for sm_{cc[0]}{cc[1]}, "
              f"atomic operations: {atomics or 'none'}")  # fmt: skip


if __name__ == "__main__":
    main()
