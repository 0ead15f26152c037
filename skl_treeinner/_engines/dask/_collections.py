"""TreeInner and PreDecomp on Dask collections: one task per row partition.

TreeInner is a sum over rows, so it is a map-reduce: each partition routes its
rows through the booster and sums the weighted residuals per leaf (PreDecomp,
a vector of n_nodes) or per boosting round and feature (TreeSHAP); the client
adds the partitions' sums and makes the scores with one product, exactly as
:func:`~skl_treeinner.tree_inner` does over its own chunks. Only those sums
travel back. Per-row outputs (``predecomp``, ``per_sample=True``) stay lazy Dask
arrays partitioned like X.

The model is read once on the client and the reader (the booster and its
ensemble) is sent to the workers once, as one object of the graph. Dask is an
optional dependency (``python -m pip install ".[dask]"``), imported by this
engine only. Each partition runs the shared primitives of
:mod:`skl_treeinner._scoring._sums`, as the in-memory engine runs them on its chunks.
"""

from __future__ import annotations

import sys

import numpy as np

from ..._scoring._noise import has_row_noise, terms_and_noise
from ..._scoring._permutation import column_terms
from ..._scoring._sums import (
    partial_sums,
    predecomp_rows,
    row_terms,
    scores_from_sums,
    shaped,
)
from ..._utils._optional import import_optional

__all__ = [
    "aligned",
    "dask_modules",
    "is_array",
    "is_dask_collection",
    "partition_scored",
    "partition_rows",
    "predecomp_dask",
    "row_partitions",
    "shared_object",
    "tree_inner_dask",
    "tree_reduce",
]

#: Partition sums added per task of the reduction tree on the workers.
_FAN_IN = 8


def is_dask_collection(obj) -> bool:
    """Whether ``obj`` is a Dask array, DataFrame or Series (Dask not imported)."""
    if obj is None or "dask" not in sys.modules:
        return False
    from dask import is_dask_collection as check

    return bool(check(obj))


def dask_modules(purpose):
    import_optional("dask", extra="dask", purpose=purpose)
    import dask
    import dask.array as da

    return dask, da


def is_array(obj) -> bool:
    return hasattr(obj, "chunks") and hasattr(obj, "ndim")


def row_partitions(obj, what):
    """Return a Dask collection's row partitions (delayed) and their lengths.

    Lengths are known for arrays (NaN for DataFrames, whose partitions Dask
    does not measure without computing). An array's blocks are taken without
    optimizing its graph: on dask 2024.12, a persisted array's optimized
    blocks reached the tasks they were passed to as their keys (a tuple),
    not as the blocks.
    """
    if obj is None:
        return None, None
    if not is_dask_collection(obj):
        raise TypeError(
            f"{what} must be a Dask collection too when X is one (got "
            f"{type(obj).__name__}); make it one with dask.array.from_array or "
            "dask.dataframe.from_pandas, partitioned like X."
        )
    if is_array(obj):
        if obj.ndim == 2:
            obj = obj.rechunk({1: -1})  # whole rows in every block
        blocks = obj.to_delayed(optimize_graph=False).ravel()
        return list(blocks), [float(c) for c in obj.chunks[0]]
    blocks = obj.to_delayed()
    return list(blocks), [float("nan")] * len(blocks)


#: Column names under which y and the weights travel with X's partitions.
_Y, _W = "__skl_treeinner_y__", "__skl_treeinner_w__"


def _check_kinds(X, y, w):
    for obj, what in ((y, "y"), (w, "sample_weight")):
        if obj is None:
            continue
        if not is_dask_collection(obj):
            raise TypeError(
                f"{what} must be a Dask collection too when X is one (got "
                f"{type(obj).__name__}); make it one with dask.array.from_array "
                "or dask.dataframe.from_pandas, partitioned like X."
            )
        if is_array(obj) != is_array(X):
            # Rows of a DataFrame and of an array are paired by position only,
            # and a DataFrame's partition lengths are unknown: refuse the mix.
            raise TypeError(
                f"X and {what} must both be Dask arrays or both Dask DataFrames/"
                f"Series (got {type(X).__name__} and {type(obj).__name__}): rows "
                "would be paired by position across partitions whose lengths are "
                "not known. Take both from one DataFrame, or both as arrays."
            )
        if not is_array(obj) and getattr(obj, "ndim", 1) != 1:
            raise TypeError(
                f"{what} must be a Dask Series, not a DataFrame; take one column."
            )


