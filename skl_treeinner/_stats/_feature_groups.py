"""Feature groups: families of columns scored, tested and kept or dropped as one.

A one-hot encoded categorical, the lags of one series, a column with its
engineered twins: for a data scientist each is one decision. TreeInner is a
sum over features as well as over rows (paper 000, Eq. 21: the attribution of
a tree adds over features), so the score of a family is the sum of its
members' scores, and its per-row terms are the sums of theirs: the family's
standard error and test come from the same held-out rows at no extra fit.

This module holds what needs no engine: the user's ``feature_groups`` read
into column indices (:func:`resolve_feature_groups`, every column in no group
its own group), the linear map from columns to their sums
(:class:`ColumnSums`, also used to add a pipeline's output columns back into
its input columns), and the group tests that combine the members' own
p-values (:func:`combined_pvalues`). The per-row sums and their test are the
engines' (``_inference``), from the terms they already hold.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from numbers import Integral

import numpy as np
from scipy import sparse, stats

__all__ = [
    "ColumnSums",
    "FeatureGroups",
    "GROUP_TESTS",
    "cauchy_combination",
    "check_group_test",
    "group_statistics",
    "combined_pvalues",
    "resolve_feature_groups",
    "simes",
]

#: The group tests ``group_test`` may name, and what each tests. Chosen by
#: measurement (``benchmarks/feature_groups.py``; docs/how-it-works.md,
#: "Feature groups", has the numbers).
GROUP_TESTS = {
    "sum": (
        "one-sided t-test of the sum of the members' per-row terms: the "
        "family's own held-out score"
    ),
    "simes": "Simes' combination of the members' own p-values",
    "cauchy": "Cauchy combination (ACAT) of the members' own p-values",
    "sum+simes": (
        "Simes' combination of the two: the sum test's p-value and the "
        "members' Simes p-value"
    ),
}


class ColumnSums:
    """Add the columns of per-row values into fewer columns, linearly.

    ``index[j]`` is the column that column j is added into, out of
    ``n_to``. Where every target gets exactly one column (a permutation,
    or the identity), the values are placed, not summed, so that the numbers
    are bit for bit those of the columns themselves.
    """

    def __init__(self, index, n_to: int):
        self.index = np.asarray(index, dtype=np.int64)
        self.n_to = int(n_to)
        self.one_to_one = self.index.size == self.n_to and np.array_equal(
            np.sort(self.index), np.arange(self.n_to)
        )
        self._matrix = None

    @property
    def matrix(self):
        """The (n_from, n_to) 0/1 matrix of the map (sparse)."""
        if self._matrix is None:
            n_from = self.index.size
            self._matrix = sparse.csr_matrix(
                (np.ones(n_from), (np.arange(n_from), self.index)),
                shape=(n_from, self.n_to),
            )
        return self._matrix

    def __call__(self, values):
        """Sum ``values`` of shape (n, n_from) into shape (n, n_to)."""
        values = np.asarray(values, dtype=np.float64)
        if self.one_to_one:
            out = np.zeros((values.shape[0], self.n_to))
            out[:, self.index] = values
            return out
        return np.asarray(values @ self.matrix)

    def then(self, other: ColumnSums) -> ColumnSums:
        """Return the map that applies this one, then ``other``."""
        return ColumnSums(other.index[self.index], other.n_to)


class FeatureGroups:
    """Columns partitioned into named groups (a column in no group is its own).

    Attributes
    ----------
    names : list of str
        One per group, in the order of each group's first column.
    members : list of ndarray of int
        The column indices of each group, ascending.
    column_group : ndarray of shape (n_features,)
        The group of every column.
    sums : ColumnSums
        Columns into their groups.
    """

    def __init__(self, names, members, n_features: int):
        self.names = list(names)
        self.members = [np.asarray(m, dtype=np.int64) for m in members]
        self.column_group = np.empty(n_features, dtype=np.int64)
        for g, cols in enumerate(self.members):
            self.column_group[cols] = g
        self.sums = ColumnSums(self.column_group, len(self.names))

    @property
    def n_groups(self) -> int:
        """The number of groups, singletons included."""
        return len(self.names)

    def as_dict(self) -> dict:
        """``{name: column indices}``, the fitted ``groups_``."""
        pairs = zip(self.names, self.members, strict=True)
        return {name: cols.copy() for name, cols in pairs}

    def expand(self, group_mask) -> np.ndarray:
        """Return the column mask of the groups in ``group_mask`` (members together)."""
        return np.asarray(group_mask, dtype=bool)[self.column_group]

    def same_as(self, other) -> bool:
        """Whether ``other`` holds the same groups with the same names."""
        return (
            other is not None
            and self.names == other.names
            and all(
                np.array_equal(a, b)
                for a, b in zip(self.members, other.members, strict=True)
            )
        )


def _column_index(column, n_features, position, group_name):
    """Return the index of one column named in a group, or raise a clear error."""
    if isinstance(column, Integral) and not isinstance(column, bool):
        if not 0 <= int(column) < n_features:
            raise ValueError(
                f"feature_groups[{group_name!r}] names column {column}, but X "
                f"has {n_features} columns (indices 0 to {n_features - 1}; an "
                "int is a position, whatever X's column labels are)."
            )
        return int(column)
    if isinstance(column, str):
        if position is None:
            raise ValueError(
                f"feature_groups[{group_name!r}] names column {column!r}, but X "
                "has no column names: give column indices, or fit on a data "
                "frame."
            )
        if column not in position:
            raise ValueError(
                f"feature_groups[{group_name!r}] names column {column!r}, which "
                "is not a column of X."
            )
        return position[column]
    raise TypeError(
        f"feature_groups[{group_name!r}] holds {column!r} of type "
        f"{type(column).__name__}; name columns by their names (str) or their "
        "indices (int)."
    )


def resolve_feature_groups(feature_groups, n_features: int, feature_names=None):
    """Read ``feature_groups`` into a :class:`FeatureGroups`, or None.

    Parameters
    ----------
    feature_groups : dict or None
        ``{name: [columns]}``: column names (when X has string column names)
        or indices.
    n_features : int
        The columns of X.
    feature_names : array-like of str or None
        X's column names (``feature_names_in_``), if any.

    Returns
    -------
    FeatureGroups or None
        Every column in no group becomes a group of its own, named by its
        column name (``x3`` without names).

    Raises
    ------
    ValueError
        An empty group, a column named twice, a column that X lacks, a
        group named like a column in no group.
    TypeError
        If ``feature_groups`` is not a mapping of names to lists of columns.

    Examples
    --------
    >>> groups = resolve_feature_groups({"lags": [1, 2]}, 4)
    >>> groups.names, [m.tolist() for m in groups.members]
    (['x0', 'lags', 'x3'], [[0], [1, 2], [3]])
    """
    if feature_groups is None:
        return None
    if not isinstance(feature_groups, Mapping):
        raise TypeError(
            "feature_groups must be a dict {name: [columns]} (or None), got "
            f"{type(feature_groups).__name__}."
        )
    names = None if feature_names is None else [str(name) for name in feature_names]
    position = None if names is None else {name: i for i, name in enumerate(names)}
    owner = {}
    groups = []
    for name, columns in feature_groups.items():
        if not isinstance(name, str):
            raise TypeError(
                f"feature_groups' keys name the groups and must be str, got {name!r}."
            )
        if isinstance(columns, (str, bytes)) or not isinstance(columns, Iterable):
            raise TypeError(
                f"feature_groups[{name!r}] must be a list of columns, got {columns!r}."
            )
        cols = [_column_index(c, n_features, position, name) for c in columns]
        if not cols:
            raise ValueError(
                f"feature_groups[{name!r}] is empty: a group needs at least one column."
            )
        for c in cols:
            label = c if names is None else names[c]
            if c in owner:
                where = (
                    f"twice in group {name!r}"
                    if owner[c] == name
                    else f"in groups {owner[c]!r} and {name!r}"
                )
                raise ValueError(
                    f"Column {label!r} is {where}; every column may belong to "
                    "one group at most."
                )
            owner[c] = name
        groups.append((min(cols), name, np.sort(np.asarray(cols, dtype=np.int64))))
    for c in range(n_features):
        if c not in owner:
            label = f"x{c}" if names is None else names[c]
            if label in feature_groups:
                raise ValueError(
                    f"Group {label!r} has the name of column {label!r}, which is "
                    "in no group (and so is a group of its own): rename the group."
                )
            groups.append((c, label, np.array([c], dtype=np.int64)))
    groups.sort(key=lambda g: g[0])
    return FeatureGroups([g[1] for g in groups], [g[2] for g in groups], n_features)


def simes(pvalues) -> float:
    """Simes' combination of p-values: ``min_j q · p_(j) / j``.

    Valid when the p-values are independent or positively dependent (PRDS;
    members whose statistics are negatively correlated, like the dummies
    of one categorical, may not be, which the calibration is measured for
    instead: docs/how-it-works.md, "Feature groups"); a NaN counts as 1.

    Examples
    --------
    >>> simes([0.01, 0.04, 0.5])
    0.03
    """
    p = np.sort(np.nan_to_num(np.asarray(pvalues, dtype=np.float64), nan=1.0))
    q = p.size
    return float(min(1.0, np.min(p * q / np.arange(1, q + 1))))


def cauchy_combination(pvalues) -> float:
    """Combine p-values by the Cauchy combination test (ACAT), equal weights.

    Liu and Xie (2020).

    ``T = mean_j tan((0.5 - p_j) π)`` is standard Cauchy under the null when
    the p-values are independent, and nearly so in the tail under
    bivariate-normal dependence of their statistics (Liu and Xie's
    result; not under every dependence); p = 0.5 - arctan(T) / π.
    A p-value near 1 pulls T far down (its known weakness); p-values are
    clipped to [1e-300, 1 - 1e-15].

    Examples
    --------
    >>> round(cauchy_combination([0.01, 0.5]), 4)
    0.02
    """
    p = np.nan_to_num(np.asarray(pvalues, dtype=np.float64), nan=1.0)
    p = np.clip(p, 1e-300, 1.0 - 1e-15)
    small = p < 1e-15  # tan overflows: use its asymptote 1 / (p π)
    t = np.where(small, 1.0 / (np.maximum(p, 1e-300) * np.pi), 0.0)
    t[~small] = np.tan((0.5 - p[~small]) * np.pi)
    stat = float(np.mean(t))
    if stat > 1e15:
        return float(1.0 / (stat * np.pi))
    return float(stats.cauchy.sf(stat))


def combined_pvalues(
    method: str, groups: FeatureGroups, sum_pvalues, column_pvalues, used=None
):
    """Return every group's p-value by the group test ``method`` (:data:`GROUP_TESTS`).

    A group of one column gets that column's own p-value whatever the
    method (every test of one column is that column's test). Simes and
    Cauchy combine the members in ``used`` (the columns whose terms vary,
    ``scores_se_ > 0``; all if None): a member no tree splits on has no
    spread, p = 1 and no term in the group's score, and would only dilute the
    combination (Cauchy's to 1). Which members the models use is fixed before
    the held-out rows are scored, so leaving them out keeps the combination
    valid; a member that is used and scores badly stays in, whatever its
    p-value. A group whose members are all unused has p = 1.
    """
    check_group_test(method)
    sum_pvalues = np.asarray(sum_pvalues, dtype=np.float64)
    column_pvalues = np.asarray(column_pvalues, dtype=np.float64)
    if used is None:
        used = np.ones(column_pvalues.size, dtype=bool)
    used = np.asarray(used, dtype=bool)
    out = np.empty(groups.n_groups)
    for g, cols in enumerate(groups.members):
        own = column_pvalues[cols]
        if cols.size == 1:
            out[g] = own[0]
        elif method == "sum":
            out[g] = sum_pvalues[g]
        elif method == "simes":
            out[g] = _if_any(simes, own[used[cols]])
        elif method == "cauchy":
            out[g] = _if_any(cauchy_combination, own[used[cols]])
        else:  # "sum+simes"
            out[g] = simes([sum_pvalues[g], _if_any(simes, own[used[cols]])])
    return out


def _if_any(combine, pvalues):
    return combine(pvalues) if pvalues.size else 1.0


def group_statistics(groups: FeatureGroups, test) -> dict:
    """Return the fitted group attributes, from the test of the groups' sums.

    ``test`` is the :class:`~skl_treeinner._stats._inference.ScoreTest` of the
    groups' per-unit sums (scores, standard errors, the sum test's p-values);
    the p-values of the other group tests are derived from it and the
    members' own p-values when asked (``group_pvalues_``).
    """
    return {
        "groups_": groups.as_dict(),
        "group_scores_": test.scores,
        "group_scores_se_": test.se,
        "_group_sum_pvalues": test.pvalues,
        "_feature_groups": groups,
    }


def check_group_test(group_test):
    """Check ``group_test`` as ``fit`` does; a value set after fit is checked at use."""
    if group_test not in GROUP_TESTS:
        raise ValueError(
            f"group_test={group_test!r} is not one of {sorted(GROUP_TESTS)}."
        )
    return group_test
