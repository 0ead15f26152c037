"""Dependent rows: the test's units under time order, and the checks' alarms.

Three parts (``--part``):

- ``variance``: persistent series (``make_time_series``, AR(phi), 3,000 rows,
  10 noise columns and a lagged column) fitted with ``cv=TimeSeriesSplit(5)``.
  From every fit's held-out per-row terms it computes each noise column's
  p-value (without the noise floor) as the selector does (blocks of
  consecutive rows, ``_dependence.block_sums``), and with the candidates it
  was chosen against: rows as independent units, a fixed 10 or 40 blocks,
  and Newey-West with Andrews' AR(1) bandwidth (Bartlett kernel, normal
  reference). It prints the share of noise p-values below 0.05 and
  0.01, the noise columns the selector keeps per fit and, with ``--effect``,
  how often the lagged column is kept.
- ``warnings``: how often the selector warns (``DependentRowsWarning``) on
  ordered rows with its default folds, and on shuffled panels without
  ``groups``; fits the selector.
- ``alarms``: the checks alone, without fitting, on thousands of data sets of
  exchangeable rows in random order (Gaussian, lognormal, rare-class, multi-
  class and integer-valued columns and targets, the last with columns that
  share a partition: a code and its label, an age and a birth year that drive
  y): the share of data sets on which a check would warn.

Usage::

    python benchmarks/dependent_rows.py --part variance --seeds 20
    python benchmarks/dependent_rows.py --part variance --seeds 20 --effect 0.5
    python benchmarks/dependent_rows.py --part warnings --seeds 20
    python benchmarks/dependent_rows.py --part alarms --datasets 2000
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import where_time_goes
from scipy import stats
from sklearn.model_selection import TimeSeriesSplit

from skl_treeinner import TreeInnerSelector, tree_inner
from skl_treeinner._stats._dependence import (
    ALARM_LEVEL,
    MIN_ROWS,
    block_sums,
    entity_columns,
    order_evidence,
)
from skl_treeinner._stats._inference import one_sided_test, pool_rows
from skl_treeinner.datasets import make_panel, make_time_series
from skl_treeinner.exceptions import DependentRowsWarning


def fixed_blocks(z, k):
    """Sums of k blocks of consecutive rows (a fixed number, for comparison)."""
    starts = (np.arange(k) * z.shape[0] + k - 1) // k
    return np.add.reduceat(z, starts, axis=0)


def newey_west(z):
    """One-sided p-values with a Bartlett-kernel long-run variance per column."""
    n = z.shape[0]
    d = z - z.mean(axis=0)
    gamma0 = (d**2).sum(axis=0) / n
    rho = np.clip(
        (d[1:] * d[:-1]).sum(axis=0) / n / np.maximum(gamma0, 1e-300), -0.99, 0.99
    )
    alpha = 4 * rho**2 / ((1 - rho) ** 2 * (1 + rho) ** 2)
    pvalues = np.empty(z.shape[1])
    for k in range(z.shape[1]):
        lags = int(min(n - 1, np.floor(1.1447 * (alpha[k] * n) ** (1 / 3))))
        lrv = gamma0[k]
        for lag in range(1, lags + 1):
            lrv += 2 * (1 - lag / (lags + 1)) * (d[lag:, k] * d[:-lag, k]).sum() / n
        se = np.sqrt(n * max(lrv, 1e-300))
        pvalues[k] = stats.norm.sf(z[:, k].sum() / se)
    return pvalues


def part_variance(seeds, phis, effect, rows, spec=None):
    spec = spec or {}
    print(
        f"TimeSeriesSplit(5), {rows} rows, 10 noise columns, effect={effect}"
        + (f", selector {spec}" if spec else "")
    )
    print("phi   method        p<0.05  p<0.01   kept noise/fit  lag kept")
    for phi in phis:
        out = {m: [] for m in ("rows", "blocks", "fixed10", "fixed40", "newey-west")}
        kept_noise, kept_lag = [], []
        for seed in range(seeds):
            X, y, relevant = make_time_series(
                rows, phi=phi, effect=effect, random_state=seed
            )
            splits = list(TimeSeriesSplit(5).split(X))
            sel = TreeInnerSelector(
                cv=TimeSeriesSplit(5), random_state=seed, n_jobs=1, **spec
            )
            sel.fit(X, y)
            noise = ~relevant
            noise[0] = False  # column 0 is the lagged signal (noise when effect=0)
            kept_noise.append(int(sel.get_support()[noise].sum()))
            kept_lag.append(bool(sel.get_support()[0]))
            tests = [test for _, test in splits]
            terms = [
                tree_inner(est, X[test], y[test], per_sample=True)
                # the first repeat's (every repeat scores the splitter's folds)
                for est, test in zip(sel.estimators_[: len(tests)], tests, strict=True)
            ]
            z = pool_rows(y.shape[0], tests, terms)  # the scored rows, in order
            out["rows"].append(one_sided_test(z).pvalues[noise])
            out["blocks"].append(one_sided_test(block_sums(z)).pvalues[noise])
            for k in (10, 40):
                out[f"fixed{k}"].append(
                    one_sided_test(fixed_blocks(z, k)).pvalues[noise]
                )
            out["newey-west"].append(newey_west(z)[noise])
        for method, pvalues in out.items():
            p = np.concatenate(pvalues)
            below = f"{np.mean(p < 0.05):7.3f} {np.mean(p < 0.01):7.3f}"
            print(f"{phi:<5} {method:<12} {below}")
        print(
            f"{phi:<5} selector      kept noise per fit {np.mean(kept_noise):.2f}, "
            f"lagged column kept in {np.mean(kept_lag):.0%} of {seeds} fits"
        )


def _warned(X, y, **fit_kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sel = TreeInnerSelector(n_jobs=1, **fit_kwargs.pop("params", {}))
        sel.fit(X, y, **fit_kwargs)
    warned = any(issubclass(w.category, DependentRowsWarning) for w in caught)
    return warned, sel


def part_warnings(seeds, rows):
    for phi in (0.95, 0.6, 0.3):
        hits, kept = [], []
        for seed in range(seeds):
            X, y, _ = make_time_series(rows, phi=phi, random_state=seed)
            warned, sel = _warned(X, y, params={"random_state": seed})
            hits.append(warned)
            kept.append(int(sel.get_support().sum()))
        print(
            f"AR({phi}), default folds: warned in {np.mean(hits):.0%} of {seeds} "
            f"fits; noise columns kept per fit {np.mean(kept):.1f}"
        )
    hits, kept, kept_grouped = [], [], []
    for seed in range(seeds):
        X, y, groups = make_panel(random_state=seed)
        warned, sel = _warned(X, y, params={"random_state": seed})
        hits.append(warned)
        kept.append(int(sel.get_support()[:5].sum()))
        _, sel = _warned(X, y, groups=groups, params={"random_state": seed})
        kept_grouped.append(int(sel.get_support()[:5].sum()))
    print(
        f"Shuffled panel, no groups: warned in {np.mean(hits):.0%} of {seeds} fits; "
        f"entity noise columns kept per fit {np.mean(kept):.1f} (with groups: "
        f"{np.mean(kept_grouped):.1f})"
    )


def _exchangeable(kind, rng, n):
    p = 20
    if kind == "gaussian":
        X = rng.normal(size=(n, p))
        y = X[:, 0] + rng.normal(size=n)
        return X, y, False
    if kind == "lognormal":
        X = rng.normal(size=(n, p))
        y = np.exp(2 * rng.normal(size=n) + X[:, 0])
        return X, y, False
    if kind == "rare-class":
        X = rng.normal(size=(n, p))
        y = (rng.random(n) < 0.02 + 0.05 * (X[:, 0] > 1)).astype(int)
        return X, y, True
    if kind == "multiclass":
        X = rng.normal(size=(n, p))
        y = np.digitize(X[:, 0] + rng.normal(size=n), [-1, 0, 1])
        return X, y, True
    # integer and categorical-like columns with many repeated values, and
    # columns that share their partition: a code and its label (y independent
    # of them), an age and a birth year (y follows the age)
    X = np.column_stack(
        [rng.integers(0, k, size=n) for k in (2, 3, 5, 10, 30, 100)]
        + [rng.poisson(3, size=(n, 4)).T[i] for i in range(4)]
    ).astype(float)
    code = rng.integers(0, 50, size=n)
    age = rng.integers(18, 80, size=n)
    X = np.column_stack([X, code, np.sin(code), age, 2024 - age])
    y = X[:, 4] * 0.1 + 0.05 * age + rng.normal(size=n)
    return X, y, False


def part_alarms(datasets, sizes):
    kinds = ("gaussian", "lognormal", "rare-class", "multiclass", "integers")
    print(f"checks at level {ALARM_LEVEL}, rows in random order")
    for kind in kinds:
        for n in sizes:
            order_hits = entity_hits = 0
            rng = np.random.default_rng(n)
            for _ in range(datasets):
                X, y, classifier = _exchangeable(kind, rng, n)
                if n >= MIN_ROWS and order_evidence(y, classifier)[2] < ALARM_LEVEL:
                    order_hits += 1
                found = entity_columns(X, y)
                if found is not None and found[2] < ALARM_LEVEL:
                    entity_hits += 1
            print(
                f"{kind:<11} n={n:<6} order alarms {order_hits / datasets:.4f}  "
                f"entity alarms {entity_hits / datasets:.4f}  ({datasets} data sets)"
            )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--part", choices=["variance", "warnings", "alarms"], required=True
    )
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--rows", type=int, default=3000)
    parser.add_argument("--effect", type=float, default=0.0)
    parser.add_argument("--phis", type=float, nargs="+", default=[0.0, 0.6, 0.9, 0.95])
    parser.add_argument("--datasets", type=int, default=2000)
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 200, 1000, 10000])
    parser.add_argument(
        "--selector", default="",
        help="key=value,... for the selector of --part variance (n_repeats, and the "
        "default booster's n_estimators and learning_rate)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    start = time.perf_counter()
    if args.part == "variance":
        spec = where_time_goes.selector_spec(args.selector)
        part_variance(args.seeds, args.phis, args.effect, args.rows, spec)
    elif args.part == "warnings":
        part_warnings(args.seeds, args.rows)
    else:
        part_alarms(args.datasets, args.sizes)
    print(f"{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
