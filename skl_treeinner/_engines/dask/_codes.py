"""Which split holds out each row of a Dask collection, drawn inside every task.

The in-memory engine indexes rows; a Dask collection has no cheap row index,
so the rows are *labelled* instead (:class:`Codes`); see the notes of
:mod:`skl_treeinner._engines.dask._fit`. Here: the codes, the aligned
partitions they are drawn on (:class:`Rows`), the small table of rows per
split, role and class that is checked as the in-memory splitters check their
splits, and the lazy collections of one split's rows.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils import _safe_indexing

from .._plan import MIN_SCORING_ROWS, MIN_SPLIT_ROWS
from ._collections import aligned, is_array, row_partitions, tree_reduce

__all__ = ["ROLES", "Codes", "Rows", "check_rows", "class_labels", "rows_of", "summary"]


def _strata(values, stratify):
    if not stratify:
        return [np.arange(values.shape[0])]
    return [np.flatnonzero(values == v) for v in np.unique(values)]


def _share(rng, rows, fraction):
    """About ``fraction`` of ``rows``, drawn at random, rounded at random."""
    count = int(np.floor(fraction * rows.size + rng.random()))
    return rows[rng.permutation(rows.size)[:count]]


#: The rows of split j a task may take: fitted on, stopped early on, held
#: out; and the same of the refit curve's inner split of j's training rows.
ROLES = ("fit", "stop", "held-out", "inner-fit", "inner-stop", "inner-held-out")


class Codes:
    """Which split holds out each row of one partition, and which rows stop early.

    ``fold[i]``: the split that scores row i (``cv=k``: k folds of about
    equal size; ``n_folds=None``: fold 0, about ``held_out_fraction`` of the rows,
    is held out and fold 1 fitted on). ``stopping(j)``: the rows split j sets
    aside from its training part for early stopping, about ``es_fraction`` of
    them, drawn for each split on its own (as the in-memory selector does).
    Every draw comes from a generator seeded by ``(seed, partition number)``
    (and the split), within each stratum (class, or all rows), with counts
    rounded at random so that every fold gets its share in expectation
    however small the partitions.
    """

    def __init__(
        self,
        y,
        number,
        *,
        seed,
        n_folds,
        held_out_fraction,
        es_fraction,
        stratify,
        chained=False,
    ):
        values = np.asarray(y)
        rng = np.random.default_rng([seed, number])
        self.fold = np.ones(values.shape[0], dtype=np.int64)
        for rows in _strata(values, stratify):
            rows = rows[rng.permutation(rows.size)]
            if n_folds:
                self.fold[rows] = (
                    np.arange(rows.size) + rng.integers(n_folds)
                ) % n_folds
            else:
                self.fold[_share(rng, rows, held_out_fraction)] = 0
        self._values, self._stratify, self._chained = values, stratify, chained
        self._seed, self._number, self._es_fraction = seed, number, es_fraction

    def training(self, j) -> np.ndarray:
        """Boolean mask of split j's training part (before early stopping).

        Every fold but j; chained (``chained=True``, the test of a column):
        folds 0..j, split j holding out fold j + 1.
        """
        return self.fold <= j if self._chained else self.fold != j

    def held_out(self, n_splits) -> np.ndarray:
        """Boolean mask of the rows some split of ``n_splits`` holds out."""
        if self._chained:
            return (self.fold >= 1) & (self.fold <= n_splits)
        return self.fold < n_splits

    @property
    def number(self) -> int:
        """The partition's number (what its draws are seeded with)."""
        return self._number

    def ranked(self, j) -> np.ndarray:
        """Boolean mask of split j's training rows its refit curve ranks on.

        About half of them in each stratum, drawn for each split on its own;
        the other half (less its early-stopping rows) is fitted on. See
        :mod:`skl_treeinner._stats._refit_curve`.
        """
        mask = np.zeros(self.fold.shape[0], dtype=bool)
        rng = np.random.default_rng([self._seed, self._number, j + 1, 1])
        training = self.training(j)
        for rows in _strata(self._values, self._stratify):
            mask[_share(rng, rows[training[rows]], 0.5)] = True
        return mask

    def role(self, j, role: str) -> np.ndarray:
        """Boolean mask of split j's rows of a :data:`ROLES` role."""
        if role == "held-out":
            return self.fold == (j + 1 if self._chained else j)
        training = self.training(j)
        stopping = self.stopping(j)
        if role.startswith("inner-"):
            ranked = self.ranked(j)
            if role == "inner-held-out":
                return training & ranked
            training &= ~ranked
            role = role[len("inner-") :]
        if role == "stop":
            return training & stopping
        if role == "fit":
            return training & ~stopping
        raise ValueError(f"role={role!r} is not one of {ROLES}.")

    def stopping(self, j) -> np.ndarray:
        """Boolean mask of the rows split j stops early on."""
        mask = np.zeros(self.fold.shape[0], dtype=bool)
        if not self._es_fraction:
            return mask
        rng = np.random.default_rng([self._seed, self._number, j + 1])
        training = self.training(j)
        for rows in _strata(self._values, self._stratify):
            mask[_share(rng, rows[training[rows]], self._es_fraction)] = True
        return mask


