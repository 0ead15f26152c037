"""The test of a column against the test of the model's use (issue 40).

Data: :func:`skl_treeinner.datasets.make_rare_levels` (a one-hot encoded
categorical with rare levels that drives y, beside a noise one, and four
numeric columns of which two are relevant), 3,000 rows, the default
booster. For each configuration (the test, and how rows are held out:
one split, 5-fold symmetric cross-fitting, or forward-chained blocks where
booster k is fitted on the blocks before k and scores block k), over the
seeds: the columns with no effect kept per fit, the relevant dummies kept
per fit, the share of the no-effect columns' p-values below 0.05 and 0.01,
and the seconds per fit::

    python benchmarks/column_test.py --task regression --seeds 8
    python benchmarks/column_test.py --task classification --seeds 4

Forward-chained blocks are passed to the selector as a ``cv`` iterable
(``forward-3``: three equal blocks, two boosters; ``forward-5``: five).
"""

import argparse
import time

import numpy as np

from skl_treeinner import TreeInnerSelector
from skl_treeinner.datasets import make_rare_levels

CONFIGS = {
    "model/one-split": ("model", None),
    "model/cv5": ("model", 5),
    "column/one-split": ("column", None),
    "column/cv5": ("column", 5),
    "column/forward-3": ("column", "forward-3"),
    "column/forward-5": ("column", "forward-5"),
}


def forward_blocks(n, k, seed):
    """(train, test) pairs: blocks of shuffled rows, each scored by those before."""
    order = np.random.default_rng(seed).permutation(n)
    blocks = [np.sort(b) for b in np.array_split(order, k)]
    return [(np.sort(np.concatenate(blocks[:i])), blocks[i]) for i in range(1, k)]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", default="regression")
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--rows", type=int, default=3000)
    parser.add_argument("--configs", nargs="*", default=list(CONFIGS))
    args = parser.parse_args(argv)
    rows = {name: [] for name in args.configs}
    for seed in range(args.seeds):
        X, y, relevant, noise = make_rare_levels(
            args.rows, task=args.task, random_state=seed
        )
        null = ~relevant
        for name in args.configs:
            test, cv = CONFIGS[name]
            if isinstance(cv, str):
                cv = forward_blocks(len(y), int(cv.split("-")[1]), seed)
            start = time.perf_counter()
            sel = TreeInnerSelector(test=test, cv=cv, random_state=seed).fit(X, y)
            seconds = time.perf_counter() - start
            support, p = sel.get_support(), sel.pvalues_
            dummies = relevant.copy()
            dummies[:4] = False
            rows[name].append(
                (
                    (support & null).sum(),
                    (support & dummies).sum(),
                    np.mean(p[null] < 0.05),
                    np.mean(p[null] < 0.01),
                    seconds,
                )
            )
        print(f"seed {seed} done", flush=True)
    print(
        f"\n{args.task}, {args.rows} rows, {args.seeds} seeds (mean per fit)\n"
        "| configuration | no-effect columns kept | relevant dummies kept | "
        "null p < 0.05 | null p < 0.01 | seconds |\n|---|---|---|---|---|---|"
    )
    for name, got in rows.items():
        a = np.mean(got, axis=0)
        print(
            f"| {name} | {a[0]:.2f} | {a[1]:.1f} | {a[2]:.3f} | {a[3]:.3f} | "
            f"{a[4]:.1f} |"
        )


if __name__ == "__main__":
    main()
