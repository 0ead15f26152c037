"""Input checks shared by the public functions (checks only: no routing, no model)."""

from __future__ import annotations

import numpy as np

__all__ = ["check_sample_weight", "check_target_values"]


def check_target_values(y, n_samples: int) -> np.ndarray:
    """Check that ``y`` is a finite 1-D target with one value per row of X.

    Model-specific checks (class labels, the objective's range) are the
    reader's: :meth:`~skl_treeinner._readers.ModelReader.check_target`.
    """
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
    return y


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
