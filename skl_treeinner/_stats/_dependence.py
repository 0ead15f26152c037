"""Rows that depend on each other: notice them, and test with units that do not.

The test of :mod:`~skl_treeinner._stats._inference` treats the held-out rows as
independent draws. Two common kinds of data break that, and shuffled folds
then turn the dependence into a leak (paper 000's guarantee, noise ≤ 0 on new
rows, assumes the held-out rows are new):

- **ordered rows** (time series, sensor logs): a held-out row sits between
  training rows of nearly the same time, and any column that drifts with time
  lets the model recognise "when", which predicts a persistent target;
- **entities with several rows** (panels: customers, stores, patients): a
  held-out row's entity was seen in training, and columns that describe the
  entity let the model recognise it.

:func:`check_dependent_rows` looks for both in what ``fit`` already has (y in
the user's row order, the columns, the splits) and warns, naming the fix,
when the splits ignore it. Each check is a test at level
:data:`ALARM_LEVEL` whose null is exchangeable rows, so that it raises a
false alarm in about 1 of 1,000 fits of rows in random order
(``benchmarks/dependent_rows.py`` measures it).

When the splits keep time order (:func:`keeps_time_order`: TimeSeriesSplit,
walk-forward or purged folds), the test's units become blocks of consecutive
rows (:func:`block_sums`), as ``groups`` make groups the units: batch means,
whose sums are nearly independent when a block is much longer than the
dependence, tested with Student's t on (blocks - 1) degrees of freedom.
Newey-West's estimator was no better calibrated at the boundary, and blocks
are what the test and the Dask engine's moments already count
(docs/how-it-works.md, "Time series and panels", has both measured).
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import stats

from .._utils._validation import user_stacklevel
from ..exceptions import DependentRowsWarning

__all__ = [
    "ALARM_LEVEL",
    "N_BLOCKS",
    "adjacent_matches",
    "check_dependent_rows",
    "check_ordered_target",
    "entity_columns",
    "keeps_time_order",
    "order_evidence",
    "block_sums",
    "test_units",
]

#: Where the warnings send the user: why, and what to pass.
GUIDE = "user guide: 'Time series and panels'"

#: Level of each check: the share of fits of exchangeable rows it warns on.
ALARM_LEVEL = 1e-3
#: Fewest rows the checks look at.
MIN_ROWS = 50
#: Random orders the order check's p-value is confirmed with (p = 1/2000 at
#: least, below ALARM_LEVEL only when no random order matches the rows').
PERMUTATIONS = 1999
#: Most blocks of consecutive rows the test counts when the splits keep time order.
N_BLOCKS = 20
#: Fewest rows in a block.
MIN_BLOCK_ROWS = 10
#: A block spans this many integrated autocorrelation times of the terms.
BLOCK_SPAN = 5
#: Fewest sets of rows, and most (a share of the rows), an entity partition has.
MIN_ENTITIES = 10
#: Rows the checks read (the first ones): partitions shared on all rows are
#: shared on any run of them, and a run of exchangeable rows is exchangeable.
MAX_CHECKED_ROWS = 20_000


# -- ordered rows ------------------------------------------------------------------
def adjacent_matches(codes):
    """Neighbours in the same category, and their mean and variance under shuffling.

    ``T = #{i : codes[i] == codes[i+1]}``; under a random order of the same
    values, with ``n_c`` rows of category c, ``p = Σ n_c(n_c-1) / n(n-1)``:
    ``E T = (n-1) p`` and
    ``Var T = (n-1) p(1-p) + 2(n-2)(q3 - p²) + (n-2)(n-3)(q4 - p²)``, where
    q3 (q4) is the chance that three (two disjoint pairs of) given positions
    match (the multi-category runs test of Wald and Wolfowitz, 1940).

    Returns
    -------
    (count, mean, variance) : tuple of float
    """
    codes = np.asarray(codes)
    n = codes.size
    count = float(np.count_nonzero(codes[1:] == codes[:-1]))
    if n < 4:
        return count, count, 0.0
    nc = np.unique(codes, return_counts=True)[1].astype(np.float64)
    a = nc * (nc - 1)
    p = a.sum() / (n * (n - 1.0))
    q3 = (a * (nc - 2)).sum() / (n * (n - 1.0) * (n - 2.0))
    q4 = ((a * (nc - 2) * (nc - 3)).sum() + a.sum() ** 2 - (a**2).sum()) / (
        n * (n - 1.0) * (n - 2.0) * (n - 3.0)
    )
    var = (
        (n - 1) * p * (1 - p)
        + 2 * (n - 2) * (q3 - p * p)
        + (n - 2) * (n - 3) * (q4 - p * p)
    )
    return count, (n - 1) * p, max(var, 0.0)


def _categories(y, classifier):
    """Classes, or the deciles of a numeric target (ties share a decile)."""
    y = np.asarray(y)
    if classifier:
        return np.unique(y, return_inverse=True)[1]
    y = y.astype(np.float64)
    cuts = np.unique(np.quantile(y, np.linspace(0.1, 0.9, 9)))
    return np.searchsorted(cuts, y, side="right")


def order_evidence(y, classifier):
    """How much more alike neighbouring rows' targets are than shuffled rows'.

    Returns ``(share, expected, pvalue)``: the share of neighbouring rows in
    the same class (or decile of y), the share expected in a random order,
    and the one-sided p-value of the excess, exact for rows in random order
    whatever y's distribution: where the normal approximation of
    :func:`adjacent_matches` is below 0.01 (a rare class makes it far too
    small), the p-value is recomputed from up to :data:`PERMUTATIONS` random
    orders of the same targets (seeded, so that fits repeat). On more than
    :data:`MAX_CHECKED_ROWS` rows the first ones are checked: a run of
    exchangeable rows is exchangeable too. Rows sorted by the target (the
    classes, or y's deciles, never decrease or never increase) give p = 1.
    """
    codes = _categories(y, classifier)[:MAX_CHECKED_ROWS]
    count, mean, var = adjacent_matches(codes)
    pairs = max(codes.size - 1, 1)
    share, expected = count / pairs, mean / pairs
    step = np.diff(codes)
    if var <= 0 or (step >= 0).all() or (step <= 0).all():
        # Rows sorted by the target (iris's classes, scikit-learn's checks)
        # are not a series: the order tells nothing of how they were drawn.
        return share, expected, 1.0
    p = float(stats.norm.sf((count - mean) / np.sqrt(var)))
    if p >= 0.01:
        return share, expected, p
    # Besag and Clifford's sequential Monte Carlo p-value: stop at the 20th
    # random order as extreme as the rows' (p = 20 / orders drawn), else
    # p = (1 + as extreme) / (1 + PERMUTATIONS); valid either way.
    rng = np.random.default_rng(0)
    hits = np.zeros(0, dtype=bool)
    while hits.size < PERMUTATIONS:
        batch = rng.permuted(np.tile(codes, (100, 1)), axis=1)
        matches = (batch[:, 1:] == batch[:, :-1]).sum(axis=1)
        hits = np.concatenate([hits, matches >= count])[:PERMUTATIONS]
        if np.count_nonzero(hits) >= 20:
            drawn = np.flatnonzero(hits)[19] + 1
            return share, expected, 20 / drawn
    return share, expected, (1 + np.count_nonzero(hits)) / (PERMUTATIONS + 1)


def keeps_time_order(splits) -> bool:
    """Whether every split holds out one run of consecutive rows, apart in time.

    True when each split's held-out rows are one contiguous run of row
    positions, no training row falls inside the run, and the training rows
    all come before it (``TimeSeriesSplit``, walk-forward), or lie on both
    sides of it with a gap on each side (purged, embargoed folds).
    Unshuffled ``KFold`` trains on the rows right next to the held-out ones,
    and a split that trains only on later rows predicts the past: neither is
    counted.
    """
    for train, test in splits:
        held = np.unique(test)
        if held.size == 0 or held[-1] - held[0] + 1 != held.size:
            return False
        if np.asarray(test).size != held.size:  # a row held out twice
            return False
        train = np.asarray(train)
        before, after = train[train < held[0]], train[train > held[-1]]
        if before.size + after.size != train.size or before.size == 0:
            return False  # training rows inside the run, or only after it
        if after.size and (before.max() >= held[0] - 1 or after.min() <= held[-1] + 1):
            return False
    return True


def block_sums(z):
    """Sum consecutive units into blocks long enough to be nearly independent.

    ``z`` holds the scored rows' terms in row order (``pool_rows`` without
    groups). The block length is :data:`BLOCK_SPAN` times the terms'
    integrated autocorrelation time ``(1 + rho) / (1 - rho)`` (rho: the
    largest lag-1 autocorrelation among the features, clipped to
    [0, 0.99]), at least :data:`MIN_BLOCK_ROWS`; there are at most
    :data:`N_BLOCKS` blocks and at least two (so shorter blocks on series
    too short for two blocks of that length: then the p-values have one
    degree of freedom and the test has little power). The constants keep the
    test calibrated at its boundary on persistent series, where rows as units
    are not (``benchmarks/dependent_rows.py``; docs/how-it-works.md, "Time
    series and panels").
    """
    z = np.asarray(z, dtype=np.float64)
    m = z.shape[0]
    if m < 2:  # the test refuses fewer than 2 units with its own message
        return z
    d = z - z.mean(axis=0)
    ss = (d**2).sum(axis=0)
    varies = ss > 0
    rho = 0.0
    if m > 2 and varies.any():
        lag1 = (d[1:, varies] * d[:-1, varies]).sum(axis=0) / ss[varies]
        rho = float(np.clip(lag1.max(), 0.0, 0.99))
    length = max(MIN_BLOCK_ROWS, int(np.ceil(BLOCK_SPAN * (1 + rho) / (1 - rho))))
    k = int(np.clip(m // length, 2, N_BLOCKS))
    starts = (np.arange(k) * m + k - 1) // k  # the first row of each block
    return np.add.reduceat(z, starts, axis=0)


def test_units(y, groups, *, splits, classifier):
    """What the test counts as independent units: "groups", "blocks" or "rows".

    ``"groups"`` where groups are given; ``"blocks"`` (:func:`block_sums`)
    where the splits keep time order, or, for a prefit model (``splits=None``,
    every row held out), where the rows look ordered (:func:`order_evidence`
    below :data:`ALARM_LEVEL`); else ``"rows"``, as for exchangeable rows.
    """
    if groups is not None:
        return "groups"
    if splits is not None:
        ordered = keeps_time_order(splits)
    else:
        ordered = (
            np.asarray(y).shape[0] >= MIN_ROWS
            and order_evidence(y, classifier)[2] < ALARM_LEVEL
        )
    return "blocks" if ordered else "rows"


# -- entities with several rows ----------------------------------------------------
def _numeric_columns(X, rows):
    """(positions, float matrix of the first ``rows`` rows) of X's numeric columns.

    None for other kinds of X (sparse, DMatrix, no numeric column).
    """
    from .._utils._validation import is_pandas_df, is_polars_df

    if isinstance(X, np.ndarray):
        if X.ndim != 2 or not (
            np.issubdtype(X.dtype, np.number) and not np.issubdtype(X.dtype, np.bool_)
        ):
            return None
        return np.arange(X.shape[1]), np.asarray(X[:rows], dtype=np.float64)
    if is_pandas_df(X):
        import pandas as pd

        kept = [
            j
            for j, dtype in enumerate(X.dtypes)
            if pd.api.types.is_numeric_dtype(dtype)
            and not pd.api.types.is_bool_dtype(dtype)
        ]
        if not kept:
            return None
        values = X.iloc[:rows, kept].to_numpy(dtype=np.float64, na_value=np.nan)
        return np.asarray(kept), values
    if is_polars_df(X):
        kept = [
            j
            for j, dtype in enumerate(X.dtypes)
            if dtype.is_numeric() and str(dtype) != "Boolean"
        ]
        if not kept:
            return None
        values = X[:rows, kept].to_numpy().astype(np.float64)
        return np.asarray(kept), values
    return None


def _canonical(column):
    """Label the partition of rows by equal values in order of first appearance."""
    _, first, inverse = np.unique(column, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)
    return rank[inverse.ravel()], first.size


def _kruskal(y, labels, n_groups):
    """Kruskal-Wallis p-value of y differing between the sets of ``labels``."""
    n = y.size
    ranks = stats.rankdata(y)
    sizes = np.bincount(labels, minlength=n_groups).astype(np.float64)
    sums = np.bincount(labels, weights=ranks, minlength=n_groups)
    h = 12.0 / (n * (n + 1.0)) * np.sum(sums**2 / sizes) - 3.0 * (n + 1.0)
    ties = np.unique(y, return_counts=True)[1].astype(np.float64)
    correction = 1.0 - np.sum(ties**3 - ties) / (n**3 - float(n))
    if correction <= 0:
        return 1.0
    return float(stats.chi2.sf(h / correction, n_groups - 1))


def _codings(labels, n_sets, values, columns):
    """How many of ``columns`` order their shared sets differently.

    Two columns that rank the sets alike, or in reverse (age and birth year,
    a price in dollars and in cents), are one variable coded twice, not two
    attributes of an entity.
    """
    seen = set()
    for j in columns:
        value = np.zeros(n_sets)
        value[labels] = values[:, j]
        rank = np.argsort(value, kind="stable")
        seen.add(min(rank.tobytes(), rank[::-1].tobytes()))
    return len(seen)


def entity_columns(X, y):
    """Columns that look like attributes of entities with several rows each.

    Looks, in the first :data:`MAX_CHECKED_ROWS` rows, for two or more
    numeric columns that partition the rows the same way (equal values on
    exactly the same sets of rows) into at least :data:`MIN_ENTITIES` sets of
    two or more rows on average, and that order those sets in at least two
    ways (:func:`_codings`: age and birth year are one variable coded twice,
    no entity), and tests whether y differs between the sets
    (Kruskal-Wallis). Continuous columns
    of independent rows never repeat values, and columns that do (counts,
    codes) rarely share their partition with another column. A discrete
    column coded twice in unrelated orders (a code and its name's hash, a
    zip code and the zip's income) whose levels change y passes for an
    entity: the warning then says to ignore it if new rows come from the
    same sets.

    Returns
    -------
    (positions, labels, pvalue) or None
        The columns, the set of every checked row, and the test's p-value,
        for the largest group of columns sharing a partition (ties: the
        smallest p-value); None where no columns share one.
    """
    y = np.asarray(y, dtype=np.float64)[:MAX_CHECKED_ROWS]
    n = y.size
    found = _numeric_columns(X, n)
    if found is None or found[1].shape[1] < 2:
        return None
    positions, values = found
    screen = min(n, 1000)
    shared = {}
    for j in range(values.shape[1]):
        column = values[:, j]
        # Columns without a repeat in the first rows hold no entity of two
        # rows or more on average; this skips continuous columns cheaply.
        if np.unique(column[:screen]).size == screen or np.isnan(column).any():
            continue
        labels, n_sets = _canonical(column)
        if MIN_ENTITIES <= n_sets <= n // 2:
            key = hash(labels.tobytes())
            shared.setdefault(key, []).append(j)
    best = None
    for columns in shared.values():
        if len(columns) < 2:
            continue
        labels, n_sets = _canonical(values[:, columns[0]])
        if _codings(labels, n_sets, values, columns) < 2:
            continue
        p = _kruskal(y, labels, n_sets)
        key = (len(columns), -p)
        if best is None or key > best[0]:
            best = (key, (positions[columns], labels, p))
    return None if best is None else best[1]


# -- the warning -------------------------------------------------------------------
def _names(X, positions):
    columns = getattr(X, "columns", None)
    names = (
        [str(columns[j]) for j in positions]
        if columns is not None
        else [f"x{j}" for j in positions]
    )
    return ", ".join(names[:6]) + (
        f" and {len(names) - 6} more" if len(names) > 6 else ""
    )


def check_dependent_rows(X, y, splits, *, classifier, grouped, what):
    """Warn when rows look ordered or grouped and the splits ignore it.

    Parameters
    ----------
    X, y : the checked rows (y as fitted: classes encoded).
    splits : list of (train, test) index pairs.
    classifier : bool
    grouped : bool
        Whether ``groups`` were given (the user has said which rows belong
        together: no warning).
    what : str
        The splitter, as messages name it (``"cv=5"``).

    Returns
    -------
    list of str
        The warnings' messages (empty if none).
    """
    messages = []
    n = np.asarray(y).shape[0]
    if grouped or n < MIN_ROWS:
        return messages
    if not keeps_time_order(splits):
        message = _order_message(
            y,
            classifier,
            f"{what} holds out rows between training rows",
            "pass cv=TimeSeriesSplit(n_splits=5, gap=...) on rows in time "
            "order, or groups= for rows of one entity.",
        )
        if message:
            messages.append(message)
    found = entity_columns(X, y)
    if found is not None and found[2] < ALARM_LEVEL:
        positions, labels, p = found
        if _straddles(labels, splits, n):
            n_sets = int(labels.max()) + 1
            messages.append(
                f"Columns {_names(X, positions)} take equal values on exactly "
                f"the same sets of rows ({n_sets} sets of about "
                f"{labels.size / n_sets:.0f} rows), and y differs between those "
                f"sets (Kruskal-Wallis p = {p:.1g}): they look like attributes "
                "of entities (customers, stores, patients) with several rows "
                f"each, and {what} puts rows of one entity both in training and "
                "held-out parts. A model that recognises an entity by such "
                "columns makes them look useful on held-out rows of entities it "
                "has seen. If new rows will come from new entities, pass "
                "groups= (the entity of every row): each entity then stays on "
                "one side of every split and the test counts entities. If new "
                "rows come from the same entities, ignore this warning."
            )
    for message in messages:
        warnings.warn(message, DependentRowsWarning, stacklevel=user_stacklevel())
    return messages


def _order_message(y, classifier, folds, fix):
    """Word the ordered-rows warning, or return None where the rows look shuffled."""
    share, expected, p = order_evidence(y, classifier)
    if p >= ALARM_LEVEL:
        return None
    kind = "class" if classifier else "decile of y"
    return (
        f"The rows look ordered: neighbouring rows' targets share a {kind} "
        f"{share:.0%} of the time, against {expected:.0%} in random order "
        f"(p = {p:.1g}), and {folds}. In a time series the p-values can be far "
        f"too small: {fix} If the order means nothing, ignore this ({GUIDE})."
    )


def check_ordered_target(y, *, classifier, folds, fix):
    """Warn when ``y`` in row order looks ordered (the order check alone).

    For engines that see only a run of the rows' targets (the Dask engine
    reads the first :data:`MAX_CHECKED_ROWS`); ``folds`` says what its splits
    do with such rows and ``fix`` what to do instead. Returns the message, or
    None.
    """
    if np.asarray(y).shape[0] < MIN_ROWS:
        return None
    message = _order_message(y, classifier, folds, fix)
    if message:
        warnings.warn(message, DependentRowsWarning, stacklevel=user_stacklevel())
    return message


def _straddles(labels, splits, n):
    """Whether some set of rows has rows both fitted and held out by a split."""
    if labels.size != n:  # checked on the first rows
        labels = np.concatenate([labels, np.full(n - labels.size, -1, dtype=np.int64)])
    for train, test in splits:
        fitted = labels[np.asarray(train)]
        held = labels[np.asarray(test)]
        if np.intersect1d(fitted[fitted >= 0], held[held >= 0]).size:
            return True
    return False
