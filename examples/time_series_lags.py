"""Lag features of a time series: shuffled folds leak, time-ordered folds do not.

Daily demand depends on the temperature two days earlier; its own noise is
persistent, and so are four unrelated series (prices of other goods, levels that
drift). The lag features are built as a user would, then the selector is fitted
twice: with its default (shuffled) folds, which warn, and with
``TimeSeriesSplit`` and a gap, whose test counts blocks of consecutive days.
"""

import warnings

import numpy as np
from scipy.signal import lfilter
from sklearn.model_selection import TimeSeriesSplit

from skl_treeinner import TreeInnerSelector
from skl_treeinner.exceptions import DependentRowsWarning

rng = np.random.default_rng(0)
n_days = 2000


def series(phi):
    """A stationary AR(1) series of unit variance."""
    e = rng.standard_normal(n_days + 200) * np.sqrt(1 - phi**2)
    return lfilter([1.0], [1.0, -phi], e)[200:]


temperature = series(0.5)
demand = 0.8 * np.roll(temperature, 2) + series(0.95)  # two days later

# Features of day t: the temperature 1 to 4 days back, four unrelated levels.
lags = {f"temperature_lag{k}": np.roll(temperature, k) for k in range(1, 5)}
levels = {f"level_{j}": series(0.95) for j in range(4)}
names = [*lags, *levels]
X = np.column_stack([*lags.values(), *levels.values()])[4:]  # drop the wrapped days
y = demand[4:]

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always", DependentRowsWarning)
    shuffled = TreeInnerSelector(random_state=0).fit(X, y)
print("default cv=5 (shuffled folds) keeps:")
print("  ", [names[j] for j in np.flatnonzero(shuffled.get_support())])
for w in caught:
    print("   warning:", str(w.message)[:72], "...")

ordered = TreeInnerSelector(cv=TimeSeriesSplit(5, gap=7), random_state=0).fit(X, y)
print("cv=TimeSeriesSplit(5, gap=7) keeps:")
print("  ", [names[j] for j in np.flatnonzero(ordered.get_support())])
print(
    f"   the test counts {ordered.n_scored_rows_} {ordered.test_units_} of "
    "consecutive days"
)
for name, p in zip(names, ordered.pvalues_, strict=True):
    print(f"   {name:<17} p = {p:.2g}")