class Rows:
    """X, y and the weights as aligned partitions, and how to code their rows.

    ``labels``: the sorted class labels when y is encoded to 0..K-1 (a
    classifier the selector fits), else ``None``. ``draw``: the keyword
    arguments of :class:`Codes` but the partition's number.
    """

    def __init__(self, X, y, w, *, labels, draw):
        self.X, self.y, self.w = X, y, w
        self.x_parts, self.y_parts, self.w_parts, _ = aligned(X, y, w)
        self.labels, self.draw = labels, draw

    def tasks(self, dask, func, *args):
        """One delayed ``func(X, y, w, codes, *args)`` per partition.

        y is encoded and the codes drawn inside the task, from the partition
        and its number (see the module notes).
        """
        return [
            dask.delayed(_with_codes)(
                func, xp, yp, wp, *args, number=i, labels=self.labels, draw=self.draw
            )
            for i, (xp, yp, wp) in enumerate(
                zip(self.x_parts, self.y_parts, self.w_parts, strict=True)
            )
        ]


def _with_codes(func, X, y, w, *args, number, labels, draw):
    if len(y) != len(X) or (w is not None and len(w) != len(X)):
        raise ValueError(
            f"Partition {number} holds {len(X)} rows of X but {len(y)} of y"
            + ("" if w is None else f" and {len(w)} of sample_weight")
            + "; X, y and sample_weight must be partitioned alike (take them "
            "from one DataFrame, or rechunk the arrays alike)."
        )
    if labels is not None:
        index = np.searchsorted(labels, np.asarray(y)).astype(np.int64)
        if hasattr(y, "index"):  # a pandas Series keeps its index and name
            index = type(y)(index, index=y.index, name=y.name)
        y = index
    return func(X, y, w, Codes(y, number, **draw), *args)


def _unique(*parts):
    """Sorted distinct labels of partitions of y; missing labels are refused."""
    values = [np.asarray(p) for p in parts]
    for v in values:
        if v.dtype.kind in "fc":
            missing = int(np.isnan(v).sum())
        elif v.dtype.kind == "O":
            import pandas as pd  # a Dask DataFrame's dependency

            missing = int(pd.isna(v).sum())
        else:
            missing = 0
        if missing:
            raise ValueError(
                f"y contains {missing} missing class label(s) (NaN or None); "
                "drop those rows or give them a label before fitting."
            )
    return np.unique(np.concatenate([np.unique(v) for v in values]))


def class_labels(dask, y):
    """Return y's sorted class labels: unique per partition, merged on workers."""
    parts, _ = row_partitions(y, "y")
    return tree_reduce(dask, [dask.delayed(_unique)(p) for p in parts], _unique)


def _partition_summary(X, y, w, codes, n_classes, n_splits):
    """Rows per split, role and class; scored rows of nonzero weight; bad values.

    Roles: 0 held out, 1 fitted on, 2 set aside for early stopping. Rows of a
    fold beyond ``n_splits`` (``cv=None``'s training fold) are only fitted on;
    chained folds count a split's earlier folds and its held-out one only.
    """
    y = np.asarray(y)
    cls = y.astype(np.int64) if n_classes > 1 else np.zeros(y.shape[0], np.int64)
    counts = np.zeros((n_splits, 3, n_classes), dtype=np.int64)
    for j in range(n_splits):
        held_out = codes.role(j, "held-out")
        role = np.where(held_out, 0, np.where(codes.stopping(j), 2, 1))
        used = held_out | codes.training(j)  # chained folds leave the later ones out
        np.add.at(counts[j], (role[used], cls[used]), 1)
    bad_y = int(np.count_nonzero(~np.isfinite(y))) if y.dtype.kind in "fc" else 0
    held = codes.held_out(n_splits)
    if w is None:
        return counts, int(held.sum()), bad_y, 0
    w = np.asarray(w, dtype=np.float64)
    bad_w = int(np.count_nonzero(~np.isfinite(w) | (w < 0)))
    return counts, int((held & (w != 0)).sum()), bad_y, bad_w


