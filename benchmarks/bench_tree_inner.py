"""Wall time of tree_inner against the booster's own routines, per core count.

Targets (issue 16), each ratio timed side by side in one run, at every thread
count asked for (``--threads``; the booster and the scoring get the same):

- tree_inner (PreDecomp) on held-out rows takes at most 1.5x the wall time of
  routing the same rows with the booster's own leaf routine (XGBoost: DMatrix
  plus ``pred_leaf``; LightGBM ``pred_leaf``; scikit-learn: ``apply`` or, for
  HistGradientBoosting, which has none, ``predict``).
- tree_inner(..., per_sample=True), the per-row terms behind the selector's
  p-values, at most 2x the same routing.
- With --treeshap, tree_inner(attribution="treeshap") at most 0.2x one
  full-ensemble TreeSHAP pass (XGBoost ``pred_contribs``, LightGBM
  ``pred_contrib``, CatBoost ``ShapValues``, shap's TreeExplainer for
  scikit-learn models; issue 31, after issue 16's 1.0x).
- With --selector, TreeInnerSelector's fit with attribution="treeshap" at
  most 1.3x its fit with PreDecomp (issue 31), on the same rows and booster
  settings (held-out rows: the selector's default split).

Reported beside them: the first call on a model (its trees parsed; later calls
on the same model reuse the parse), the call with the routing check of issue 15
switched off, and which kernel ran (numba when installed; ``--kernel numpy``
times the reference path). Peak extra memory is tracemalloc's (numpy and scipy
allocations, not the boosters' C++ buffers).

    python benchmarks/bench_tree_inner.py          # 10k rows, 100 features,
                                                   # 500 trees of depth 6
    python benchmarks/bench_tree_inner.py --rows 20000 --threads 1,2
    python benchmarks/bench_tree_inner.py --quick  # small smoke run (CI)
    python benchmarks/bench_tree_inner.py --treeshap  # also TreeSHAP (slow)
    python benchmarks/bench_tree_inner.py --backend lightgbm --kernel numpy
    python benchmarks/bench_tree_inner.py --rows 4000 --features 30 --trees 300 \
        --threads 1,2 --treeshap --selector --backend catboost
    python benchmarks/bench_tree_inner.py ... --backend lightgbm --depth -1 \
        --num-leaves 31            # LightGBM's default leaf-wise trees

``--column-terms`` also times what the test of a column computes on the
held-out rows, with each attribution: the rows' own terms at the noise
floor's targets, and their terms with each column drawn from other rows
(3 draws; the compiled resampling kernels where they apply).
"""

from __future__ import annotations

import argparse
import os
import time
import tracemalloc

import numpy as np
from threadpoolctl import threadpool_limits

from skl_treeinner import predecomp, tree_inner
from skl_treeinner._kernels import _compiled as _kernels
from skl_treeinner._readers import _base, read_model
from skl_treeinner._readers._base import ModelReader


def best_of(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times), float(np.median(times))


def _xgboost(args, X, y):
    import xgboost as xgb

    model = xgb.XGBRegressor(
        n_estimators=args.trees,
        max_depth=args.depth,
        learning_rate=0.1,
        tree_method="hist",
        device=args.device,
        random_state=0,
    ).fit(X, y)
    booster = model.get_booster()

    def threads(n):
        model.set_params(n_jobs=n)
        booster.set_param({"nthread": n})

    def leaf(X):
        booster.predict(xgb.DMatrix(X, nthread=model.n_jobs), pred_leaf=True)

    def contribs(X):
        booster.predict(xgb.DMatrix(X, nthread=model.n_jobs), pred_contribs=True)

    return model, leaf, contribs, threads, xgb.__version__


def _lightgbm(args, X, y):
    import lightgbm as lgb

    model = lgb.LGBMRegressor(
        n_estimators=args.trees,
        max_depth=args.depth,
        num_leaves=args.num_leaves or 2**args.depth,
        learning_rate=0.1,
        random_state=0,
        verbose=-1,
    ).fit(X, y)

    def threads(n):
        model.set_params(n_jobs=n)

    def leaf(X):
        model.booster_.predict(X, pred_leaf=True, num_threads=model.n_jobs)

    def contribs(X):
        model.booster_.predict(X, pred_contrib=True, num_threads=model.n_jobs)

    return model, leaf, contribs, threads, lgb.__version__


def _catboost(args, X, y):
    import catboost as cb

    model = cb.CatBoostRegressor(
        iterations=args.trees,
        depth=args.depth,
        learning_rate=0.1,
        random_seed=0,
        verbose=0,
        allow_writing_files=False,
    ).fit(X, y)

    # A fitted CatBoost model's thread_count cannot change; it was left at -1
    # (all cores), so the reader follows the OpenMP limit main() sets, and
    # CatBoost's own routines are given the same count.
    count = {"threads": -1}

    def threads(n):
        count["threads"] = n

    def leaf(X):
        model.calc_leaf_indexes(X, thread_count=count["threads"])

    def contribs(X):
        model.get_feature_importance(
            cb.Pool(X), type="ShapValues", thread_count=count["threads"]
        )

    return model, leaf, contribs, threads, cb.__version__


