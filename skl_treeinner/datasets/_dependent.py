"""Rows that depend on each other: a time series with lags, and a panel.

The two data sets on which a test that treats rows as independent draws goes
wrong (the user guide's "Time series and panels"): persistent series, where
shuffled folds put every held-out row between training rows of nearly the same
time, and panels, where rows of one entity land on both sides of a split.
"""

from __future__ import annotations

import numpy as np
from scipy.signal import lfilter
from sklearn.utils import check_random_state

__all__ = ["make_panel", "make_time_series"]


def _ar1(rng, n, phi, burn=200):
    """Draw a stationary AR(1) series of unit variance: x_t = phi x_{t-1} + e_t."""
    e = rng.standard_normal(n + burn) * np.sqrt(1.0 - phi**2)
    e[0] = rng.standard_normal()  # the stationary start
    return lfilter([1.0], [1.0, -phi], e)[burn:]


def make_time_series(
    n_samples=3000,
    *,
    n_noise=10,
    phi=0.95,
    effect=0.0,
    random_state=None,
):
    """Make persistent series in time order, and a lagged column that may drive y.

    Every series is AR(1), ``s_t = phi s_{t-1} + e_t`` with unit variance,
    like levels of prices, temperatures or sales. Column 0 is a series ``s``
    one row back, as a lag feature holds it, and ``y_t = effect · s_{t-1} +
    u_t`` with ``u`` a series of its own; columns 1..``n_noise`` are series
    independent of y. With ``effect=0`` every column is noise.

    Parameters
    ----------
    n_samples : int, default=3000
        Rows, in time order.
    n_noise : int, default=10
        Noise series.
    phi : float in [0, 1), default=0.95
        Persistence of every series (0: independent rows).
    effect : float, default=0.0
        Weight of the lagged signal in y; 0.5 gives it a fifth of y's variance.
    random_state : int, RandomState or None

    Returns
    -------
    X : ndarray of shape (n_samples, 1 + n_noise)
    y : ndarray of shape (n_samples,)
    relevant : ndarray of bool, shape (1 + n_noise,)
        Column 0 where ``effect != 0``.

    Examples
    --------
    >>> from skl_treeinner.datasets import make_time_series
    >>> X, y, relevant = make_time_series(500, effect=0.5, random_state=0)
    >>> X.shape, relevant[:2].tolist()
    ((500, 11), [True, False])
    """
    if not 0 <= phi < 1:
        raise ValueError(f"phi must be in [0, 1); got {phi}.")
    rng = check_random_state(random_state)
    signal = _ar1(rng, n_samples + 1, phi)
    lagged = signal[:n_samples]  # s_{t-1} at row t
    y = effect * lagged + _ar1(rng, n_samples, phi)
    noise = [_ar1(rng, n_samples, phi) for _ in range(n_noise)]
    X = np.column_stack([lagged, *noise])
    relevant = np.zeros(X.shape[1], dtype=bool)
    relevant[0] = effect != 0
    return X, y, relevant


def make_panel(
    n_entities=200,
    n_periods=10,
    *,
    n_entity_noise=5,
    n_row_noise=5,
    entity_effect=1.0,
    shuffle=True,
    random_state=None,
):
    """Make several rows per entity: y has an entity effect, no column drives it.

    Columns 0..``n_entity_noise``-1 are attributes of the entity (one value
    per entity, e.g. a store's size), the rest vary from row to row; all are
    independent of y, which is ``entity_effect · a_e + e_t`` with ``a_e`` the
    entity's own level. A model can still use the entity columns to recognise
    an entity it was fitted on: held-out rows of seen entities make them look
    useful, held-out entities do not.

    Parameters
    ----------
    n_entities, n_periods : int, default=200, 10
        Entities and rows per entity.
    n_entity_noise, n_row_noise : int, default=5, 5
        Columns constant within an entity, and columns that are not.
    entity_effect : float, default=1.0
        Standard deviation of the entity's level in y (the row noise has 1).
    shuffle : bool, default=True
        Shuffle the rows (else they come entity by entity).
    random_state : int, RandomState or None

    Returns
    -------
    X : ndarray of shape (n_entities * n_periods, n_entity_noise + n_row_noise)
    y : ndarray of shape (n_entities * n_periods,)
    groups : ndarray of int
        The entity of every row, for ``fit(X, y, groups=groups)``.

    Examples
    --------
    >>> from skl_treeinner.datasets import make_panel
    >>> X, y, groups = make_panel(50, 4, random_state=0)
    >>> X.shape, len(set(groups))
    ((200, 10), 50)
    """
    rng = check_random_state(random_state)
    groups = np.repeat(np.arange(n_entities), n_periods)
    n = groups.size
    entity_columns = rng.standard_normal((n_entities, n_entity_noise))[groups]
    row_columns = rng.standard_normal((n, n_row_noise))
    y = entity_effect * rng.standard_normal(n_entities)[groups] + rng.standard_normal(n)
    X = np.hstack([entity_columns, row_columns])
    if shuffle:
        order = rng.permutation(n)
        X, y, groups = X[order], y[order], groups[order]
    return X, y, groups
