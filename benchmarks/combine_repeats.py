"""Ways to combine the repeats' tests, compared on the same fits (issue 53).

``n_repeats`` tests the repeats' mean score over their mean standard error
(``_stats._inference.combine_repeats``): valid under any dependence between
the repeats, and conservative where they are weakly tied. This fits the
selector with R repeats on real targets with injected noise (as
``stability.py``: the same rows, ``random_state`` 0 to 4) and, from each
fit's per-repeat statistics, selects again with other combinations of the
repeats' p-values, each compared with the selector's cut-off
(``control="expected_false"``: p < min(0.05, 1/m)):

- ``mean-score``: the selector's own (the check that the rest is read right);
- ``twice-median``: 2 x the median p-value (valid under any dependence,
  Rüschendorf; the same as keeping a column that at least half the repeats
  keep at half the level);
- ``cauchy``: Liu and Xie's Cauchy combination, the mean of tan((1/2 - p) pi)
  (its tail holds under dependence for small levels, not proven for all);
- ``spread``: the mean of the repeats' z (each p-value as a normal
  quantile) over sqrt(1 - s^2 (1 - 1/R)), s^2 the smaller of the column's
  own variance of z over the repeats and the median of it over the columns
  that vary: if each z is N(0, 1) under the null and two repeats' z correlate
  by rho, s^2 estimates 1 - rho and the mean has variance rho + (1 - rho)/R
  (a measurement of the repeats' ties, not a proven test);
- ``one-repeat``: the first repeat alone (the default's chance, for scale).

For each: the mean pairwise Jaccard of the kept sets over seeds, the share of
real columns kept, the injected columns kept per fit, and over every injected
column of every fit the share of combined p-values below 0.05, 0.01 and 0.002
(the columns that do nothing: the level each rule holds).

``--datasets wide-null-regression wide-null-classification`` draws y
independent of 1,000 Gaussian columns on 2,000 rows afresh for each seed
instead (every column does nothing: the tails at the level ``1/m`` the
cut-off uses);
``--datasets tiny-null --seeds 200`` draws y independent of 5 columns on 200
rows afresh for each seed (its Jaccard is not a stability), as do
``rare-levels-regression`` and ``rare-levels-classification``
(``make_rare_levels``: a relevant and a noise categorical of rare levels,
one-hot, beside four numeric columns) and ``ar95`` (``make_time_series``:
AR(0.95) series that do nothing, fitted with ``TimeSeriesSplit(5)``, which
every repeat uses as given).

Usage::

    python benchmarks/combine_repeats.py [--repeats 8] [--n-jobs 2] [--datasets ...]
"""

from __future__ import annotations

import argparse
import warnings

import column_test
import numpy as np
import real_benchmark as rb
import stability
import where_time_goes
from joblib import Parallel, delayed
from scipy import stats
from sklearn.model_selection import TimeSeriesSplit
from threadpoolctl import threadpool_limits

from skl_treeinner import TreeInnerSelector
from skl_treeinner._stats._cutoff import adjusted_pvalues
from skl_treeinner._utils._validation import target_is_classes
from skl_treeinner.datasets import make_rare_levels, make_time_series

#: Designs drawn afresh by each seed (their Jaccard is not a stability).
FRESH = (
    "tiny-null",
    "rare-levels-regression",
    "rare-levels-classification",
    "ar95",
    "wide-null-regression",
    "wide-null-classification",
)
RULES = ("mean-score", "twice-median", "cauchy", "spread", "one-repeat")


def combined(rule, selector):
    """The combined p-values of ``rule`` from a fitted selector's repeats."""
    if rule == "mean-score":
        return selector.pvalues_
    p = np.array([r["pvalues_"] for r in selector._repeat_statistics])
    if rule == "one-repeat":
        return p[0]
    if rule == "twice-median":
        return np.minimum(1.0, 2.0 * np.median(p, axis=0))
    if rule == "spread":
        z = stats.norm.isf(np.clip(p, 1e-300, 1.0 - 1e-16))
        spread = np.var(z, axis=0, ddof=1)
        varies = (p < 1.0 - 1e-12).all(axis=0) & (spread > 0)
        pooled = np.median(spread[varies]) if varies.any() else 0.0
        s2 = np.minimum(np.minimum(spread, pooled), 1.0)
        r = p.shape[0]
        return stats.norm.sf(z.mean(axis=0) / np.sqrt(1.0 - s2 * (1.0 - 1.0 / r)))
    # Cauchy: tan((1/2 - p) pi) = 1 / tan(p pi), computed so for small p
    p = np.clip(p, 1e-300, 1.0 - 1e-16)
    t = np.mean(1.0 / np.tan(p * np.pi), axis=0)
    return stats.cauchy.sf(t)


