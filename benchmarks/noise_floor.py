"""How often noise passes where few rows reach a column, with and without the floor.

On data where y is independent of X (Gaussian columns) and the target has rare
values, a column the booster splits on rarely has nonzero terms on a few held-out
rows only. This counts, over several fits of the default selector (one 50/50 split,
``cv=None``), the noise p-values below 0.05, 0.01 and 0.001, with the test as it is
(the rows' spread, floored by the target's own noise: ``_scoring._noise.row_noise``) and
with the rows' spread alone (the floor switched off).

Targets (``--target``): ``rare``, 0/1 with ``--rate`` positives (default 0.02);
``lognormal``, exp(2 N(0, 1)); ``normal``.

Usage::

    python benchmarks/noise_floor.py --target rare --fits 10 --columns 100
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import skl_treeinner._stats._inference as inference
from skl_treeinner import TreeInnerSelector


def draw(target, rng, n, rate):
    if target == "rare":
        return (rng.random(n) < rate).astype(np.int64)
    if target == "lognormal":
        return np.exp(2.0 * rng.normal(size=n))
    return rng.normal(size=n)


def run(target, *, fits, rows, columns, rate, floor):
    pool_noise = inference.pool_noise
    if not floor:
        inference.pool_noise = lambda *args, **kwargs: None
    try:
        pvalues = []
        for seed in range(fits):
            rng = np.random.default_rng(seed)
            X = rng.normal(size=(rows, columns))
            y = draw(target, rng, rows, rate)
            sel = TreeInnerSelector(cv=None, random_state=seed, n_jobs=1).fit(X, y)
            pvalues.append(sel.pvalues_)
    finally:
        inference.pool_noise = pool_noise
    return np.concatenate(pvalues)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--target", choices=["rare", "lognormal", "normal"], default="rare"
    )
    parser.add_argument("--rate", type=float, default=0.02)
    parser.add_argument("--fits", type=int, default=10)
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--columns", type=int, default=100)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    print("| test | noise p-values | below 0.05 | below 0.01 | below 0.001 | seconds |")
    print("|---|---|---|---|---|---|")
    for floor in (False, True):
        start = time.perf_counter()
        p = run(
            args.target,
            fits=args.fits,
            rows=args.rows,
            columns=args.columns,
            rate=args.rate,
            floor=floor,
        )
        used = p[p < 1]
        name = "rows' spread and floor" if floor else "rows' spread alone"
        print(
            f"| {name} | {used.size} | {np.sum(used < 0.05)} | {np.sum(used < 0.01)} "
            f"| {np.sum(used < 0.001)} | {time.perf_counter() - start:.0f} |"
        )


if __name__ == "__main__":
    main()
