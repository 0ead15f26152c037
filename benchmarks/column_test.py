"""The test of a column against the test of the model's use (issue 40).

Two designs, each over seeds, with the default booster:

- ``rare-levels`` (default): :func:`skl_treeinner.datasets.make_rare_levels`
  (a one-hot encoded categorical with rare levels that drives y, beside a
  noise one, and four numeric columns of which two are relevant), 3,000 rows;
- ``wide-null``: y independent of 1,000 standard normal columns, 2,000 rows
  (cross-fitting's shared chance: every booster learns the sample's chance
  tie of a column to y).

For each configuration (the test, and how rows are held out: one split,
5-fold symmetric cross-fitting, or chained folds where booster k is fitted
on the folds before k and scores fold k, which an int ``cv`` means under the
test of a column): the columns with no
effect kept per fit, the relevant dummies kept per fit, the shares of the
no-effect columns' p-values below 0.05 and 0.01, the same share below 0.05
among the no-effect columns the boosters split on 100 times or more, and the
seconds per fit::

    python benchmarks/column_test.py --task regression --seeds 8
    python benchmarks/column_test.py --task classification --seeds 4
    python benchmarks/column_test.py --design wide-null --task classification \\
        --seeds 20 --configs model/cv5 column/cv5 column/forward-5
    python benchmarks/column_test.py --design timing

``--design timing`` times the default fit with each test instead (``cv=5``,
chained under the test of a column; best of 2 in one process after a
warm-up, on 2,000 x 30, 2,000 x 50 and 3,000 x 89 data).

``column/cv5-symmetric`` passes ``KFold(5)`` (stratified for classification)
as the splitter, which is used as given; ``column/forward-5`` passes five
unstratified chained blocks as a ``cv`` iterable (the measurement that chose
chaining, before the selector chained its int folds).
"""

import argparse
import time

import numpy as np
import where_time_goes
from sklearn.model_selection import KFold, StratifiedKFold

from skl_treeinner import TreeInnerSelector, read_ensemble
from skl_treeinner._scoring import _permutation
from skl_treeinner.datasets import make_rare_levels

CONFIGS = {
    "model/one-split": ("model", None),
    "model/cv5": ("model", 5),
    "column/one-split": ("column", None),
    # An int cv chains its folds under the test of a column.
    "column/cv5": ("column", 5),
    "column/cv3": ("column", 3),
    # Symmetric 5-fold cross-fitting, passed as a splitter.
    "column/cv5-symmetric": ("column", "symmetric-5"),
    "column/forward-5": ("column", "forward-5"),
}
#: Splits over all boosters from which a no-effect column counts as heavily used.
HEAVY = 100


def forward_blocks(n, k, seed):
    """(train, test) pairs: blocks of shuffled rows, each scored by those before."""
    order = np.random.default_rng(seed).permutation(n)
    blocks = [np.sort(b) for b in np.array_split(order, k)]
    return [(np.sort(np.concatenate(blocks[:i])), blocks[i]) for i in range(1, k)]


def wide_null(rows, task, seed, columns=1000):
    """y independent of ``columns`` standard normal columns."""
    rng = np.random.default_rng(1000 + seed)
    X = rng.standard_normal((rows, columns))
    y = rng.integers(0, 2, rows) if task == "classification" else rng.normal(size=rows)
    return X, y, np.zeros(columns, dtype=bool)


def split_counts(selector, n_features):
    """Splits on each column over all of the selector's boosters."""
    total = np.zeros(n_features, dtype=np.int64)
    for est in selector.estimators_:
        feature = read_ensemble(est).feature
        total += np.bincount(feature[feature >= 0], minlength=n_features)
    return total


