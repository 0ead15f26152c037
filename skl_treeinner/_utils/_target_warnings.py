"""Warnings about what the target's values make of the task.

The dtype of y decides between classes and numbers (the selector's rule);
where the values suggest the user meant the other, or that nothing can be
found, the default booster's fit says so, with what to pass instead.
"""

from __future__ import annotations

import warnings

import numpy as np

from ._validation import MANY_CLASSES, distinct_count, user_stacklevel

__all__ = ["warn_about_target", "warn_integer_numbers"]


def warn_about_target(y, classifier: bool) -> None:
    """Warn where y's values suggest another task than the one its dtype gave.

    Called for the default booster only: an estimator the user passes is the
    user's choice of task.
    """
    if np.unique(y).size == 1 and not classifier:
        warnings.warn(
            "y is constant: no feature can tell anything about it, so none will "
            "be kept.",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
    elif not classifier:
        warn_integer_numbers(y)
        warn_zero_one_floats(y)


def warn_integer_numbers(y) -> None:
    """Say how to ask for classes when many distinct integers made a regression.

    Any 1-D target: numpy, or a Dask array or series (counted on the cluster).
    """
    if getattr(y.dtype, "kind", None) not in ("i", "u"):
        return
    warnings.warn(
        f"y holds {distinct_count(y)} distinct integers, more than "
        f"{MANY_CLASSES}, so the default booster fits a regression (a price or "
        "a count). For class labels pass a classifier as estimator, or "
        "y.astype(str).",
        UserWarning,
        stacklevel=user_stacklevel(),
    )


def warn_zero_one_floats(y) -> None:
    """Say how to ask for classes when a 0/1 float target made a regression."""
    if y.dtype.kind == "f" and np.isin(y, (0.0, 1.0)).all() and np.ptp(y) == 1:
        warnings.warn(
            "y holds only the values 0.0 and 1.0, as floats, so the default booster "
            "fits a regression (float targets are numbers). For two classes pass "
            "y.astype(int), or a classifier as estimator.",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
