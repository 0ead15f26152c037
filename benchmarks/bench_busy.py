"""The selector on a busy machine: idle, beside OpenMP, beside busy Python (issue 19).

Times ``TreeInnerSelector.fit`` (the default booster) with one split and with
``cv=5``, on small and large data, and ``GridSearchCV`` around a
selector + Ridge pipeline with ``n_jobs`` 1 and 2, in three settings:

- ``idle``: nothing else runs;
- ``openmp``: beside one other process that trains XGBoost with every core
  (its OpenMP threads spin while they wait, as ours do);
- ``python``: beside one pure-Python busy loop per core.

Each time is the median of ``--repeat`` runs; the ratio to the idle time is
what the thread policy is judged by (target: at most 3x beside OpenMP).

    python benchmarks/bench_busy.py                     # everything, ~10 min
    python benchmarks/bench_busy.py --quick             # seconds (CI smoke)
    python benchmarks/bench_busy.py --runs small-cv5 --settings idle,openmp
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np

# One long XGBoost training with every core: its OpenMP threads are always in
# or between parallel regions, as another user's training job would be.
_OPENMP_LOAD = """
import numpy as np, xgboost as xgb
rng = np.random.default_rng(0)
X = rng.normal(size=(20000, 50)); y = X[:, 0] + rng.normal(size=20000)
dtrain = xgb.DMatrix(X, y)
print("ready", flush=True)
xgb.train({"max_depth": 6, "tree_method": "hist"}, dtrain, num_boost_round=10**7)
"""
_PYTHON_LOAD = """
print("ready", flush=True)
while True:
    pass
"""


class Load:
    """Competing processes, started on entry and killed on exit."""

    def __init__(self, setting):
        self.setting = setting
        self.procs = []

    def __enter__(self):
        if self.setting == "openmp":
            scripts = [_OPENMP_LOAD]
        elif self.setting == "python":
            scripts = [_PYTHON_LOAD] * (os.cpu_count() or 1)
        else:
            scripts = []
        for script in scripts:
            proc = subprocess.Popen(
                [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True
            )
            proc.stdout.readline()  # "ready": imports done, the load is on
            self.procs.append(proc)
        if self.procs:
            time.sleep(0.5)
        return self

    def __exit__(self, *exc):
        for proc in self.procs:
            proc.kill()
            proc.wait()


def _data(rows, features, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(rows, features))
    y = X[:, :5] @ np.array([2.0, 1.5, 1.0, 0.5, 0.25]) + rng.normal(size=rows)
    return X, y


def _selector_run(rows, features, cv):
    from skl_treeinner import TreeInnerSelector

    X, y = _data(rows, features)

    def run():
        TreeInnerSelector(cv=cv, random_state=0).fit(X, y)

    return run


def _grid_run(rows, features, n_jobs):
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import Pipeline

    from skl_treeinner import TreeInnerSelector

    X, y = _data(rows, features)
    pipe = Pipeline(
        [
            ("select", TreeInnerSelector(cv=None, random_state=0)),
            ("ridge", Ridge()),
        ]
    )
    grid = {"select__alpha": [0.05, None], "ridge__alpha": [0.1, 1.0]}

    def run():
        GridSearchCV(pipe, grid, cv=3, n_jobs=n_jobs).fit(X, y)

    return run


def _fewer_trees(trees):
    """Shrink the default booster for ``--quick`` (the in-memory engine builds it)."""
    import skl_treeinner._engines.memory as engine_module

    original = engine_module.default_estimator

    def default(classifier, random_state=None, n_rows=None):
        est = original(classifier, random_state, n_rows)
        return est.set_params(n_estimators=trees)

    engine_module.default_estimator = default


def runs(quick):
    trees = 20 if quick else None
    if quick:
        _fewer_trees(trees)
    small, large = ((300, 10), (2000, 10)) if quick else ((1500, 28), (20000, 50))
    return {
        "small-1split": _selector_run(*small, None),
        "small-cv5": _selector_run(*small, 5),
        "large-1split": _selector_run(*large, None),
        "large-cv5": _selector_run(*large, 5),
        "grid-jobs1": _grid_run(*small, 1),
        "grid-jobs2": _grid_run(*small, 2),
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--runs", default="all")
    ap.add_argument("--settings", default="idle,openmp,python")
    args = ap.parse_args(argv)
    if args.quick:
        args.repeat = 1
    import xgboost as xgb

    table = runs(args.quick)
    names = list(table) if args.runs == "all" else args.runs.split(",")
    settings = args.settings.split(",")
    print(
        f"cores={os.cpu_count()} xgboost={xgb.__version__} repeat={args.repeat} "
        f"(median seconds; ratio to idle)"
    )
    print(f"{'run':<14}" + "".join(f"{s:>18}" for s in settings))
    worst = 0.0
    for name in names:
        run = table[name]
        run()  # warm-up: imports, compilation
        times = {}
        for setting in settings:
            with Load(setting):
                samples = []
                for _ in range(args.repeat):
                    start = time.perf_counter()
                    run()
                    samples.append(time.perf_counter() - start)
            times[setting] = statistics.median(samples)
        idle = times.get("idle")
        cells = []
        for setting in settings:
            t = times[setting]
            ratio = f" ({t / idle:4.1f}x)" if idle and setting != "idle" else ""
            cells.append(f"{t:>9.2f}s{ratio:>8}")
            if idle and setting == "openmp":
                worst = max(worst, t / idle)
        print(f"{name:<14}" + "".join(f"{c:>18}" for c in cells), flush=True)
    if "idle" in settings and "openmp" in settings:
        print(f"worst ratio beside OpenMP: {worst:.1f}x (target <= 3x)")


if __name__ == "__main__":
    main()
