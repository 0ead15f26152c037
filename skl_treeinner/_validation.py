"""Input checks shared by the public functions (checks only: no routing, no model)."""

from __future__ import annotations

import numpy as np
from sklearn.exceptions import NotFittedError
from sklearn.utils._dataframe import is_pandas_df, is_polars_df
from sklearn.utils._param_validation import validate_parameter_constraints
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import (
    _check_sample_weight,
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
    validate_data,
)

__all__ = [
    "check_params",
    "check_fit_input",
    "check_prefit",
    "check_sample_weight",
    "check_target_suits_estimator",
    "check_target_values",
]


def check_params(caller: str, constraints: dict, params: dict) -> None:
    """Check a public function's scalar parameters as ``validate_params`` does.

    Called first thing in the function rather than as a decorator, so that a
    warning the function raises still points at the user's line. Raises
    scikit-learn's ``InvalidParameterError`` (a ``ValueError`` and a
    ``TypeError``) naming the parameter, what it may be and what it got.
    """
    validate_parameter_constraints(constraints, params, caller_name=caller)


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


def check_fit_input(estimator, X, y, sample_weight):
    """Validate an estimator's X, y and weights as scikit-learn does; frames stay."""
    if y is None:
        raise ValueError(
            f"This {type(estimator).__name__} estimator requires y to be passed, "
            "but the target y is None. TreeInner scores features against "
            "the target of the held-out rows."
        )
    if is_pandas_df(X) or is_polars_df(X):
        validate_data(estimator, X, skip_check_array=True, reset=True)
    else:
        X = validate_data(
            estimator,
            X,
            accept_sparse="csr",
            dtype=None,
            ensure_all_finite="allow-nan",
            reset=True,
        )
    y = column_or_1d(y, warn=True)
    check_consistent_length(X, y)
    if y.dtype.kind in "fc" and not np.all(np.isfinite(y)):
        bad = np.flatnonzero(~np.isfinite(y))
        raise ValueError(
            f"y contains {bad.size} NaN or infinite value(s) (first at rows "
            f"{bad[:5].tolist()}); drop those rows or impute the target "
            "before fitting."
        )
    weight = None
    if sample_weight is not None:
        weight = _check_sample_weight(
            sample_weight, X, dtype=np.float64, ensure_non_negative=True
        )
    return X, y, weight


def check_target_suits_estimator(y, classifier: bool, final):
    """Refuse a target that does not suit the estimator, before any fit."""
    kind = type_of_target(y, input_name="y", raise_unknown=True)
    if classifier:
        if kind not in ("binary", "multiclass"):
            raise ValueError(
                f"{type(final).__name__} is a classifier, but y is a {kind} target "
                f"(e.g. {y[:3].tolist()}). Pass a regressor as estimator, or bin y "
                "into class labels."
            )
        if np.unique(y).size < 2:
            raise ValueError(
                f"y holds 1 class ({np.unique(y).tolist()}); a classifier needs "
                "at least two."
            )
    elif y.dtype.kind not in "biuf":
        raise ValueError(
            f"{type(final).__name__} is a regressor, but y has dtype {y.dtype} "
            f"(e.g. {y[:3].tolist()}). Pass numbers, or a classifier as estimator."
        )
    return y


def check_prefit(selector, base) -> None:
    """Check that a prefit ``base`` can be scored by ``selector`` on its X."""
    if selector.cv is not None:
        raise ValueError(
            f"cv={selector.cv!r} cannot be used with prefit=True: a prefit "
            "estimator is scored on all the rows given to fit. Set cv=None, "
            "or prefit=False to let the selector fit one model per split."
        )
    try:
        check_is_fitted(base)
    except NotFittedError as e:
        raise NotFittedError(
            f"prefit=True, but the {type(base).__name__} is not fitted. Fit "
            "it first on rows other than those you pass to "
            f"{type(selector).__name__}.fit (TreeInner must score held-out rows), "
            "or set prefit=False to let the selector fit it."
        ) from e
    n_in = getattr(base, "n_features_in_", None)
    if n_in is not None and n_in != selector.n_features_in_:
        raise ValueError(
            f"The prefit {type(base).__name__} was trained on {n_in} features, "
            f"but X has {selector.n_features_in_}. Pass the columns it was trained "
            "on, in the same order."
        )
