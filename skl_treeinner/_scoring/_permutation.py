"""Held-out randomization: each unit's terms with its values drawn from other rows.

The selector's test of a column (``test="column"``) compares, row by row,
the column's TreeInner term (Eq. 21, per row) with the same model's term
for the same row after the column's value was replaced by another held-out
row's, which keeps the column's distribution and breaks its tie to the row's
target and other columns (Tansey et al.'s holdout randomization test with a
permutation as the sampler). If the column is independent of y and of the
other columns, the two terms have the same expectation, whatever the model
does with the column; the test is of their per-row differences. A unit is a
column, or several columns drawn together (a feature group, a Pipeline's
columns of one input column).

:func:`resampled_terms` computes the resampled terms: with the compiled
kernels only the trees that can change are walked again, by the library's
split rule, checked against the booster's own leaves (PreDecomp:
:mod:`skl_treeinner._kernels.cpu._permute`, the trees whose path for the row tests
the unit; TreeSHAP: :mod:`skl_treeinner._kernels.cpu._permute_shap`, the trees that
split on the unit anywhere); otherwise (no numba, categorical splits,
sparse or polars rows, CatBoost's symmetric trees) the booster scores the
rows again with each unit's values drawn, one pass per unit and draw.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import sparse

from .._kernels._backend import backend_for
from .._kernels._structures import Block, Units, kernel_rows
from ._noise import noise_of_channels, noise_targets
from ._sums import HeldOutTerms, final_margins, row_terms, treeshap_terms_of

__all__ = [
    "DRAWS",
    "column_terms",
    "draw_sources",
    "resampled_terms",
    "unit_trees",
]

#: A kernel's status when a row's leaf by the split rule is not the booster's
#: (``_kernels.cpu._permute.MISROUTED`` and ``_kernels.cpu._permute_shap``'s, without
#: importing numba here).
MISROUTED = 2

#: Draws per held-out row: each row's resampled term is the mean of this
#: many; more draws shrink the share of the draws' own chance in the test's
#: spread (docs/core.md, "The test of a column").
DRAWS = 3


def draw_sources(n, draws, seed) -> np.ndarray:
    """(draws, n) permutations of the n held-out rows: who lends row i its values."""
    rng = np.random.default_rng(seed)
    return np.vstack([rng.permutation(n) for _ in range(draws)]).astype(np.int64)


def unit_trees(ens, unit_of, n_units):
    """Return the trees that split on each unit, in boosting order, as CSR arrays.

    ``unit_of[k]`` is model column k's unit (-1: none). Returns ``(ptr,
    trees)``: unit u's trees are ``trees[ptr[u]:ptr[u + 1]]``.
    """
    inner = ens.feature >= 0
    unit = np.asarray(unit_of, dtype=np.int64)[ens.feature[inner]]
    tree = ens.node_tree[inner]
    keep = unit >= 0
    pairs = np.unique(unit[keep] * ens.n_trees + tree[keep])
    units, trees = np.divmod(pairs, ens.n_trees)
    ptr = np.zeros(n_units + 1, dtype=np.int64)
    np.add.at(ptr, units + 1, 1)
    return np.cumsum(ptr), trees.astype(np.int64)


def resampled_terms(
    reader, X, n, ys, w, *, attribution, unit_of, n_units, sources, own=None
):
    """Each row's term of each unit with the unit's values from ``sources``.

    Parameters
    ----------
    reader : ModelReader
    X : rows that passed ``reader.rows``
    n : int
        Their number.
    ys : list of ndarray of shape (n,)
        Targets (channels): the terms at each.
    w : ndarray of shape (n,) or None
    attribution : {"predecomp", "treeshap"}
    unit_of : ndarray of shape (n_model_columns,), int
        Each model column's unit, or -1.
    n_units : int
    sources : ndarray of shape (draws, n), int
        Draw b gives row i the unit's values of row ``sources[b, i]``.
    own : ndarray of shape (len(ys), n, n_units) or None
        The rows' own terms of each unit at each target, where the caller
        has them: a draw that lends a row its own values takes them as they
        are (the compiled kernel then walks only the draws that differ).

    Returns
    -------
    ndarray of shape (len(ys), n, n_units)
        The mean over draws of each row's term of each unit (its members'
        terms summed), at each target.
    """
    ptr, trees = unit_trees(reader.ensemble, unit_of, n_units)
    got = _compiled(
        reader, X, ys, w, attribution=attribution, unit_of=unit_of, ptr=ptr,
        trees=trees, sources=sources, own=own,
    )  # fmt: skip
    if got is not None:
        return got
    return _rescored(
        reader,
        X,
        n,
        ys,
        w,
        attribution=attribution,
        unit_of=unit_of,
        ptr=ptr,
        sources=sources,
    )


def _compiled(reader, X, ys, w, *, attribution, unit_of, ptr, trees, sources, own):
    """:func:`resampled_terms` by the compiled kernel, or None where it cannot."""
    kernels = backend_for(reader).cpu
    if kernels is None or not kernels.has_gradient:
        return None
    rule = reader.ensemble.split_rule
    if rule is None or rule.oblivious:
        return None
    rows = reader.treeshap_rows(X)
    if rows is None:
        return None
    rows = kernel_rows(rows)
    y = np.ascontiguousarray(np.vstack(ys), dtype=np.float64)
    n_units = ptr.size - 1
    out = np.zeros((y.shape[0], y.shape[1], n_units))
    weights = np.empty(0) if w is None else np.ascontiguousarray(w, dtype=np.float64)
    units = Units.of(unit_of, ptr, trees, reader.ensemble.n_trees)
    own = np.zeros((0, 0, 0)) if own is None else own
    own = np.ascontiguousarray(own, dtype=np.float64)
    sources = np.ascontiguousarray(sources, dtype=np.int64)
    kernel, ok = kernels.resampling(attribution, units)
    if kernel is None:
        return None
    every = Block(rows, 0, None, sources, y, weights, own, out)  # all the rows
    status = []
    for start, stop, _, leaves in reader.iter_leaves(X, scale=4):
        status += kernels.resample(kernel, every.part(start, stop, leaves))
    if any(s != ok for s in status):
        if MISROUTED not in status:  # a path too deep: screened out above
            return None
        warnings.warn(
            "The booster's split rule sent a row to another leaf than the "
            "booster's own routing; the column test's resampled rows were "
            "scored by the booster instead (slower, same numbers). Please "
            "report it to skl-treeinner with the library's version.",
            UserWarning,
            stacklevel=3,
        )
        return None
    return out


def _rescored(reader, X, n, ys, w, *, attribution, unit_of, ptr, sources):
    """:func:`resampled_terms` by scoring the rows again, per unit and draw."""
    n_units = ptr.size - 1
    out = np.zeros((len(ys), n, n_units))
    draws = sources.shape[0]
    for u in range(n_units):
        if ptr[u + 1] == ptr[u]:  # no tree splits on it: its terms are 0
            continue
        cols = np.flatnonzero(unit_of == u)
        for b in range(draws):
            X_b = _with_columns_from(X, cols, sources[b])
            for c, z in enumerate(terms_at(reader, X_b, n, ys, w, attribution)):
                out[c, :, u] += z[:, cols].sum(axis=1) / draws
    return out


def terms_at(reader, X, n, ys, w, attribution):
    """:func:`~skl_treeinner._scoring._sums.row_terms` at each target of ``ys``, a list.

    With TreeSHAP every target is a channel of one pass (each TreeSHAP value
    computed once: half the work for the two targets of the noise floor).
    """
    if attribution == "treeshap" and len(ys) > 1:
        return list(treeshap_terms_of(reader, X, ys, w, per_sample=True))
    return [row_terms(reader, X, n, y, w, attribution=attribution) for y in ys]


def _with_columns_from(X, cols, rows):
    """Return a copy of X whose columns ``cols`` hold the values of rows ``rows``."""
    if sparse.issparse(X):
        # Column by column, so that every other stored entry stays as it is
        # (an explicit 0 is a value, an absent entry missing, to XGBoost).
        fmt = X.format
        X = sparse.csc_matrix(X)
        moved = X[np.asarray(rows)]  # row indexing keeps every stored entry
        take = np.zeros(X.shape[1], dtype=bool)
        take[cols] = True
        # Each stored entry's column; X's entries of the other columns and the
        # moved rows' entries of ``cols``, put back in column order (a stable
        # sort keeps each column's entries as they were).
        col_x = np.repeat(np.arange(X.shape[1]), np.diff(X.indptr))
        col_m = np.repeat(np.arange(X.shape[1]), np.diff(moved.indptr))
        keep_x, keep_m = ~take[col_x], take[col_m]
        order = np.argsort(np.r_[col_x[keep_x], col_m[keep_m]], kind="stable")
        counts = np.where(take, np.diff(moved.indptr), np.diff(X.indptr))
        out = sparse.csc_matrix(
            (
                np.r_[X.data[keep_x], moved.data[keep_m]][order],
                np.r_[X.indices[keep_x], moved.indices[keep_m]][order],
                np.r_[0, np.cumsum(counts)],
            ),
            shape=X.shape,
        )
        return out.asformat(fmt)
    module = type(X).__module__
    if module.startswith("pandas"):
        out = X.copy()
        for c in cols:
            out.isetitem(int(c), X.iloc[rows, int(c)].set_axis(X.index))
        return out
    if module.startswith("polars"):
        names = [X.columns[int(c)] for c in cols]
        return X.with_columns([X.get_column(name).gather(rows) for name in names])
    if not hasattr(X, "shape"):
        raise TypeError(
            f"The column test cannot resample columns of {type(X).__name__}; "
            "pass the rows as an array or a DataFrame."
        )
    out = np.array(X, copy=True)
    out[:, cols] = np.asarray(X)[rows][:, cols]
    return out


def column_terms(reader, X, n, y, w, *, attribution, into, feature_groups, seed):
    """Each row's terms and their paired differences with the column resampled.

    Parameters
    ----------
    reader, X, n, y, w
        A read model and rows that passed ``reader.rows``.
    attribution : {"predecomp", "treeshap"}
    into : ColumnSums or None
        The model's columns into the input columns (a Pipeline's), or None.
    feature_groups : FeatureGroups or None
        The feature groups (their ``sums``: the input columns into groups),
        or None.
    seed : int, sequence of int or None
        Seeds the draws (:func:`draw_sources`).

    Returns
    -------
    HeldOutTerms
        Per input column (the Pipeline's output columns of one input column
        are drawn together), and per feature group (its members drawn
        together; a group of one column is that column).
    """
    ens = reader.ensemble
    ys = noise_targets(ens, y)
    at = terms_at(reader, X, n, ys, w, attribution)
    if into is not None:
        at = [into(z) for z in at]
    n_in = at[0].shape[1]
    column_of = np.arange(n_in) if into is None else into.index
    sources = draw_sources(n, DRAWS, seed)
    drawn = resampled_terms(
        reader, X, n, ys, w, attribution=attribution, unit_of=column_of,
        n_units=n_in, sources=sources, own=np.stack(at),
    )  # fmt: skip
    diffs = [z - drawn[c] for c, z in enumerate(at)]
    margins = final_margins(reader, X, n) if len(ys) > 1 else None
    noise = noise_of_channels(ens.objective, margins, ys, diffs)
    out = HeldOutTerms(at[0], noise, tested=diffs[0], null=drawn[0].sum(axis=0))
    if feature_groups is None:
        return out
    group_sums = feature_groups.sums
    # Groups of one column are that column; the others are drawn together.
    size = np.bincount(group_sums.index, minlength=group_sums.n_to)
    several = np.flatnonzero(size > 1)
    compact = np.full(group_sums.n_to, -1, dtype=np.int64)
    compact[several] = np.arange(several.size)
    own = np.stack([group_sums(z)[:, several] for z in at])
    joint = resampled_terms(
        reader, X, n, ys, w, attribution=attribution,
        unit_of=compact[group_sums.index[column_of]], n_units=several.size,
        sources=sources, own=own,
    )  # fmt: skip
    group_diffs = []
    for c, z in enumerate(at):
        null = group_sums(drawn[c])
        null[:, several] = joint[c]
        group_diffs.append(group_sums(z) - null)
    group_noise = noise_of_channels(ens.objective, margins, ys, group_diffs)
    return out._replace(group_tested=group_diffs[0], group_noise=group_noise)