def _check_categories(X):
    """Refuse categorical columns whose categories Dask does not know."""
    import pandas as pd

    for name in X.columns:
        dtype = X._meta[name].dtype
        if isinstance(dtype, pd.CategoricalDtype) and not X[name].cat.known:
            raise ValueError(
                f"Column {name!r} of X is categorical, but its categories are not "
                "known (e.g. after .astype('category')), so every partition may "
                "encode them differently. Call X = X.categorize(columns="
                f"[{name!r}]) first."
            )


def _take_column(part, name):
    return part[name]


def _take_columns(part, names):
    return part[names]


def aligned(X, y, w):
    """X's, y's and the weights' row partitions (delayed), paired, and lengths.

    Arrays are paired by their row chunks, which must match. A DataFrame
    travels with y and the weights as columns of one frame (aligned by index,
    as Dask aligns them), so that its partitions stay paired whatever the
    graph optimiser does: taken apart, dask-expr may merge the partitions of a
    one-column y read from parquet but not X's.
    """
    _check_kinds(X, y, w)
    if not is_array(X):
        _check_categories(X)
        if y is None and w is None:
            parts, _ = row_partitions(X, "X")
            return (
                parts,
                [None] * len(parts),
                [None] * len(parts),
                [float("nan")] * len(parts),
            )
        import dask

        extra = {_Y: y} if y is not None else {}
        if w is not None:
            extra[_W] = w
        try:
            frame = X.assign(**extra)
        except (ValueError, NotImplementedError) as e:
            raise ValueError(
                "X, y and sample_weight must be partitioned alike (Dask cannot "
                f"align them: {e}). Take them from one DataFrame."
            ) from e
        parts = frame.to_delayed()
        columns = list(X.columns)
        x_parts = [dask.delayed(_take_columns)(p, columns) for p in parts]
        y_parts = [
            None if y is None else dask.delayed(_take_column)(p, _Y) for p in parts
        ]
        w_parts = [
            None if w is None else dask.delayed(_take_column)(p, _W) for p in parts
        ]
        return x_parts, y_parts, w_parts, [float("nan")] * len(parts)
    x_parts, lengths = row_partitions(X, "X")
    y_parts, y_lengths = row_partitions(y, "y")
    w_parts, w_lengths = row_partitions(w, "sample_weight")
    for parts, other, what in (
        (y_parts, y_lengths, "y"),
        (w_parts, w_lengths, "sample_weight"),
    ):
        if parts is None:
            continue
        same = all(a == b for a, b in zip(lengths, other, strict=False) if a == a)
        if len(parts) != len(x_parts) or not same:
            raise ValueError(
                f"X and {what} must be partitioned alike: X has {len(x_parts)} "
                f"partitions, {what} {len(parts)}"
                + ("" if same else ", of other lengths")
                + ". Rechunk one like the other (dask.array: "
                ".rechunk(X.chunks[0]))."
            )
    if w_parts is None:
        w_parts = [None] * len(x_parts)
    if y_parts is None:
        y_parts = [None] * len(x_parts)
    return x_parts, y_parts, w_parts, lengths


def _partition_sums(reader, X, y, w, attribution):
    """Map one partition to its per-leaf (PreDecomp) or per-round (TreeSHAP) sums."""
    if len(X) == 0:  # an empty partition (a filtered DataFrame) adds nothing
        return partial_sums(reader, X, None, None, attribution=attribution)
    X, n, y, w = reader.rows(X, y, w)
    return partial_sums(reader, X, y, w, attribution=attribution)


def _add(*parts):
    return np.sum(parts, axis=0)


def tree_reduce(dask, tasks, add=_add):
    """Compute delayed partial results, added on the workers ``_FAN_IN`` at a time.

    The client receives one result, whatever the rows and the partitions.
    """
    while len(tasks) > 1:
        tasks = [
            dask.delayed(add)(*tasks[i : i + _FAN_IN])
            for i in range(0, len(tasks), _FAN_IN)
        ]
    (total,) = dask.compute(tasks[0])
    return total


def partition_rows(reader, X, y, w, attribution):
    """One partition's per-row output.

    PreDecomp values (``attribution=None``, as ``predecomp`` returns them), or
    the per-row TreeInner terms with ``attribution``.
    """
    ens = reader.ensemble
    if len(X) == 0:
        k = ens.n_outputs
        wide = attribution is None and k > 1
        shape = (ens.n_features, k) if wide else (ens.n_features,)
        return np.zeros((0, *shape))
    if attribution is None:
        X, n, _, _ = reader.rows(X)
        return shaped(predecomp_rows(reader, X, n), ens, return_bias=False)
    X, n, y, w = reader.rows(X, y, w)
    return row_terms(reader, X, n, y, w, attribution=attribution)


