"""Mean ROC AUC of TreeInnerSelector's scores on the paper's simulated data.

For each seed, make_paper_simulation draws 2000 rows (50 features, 5 relevant)
and the default TreeInnerSelector (XGBoost, 400 trees, eta 0.01, depth 4,
min_child_weight 1, lambda 1) scores the features; the AUC of ``scores_``
against the 5-relevant / 45-noisy labels is averaged over seeds, as in the
paper's Table 4 (out-of-sample TreeInner with PreDecomp: classification
0.786, regression 0.638).

Configurations, on the same seeds and data:

- ``single``: cv=None, 1000 rows to fit and 1000 held out (the paper's setting);
- ``cv=2`` and ``cv=5``: cross-fitting, every row held out once, scores summed.

Usage::

    python benchmarks/selector_auc.py [--task regression|classification]
        [--seeds 20] [--first-seed 0] [--tree-method hist|exact] [--n-jobs 1]
        [--threads 1]

``--threads`` caps the booster's OpenMP threads (threadpoolctl); XGBoost's
default of all cores is many times slower on a shared machine and gives the
same trees.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.metrics import roc_auc_score
from threadpoolctl import threadpool_limits

from skl_treeinner import TreeInnerSelector
from skl_treeinner._readers import default_estimator
from skl_treeinner.datasets import make_paper_simulation


def run(task, seeds, cv, tree_method, n_jobs):
    aucs = []
    for seed in seeds:
        X, y, relevant = make_paper_simulation(task, 2000, random_state=seed)
        estimator = None
        if tree_method != "hist":  # the selector's default, another tree method
            estimator = default_estimator(task == "classification", seed)
            estimator.set_params(tree_method=tree_method)
        selector = TreeInnerSelector(
            estimator, cv=cv, random_state=seed, n_jobs=n_jobs
        ).fit(X, y)
        aucs.append(roc_auc_score(relevant, selector.scores_))
    return np.asarray(aucs)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="regression")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--tree-method", default="hist")
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    print(
        f"task={args.task} seeds={seeds.start}..{seeds.stop - 1} "
        f"tree_method={args.tree_method}"
    )
    print(f"{'config':>8}  {'mean AUC':>8}  {'se':>6}  {'min':>6}  {'time':>7}")
    for name, cv in (("single", None), ("cv=2", 2), ("cv=5", 5)):
        start = time.perf_counter()
        with threadpool_limits(args.threads):
            aucs = run(args.task, seeds, cv, args.tree_method, args.n_jobs)
        se = aucs.std(ddof=1) / np.sqrt(aucs.size)
        print(
            f"{name:>8}  {aucs.mean():8.3f}  {se:6.3f}  {aucs.min():6.3f}  "
            f"{time.perf_counter() - start:6.1f}s",
            flush=True,
        )


if __name__ == "__main__":
    main()
