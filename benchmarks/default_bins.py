"""Fewer histogram bins for the default booster on few rows: as good a selection?

Issue 42. XGBoost's ``hist`` method evaluates every bin of every sampled column
at every node, whatever the number of rows: on 300 rows x 2,000 columns one
default fit (400 trees of depth 4, 256 bins) takes about 34 s on one thread,
of which almost all is that evaluation (measured: 9.5 s with 64 bins, 3.2 s
with 16). With n training rows a column has at most n distinct values, so
256 bins on 240 rows are one bin per value: every split point is tried, the
exact greedy search. Fewer bins hold several rows each.

This program fits the default ``TreeInnerSelector`` with the default
booster at several ``max_bin`` settings on the same data and seeds, and
reports, per data set and setting: the wall time, the relevant and noise
columns kept (where the truth is known), and how the scores and the
selection differ from those at 256 bins, next to how they differ between
two seeds at 256 bins (the seed noise the question is measured against).

Data sets:

- ``wide-reg``, ``wide-clf``: 300 rows x 2,000 Gaussian columns, the first
  10 relevant (y = X beta, beta from 0.6 to 1.5, plus unit noise; the
  classifier draws y from the logistic of X beta);
- ``tall-reg``, ``tall-clf`` (not run by default): 20,000 x 50, the data of
  ``where_time_goes.py`` (5 relevant columns, one interaction);
- ``diabetes``, ``cancer``: scikit-learn's diabetes (442 x 10) and breast
  cancer (569 x 30) with 10 Gaussian noise columns and a 30-level noise code
  one-hot encoded (the noise is known; "relevant" counts the real columns
  kept, whose truth is not known).

Usage::

    python benchmarks/default_bins.py                  # about 15 min on 2 cores
    python benchmarks/default_bins.py --bins 256 32 --seeds 0 1 --sets diabetes
    python benchmarks/default_bins.py --smoke          # seconds (the script tests)
    python benchmarks/default_bins.py --sets tall-reg tall-clf diabetes cancer \
        --settings n_estimators=400,learning_rate=0.01 \
        n_estimators=100,learning_rate=0.04          # a cheaper booster per fold
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from scipy.stats import spearmanr
from sklearn.datasets import load_breast_cancer, load_diabetes

from skl_treeinner import TreeInnerSelector
from skl_treeinner._readers import make_estimator


def wide(seed, classes, n=300, m=2000, relevant=10):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, m))
    beta = np.zeros(m)
    beta[:relevant] = np.linspace(0.6, 1.5, relevant)
    eta = X @ beta
    if classes:
        y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(int)
    else:
        y = eta + rng.normal(size=n)
    return X, y, np.arange(relevant), np.arange(relevant, m)


def tall(seed, classes, n=20000, m=50):
    """where_time_goes.py's data: 5 relevant columns of 50 (one interaction)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, m))
    signal = X[:, 0] + 0.5 * X[:, 1] - 0.5 * X[:, 2] + 0.3 * X[:, 3] * X[:, 4]
    noise = rng.normal(size=n)
    y = (signal + noise > 0).astype(int) if classes else signal + noise
    return X, y, np.arange(5), np.arange(5, m)


def real(seed, name):
    loader = load_diabetes if name == "diabetes" else load_breast_cancer
    X, y = loader(return_X_y=True)
    rng = np.random.default_rng(seed)
    n, p = X.shape
    code = rng.integers(0, 30, size=n)
    onehot = (code[:, None] == np.arange(30)).astype(float)
    X = np.hstack([X, rng.normal(size=(n, 10)), onehot])
    return X, y, np.arange(p), np.arange(p, p + 40)


SETS = {
    "wide-reg": lambda seed: wide(seed, classes=False),
    "wide-clf": lambda seed: wide(seed, classes=True),
    "diabetes": lambda seed: real(seed, "diabetes"),
    "cancer": lambda seed: real(seed, "cancer"),
    "tall-reg": lambda seed: tall(seed, classes=False),
    "tall-clf": lambda seed: tall(seed, classes=True),
}
CLASSIFICATION = ("wide-clf", "cancer", "tall-clf")


def parse_setting(text):
    """``"max_bin=32,n_estimators=100"`` -> the booster's parameters."""
    params = {}
    for part in text.split(","):
        key, value = part.split("=")
        params[key] = float(value) if "." in value or "e" in value else int(value)
    return params


def fit(X, y, setting, seed, classifier):
    est = make_estimator(
        "xgboost", classifier, random_state=seed, categorical=True, n_rows=len(y)
    ).set_params(**parse_setting(setting))  # the default's bins unless given
    sel = TreeInnerSelector(est, random_state=seed)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sel.fit(X, y)
    return time.perf_counter() - start, sel.scores_, sel.get_support()


def jaccard(a, b):
    union = np.sum(a | b)
    return 1.0 if union == 0 else float(np.sum(a & b) / union)


def report(name, runs, settings, seeds, truth):
    relevant, noise = truth
    base = settings[0]
    print(f"\n{name}")
    print("| setting | wall s | relevant kept | noise kept | Spearman vs first | "
          "Jaccard vs first |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    for b in settings:
        rows = [runs[b, s] for s in seeds]
        wall = np.mean([r[0] for r in rows])
        mean = np.mean([r[2][relevant].sum() for r in rows])
        kept_rel = f"{mean:.1f} of {relevant.size}"
        kept_noise = np.mean([r[2][noise].sum() for r in rows])
        rho = np.mean([spearmanr(runs[base, s][1], runs[b, s][1])[0] for s in seeds])
        jac = np.mean([jaccard(runs[base, s][2], runs[b, s][2]) for s in seeds])
        print(f"| {b} | {wall:.2f} | {kept_rel} | {kept_noise:.1f} | "
              f"{rho:.3f} | {jac:.2f} |")  # fmt: skip
    if len(seeds) > 1:
        a, b = runs[base, seeds[0]], runs[base, seeds[1]]
        print(f"seed noise at {base} (seeds {seeds[0]} and {seeds[1]}, same "
              f"data): Spearman {spearmanr(a[1], b[1])[0]:.3f}, Jaccard "
              f"{jaccard(a[2], b[2]):.2f}")  # fmt: skip


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bins", type=int, nargs="+", default=[256, 64, 32])
    parser.add_argument(
        "--settings", nargs="+", default=None,
        help='booster settings to compare instead of --bins, the first the '
        'baseline: "max_bin=256" "n_estimators=100,learning_rate=0.04"',
    )  # fmt: skip
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument(
        "--sets", nargs="+", default=list(SETS)[:4], choices=list(SETS)
    )  # fmt: skip
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args(argv)
    if args.smoke:
        args.bins, args.seeds, args.sets = [256, 32], [0, 1], ["diabetes"]
    settings = args.settings or [f"max_bin={b}" for b in args.bins]
    for name in args.sets:
        runs = {}
        for seed in args.seeds:
            # The data are drawn once (seed 0); the seeds vary the booster and
            # the folds, so seed noise and a setting's effect are comparable.
            X, y, relevant, noise = SETS[name](0)
            classifier = name in CLASSIFICATION
            for setting in settings:
                runs[setting, seed] = fit(X, y, setting, seed, classifier)
        report(name, runs, settings, args.seeds, (relevant, noise))


if __name__ == "__main__":
    main()
