"""Is the one-sided t-test on per-row TreeInner terms calibrated at H0's boundary?

``TreeInnerSelector.pvalues_`` test H0: E[z_k] <= 0 with Student's t on the
per-row terms ``z_ik`` of the held-out score. The terms are heavy-tailed (a few
rows carry large residuals), so the t-test's error rate is not guaranteed. This
program measures it where it matters most, at the boundary E[z_k] = 0:

1. fit the default booster (TreeInnerSelector's: XGBoost, 400 trees, eta 0.01,
   depth 4) on ``--train`` rows of a data set that can be drawn without limit;
2. compute the per-row terms on ``--population`` fresh rows
   (``tree_inner(..., per_sample=True)``) and centre every feature's column at
   its mean, so that each column is a population with E[z] = 0 exactly and the
   real shape (skew, tails) of held-out TreeInner terms;
3. draw ``--draws`` samples of m rows (with replacement) for each m in ``--m``,
   run the test on each, and count how often p < 0.05 and p < 0.01.

A calibrated test rejects at its level; the table gives the rate averaged over
the features and the worst feature's. Features with no spread (never split on)
are left out. Also shown: the same with the normal distribution instead of
Student's t, and the mean skewness of the columns.

Data sets: ``paper-regression`` and ``paper-classification``
(``make_paper_simulation``, 50 discrete features, 5 relevant), ``demo`` (the
demo's data: 30 features, 5 relevant with 2-4 values among continuous noise),
``wide`` (1000 Gaussian columns, y linear in 10 of them with coefficients 0.1
to 0.5 and unit noise: issue 26's example, where most columns are split on in
a few trees only).

``--by-usage`` breaks the rates down by how often a feature's term is nonzero
(the share of the population's rows whose path crosses a split on it): a
rarely used column's test rests on its few nonzero rows (issue 26).

Usage::

    python benchmarks/calibration.py [--seeds 3] [--train 1000]
        [--population 100000] [--m 30 100 300 1000 3000] [--draws 2000]
    python benchmarks/calibration.py --datasets wide --population 20000 \
        --m 400 2000 --draws 1000 --seeds 2 --by-usage
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import stats
from threadpoolctl import threadpool_limits

from skl_treeinner import tree_inner
from skl_treeinner._cli._demo import make_demo_data
from skl_treeinner._readers import default_estimator
from skl_treeinner._stats._inference import one_sided_test
from skl_treeinner.datasets import make_paper_simulation

DATASETS = {
    "paper-regression": lambda n, seed: make_paper_simulation(
        "regression", n, random_state=seed
    )[:2],
    "paper-classification": lambda n, seed: make_paper_simulation(
        "classification", n, random_state=seed
    )[:2],
    "demo": lambda n, seed: make_demo_data(n, seed)[:2],
    "wide": lambda n, seed: make_wide_data(n, seed),
}

#: Bins of the share of rows with a nonzero term (``--by-usage``).
USAGE_EDGES = (0.0, 0.01, 0.03, 0.1, 0.3, 1.01)


def make_wide_data(n, seed, m=1000, k=10):
    """Issue 26's wide example: y linear in k of m Gaussian columns."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, m))
    columns = np.linspace(0, m - 1, k + 2).astype(int)[1:-1]
    y = X[:, columns] @ np.linspace(0.1, 0.5, k) + rng.normal(size=n)
    return X, y


def population(name, seed, n_train, n_population):
    """Per-row terms of a fitted default booster on fresh rows, centred."""
    X, y = DATASETS[name](n_train + n_population, seed)
    classification = name.endswith("classification")
    model = default_estimator(classification, seed).set_params(n_jobs=1)
    model.fit(X[:n_train], y[:n_train])
    z = tree_inner(model, X[n_train:], y[n_train:], per_sample=True)
    spread = z.std(axis=0)
    z = z[:, spread > 1e-12 * np.abs(z).max(initial=1.0)]
    nonzero = (z != 0).mean(axis=0)
    return z - z.mean(axis=0), stats.skew(z, axis=0), nonzero


def rejection_rates(z, m, draws, rng, batch=100):
    """Share of draws with p < 0.05 and p < 0.01, per feature (t and normal)."""
    hits = {key: np.zeros(z.shape[1]) for key in ("t05", "t01", "n05")}
    for start in range(0, draws, batch):
        size = min(batch, draws - start)
        for _ in range(size):
            sample = z[rng.integers(0, z.shape[0], size=m)]
            test = one_sided_test(sample)
            hits["t05"] += test.pvalues < 0.05
            hits["t01"] += test.pvalues < 0.01
            with np.errstate(divide="ignore", invalid="ignore"):
                normal = stats.norm.sf(test.scores / test.se)
            hits["n05"] += normal < 0.05
    return {key: value / draws for key, value in hits.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--train", type=int, default=1000)
    parser.add_argument("--population", type=int, default=100_000)
    parser.add_argument("--m", type=int, nargs="+", default=[30, 100, 300, 1000, 3000])
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument(
        "--datasets",
        nargs="+",
        default=["paper-regression", "paper-classification", "demo"],
    )
    parser.add_argument("--by-usage", action="store_true")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    print(
        f"Rejection rate of the one-sided test at E[z] = 0 ({args.draws} draws of m "
        f"rows from {args.population} held-out rows; {args.seeds} seeds, the "
        "features' mean and the worst feature):\n"
    )
    print(
        "| data set | m | t: p < 0.05 (mean / worst) | t: p < 0.01 (mean / worst) "
        "| normal: p < 0.05 (mean) | mean skewness |"
    )
    print("|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    with threadpool_limits(1):
        for name in args.datasets:
            pops = [
                population(name, seed, args.train, args.population)
                for seed in range(args.seeds)
            ]
            skew = np.mean(np.concatenate([s for _, s, _ in pops]))
            usage = np.concatenate([u for _, _, u in pops])
            for m in args.m:
                rates = [rejection_rates(z, m, args.draws, rng) for z, _, _ in pops]
                t05 = np.concatenate([r["t05"] for r in rates])
                t01 = np.concatenate([r["t01"] for r in rates])
                n05 = np.concatenate([r["n05"] for r in rates])
                print(
                    f"| {name} | {m} | {t05.mean():.3f} / {t05.max():.3f} | "
                    f"{t01.mean():.4f} / {t01.max():.3f} | {n05.mean():.3f} | "
                    f"{skew:.2f} |",
                    flush=True,
                )
                if args.by_usage:
                    print_by_usage(name, m, usage, t05, t01)
    print(f"\n{time.perf_counter() - start:.0f} s")


def print_by_usage(name, m, usage, t05, t01):
    """Rates by the share of rows whose term is nonzero, as table rows."""
    for low, high in zip(USAGE_EDGES[:-1], USAGE_EDGES[1:], strict=True):
        inside = (usage >= low) & (usage < high)
        if inside.any():
            print(
                f"| {name}, nonzero rows {low:.0%} to {min(high, 1):.0%} "
                f"({int(inside.sum())} features) | {m} | "
                f"{t05[inside].mean():.3f} / {t05[inside].max():.3f} | "
                f"{t01[inside].mean():.4f} / {t01[inside].max():.3f} | | |",
                flush=True,
            )


if __name__ == "__main__":
    main()