def partition_scored(
    reader, X, y, w, attribution, feature_groups=None, *, resample_seed=None
):
    """Score a partition: its per-row TreeInner terms and their target noise.

    The rows pass ``reader.rows`` once for both. With ``feature_groups``
    (:class:`~skl_treeinner._stats._feature_groups.FeatureGroups`), also the groups'
    per-row sums and their noise: ``(z, noise, z_groups, noise_groups)``.
    With ``resample_seed`` (the test of a column), the tested values first
    (the terms less their mean with each column, or group, resampled among
    the partition's rows, :func:`~skl_treeinner._scoring._permutation.column_terms`),
    then the terms themselves without noise: ``(d, noise, [d_groups,
    noise_groups,] z, None[, z_groups, None])``.
    """
    ens = reader.ensemble
    sums = [None] if feature_groups is None else [None, feature_groups.sums]
    widths = [ens.n_features] + [s.n_to for s in sums[1:]]
    if len(X) == 0:
        noisy = has_row_noise(ens.objective)
        out = []
        for width in widths:
            noise = (np.zeros((0, width)), np.zeros(0), np.zeros(0)) if noisy else None
            out += [np.zeros((0, width)), noise]
        if resample_seed is not None:
            for width in widths:
                out += [np.zeros((0, width)), None]
        return tuple(out)
    X, n, y, w = reader.rows(X, y, w)
    if resample_seed is not None:
        got = column_terms(
            reader, X, n, y, w, attribution=attribution, into=None,
            feature_groups=feature_groups, seed=resample_seed,
        )  # fmt: skip
        if feature_groups is None:
            return got.tested, got.noise, got.terms, None
        return (
            got.tested, got.noise, got.group_tested, got.group_noise,
            got.terms, None, feature_groups.sums(got.terms), None,
        )  # fmt: skip
    z, noise = terms_and_noise(reader, X, n, y, w, attribution=attribution, sums=sums)
    if feature_groups is None:
        return z, noise[0]
    return z, noise[0], feature_groups.sums(z), noise[1]


def shared_object(dask, reader):
    # One graph object for all tasks. Not pure: hashing the reader for a
    # deterministic key would pickle it once more on every call.
    return dask.delayed(reader, pure=False)


def tree_inner_dask(
    reader, X, y, *, attribution, sample_weight, per_iteration=False, per_sample=False
):
    """:func:`~skl_treeinner.tree_inner` of Dask collections (see the module notes)."""
    dask, da = dask_modules("tree_inner on Dask collections")
    x_parts, y_parts, w_parts, lengths = aligned(X, y, sample_weight)
    shared = shared_object(dask, reader)
    ens = reader.ensemble
    if per_sample:
        blocks = [
            da.from_delayed(
                dask.delayed(partition_rows)(shared, xp, yp, wp, attribution),
                shape=(length, ens.n_features),
                dtype=np.float64,
            )
            for xp, yp, wp, length in zip(
                x_parts, y_parts, w_parts, lengths, strict=True
            )
        ]
        return da.concatenate(blocks, axis=0)
    tasks = [
        dask.delayed(_partition_sums)(shared, xp, yp, wp, attribution)
        for xp, yp, wp in zip(x_parts, y_parts, w_parts, strict=True)
    ]
    # The client gets one vector of n_nodes (or n_iterations x n_features)
    # floats, whatever the rows and the partitions.
    total = tree_reduce(dask, tasks)
    return scores_from_sums(
        ens, total, attribution=attribution, per_iteration=per_iteration
    )


def predecomp_dask(reader, X, *, return_bias):
    """:func:`~skl_treeinner.predecomp` of a Dask collection: a lazy Dask array."""
    dask, da = dask_modules("predecomp on Dask collections")
    x_parts, _, _, lengths = aligned(X, None, None)
    shared = shared_object(dask, reader)
    ens = reader.ensemble
    p, k = ens.n_features, ens.n_outputs
    shape = (p,) if k == 1 else (p, k)
    blocks = [
        da.from_delayed(
            dask.delayed(partition_rows)(shared, xp, None, None, None),
            shape=(length, *shape),
            dtype=np.float64,
        )
        for xp, length in zip(x_parts, lengths, strict=True)
    ]
    values = da.concatenate(blocks, axis=0)
    if not return_bias:
        return values
    return values, float(ens.bias[0]) if k == 1 else ens.bias