def kept(rule, selector):
    """The columns ``rule`` keeps: combined p under the cut-off, tested score > 0."""
    p = combined(rule, selector)
    adjusted = adjusted_pvalues(p, "expected_false", 0.05)
    tested = selector.scores_ - selector.null_scores_
    if rule == "one-repeat":
        first = selector._repeat_statistics[0]
        tested = first["scores_"] - first["null_scores_"]
    return (adjusted < 0.05) & (tested > 0)


def _data(name, seed=0):
    """Columns, target, and which columns are real and which injected noise.

    ``tiny-null``: y independent of 5 columns on 200 rows, drawn anew by the
    seed (few columns and few rows: the spread's median is least sure).
    """
    if name == "tiny-null":
        rng = np.random.default_rng(5000 + seed)
        X, y = rng.normal(size=(200, 5)), rng.normal(size=200)
        return X, y, np.zeros(5, bool), np.ones(5, bool)
    if name.startswith("rare-levels-"):  # a noise categorical's rare dummies
        X, y, relevant, _ = make_rare_levels(
            3000, task=name.split("-")[2], random_state=seed
        )
        return X, y, relevant, ~relevant
    if name == "ar95":  # persistent series, every column noise (TimeSeriesSplit)
        X, y, _ = make_time_series(3000, phi=0.95, random_state=seed)
        return X, y, np.zeros(X.shape[1], bool), np.ones(X.shape[1], bool)
    if name.startswith("wide-null-"):  # y independent of 1,000 columns
        X, y, _ = column_test.wide_null(2000, name.split("-")[2], seed=seed)
        return X, y, np.zeros(X.shape[1], bool), np.ones(X.shape[1], bool)
    frame, y = rb.load(name)
    X, y, kinds = rb.with_noise(frame, y, 0)
    return X, y, kinds == "real", np.isin(kinds, rb.NOISE_KINDS)


def run_set(name, seeds, repeats, cv, booster):
    X, y, real, noise = _data(name)
    masks = {rule: [] for rule in RULES}
    null_p = {rule: [] for rule in RULES}
    reals, noises = [], []  # each fit's (fresh designs draw their own columns)
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(seeds):
            if name in FRESH:  # fresh data each seed: a simulation
                X, y, real, noise = _data(name, seed)
            estimator = stability._booster(booster, target_is_classes(y), 10_000 + seed)
            split = TimeSeriesSplit(5) if name == "ar95" else cv
            selector = TreeInnerSelector(
                estimator, cv=split, n_repeats=repeats, random_state=seed, n_jobs=1
            ).fit(X, y)
            reals.append(real)
            noises.append(noise)
            for rule in RULES:
                masks[rule].append(kept(rule, selector))
                null_p[rule].append(combined(rule, selector)[noise])
            # the selector's own rule, read right
            assert np.array_equal(masks["mean-score"][-1], selector.get_support())
    fits = list(zip(reals, noises, strict=True))
    return {
        rule: {
            "jaccard": np.nan
            if name in FRESH
            else rb.mean_pairwise_jaccard(masks[rule]),
            "real": float(
                np.mean(
                    [m[r].mean() for m, (r, _) in zip(masks[rule], fits, strict=True)]
                )
            )
            if real.any()
            else np.nan,
            "noise": float(
                np.mean(
                    [m[z].sum() for m, (_, z) in zip(masks[rule], fits, strict=True)]
                )
            ),
            "null_p": np.concatenate(null_p[rule]),
        }
        for rule in RULES
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(stability.DEFAULT_SETS))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=8)
    parser.add_argument("--cv", type=int, default=3)
    parser.add_argument(
        "--booster", default="n_estimators=100,learning_rate=0.04",
        help="key=value,... of the booster",
    )  # fmt: skip
    parser.add_argument("--n-jobs", type=int, default=1)
    args = parser.parse_args(argv)
    booster = where_time_goes.config(args.booster)
    results = Parallel(n_jobs=args.n_jobs)(
        delayed(run_set)(name, args.seeds, args.repeats, args.cv, booster)
        for name in args.datasets
    )
    print(
        f"{len(args.datasets)} data sets, random_state 0..{args.seeds - 1}, "
        f"n_repeats={args.repeats}, cv={args.cv}, booster {booster}:\n"
    )
    print(
        "| combination | Jaccard over seeds | real columns kept | injected kept per "
        "fit | injected p < 0.05 / 0.01 / 0.002 |"
    )
    print("|---|---|---|---|---|")
    for rule in RULES:
        rows = [r[rule] for r in results]
        p = np.concatenate([r["null_p"] for r in rows])
        tail = " / ".join(f"{np.mean(p < a):.4f}" for a in (0.05, 0.01, 0.002))
        print(
            f"| {rule} | {np.nanmean([r['jaccard'] for r in rows]):.3f} "
            f"| {np.nanmean([r['real'] for r in rows]):.3f} "
            f"| {np.mean([r['noise'] for r in rows]):.2f} | {tail} ({p.size}) |"
        )


if __name__ == "__main__":
    main()
