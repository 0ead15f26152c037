"""Input checks shared by the public functions (checks only: no routing, no model)."""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import validate_parameter_constraints
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import (
    _check_sample_weight,
    check_consistent_length,
    column_or_1d,
    validate_data,
)

__all__ = [
    "ATTRIBUTIONS",
    "check_attribution",
    "MANY_CLASSES",
    "is_pandas_df",
    "is_polars_df",
    "check_frame_columns",
    "check_no_infinity",
    "check_unique_columns",
    "beyond_float32",
    "check_target_scale",
    "check_target_spread",
    "constant_columns",
    "target_is_classes",
    "distinct_count",
    "check_params",
    "check_fit_input",
    "check_sample_weight",
    "check_target_suits_estimator",
    "check_no_missing_labels",
    "warn_if_misaligned",
    "check_target_values",
    "record_columns",
    "user_stacklevel",
]


#: An integer target with more distinct values than this is a number (a
#: price, a count), fitted as a regression with a warning naming the
#: override (a classifier, or ``--task classification``); with this many or
#: fewer it holds class labels.
MANY_CLASSES = 20


#: The per-tree attributions of TreeInner: PreDecomp (Def. 1) and TreeSHAP.
ATTRIBUTIONS = ("predecomp", "treeshap")

#: The package's folder (this module sits in its _utils/).
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_SKLEARN_BASE = os.path.join("sklearn", "base.py")
#: A context manager's exit, where a block's recorded warnings are said again.
_CONTEXTLIB = os.sep + "contextlib.py"


def user_stacklevel() -> int:
    """Return the ``stacklevel`` that points a warning at the user's call.

    For a ``warnings.warn`` in the function calling this one: the first
    frame outside this package, scikit-learn's ``_fit_context`` wrapper
    (``sklearn/base.py``) and ``contextlib`` (a context manager of the
    package's that says a block's warnings on exit), however deep the
    package's own calls run.
    """
    frame, level = sys._getframe(1), 1
    while frame is not None and (
        frame.f_code.co_filename.startswith(_PACKAGE)
        or frame.f_code.co_filename.endswith((_SKLEARN_BASE, _CONTEXTLIB))
    ):
        frame, level = frame.f_back, level + 1
    return level


def record_columns(name: str, X, **check_params):
    """Run scikit-learn's input checks on X; return it with its columns' record.

    The checks set ``n_features_in_`` and ``feature_names_in_`` on the object
    they check; here that is a stand-in named ``name`` (the selector's class,
    which their messages name), so that the caller returns the record
    instead of setting it on an estimator. Returns ``(X, n_features_in,
    feature_names_in)``, the names ``None`` where X has none.
    """
    record = type(name, (BaseEstimator,), {"__module__": __name__})()
    X = validate_data(record, X, reset=True, **check_params)
    return X, record.n_features_in_, getattr(record, "feature_names_in_", None)


def check_attribution(attribution) -> None:
    """Refuse an ``attribution`` that is not one of :data:`ATTRIBUTIONS`."""
    if attribution not in ATTRIBUTIONS:
        raise ValueError(
            f"attribution={attribution!r} is not supported; choose one of "
            f"{list(ATTRIBUTIONS)}."
        )


def target_is_classes(y) -> bool:
    """Whether ``y`` holds class labels: the one task rule of the selector and CLI.

    Boolean, string and categorical targets are class labels; float targets
    are numbers (regression), even when every value is whole. Integer
    targets are class labels with at most :data:`MANY_CLASSES` distinct
    values and numbers beyond (what a price or a count stored as int64
    holds). To fit integers as numbers pass ``y.astype(float)`` or a
    regressor; to fit them, or float labels, as classes pass a classifier.
    """
    kind = getattr(getattr(y, "dtype", None), "kind", None)  # pandas extension too
    if not isinstance(kind, str):
        kind = np.asarray(y).dtype.kind
    if kind in "iu":
        return distinct_count(y) <= MANY_CLASSES
    return kind in "bOUS"


def distinct_count(y) -> int:
    """Count the distinct present values of a target (computed if lazy).

    pandas, polars and Dask series, numpy and Dask arrays.
    """
    if hasattr(y, "nunique"):  # pandas and Dask series (missing values not counted)
        count = y.nunique()
    elif hasattr(y, "n_unique"):  # polars
        count = y.drop_nulls().n_unique()
    else:
        count = np.unique(y)
        count = count.compute() if hasattr(count, "compute") else count
        return int(count.size)
    return int(count.compute() if hasattr(count, "compute") else count)


