"""Which input column is behind each column a Pipeline's booster sees.

The selector scores and selects the columns of the X it is given. When the
estimator is a :class:`~sklearn.pipeline.Pipeline`, the booster sees the
output of the earlier steps: the same columns (imputers, scalers,
``OrdinalEncoder``), or more (``OneHotEncoder``: one column per category,
``SplineTransformer``: one per spline, a ``ColumnTransformer`` holding them).
TreeInner adds over features (paper 000, Eq. 21), so an input column's
per-row terms are the sums of its output columns' terms: it is scored,
tested and selected as the group of its output columns.

The map is read from the fitted steps' own attributes, never by parsing
output names where an attribute says it: ``OneHotEncoder``'s categories,
dropped and infrequent categories; ``SplineTransformer``'s
``n_features_out_``; ``ColumnTransformer``'s ``output_indices_`` and the
input columns of each transformer; nested pipelines step by step. Any other
step must keep one column per input column; its output names (where it has
them) place each output column on its input column.
"""

from __future__ import annotations

import numpy as np
from sklearn.compose import ColumnTransformer
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, SplineTransformer

from .._stats._feature_groups import ColumnSums

__all__ = ["input_columns"]

_EXPANDING = (
    "OneHotEncoder, SplineTransformer, and ColumnTransformer or Pipeline holding them"
)


class _Unmapped(ValueError):
    """A step whose output columns do not each come from one input column."""


def _names_out(step):
    try:
        return [str(n) for n in step.get_feature_names_out()]
    except (AttributeError, NotFittedError, ValueError, TypeError):
        return None


def _one_hot(step, n_in):
    counts = []
    infrequent = getattr(step, "infrequent_categories_", None)
    drop = getattr(step, "drop_idx_", None)
    for i, categories in enumerate(step.categories_):
        count = len(categories)
        if infrequent is not None and infrequent[i] is not None:
            count -= len(infrequent[i]) - 1  # all of them into one column
        if drop is not None and drop[i] is not None:
            count -= 1
        counts.append(count)
    if len(counts) != n_in:
        raise _Unmapped(f"{type(step).__name__} was fitted on {len(counts)} columns")
    return np.repeat(np.arange(n_in), counts)


def _splines(step, n_in):
    n_out = int(step.n_features_out_)
    if n_out % n_in:
        raise _Unmapped(f"SplineTransformer gives {n_out} columns for {n_in}")
    return np.repeat(np.arange(n_in), n_out // n_in)


def _column_transformer(step, n_in, names_in):
    n_out = sum(s.stop - s.start for s in step.output_indices_.values())
    index = np.full(n_out, -1, dtype=np.int64)
    inputs = step._transformer_to_input_indices  # resolved columns, every transformer
    for name, transformer, _ in step.transformers_:
        out = step.output_indices_.get(name, slice(0, 0))
        if out.stop == out.start or transformer == "drop":
            continue
        cols = np.asarray(inputs[name], dtype=np.int64)
        if transformer == "passthrough":
            sub = np.arange(cols.size)
        else:
            sub_names = None if names_in is None else [names_in[c] for c in cols]
            sub = _step_index(transformer, cols.size, sub_names)
        if sub.size != out.stop - out.start:
            raise _Unmapped(
                f"transformer {name!r} gives {out.stop - out.start} columns, "
                f"mapped {sub.size}"
            )
        index[out] = cols[sub]
    return index


def _pipeline(step, n_in, names_in):
    index = np.arange(n_in)
    names = names_in
    for _, sub in step.steps:
        if sub is None or sub == "passthrough":
            continue
        inner = _step_index(sub, index.size, names)
        index = index[inner]
        names = _names_out(sub)
    return index


def _one_to_one(step, n_in, names_in):
    names_out = _names_out(step)
    if names_out is None:
        n_out = getattr(step, "n_features_out_", n_in)
        if n_out != n_in:
            raise _Unmapped(f"{n_out} columns without names")
        return np.arange(n_in)
    defaults = [f"x{i}" for i in range(n_in)]
    for names in (names_in, defaults):  # the step may have seen bare columns
        if names is None:
            continue
        position = {str(name): i for i, name in enumerate(names)}
        index = np.asarray([position.get(n, -1) for n in names_out], dtype=np.int64)
        if index.size == n_in and np.array_equal(np.sort(index), np.arange(n_in)):
            return index
    shown = f"{names_out[:6]}{'...' if len(names_out) > 6 else ''}"
    raise _Unmapped(f"columns {shown}")


def _step_index(step, n_in, names_in):
    """For a fitted step on ``n_in`` columns: the input column of each output."""
    seen = getattr(step, "n_features_in_", None)
    if seen is not None and seen != n_in:
        raise _Unmapped(
            f"{type(step).__name__} was fitted on {seen} columns where {n_in} "
            "reach it (a step before it changed their number without saying how)"
        )
    if isinstance(step, OneHotEncoder):
        return _one_hot(step, n_in)
    if isinstance(step, SplineTransformer):
        return _splines(step, n_in)
    if isinstance(step, ColumnTransformer):
        return _column_transformer(step, n_in, names_in)
    if isinstance(step, Pipeline):
        return _pipeline(step, n_in, names_in)
    try:
        return _one_to_one(step, n_in, names_in)
    except _Unmapped as e:
        raise _Unmapped(f"{type(step).__name__} turns {n_in} columns into {e}") from e


def input_columns(pre, n_out: int, n_in: int, names_in) -> ColumnSums:
    """Map the ``n_out`` columns the booster sees back to the ``n_in`` input columns.

    Parameters
    ----------
    pre : Pipeline
        The fitted steps before the booster.
    n_out : int
        The booster's number of columns.
    n_in : int
        The selector's input columns.
    names_in : array-like of str or None
        Their names, if any.

    Returns
    -------
    ColumnSums
        Output columns into input columns: placed where one-to-one, summed
        where an input column became several.

    Raises
    ------
    ValueError
        Where an output column does not come from exactly one input column
        (``PolynomialFeatures``, PCA, a transformer of several columns into
        one), naming the step and what to do.
    """
    names = None if names_in is None else [str(n) for n in names_in]
    try:
        index = _pipeline(pre, n_in, names)
        if index.size != n_out or (index < 0).any():
            raise _Unmapped(f"{index.size} columns, but the booster has {n_out}")
    except _Unmapped as e:
        raise ValueError(
            f"The Pipeline's steps before the booster turn the {n_in} input "
            f"features into columns that do not each come from one input feature "
            f"({e}). TreeInnerSelector scores and selects input features: the "
            f"steps must keep one column per feature (imputers, scalers, "
            f"OrdinalEncoder) or expand a feature into columns of its own "
            f"({_EXPANDING}), whose scores are added back into it. Select on the "
            "transformed data otherwise."
        ) from e
    return ColumnSums(index, n_in)