def _sklearn(estimator):
    def build(args, X, y):
        import shap
        import sklearn

        model = estimator(args).fit(X, y)
        route = getattr(model, "apply", model.predict)

        def contribs(X):
            shap.TreeExplainer(model).shap_values(X, check_additivity=False)

        return model, route, contribs, lambda n: None, sklearn.__version__

    return build


def _hgb(args):
    from sklearn.ensemble import HistGradientBoostingRegressor

    return HistGradientBoostingRegressor(
        max_iter=args.trees,
        max_depth=args.depth,
        max_leaf_nodes=2**args.depth,
        learning_rate=0.1,
        early_stopping=False,
        random_state=0,
    )


def _gb(args):
    from sklearn.ensemble import GradientBoostingRegressor

    return GradientBoostingRegressor(
        n_estimators=args.trees, max_depth=args.depth, random_state=0
    )


BACKENDS = {
    "xgboost": _xgboost,
    "lightgbm": _lightgbm,
    "catboost": _catboost,
    "hgb": _sklearn(_hgb),
    "gb": _sklearn(_gb),
}


def _thread_counts(text):
    counts = []
    for part in text.split(","):
        part = part.strip().lower()
        counts.append(os.cpu_count() if part == "all" else int(part))
    return sorted(set(counts))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--features", type=int, default=100)
    ap.add_argument("--trees", type=int, default=500)
    ap.add_argument("--depth", type=int, default=6)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="tiny sizes for CI")
    ap.add_argument("--backend", choices=sorted(BACKENDS), default="xgboost")
    ap.add_argument(
        "--threads", default="1,all", help="thread counts, e.g. 1,2,16 or all"
    )
    ap.add_argument("--kernel", choices=["auto", "numba", "numpy"], default="auto")
    ap.add_argument(
        "--device",
        default="cpu",
        help="XGBoost's device (cuda: trained, routed and GPUTreeShap on the GPU)",
    )
    ap.add_argument(
        "--num-leaves",
        type=int,
        default=None,
        help="LightGBM's num_leaves (default 2**depth; with --depth -1: leaf-wise)",
    )
    ap.add_argument(
        "--treeshap", action="store_true", help="also time TreeSHAP (3 repeats)"
    )
    ap.add_argument(
        "--selector",
        action="store_true",
        help="also time TreeInnerSelector's fit with each attribution",
    )
    ap.add_argument(
        "--test",
        choices=["model", "column"],
        default="model",
        help="the selector's test with --selector (default model, as the "
        "table of docs/performance.md was measured)",
    )
    ap.add_argument(
        "--column-terms",
        action="store_true",
        help="also time the test of a column's own and resampled terms",
    )
    args = ap.parse_args(argv)
    if args.quick:
        args.rows, args.features, args.trees = 500, 10, 20
        args.depth, args.repeat = 3, 1
    if args.device != "cpu" and args.backend != "xgboost":
        ap.error("--device is for --backend xgboost")
    if args.depth < 0 and args.backend != "lightgbm":
        ap.error("--depth -1 (no depth limit) is for --backend lightgbm")
    os.environ[_kernels.ENV_VAR] = args.kernel

    rng = np.random.default_rng(0)
    n, p = args.rows, args.features
    X = rng.normal(size=(2 * n, p))
    y = X[:, :5].sum(axis=1) + rng.normal(size=2 * n)
    model, leaf, contribs, set_threads, version = BACKENDS[args.backend](
        args, X[:n], y[:n]
    )
    X_val, y_val = X[n:], y[n:]
    print(
        f"rows={n} features={p} trees={args.trees} depth={args.depth} "
        f"cores={os.cpu_count()} {args.backend}={version} "
        f"kernel={_kernels.backend()} device={args.device}"
    )
    for threads in _thread_counts(args.threads):
        set_threads(threads)
        with threadpool_limits(limits=threads, user_api="openmp"):
            _time(args, model, leaf, contribs, X_val, y_val, threads)


