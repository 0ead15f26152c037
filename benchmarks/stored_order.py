"""scikit-learn's bundled data sets in their stored order: true or false alarm?

``DependentRowsWarning`` says "the rows look ordered" when neighbouring rows'
targets agree more than in random order. In a time series that is a true
alarm: columns drifting with time let a model recognise when a held-out row
is from. Does the stored order of scikit-learn's bundled data leak anything
into the selector's shuffled folds? For each data set this script

1. says whether the default selector warns in the stored order;
2. fits the default selector in the stored order and on R random row
   permutations (same ``random_state``), and compares the selections:
   the mean Jaccard overlap of the kept sets, stored order against each
   permutation, and permutations against each other. With shuffled folds
   the order can only matter through the rows' positions; equal overlaps
   say it leaks nothing.
3. adds the row's stored position as a column ("position") and says how
   often the selector keeps it: the order itself tells about y when it does.

Usage::

    python benchmarks/stored_order.py [--repeats 4] [--data breast_cancer,...]
"""

from __future__ import annotations

import argparse
import itertools
import warnings

import numpy as np
import xgboost as xgb
from sklearn import datasets as skd

from skl_treeinner import TreeInnerSelector
from skl_treeinner.exceptions import DependentRowsWarning

LOADERS = {
    "breast_cancer": (skd.load_breast_cancer, True),
    "diabetes": (skd.load_diabetes, False),
    "wine": (skd.load_wine, True),
    "iris": (skd.load_iris, True),
    "digits": (skd.load_digits, True),
}


def _selector(classes):
    cls = xgb.XGBClassifier if classes else xgb.XGBRegressor
    booster = cls(n_estimators=100, max_depth=3, learning_rate=0.1, n_jobs=2)
    return TreeInnerSelector(booster, random_state=0)


def _kept(X, y, classes):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DependentRowsWarning)
        selector = _selector(classes).fit(X, y)
    warned = any(issubclass(w.category, DependentRowsWarning) for w in caught)
    return frozenset(np.flatnonzero(selector.support_)), warned


def _jaccard(a, b):
    return len(a & b) / max(len(a | b), 1)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=4)
    parser.add_argument("--data", default=",".join(LOADERS))
    args = parser.parse_args(argv)
    print(
        "| data | rows x cols | warns in stored order | overlap stored/permuted "
        "| overlap permuted/permuted | position kept (stored, permuted) |"
    )
    print("|---|---|---|---|---|---|")
    for name in args.data.split(","):
        load, classes = LOADERS[name]
        X, y = load(return_X_y=True)
        stored, warned = _kept(X, y, classes)
        rng = np.random.default_rng(0)
        perms = [rng.permutation(len(y)) for _ in range(args.repeats)]
        permuted = [_kept(X[p], y[p], classes)[0] for p in perms]
        cross = np.mean([_jaccard(stored, k) for k in permuted])
        within = np.mean(
            [_jaccard(a, b) for a, b in itertools.combinations(permuted, 2)]
        )
        position = np.arange(len(y), dtype=float)[:, None]
        with_pos = np.hstack([X, position])
        pos_stored = X.shape[1] in _kept(with_pos, y, classes)[0]
        p = perms[0]
        pos_perm = X.shape[1] in _kept(with_pos[p], y[p], classes)[0]
        print(
            f"| {name} | {X.shape[0]} x {X.shape[1]} | {'yes' if warned else 'no'} "
            f"| {cross:.2f} | {within:.2f} | {pos_stored}, {pos_perm} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
