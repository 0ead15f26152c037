"""Families of columns that are one decision: one-hot blocks, lags, twins.

The data on which feature groups matter (the user guide's "Feature groups"):
each family's members share the family's effect, so every member alone is
weak while the family is not, and the irrelevant families are as large and
as correlated as the relevant ones.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

__all__ = ["FAMILY_KINDS", "make_feature_families"]

#: The kinds of family :func:`make_feature_families` draws.
FAMILY_KINDS = ("onehot", "lags", "twins", "null")

#: Family sizes of the null design, each with every kind of column.
NULL_SIZES = (2, 5, 10, 20, 50)


def _standard(v):
    v = np.asarray(v, dtype=np.float64)
    sd = v.std()
    return (v - v.mean()) / (sd if sd > 0 else 1.0)


def _one_hot(rng, n, levels):
    """Dummies of a categorical with ``levels`` equally likely levels, and its codes."""
    codes = rng.integers(levels, size=n)
    return np.eye(levels)[codes], codes


def _lags(rng, n, width, phi=0.7):
    """Each row: ``width`` consecutive values of a stationary AR(phi) series."""
    out = np.empty((n, width))
    out[:, 0] = rng.standard_normal(n)
    for j in range(1, width):
        out[:, j] = phi * out[:, j - 1] + np.sqrt(1 - phi**2) * rng.standard_normal(n)
    return out


def _twins(rng, n):
    """Draw a column and three engineered twins of it (noisy copy, cube, rank)."""
    x = rng.standard_normal(n)
    twins = np.column_stack(
        [
            x,
            x + 0.5 * rng.standard_normal(n),
            _standard(x**3),
            np.argsort(np.argsort(x)) / n,
        ]
    )
    return twins, x


def _family(kind, rng, n, size, phi):
    """One family's columns and the signal it carries (unit variance)."""
    if kind == "onehot":
        dummies, codes = _one_hot(rng, n, size)
        effects = _standard(rng.standard_normal(size))
        return dummies, _standard(effects[codes])
    if kind == "lags":
        block = _lags(rng, n, size, phi)
        return block, _standard(block.sum(axis=1))
    twins, x = _twins(rng, n)
    return twins, x


def make_feature_families(
    kind="onehot",
    n_samples=1000,
    *,
    n_relevant=2,
    n_irrelevant=2,
    size=None,
    effect=None,
    phi=0.7,
    random_state=None,
):
    """Make data whose columns come in families, each one decision to keep or drop.

    - ``"onehot"``: each family is the dummies of a categorical of ``size``
      (default 12) equally likely levels; a relevant one moves y by a level
      effect (drawn, unit variance over the levels), so each dummy carries a
      twelfth of it.
    - ``"lags"``: each family is ``size`` (default 8) consecutive lags of a
      stationary AR(0.7) series (one series per row, rows independent); a
      relevant one moves y by the sum of its lags, each lag weak and
      correlated with the others.
    - ``"twins"``: each family is a column and three engineered twins (a
      noisy copy, its cube, its rank); a relevant one moves y by the column,
      whose credit the booster splits among the twins.
    - ``"null"``: y independent of X; families of 2, 5, 10, 20 and 50
      columns, each size as dummies of a categorical, as a correlated block
      of lags, and as integer columns with 2 to 1,000 levels (15 families,
      261 columns): the case in which a group test must not pick a family
      more often than its level.

    Parameters
    ----------
    kind : {"onehot", "lags", "twins", "null"}, default="onehot"
    n_samples : int, default=1000
    n_relevant, n_irrelevant : int, default=2
        Families that move y and families that do not (ignored by ``"null"``).
    size : int or None
        Columns per family (``"onehot"``: levels, default 12; ``"lags"``:
        lags, default 8; fixed at 4 for ``"twins"``).
    phi : float in [0, 1), default=0.7
        ``"lags"`` only: the series' persistence, so the correlation of
        neighbouring lags (0: independent members).
    effect : float or None
        Each relevant family's signal's standard deviation in y (the noise
        has 1). Default: 0.35 (``"onehot"``), 0.3 (``"lags"``), 0.25
        (``"twins"``): each member alone is rarely significant at 1,000
        rows, the family usually is.
    random_state : int, RandomState or None

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
    relevant : ndarray of bool, shape (n_features,)
        The members of the relevant families.
    feature_groups : dict
        ``{name: [column indices]}``, every column in one family (the
        relevant ones named ``relevant_*``), ready for
        ``TreeInnerSelector(feature_groups=...)``.

    Examples
    --------
    >>> from skl_treeinner.datasets import make_feature_families
    >>> X, y, relevant, groups = make_feature_families("onehot", random_state=0)
    >>> X.shape, sorted(groups)[:2], int(relevant.sum())
    ((1000, 48), ['irrelevant_0', 'irrelevant_1'], 24)
    """
    if kind not in FAMILY_KINDS:
        raise ValueError(f"kind={kind!r} is not one of {FAMILY_KINDS}.")
    rng = check_random_state(random_state)
    rng = np.random.default_rng(rng.randint(2**31 - 1))
    n = int(n_samples)
    blocks, groups, relevant = [], {}, []
    width = 0

    def add(name, columns, is_relevant):
        nonlocal width
        groups[name] = list(range(width, width + columns.shape[1]))
        width += columns.shape[1]
        blocks.append(columns)
        relevant.extend([is_relevant] * columns.shape[1])

    if kind == "null":
        for s in NULL_SIZES:
            add(f"onehot_{s}", _one_hot(rng, n, s)[0], False)
            add(f"lags_{s}", _lags(rng, n, s), False)
            levels = np.unique(np.geomspace(2, 1000, s).astype(int))
            levels = np.resize(levels, s)
            ints = np.column_stack([rng.integers(k, size=n) for k in levels])
            add(f"integer_{s}", ints.astype(np.float64), False)
        y = rng.standard_normal(n)
    else:
        size = {"onehot": 12, "lags": 8, "twins": 4}[kind] if size is None else size
        if effect is None:
            effect = {"onehot": 0.35, "lags": 0.3, "twins": 0.25}[kind]
        y = rng.standard_normal(n)
        for i in range(n_relevant + n_irrelevant):
            columns, signal = _family(kind, rng, n, size, phi)
            if i < n_relevant:
                y = y + effect * signal
                add(f"relevant_{i}", columns, True)
            else:
                add(f"irrelevant_{i - n_relevant}", columns, False)
    return np.column_stack(blocks), y, np.asarray(relevant), groups
