"""Wall time of tree_inner (PreDecomp) against XGBoost's own pred_leaf.

Target (issue 2): tree_inner on held-out rows takes at most 3x the wall time
of ``booster.predict(DMatrix(X), pred_leaf=True)`` on the same rows, both
timed side by side in this run. Also reports peak extra memory of tree_inner
(tracemalloc sees numpy and scipy allocations, not XGBoost's C++ buffers).

    python benchmarks/bench_tree_inner.py          # 10k rows, 100 features,
                                                   # 500 trees of depth 6
    python benchmarks/bench_tree_inner.py --quick  # small smoke run (CI)
    python benchmarks/bench_tree_inner.py --treeshap  # also TreeSHAP (slow)

With --treeshap it also times tree_inner(attribution="treeshap") against one
full-ensemble TreeSHAP pass, ``predict(pred_contribs=True)`` (target <= 1.5x).
"""

from __future__ import annotations

import argparse
import os
import time
import tracemalloc

import numpy as np
import xgboost as xgb

from skl_treeinner import predecomp, tree_inner
from skl_treeinner._readers import read_model


def best_of(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times), float(np.median(times))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--features", type=int, default=100)
    ap.add_argument("--trees", type=int, default=500)
    ap.add_argument("--depth", type=int, default=6)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="tiny sizes for CI")
    ap.add_argument(
        "--treeshap", action="store_true", help="also time TreeSHAP (one repeat)"
    )
    args = ap.parse_args(argv)
    if args.quick:
        args.rows, args.features, args.trees = 500, 10, 20
        args.depth, args.repeat = 3, 1

    rng = np.random.default_rng(0)
    n, p = args.rows, args.features
    X = rng.normal(size=(2 * n, p))
    y = X[:, :5].sum(axis=1) + rng.normal(size=2 * n)
    model = xgb.XGBRegressor(
        n_estimators=args.trees,
        max_depth=args.depth,
        learning_rate=0.1,
        tree_method="hist",
        random_state=0,
    ).fit(X[:n], y[:n])
    booster = model.get_booster()
    X_val, y_val = X[n:], y[n:]

    def leaf():
        booster.predict(xgb.DMatrix(X_val), pred_leaf=True)

    def inner():
        tree_inner(model, X_val, y_val)

    def read():
        read_model(model)

    inner()  # warm-up (imports, thread pools)
    t_leaf, m_leaf = best_of(leaf, args.repeat)
    t_inner, m_inner = best_of(inner, args.repeat)
    t_read, _ = best_of(read, args.repeat)
    t_pd, _ = best_of(lambda: predecomp(model, X_val), max(1, args.repeat // 2))

    if args.treeshap:

        def contribs():
            booster.predict(xgb.DMatrix(X_val), pred_contribs=True)

        def inner_shap():
            tree_inner(model, X_val, y_val, attribution="treeshap")

        t_contribs, _ = best_of(contribs, 1)
        t_inner_shap, _ = best_of(inner_shap, 1)

    tracemalloc.start()
    inner()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    print(
        f"rows={n} features={p} trees={args.trees} depth={args.depth} "
        f"cores={os.cpu_count()} xgboost={xgb.__version__}"
    )
    print(f"pred_leaf (incl. DMatrix)   best {t_leaf:.3f}s  median {m_leaf:.3f}s")
    print(
        f"tree_inner (PreDecomp)      best {t_inner:.3f}s  median {m_inner:.3f}s"
        f"  (of which reading the model {t_read:.3f}s)"
    )
    print(f"predecomp (n x p output)    best {t_pd:.3f}s")
    print(
        f"ratio tree_inner / pred_leaf: best {t_inner / t_leaf:.2f}x, "
        f"median {m_inner / m_leaf:.2f}x  (target <= 3x)"
    )
    if args.treeshap:
        print(f"pred_contribs (full TreeSHAP)      {t_contribs:.2f}s")
        print(f"tree_inner (TreeSHAP per round)    {t_inner_shap:.2f}s")
        print(
            "ratio tree_inner(treeshap) / pred_contribs: "
            f"{t_inner_shap / t_contribs:.2f}x  (target <= 1.5x)"
        )
    print(
        f"peak Python-side memory of tree_inner: {peak / 2**20:.1f} MiB "
        f"(X_val itself is {X_val.nbytes / 2**20:.1f} MiB; one rows x trees "
        f"float64 array would be {n * args.trees * 8 / 2**20:.1f} MiB)"
    )


if __name__ == "__main__":
    main()