def _add_summaries(*parts):
    return tuple(np.sum([p[i] for p in parts], axis=0) for i in range(len(parts[0])))


def summary(dask, rows, n_classes, n_splits):
    """Rows per split, role and class over all partitions, reduced on the workers.

    Returns ``(counts, scored, bad_y, bad_w)``: see :func:`_partition_summary`.
    """
    return tree_reduce(
        dask,
        rows.tasks(dask, _partition_summary, n_classes, n_splits),
        _add_summaries,
    )


def check_rows(counts, scored, *, labels, what, prefit=False):
    """Refuse splits the in-memory selector would refuse, from the row table.

    ``counts`` has shape (n_splits, 3, n_classes): rows per split, role (held
    out, fitted on, stopping early) and class; ``scored``: held-out rows of
    nonzero weight, over all splits.
    """
    classifier = labels is not None
    if classifier:
        single = np.flatnonzero(counts[0].sum(axis=0) < 2)
        if single.size:
            raise ValueError(
                f"Cannot split the rows as {what} asks: class(es) "
                f"{labels[single][:5].tolist()} have fewer than 2 rows, and "
                "every class needs a row to fit on and one to score on. Drop or "
                "merge the rarest classes."
            )
    for j, (held_out, fit, _) in enumerate(counts):
        if held_out.sum() < MIN_SPLIT_ROWS:
            raise ValueError(
                f"Split {j} would score on {int(held_out.sum())} held-out row(s); "
                f"each split needs at least {MIN_SPLIT_ROWS}. Pass more rows, a "
                "larger validation_fraction, or fewer splits."
            )
        if prefit:  # nothing is fitted: only the held-out rows count
            continue
        if fit.sum() == 0:
            raise ValueError(
                f"Split {j} has no rows to fit on; pass more rows or fewer splits."
            )
        if not classifier:
            continue
        if np.count_nonzero(held_out) < 2:
            raise ValueError(
                f"The held-out rows of split {j} hold a single class, so "
                "TreeInner cannot tell features apart on them. Pass more rows "
                "per class, or fewer splits."
            )
        missing = np.flatnonzero(fit == 0)
        if missing.size:
            raise ValueError(
                f"The training rows of split {j} lack the classes "
                f"{labels[missing][:5].tolist()}; the booster must see every "
                "class. Pass more rows per class, fewer splits, or turn early "
                "stopping off."
            )
    if scored < MIN_SCORING_ROWS:
        raise ValueError(
            f"The scores would come from {scored} held-out row(s) of nonzero "
            f"weight; TreeInner needs at least {MIN_SCORING_ROWS}. Pass more "
            "rows, a larger validation_fraction, or fewer rows of zero weight."
        )


def _take(X, y, w, codes, j, role):
    """Take the rows of a partition that split j uses in a :data:`ROLES` role."""
    rows = np.flatnonzero(codes.role(j, role))
    take = None if w is None else _safe_indexing(w, rows)
    return _safe_indexing(X, rows), _safe_indexing(y, rows), take


def _meta_of(obj, encoded=False):
    """Return an empty in-memory object of a collection's kind (:func:`_collection`)."""
    if encoded:  # y as class indices
        if is_array(obj):
            return np.empty(0, dtype=np.int64)
        return obj._meta.astype(np.int64)
    if is_array(obj):
        return np.empty((0, *obj.shape[1:]), dtype=obj.dtype)
    return obj._meta


def _collection(parts, like):
    """Build a lazy collection of ``like``'s kind from parts of unknown length."""
    if isinstance(like, np.ndarray):
        import dask.array as da

        shape = (np.nan, *like.shape[1:])
        return da.concatenate(
            [da.from_delayed(p, shape=shape, dtype=like.dtype) for p in parts]
        )
    import dask.dataframe as dd

    return dd.from_delayed(parts, meta=like, verify_meta=False)


def rows_of(dask, rows, j, role):
    """Lazy X, y and weights of split j's rows of a :data:`ROLES` role."""
    taken = rows.tasks(dask, _take, j, role)
    X = _collection([t[0] for t in taken], _meta_of(rows.X))
    y = _collection([t[1] for t in taken], _meta_of(rows.y, rows.labels is not None))
    w = None if rows.w is None else _collection([t[2] for t in taken], _meta_of(rows.w))
    return X, y, w
