"""Input checks shared by the public functions."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ._readers import ModelReader
from ._readers._base import n_rows, slice_rows

__all__ = ["check_target", "check_sample_weight", "iter_leaf_chunks"]

# Rows per chunk are chosen so that one (rows x trees) float64 array stays
# near this many elements (8 MiB): memory stays O(rows x features) overall.
_CHUNK_ELEMENTS = 1 << 20


def check_target(y, n_samples: int, reader: ModelReader) -> np.ndarray:
    """Validate ``y`` against X's rows and the model's objective."""
    if y is None:
        raise ValueError("y is required: TreeInner needs the target of every row.")
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(
            f"y must be 1-D of shape (n_samples,), got shape {y.shape}. "
            "Multi-target models are not supported."
        )
    if y.shape[0] != n_samples:
        raise ValueError(
            f"y has {y.shape[0]} rows but X has {n_samples}; pass the target "
            "of the same rows."
        )
    if y.dtype.kind in "biuf":
        bad = ~np.isfinite(y)
        if np.any(bad):
            rows = np.flatnonzero(bad)
            raise ValueError(
                f"y contains {rows.size} NaN or infinite value(s) (first at rows "
                f"{rows[:5].tolist()}); drop those rows or impute the target."
            )
    if reader.classes_ is not None:
        y = reader.encode_target(y)
    elif y.dtype.kind not in "biuf":
        raise ValueError(
            f"y must be numeric for this model, got dtype {y.dtype}. Encode "
            "class labels as 0..n_classes-1, as the model was trained."
        )
    return reader.ensemble.objective.check_target(y.astype(np.float64))


def check_sample_weight(sample_weight, n_samples: int) -> np.ndarray | None:
    """Validate per-row weights; ``None`` stays ``None`` (all ones)."""
    if sample_weight is None:
        return None
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.ndim != 1 or w.shape[0] != n_samples:
        raise ValueError(
            f"sample_weight must have shape ({n_samples},), got {w.shape}."
        )
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("sample_weight must be finite and non-negative.")
    return w


def iter_leaf_chunks(
    reader: ModelReader, X, scale: int = 1
) -> Iterator[tuple[int, int, object, np.ndarray]]:
    """Route X through the booster in row chunks.

    Yields ``(start, stop, X_chunk, leaves)``: the rows ``start:stop`` of X
    (same type as X) and ``leaves`` of shape (stop - start, n_trees), the
    global node index of the leaf each row reaches in each tree, from the
    booster's own routing. Chunks hold about ``scale * _CHUNK_ELEMENTS``
    (row, tree) pairs.
    """
    n = n_rows(X)
    step = _chunk_rows(reader, scale)
    if step >= n:
        yield 0, n, X, reader.apply(X)
        return
    for start in range(0, n, step):
        stop = min(start + step, n)
        chunk = slice_rows(X, start, stop)
        yield start, stop, chunk, reader.apply(chunk)


def n_leaf_chunks(reader: ModelReader, n_samples: int, scale: int = 1) -> int:
    """Count the chunks :func:`iter_leaf_chunks` yields for ``n_samples`` rows."""
    step = _chunk_rows(reader, scale)
    return 1 if step >= n_samples else -(-n_samples // step)


def _chunk_rows(reader: ModelReader, scale: int) -> int:
    # Read _CHUNK_ELEMENTS at call time, so that tests can shrink the chunks.
    return max(256, scale * _CHUNK_ELEMENTS // max(reader.ensemble.n_trees, 1))
