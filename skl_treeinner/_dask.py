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
optional dependency (``pip install "skl-treeinner[dask]"``), imported here only.
"""

from __future__ import annotations

import sys

import numpy as np

from ._optional import import_optional

__all__ = ["is_dask_collection", "predecomp_dask", "tree_inner_dask"]


def is_dask_collection(obj) -> bool:
    """Whether ``obj`` is a Dask array, DataFrame or Series (Dask not imported)."""
    if obj is None or "dask" not in sys.modules:
        return False
    from dask import is_dask_collection as check

    return bool(check(obj))


def _dask(purpose):
    import_optional("dask", extra="dask", purpose=purpose)
    import dask
    import dask.array as da

    return dask, da


def _partitions(obj, what):
    """Return a Dask collection's row partitions (delayed) and their lengths.

    Lengths are known for arrays (NaN for DataFrames, whose partitions Dask
    does not measure without computing).
    """
    if obj is None:
        return None, None
    if not is_dask_collection(obj):
        raise TypeError(
            f"{what} must be a Dask collection too when X is one (got "
            f"{type(obj).__name__}); make it one with dask.array.from_array or "
            "dask.dataframe.from_pandas, partitioned like X."
        )
    if hasattr(obj, "chunks") and hasattr(obj, "ndim"):  # dask.array
        if obj.ndim == 2:
            obj = obj.rechunk({1: -1})  # whole rows in every block
        blocks = obj.to_delayed().ravel()
        return list(blocks), [float(c) for c in obj.chunks[0]]
    blocks = obj.to_delayed()
    return list(blocks), [float("nan")] * len(blocks)


def _aligned(X, y, w):
    x_parts, lengths = _partitions(X, "X")
    y_parts, y_lengths = _partitions(y, "y")
    w_parts, w_lengths = _partitions(w, "sample_weight")
    for parts, other, what in ((y_parts, y_lengths, "y"), (w_parts, w_lengths, "w")):
        if parts is None:
            continue
        known = [a == b for a, b in zip(lengths, other, strict=False) if a == a]
        if len(parts) != len(x_parts) or not all(known):
            raise ValueError(
                f"X and {what} must be partitioned alike: X has {len(x_parts)} "
                f"partitions, {what} {len(parts)}"
                + ("" if all(known) else ", of other lengths")
                + ". Rechunk one like the other (dask.array: .rechunk(X.chunks[0]); "
                "dask.dataframe: take both from one DataFrame)."
            )
    if w_parts is None:
        w_parts = [None] * len(x_parts)
    if y_parts is None:
        y_parts = [None] * len(x_parts)
    return x_parts, y_parts, w_parts, lengths


def _partition_sums(reader, X, y, w, attribution):
    """Map one partition to its per-leaf (PreDecomp) or per-round (TreeSHAP) sums."""
    from ._tree_inner import _tree_inner_treeshap, leaf_residual_sums

    ens = reader.ensemble
    X, n, y, w = reader.rows(X, y, w)
    if attribution == "treeshap":
        if n == 0:
            return np.zeros((ens.n_iterations, ens.n_features))
        return _tree_inner_treeshap(reader, X, y, w, per_iteration=True)
    if n == 0:
        return np.zeros(ens.n_nodes)
    return leaf_residual_sums(reader, X, y, w)


def _partition_rows(reader, X, y, w, what):
    """One partition's per-row output: PreDecomp values or per-row TreeInner terms."""
    from ._attribution import _predecomp_rows
    from ._tree_inner import _tree_inner_predecomp_rows, _tree_inner_treeshap

    if what == "predecomp":
        from ._attribution import _shaped

        X, n, _, _ = reader.rows(X)
        return _shaped(_predecomp_rows(reader, X, n), reader.ensemble, False)
    X, n, y, w = reader.rows(X, y, w)
    if what == "treeshap":
        return _tree_inner_treeshap(reader, X, y, w, per_sample=True)
    return _tree_inner_predecomp_rows(reader, X, n, y, w)


def tree_inner_dask(
    reader, X, y, *, attribution, sample_weight, per_iteration, per_sample
):
    """:func:`~skl_treeinner.tree_inner` of Dask collections (see the module notes)."""
    dask, da = _dask("tree_inner on Dask collections")
    x_parts, y_parts, w_parts, lengths = _aligned(X, y, sample_weight)
    shared = dask.delayed(reader, pure=True)
    ens = reader.ensemble
    if per_sample:
        what = "treeshap" if attribution == "treeshap" else "per_sample"
        blocks = [
            da.from_delayed(
                dask.delayed(_partition_rows)(shared, xp, yp, wp, what),
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
    # Only the sums come back: n_nodes (or n_iterations x n_features) floats
    # per partition, whatever its rows.
    total = np.sum(dask.compute(*tasks), axis=0)
    if attribution == "treeshap":
        return total if per_iteration else total.sum(axis=0)
    from ._tree_inner import scores_from_leaf_sums

    return scores_from_leaf_sums(ens, total, per_iteration)


def predecomp_dask(reader, X, *, return_bias):
    """:func:`~skl_treeinner.predecomp` of a Dask collection: a lazy Dask array."""
    dask, da = _dask("predecomp on Dask collections")
    x_parts, _, _, lengths = _aligned(X, None, None)
    shared = dask.delayed(reader, pure=True)
    ens = reader.ensemble
    p, k = ens.n_features, ens.n_outputs
    shape = (p,) if k == 1 else (p, k)
    blocks = [
        da.from_delayed(
            dask.delayed(_partition_rows)(shared, xp, None, None, "predecomp"),
            shape=(length, *shape),
            dtype=np.float64,
        )
        for xp, length in zip(x_parts, lengths, strict=True)
    ]
    values = da.concatenate(blocks, axis=0)
    if not return_bias:
        return values
    return values, float(ens.bias[0]) if k == 1 else ens.bias
