"""Rows split over threads: how many blocks a chunk of routed rows is worth.

The compiled kernels release the GIL and work on one block of rows each
(:func:`in_threads`). One more thread is worth starting only for enough work:
:data:`MIN_PAIRS_PER_THREAD` (row, tree) pairs, so that a model of many trees
(whose row chunks are short: a chunk holds a bounded number of pairs) still
gets every thread the caller allows, and a model of few trees is not split
into blocks too small to pay for their thread.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

__all__ = ["MIN_PAIRS_PER_THREAD", "blocks", "in_threads", "rows_per_thread", "total"]

#: (row, tree) pairs below which one more thread is not worth starting.
MIN_PAIRS_PER_THREAD = 1 << 18
#: The fewest rows of a block, however many trees.
MIN_ROWS = 64


def rows_per_thread(n_trees: int, pairs: int = MIN_PAIRS_PER_THREAD) -> int:
    """Return the rows of ``n_trees`` trees a thread needs: ``pairs`` pairs."""
    return max(MIN_ROWS, -(-pairs // max(int(n_trees), 1)))


def blocks(n: int, n_threads: int, per_thread: int) -> list[tuple[int, int]]:
    """Split range(n) into even blocks: n_threads, or fewer of at least per_thread."""
    parts = max(1, min(n_threads, n // per_thread))
    edges = np.linspace(0, n, parts + 1).astype(np.int64)
    return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:], strict=True)]


def in_threads(work, n: int, n_threads: int, per_thread: int) -> list:
    """Run ``work(start, stop)`` on blocks of range(n), one thread per block."""
    parts = blocks(n, n_threads, per_thread)
    if len(parts) == 1:
        return [work(*parts[0])]
    with ThreadPoolExecutor(len(parts)) as pool:
        return list(pool.map(lambda b: work(*b), parts))


def total(parts):
    """Add up per-thread sums in place of the first."""
    out = parts[0]
    for part in parts[1:]:
        out += part
    return out