def is_pandas_df(X) -> bool:
    """Whether X is a pandas DataFrame (pandas is never imported to tell)."""
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(X, pd.DataFrame)


def is_polars_df(X) -> bool:
    """Whether X is a polars DataFrame (polars is never imported to tell)."""
    pl = sys.modules.get("polars")
    return pl is not None and isinstance(X, pl.DataFrame)


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


def check_fit_input(name, X, y, sample_weight, *, reader=None):
    """Validate an estimator's X, y and weights as scikit-learn does; frames stay.

    ``name`` is the estimator's class name, for the messages. ``reader``: the
    reader class of the booster when X reaches it as given (no Pipeline
    before it); then data-frame columns no booster takes are refused, and
    infinite values where the booster refuses them, each with a message
    naming the column. Returns ``(X, y, weight, n_features_in,
    feature_names_in)``, the last two as scikit-learn's checks record them
    (:func:`record_columns`).
    """
    if y is None:
        raise ValueError(
            f"This {name} estimator requires y to be passed, "
            "but the target y is None. TreeInner scores features against "
            "the target of the held-out rows."
        )
    check_unique_columns(X)
    if reader is not None and not reader.accepts_infinity:
        check_no_infinity(X)
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape) == 2 and 0 in shape:
        what = "sample(s)" if shape[0] == 0 else "feature(s)"
        raise ValueError(
            f"X has shape {tuple(shape)}: found array with 0 {what} "
            f"(shape={tuple(shape)}) while a minimum of 1 is required. "
            "TreeInnerSelector needs rows and features to score."
        )
    if is_pandas_df(X) or is_polars_df(X):
        if reader is not None:
            check_frame_columns(X, text=reader.accepts_text_columns)
        X, n_features_in, names = record_columns(name, X, skip_check_array=True)
    else:
        X, n_features_in, names = record_columns(
            name,
            X,
            accept_sparse="csr",
            dtype=None,
            ensure_all_finite="allow-nan",
        )
        if getattr(X, "dtype", None) is not None and X.dtype.kind == "O":
            check_object_array(X)
    warn_if_misaligned(X, y)
    y = column_or_1d(y, warn=True)
    check_consistent_length(X, y)
    if y.dtype.kind in "fc" and not np.all(np.isfinite(y)):
        bad = np.flatnonzero(~np.isfinite(y))
        raise ValueError(
            f"y contains {bad.size} NaN or infinite value(s) (first at rows "
            f"{bad[:5].tolist()}); drop those rows or impute the target "
            "before fitting."
        )
    if y.dtype.kind == "O":
        check_no_missing_labels(y)
    weight = None
    if sample_weight is not None:
        weight = _check_sample_weight(
            sample_weight, X, dtype=np.float64, ensure_non_negative=True
        )
    constant = constant_columns(X)
    if constant is not None and constant.all():
        warnings.warn(
            f"Every one of the {constant.size} features of X holds a single "
            "value, so the booster cannot split on any: every score is 0 and no "
            "feature is selected.",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
    return X, y, weight, n_features_in, names


def check_object_array(X) -> None:
    """Refuse an object array whose cells are not all numbers, naming the first.

    A numpy array of objects reaches the booster as it is, and the booster
    fails inside ``fit`` converting it ("could not convert string to float",
    a ``Timestamp``, ``pd.NA``). A data frame keeps each column's type
    (categories, dates) and is refused or passed by column instead.
    """
    for j in range(X.shape[1]):
        column = X[:, j]
        try:
            column.astype(np.float64)
            continue
        except (TypeError, ValueError):
            pass
        for i, value in enumerate(column):
            try:
                float(value)
            except (TypeError, ValueError) as e:
                # TypeError for what is no number at all, as float() says.
                raise type(e)(
                    f"X is an array of objects, and column {j} holds {value!r} "
                    f"(row {i}, counted from 0), which is not a number ({e}). "
                    "Pass numbers (np.nan for missing values), or a pandas or "
                    "polars frame whose text columns are categories."
                ) from None


def warn_if_misaligned(X, y) -> None:
    """Warn where a pandas X and y have indexes of equal length that differ.

    Rows are matched by position, as scikit-learn matches them; a y shuffled
    or filtered apart from X would be fitted to the wrong rows without a word.
    """
    index_x, index_y = getattr(X, "index", None), getattr(y, "index", None)
    if not (is_pandas_df(X) and hasattr(y, "to_numpy") and index_y is not None):
        return
    if len(index_x) != len(index_y) or index_x.equals(index_y):
        return
    row = int(np.flatnonzero(index_x.to_numpy() != index_y.to_numpy())[0])
    fix = (
        "y = y.loc[X.index]"
        if index_x.sort_values().equals(index_y.sort_values())
        else "y = y.set_axis(X.index) once you are sure of the order"
    )
    warnings.warn(
        f"y's index differs from X's (row {row}, counted from 0: X's label "
        f"{index_x[row]!r}, y's {index_y[row]!r}); the rows are matched by "
        f"position, as scikit-learn matches them. If y was shuffled or filtered "
        f"apart from X, align it first: {fix}.",
        UserWarning,
        stacklevel=user_stacklevel(),
    )


def check_no_missing_labels(y) -> None:
    """Refuse an object target with missing labels (None, NaN, pd.NA), by row.

    Text labels with a NaN among them otherwise fail inside numpy's sorting
    ("'<' not supported between instances of 'float' and 'str'").
    """
    pd = sys.modules.get("pandas")
    if pd is not None:
        missing = np.asarray(pd.isna(y), dtype=bool)
    else:
        missing = np.array([v is None or (isinstance(v, float) and v != v) for v in y])
    if missing.any():
        bad = np.flatnonzero(missing)
        raise ValueError(
            f"y contains {bad.size} missing label(s) (None or NaN; first at rows "
            f"{bad[:5].tolist()}, counted from 0); drop those rows, or give the "
            "missing labels a class of their own (e.g. y.fillna('missing')), "
            "before fitting."
        )


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


def check_target_scale(y, weight, limit, name, max_offset=None) -> None:
    """Refuse a numeric target whose spread overflows the booster's arithmetic.

    ``limit`` is the reader's ``max_target_spread`` (None: no limit). The
    spread ``Σ w |y - mean(y)|`` bounds every node's gradient sum at the
    first tree; beyond the limit the booster fits noise, and its scores
    would be read as findings.
    """
    if (limit is None and max_offset is None) or y.dtype.kind not in "iuf":
        return
    w = np.ones(y.shape[0]) if weight is None else weight
    total = w.sum()
    if total <= 0:
        return
    y = y.astype(np.float64)
    center = float(w @ y) / total
    spread = float(w @ np.abs(y - center))
    check_target_spread(spread, limit, name, center, spread / total, max_offset)


def check_target_spread(
    spread, limit, name, center=0.0, deviation=None, max_offset=None
) -> None:
    """Refuse a target spread ``Σ w |y - mean(y)|`` beyond ``limit`` (see above).

    And, where the reader gives ``max_offset``, a mean ``center`` more than
    that many times the mean absolute deviation ``deviation`` from it: a
    float32 margin that large rounds the trees' small steps away. The Dask
    engine computes these on the cluster and calls this.
    """
    if (
        max_offset is not None
        and deviation is not None
        and np.isfinite(center)
        # One value (to float64 rounding) has no steps to lose.
        and deviation > 1e-12 * abs(center)
        and abs(center) > max_offset * deviation
    ):
        ratio = abs(center) / deviation
        raise ValueError(
            f"y's mean, {center:.6g}, is {ratio:.3g} times its mean absolute "
            f"deviation, beyond the {max_offset:g} times that float32 margins "
            f"hold ({name}): at that offset they round the trees' small steps "
            "away, the model no longer adds up and its scores are wrong. "
            "Subtract the mean (y - y.mean(): with squared error the trees do "
            "not depend on y's offset), or rescale y."
        )
    if limit is None:
        return
    if not np.isfinite(spread) or spread > limit:
        factor = (
            f"{10.0 ** int(np.ceil(np.log10(spread / limit)) + 3):.0e}"
            if np.isfinite(spread)
            else "a large power of ten"
        )
        raise ValueError(
            f"y is too large for {name}: its spread, the sum of |y - mean(y)| "
            f"(weighted), is {spread:.3g}, beyond the {limit:.3g} its float32 "
            "arithmetic holds, so it would fit noise and its scores would look "
            f"like findings. Rescale y, e.g. y / {factor}: the trees, and so the "
            "selection and p-values, do not depend on y's unit (the scores "
            "scale with its square)."
        )


# -- X: columns the boosters cannot take ---------------------------------------------
def _column_name(X, j: int) -> str:
    columns = getattr(X, "columns", None)
    return repr(str(columns[j])) if columns is not None else f"{j}"


def check_unique_columns(X) -> None:
    """Refuse a data frame whose column names repeat (the boosters refuse them).

    A column chosen by name would then be several columns, and the scores,
    one per name, could not say which of them a feature is.
    """
    columns = getattr(X, "columns", None)
    if columns is None or not hasattr(X, "shape") or not hasattr(columns, "duplicated"):
        return  # polars names are unique by construction
    repeated = columns[columns.duplicated()].unique().tolist()
    if repeated:
        raise ValueError(
            f"X has repeated column names {[str(c) for c in repeated[:5]]}; every "
            "feature needs a name of its own to be scored and selected. Rename "
            "them, e.g. X.columns = [f'{c}_{i}' for i, c in enumerate(X.columns)]."
        )


#: Largest magnitude a float32 holds: XGBoost stores X as float32, so a larger
#: value is an infinity to it.
FLOAT32_MAX = float(np.finfo(np.float32).max)


def check_no_infinity(X) -> None:
    """Refuse ±inf in X, and values beyond float32's range, naming where.

    XGBoost refuses infinite values with a C++ stack trace, and values beyond
    float32's range (|x| > 3.4e38) become infinite when it stores X as
    float32; the other boosters route them as very large numbers. NaN is
    what every booster treats as missing, so the message says how to turn
    one into the other. An ``xgboost.DMatrix`` is not looked into.
    """
    found = _first_infinity(X)
    if found is None:
        return
    j, row, n_columns = found
    more = f" and {n_columns - 1} more column(s)" if n_columns > 1 else ""
    raise ValueError(
        f"X contains infinite values, or values beyond float32's range "
        f"(|x| > 3.4e38, which XGBoost stores as infinite), in column "
        f"{_column_name(X, j)}{more} (first at row {row}, counted from 0). "
        "Boosters cannot split on them; rescale such a column, or replace the "
        "values with NaN, which boosters treat as missing: "
        "X.mask(X.abs() > 3.4e38) for a pandas frame, "
        "np.where(np.abs(X) > 3.4e38, np.nan, X) for an array."
    )


def beyond_float32(values):
    """Mask of ±inf and of finite values too large for float32 (NaN: False)."""
    with np.errstate(invalid="ignore"):
        return np.abs(values) > FLOAT32_MAX


def _first_infinity(X):
    """(column, row, number of columns) of the first ±inf in X, or None."""
    if hasattr(X, "tocsr") or hasattr(X, "tocoo"):  # scipy sparse
        coo = X.tocoo()
        bad = beyond_float32(coo.data) if coo.data.dtype.kind == "f" else None
        if bad is None or not bad.any():
            return None
        columns = np.unique(coo.col[bad])
        rows = coo.row[bad][coo.col[bad] == columns[0]]
        return int(columns[0]), int(rows.min()), columns.size
    if callable(getattr(X, "num_row", None)):  # xgboost.DMatrix
        return None
    if hasattr(X, "columns") and hasattr(X, "shape"):  # pandas or polars
        hits = []
        for j in range(len(X.columns)):
            column = X.iloc[:, j] if hasattr(X, "iloc") else X.to_series(j)
            values = _float_values(column)
            if values is not None:
                bad = np.flatnonzero(beyond_float32(values))
                if bad.size:
                    hits.append((j, int(bad[0])))
        if not hits:
            return None
        return hits[0][0], hits[0][1], len(hits)
    values = np.asarray(X)
    if values.dtype.kind == "O":  # objects the booster will read as numbers
        try:
            values = values.astype(np.float64)
        except (TypeError, ValueError):
            return None  # not numbers: check_object_array says which
    if values.dtype.kind != "f" or values.ndim != 2:
        return None
    bad = beyond_float32(values)
    columns = np.flatnonzero(bad.any(axis=0))
    if columns.size == 0:
        return None
    return int(columns[0]), int(np.flatnonzero(bad[:, columns[0]])[0]), columns.size


def _float_values(column):
    """Return a data-frame column's values as a float array (None: not float)."""
    dtype = column.dtype
    kind = getattr(dtype, "kind", None)
    if kind is None:  # polars
        if not dtype.is_float():
            return None
        return column.to_numpy()
    if kind != "f":
        return None
    return column.to_numpy(dtype=np.float64, na_value=np.nan)


def check_frame_columns(X, *, text=False) -> None:
    """Refuse data-frame columns that no booster takes, saying how to convert them.

    Dates and times must become numbers; text must become a category (the
    boosters split on categories natively) unless ``text`` (CatBoost takes
    text columns declared in ``cat_features``). Numeric, boolean and
    categorical columns pass.
    """
    columns = getattr(X, "columns", None)
    if columns is None or not hasattr(X, "shape"):
        return
    for name in columns:
        dtype = X[name].dtype
        what = _unsupported_dtype(dtype)
        if what is None or (text and what == "text"):
            continue
        polars = getattr(dtype, "kind", None) is None
        if what == "durations":
            fix = (
                f"turn it into numbers, e.g. pl.col({str(name)!r}).dt.total_seconds()"
                if polars
                else f"turn it into numbers, e.g. X[{str(name)!r}].dt.total_seconds()"
            )
        elif what == "dates":
            fix = (
                f"turn it into numbers, e.g. pl.col({str(name)!r}).dt.epoch('d')"
                if polars
                else f"turn it into numbers, e.g. (X[{str(name)!r}] - "
                f"X[{str(name)!r}].min()).dt.days"
            )
        elif _holds_numbers(X[name], polars):
            what = "numbers stored as text or objects"
            fix = (
                f"turn it into numbers: pl.col({str(name)!r}).cast(pl.Float64)"
                if polars
                else f"turn it into numbers: X[{str(name)!r}] = "
                f"pd.to_numeric(X[{str(name)!r}])"
            )
        else:
            fix = (
                f"cast it to a category: pl.col({str(name)!r}).cast(pl.Categorical)"
                if polars
                else f"make it a category: X[{str(name)!r}].astype('category')"
            )
        raise ValueError(
            f"Column {str(name)!r} of X holds {what} ({dtype}), which the booster "
            f"cannot split on; {fix}, or drop the column."
        )


def _holds_numbers(column, polars) -> bool:
    """Whether every present value of a text or object column reads as a number.

    What a JSON or API load gives (``[None, 51.2, 48.0]`` as objects) or a
    number column stored as strings: such a column wants converting to
    numbers, not a category (a category of floats crashes XGBoost's fit and
    loses the order of the values).
    """
    present = column.drop_nulls() if polars else column.dropna()
    if len(present) == 0:
        return False
    if polars:
        import polars as pl

        try:
            present.cast(pl.Float64, strict=True)
        except Exception:  # polars raises its own InvalidOperationError
            return False
        return True
    import pandas as pd

    if pd.api.types.infer_dtype(present, skipna=True) == "boolean":
        return False
    try:
        pd.to_numeric(present)
    except (TypeError, ValueError):
        return False
    return True


def _unsupported_dtype(dtype) -> str | None:
    kind = getattr(dtype, "kind", None)
    if kind is None:  # polars
        if str(dtype).startswith("Duration"):
            return "durations"
        if dtype.is_temporal():
            return "dates"
        if dtype.is_numeric() or str(dtype) in ("Boolean", "Null"):
            return None
        if str(dtype).startswith(("Categorical", "Enum")):
            return None
        return "text" if str(dtype) in ("String", "Utf8") else f"{dtype} values"
    if kind == "m":
        return "durations"
    if kind == "M" or str(dtype).startswith("period"):
        return "dates"
    if kind in "OSU":
        return None if str(dtype) == "category" else "text"
    return None


def constant_columns(X) -> np.ndarray | None:
    """Mask of the columns of X that hold one value (NaN counts as a value).

    ``None`` where X cannot be looked into cheaply (a DMatrix).
    """
    if callable(getattr(X, "num_row", None)):
        return None
    if hasattr(X, "tocsc"):
        X = X.tocsc()
        lo = X.min(axis=0).toarray().ravel()
        hi = X.max(axis=0).toarray().ravel()
        return lo == hi
    if hasattr(X, "columns") and hasattr(X, "shape"):
        if hasattr(X, "nunique"):  # pandas
            return (X.nunique(dropna=False) <= 1).to_numpy()
        return np.array([X[name].n_unique() <= 1 for name in X.columns])
    values = np.asarray(X)
    if values.dtype.kind not in "biuf":
        try:
            return np.array([np.unique(column).size <= 1 for column in values.T])
        except TypeError:  # mixed objects: the booster will say what is wrong
            return None
    first = values[:1]
    same = (
        (values == first) | (np.isnan(values) & np.isnan(first))
        if values.dtype.kind == "f"
        else values == first
    )
    return same.all(axis=0)