def timing(repeat=2):
    """Seconds of the model's test and the column's, default cv=5, best of ``repeat``.

    In one process after a warm-up fit (the kernel compiled): 2,000 x 30
    Gaussian regression, the paper's 2,000 x 50 classification, and
    make_rare_levels' 3,000 x 89.
    """
    from skl_treeinner.datasets import make_paper_simulation

    rng = np.random.default_rng(0)
    X30 = rng.standard_normal((2000, 30))
    y30 = X30[:, :5].sum(axis=1) + rng.standard_normal(2000)
    Xp, yp, _ = make_paper_simulation("classification", 2000, random_state=0)
    Xr, yr, _, _ = make_rare_levels(3000, random_state=0)
    TreeInnerSelector(test="column", random_state=0).fit(X30[:300], y30[:300])
    print("| data | model, cv=5 | column, cv=5 (chained) | ratio |\n|---|---|---|---|")
    for name, (X, y) in {
        "2,000 x 30 regression": (X30, y30),
        "paper 2,000 x 50 classification": (Xp, yp),
        "rare levels 3,000 x 89": (Xr, yr),
    }.items():
        seconds = {}
        for test in ("model", "column"):
            runs = []
            for _ in range(repeat):
                start = time.perf_counter()
                TreeInnerSelector(test=test, random_state=0).fit(X, y)
                runs.append(time.perf_counter() - start)
            seconds[test] = min(runs)
        ratio = seconds["column"] / seconds["model"]
        print(
            f"| {name} | {seconds['model']:.2f} s | {seconds['column']:.2f} s | "
            f"{ratio:.2f}x |"
        )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--design", default="rare-levels")
    parser.add_argument("--task", default="regression")
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--rows", type=int, default=None)
    parser.add_argument("--configs", nargs="*", default=list(CONFIGS))
    parser.add_argument(
        "--selector", default="",
        help="key=value,... for every configuration's selector (n_repeats, cv, and "
        "the default booster's n_estimators and learning_rate)",
    )  # fmt: skip
    parser.add_argument(
        "--draws", type=int, default=None,
        help="draws per row of the test of a column (default: the selector's)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if args.draws is not None:  # a measurement of the choice, not an option
        _permutation.DRAWS = args.draws
    spec = where_time_goes.selector_spec(args.selector)
    if args.design == "timing":
        timing()
        return
    rows = {name: [] for name in args.configs}
    for seed in range(args.seeds):
        if args.design == "wide-null":
            X, y, relevant = wide_null(args.rows or 2000, args.task, seed)
        else:
            X, y, relevant, _ = make_rare_levels(
                args.rows or 3000, task=args.task, random_state=seed
            )
        null = ~relevant
        dummies = relevant.copy()
        dummies[:4] = False
        for name in args.configs:
            test, cv = CONFIGS[name]
            if isinstance(cv, str) and cv.startswith("forward"):
                cv = forward_blocks(len(y), int(cv.split("-")[1]), seed)
            elif isinstance(cv, str):  # symmetric folds, as an int cv without
                k = int(cv.split("-")[1])  # the test of a column
                classes = args.task == "classification"
                cv = (StratifiedKFold if classes else KFold)(
                    k, shuffle=True, random_state=seed
                )
            start = time.perf_counter()
            params = {"test": test, "cv": cv, "random_state": seed, **spec}
            sel = TreeInnerSelector(**params).fit(X, y)
            seconds = time.perf_counter() - start
            support, p = sel.get_support(), sel.pvalues_
            heavy = null & (split_counts(sel, X.shape[1]) >= HEAVY)
            rows[name].append(
                (
                    (support & null).sum(),
                    (support & dummies).sum(),
                    np.mean(p[null] < 0.05),
                    np.mean(p[null] < 0.01),
                    (p[heavy] < 0.05).sum(),
                    heavy.sum(),
                    seconds,
                )
            )
        print(f"seed {seed} done", flush=True)
    print(
        f"\n{args.design}, {args.task}, {len(y)} rows, {args.seeds} seeds (mean per "
        f"fit{'; ' + args.selector if args.selector else ''})\n"
        "| configuration | no-effect columns kept | relevant dummies kept | "
        "null p < 0.05 | null p < 0.01 | heavily used null p < 0.05 | seconds |\n"
        "|---|---|---|---|---|---|---|"
    )
    for name, got in rows.items():
        a = np.mean(got, axis=0)
        total = np.sum(got, axis=0)
        heavy = f"{total[4] / max(total[5], 1):.3f} of {total[5]}"
        print(
            f"| {name} | {a[0]:.2f} | {a[1]:.1f} | {a[2]:.3f} | {a[3]:.3f} | "
            f"{heavy} | {a[6]:.1f} |"
        )


if __name__ == "__main__":
    main()
