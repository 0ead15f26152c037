"""The refit curve on null data: how often does either rule keep nothing?

Issue 30's target: on data where y is independent of X, ``max_features="best"``
and ``"1se"`` select 0 features in at least 95 % of seeds. For every seed and
task (regression, binary classification), X holds Gaussian columns and
integer columns of 5 to 200 levels (the kinds noise comes in) and y is drawn
independently of X; the selector is fitted once per ``alpha`` (the default,
and ``None``: the curve over every feature scoring above zero) with the
default booster and folds, and both rules read the one curve.

Usage::

    python benchmarks/refit_curve.py [--seeds 20] [--n-samples 500]
        [--n-features 30] [--quick]

Prints, per task, ``alpha`` and rule, the share of seeds with nothing
selected, the mean number selected, the mean k the curve chose and the mean
seconds per fit.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from skl_treeinner import TreeInnerSelector


def make_null(task, n, p, seed):
    """Gaussian and integer columns, and a target independent of them."""
    rng = np.random.default_rng(seed)
    gauss = rng.normal(size=(n, p - p // 3))
    levels = rng.integers(5, 201, size=p // 3)
    ints = rng.integers(0, levels, size=(n, p // 3)).astype(float)
    X = np.hstack([gauss, ints])
    y = rng.normal(size=n) if task == "regression" else rng.integers(0, 2, size=n)
    return X, y


def run(seeds, n, p):
    rows = []
    for task in ("regression", "classification"):
        for seed in range(seeds):
            X, y = make_null(task, n, p, seed)
            for alpha in ("default", None):
                params = {} if alpha == "default" else {"alpha": None}
                start = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    sel = TreeInnerSelector(
                        max_features="best", random_state=seed, **params
                    ).fit(X, y)
                seconds = time.perf_counter() - start
                for rule in ("best", "1se"):
                    sel.set_params(max_features=rule)
                    rows.append(
                        {
                            "task": task,
                            "alpha": str(alpha),
                            "rule": rule,
                            "selected": int(sel.get_support().sum()),
                            "k": sel._curve_k(),
                            "seconds": seconds,
                        }
                    )
    return rows


def summarize(rows):
    keys = sorted({(r["task"], r["alpha"], r["rule"]) for r in rows})
    print(
        "| task | alpha | rule | seeds with 0 selected | mean selected | mean k "
        "| s per fit |"
    )
    print("|---|---|---|---|---|---|---|")
    for task, alpha, rule in keys:
        part = [
            r for r in rows if (r["task"], r["alpha"], r["rule"]) == (task, alpha, rule)
        ]
        none = np.mean([r["selected"] == 0 for r in part])
        print(
            f"| {task} | {alpha} | {rule} | {none:.2f} ({len(part)}) | "
            f"{np.mean([r['selected'] for r in part]):.2f} | "
            f"{np.mean([r['k'] for r in part]):.2f} | "
            f"{np.mean([r['seconds'] for r in part]):.1f} |"
        )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--n-samples", type=int, default=500)
    parser.add_argument("--n-features", type=int, default=30)
    parser.add_argument("--quick", action="store_true", help="1 seed, 200 x 9")
    args = parser.parse_args(argv)
    if args.quick:
        args.seeds, args.n_samples, args.n_features = 1, 200, 9
    start = time.perf_counter()
    summarize(run(args.seeds, args.n_samples, args.n_features))
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