def _time(args, model, leaf, contribs, X_val, y_val, threads):
    def inner():
        tree_inner(model, X_val, y_val)

    def first_call():
        _base._READ_CACHE.clear()
        inner()

    def read():
        _base._READ_CACHE.clear()
        read_model(model)

    n = len(y_val)
    inner()  # warm-up (imports, compilation, thread pools)
    t_leaf, m_leaf = best_of(lambda: leaf(X_val), args.repeat)
    t_inner, m_inner = best_of(inner, args.repeat)
    t_first, _ = best_of(first_call, args.repeat)
    t_read, _ = best_of(read, args.repeat)
    t_pd, _ = best_of(lambda: predecomp(model, X_val), max(1, args.repeat // 2))
    t_rows, m_rows = best_of(
        lambda: tree_inner(model, X_val, y_val, per_sample=True), args.repeat
    )
    checked_apply = ModelReader.checked_apply
    ModelReader.checked_apply = lambda self, X, check_rows=None: self.apply(X)
    try:
        t_unchecked, _ = best_of(inner, args.repeat)
    finally:
        ModelReader.checked_apply = checked_apply

    if args.treeshap:

        def inner_shap():
            tree_inner(model, X_val, y_val, attribution="treeshap")

        inner_shap()  # compiles the pattern kernels on a first run
        shap_repeat = min(args.repeat, 3)
        t_contribs, _ = best_of(lambda: contribs(X_val), shap_repeat)
        t_inner_shap, _ = best_of(inner_shap, shap_repeat)
    if args.selector:
        t_select = _time_selector(model, X_val, y_val, min(args.repeat, 3), args.test)
    if args.column_terms:
        t_columns = _time_column_terms(model, X_val, y_val, args.repeat)

    tracemalloc.start()
    inner()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    print(f"-- {threads} thread(s)")
    print(f"booster's leaf routine        best {t_leaf:.3f}s  median {m_leaf:.3f}s")
    print(f"tree_inner (PreDecomp)        best {t_inner:.3f}s  median {m_inner:.3f}s")
    print(
        f"  first call on the model     best {t_first:.3f}s  "
        f"(parsing the model {t_read:.3f}s)"
    )
    print(f"  routing check off           best {t_unchecked:.3f}s")
    print(f"tree_inner per_sample=True    best {t_rows:.3f}s  median {m_rows:.3f}s")
    print(f"predecomp (n x p output)      best {t_pd:.3f}s")
    print(
        f"ratio tree_inner / leaf routine: best {t_inner / t_leaf:.2f}x, "
        f"median {m_inner / m_leaf:.2f}x, first call {t_first / t_leaf:.2f}x, "
        f"check off {t_unchecked / t_leaf:.2f}x  (target <= 1.5x)"
    )
    print(
        f"ratio per_sample / leaf routine: best {t_rows / t_leaf:.2f}x, "
        f"median {m_rows / m_leaf:.2f}x  (target <= 2x)"
    )
    if args.treeshap:
        print(f"full-ensemble TreeSHAP             {t_contribs:.2f}s")
        print(f"tree_inner (TreeSHAP)              {t_inner_shap:.2f}s")
        print(
            "ratio tree_inner(treeshap) / full TreeSHAP: "
            f"{t_inner_shap / t_contribs:.2f}x  (target <= 0.2x)"
        )
    if args.selector:
        pd_fit, ts_fit = t_select
        print(f"selector fit, predecomp         best {pd_fit:.2f}s")
        print(f"selector fit, treeshap          best {ts_fit:.2f}s")
        print(
            f"ratio selector treeshap / predecomp: {ts_fit / pd_fit:.2f}x  "
            "(target <= 1.3x)"
        )
    if args.column_terms:
        for attribution, (own, drawn) in t_columns.items():
            print(
                f"column test, {attribution:<9}  own terms best {own:.2f}s  "
                f"resampled terms best {drawn:.2f}s"
            )
    print(
        f"peak Python-side memory of tree_inner: {peak / 2**20:.1f} MiB "
        f"(X_val itself is {X_val.nbytes / 2**20:.1f} MiB; one rows x trees "
        f"float64 array would be {n * args.trees * 8 / 2**20:.1f} MiB)"
    )


def _time_column_terms(model, X, y, repeat):
    """Best times of the column test's own and resampled terms, per attribution."""
    from skl_treeinner._scoring import _noise
    from skl_treeinner._scoring import _permutation as perm

    reader = read_model(model)
    rows, n, y_rows, _ = reader.rows(X, y)
    ys = _noise.noise_targets(reader.ensemble, y_rows)
    units = np.arange(reader.ensemble.n_features)
    sources = perm.draw_sources(n, perm.DRAWS, 0)
    out = {}
    for attribution in ("predecomp", "treeshap"):
        own = perm.terms_at(reader, rows, n, ys, None, attribution)

        def drawn(attribution=attribution, own=own):
            perm.resampled_terms(
                reader, rows, n, ys, None, attribution=attribution, unit_of=units,
                n_units=units.size, sources=sources, own=np.stack(own),
            )  # fmt: skip

        drawn()  # compiles the kernel on a first run
        t_own, _ = best_of(
            lambda a=attribution: perm.terms_at(reader, rows, n, ys, None, a), repeat
        )
        out[attribution] = (t_own, best_of(drawn, repeat)[0])
    return out


def _time_selector(model, X, y, repeat, test):
    """Best fit time of the selector on X, y with each attribution."""
    from sklearn.base import clone

    from skl_treeinner import TreeInnerSelector

    times = []
    for attribution in ("predecomp", "treeshap"):
        selector = TreeInnerSelector(
            clone(model), attribution=attribution, test=test, random_state=0
        )
        selector.fit(X, y)  # warm-up
        times.append(best_of(lambda s=selector: s.fit(X, y), repeat)[0])
    return tuple(times)


if __name__ == "__main__":
    main()
