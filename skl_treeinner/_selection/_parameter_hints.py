"""The selector's parameters: what they may be, and what to pass instead.

scikit-learn's ``InvalidParameterError`` says what a parameter may be and what
it got; where the value refused is one that users try (``cv=1`` meaning one
split, ``n_jobs=0``, ``max_features=0``), :func:`with_hint` adds what to pass.
"""

from __future__ import annotations

from numbers import Integral

from sklearn.utils._param_validation import Interval

__all__ = ["N_JOBS_CONSTRAINTS", "PARAMETER_HINTS", "with_hint"]

#: ``n_jobs`` as joblib reads it: a count of workers, or -1, -2, ... for all
#: cores but |n_jobs| - 1; 0 means nothing.
N_JOBS_CONSTRAINTS = [
    Interval(Integral, None, -1, closed="right"),
    Interval(Integral, 1, None, closed="left"),
    None,
]


def _int_below(bound):
    def applies(value):
        return (
            isinstance(value, Integral)
            and not isinstance(value, bool)
            and (value < bound)
        )

    return applies


def _is_zero(value):
    return value == 0 and not isinstance(value, bool)


#: What to pass instead, for values of the selector's parameters that users
#: try and the constraints refuse: (parameter, does it apply, the hint).
PARAMETER_HINTS = (
    (
        "cv",
        _int_below(2),
        "For one split pass cv=None: it fits on part of the rows and scores the "
        "other validation_fraction of them (the command line's --cv 1).",
    ),
    (
        "n_jobs",
        _is_zero,
        "n_jobs=None or 1 runs one split at a time, -1 uses every core.",
    ),
    (
        "max_features",
        _is_zero,
        "max_features=0 would keep no feature; None keeps every feature that "
        "passes the test.",
    ),
)


def with_hint(error, params: dict):
    """``error`` (an ``InvalidParameterError``) with what to pass instead.

    Where a refused value is one that users try (``cv=1`` for one split,
    ``n_jobs=0``, ``max_features=0``), the message gains a sentence from
    :data:`PARAMETER_HINTS`; otherwise the error is returned unchanged.
    """
    for name, applies, hint in PARAMETER_HINTS:
        if f"'{name}' parameter" in str(error) and applies(params.get(name)):
            return type(error)(f"{error} {hint}")
    return error
