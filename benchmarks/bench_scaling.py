"""How tree_inner's time and memory grow with rows and trees (issue 16).

Two sweeps, each timed side by side with the booster's own leaf routine
(XGBoost: DMatrix plus ``pred_leaf``) on every core (or ``--threads``):

- rows 10^3 .. 10^7 scored by one model of ``--trees`` trees (default 100);
- trees 10 .. 5000 (prefixes of one 5000-tree model) on ``--fixed-rows`` rows.

For every size it reports the seconds of routing, of ``tree_inner`` (the
model's parse cached, as on any call after the first) and of
``tree_inner(per_sample=True)``, and tracemalloc's peak of numpy allocations
during each call (the output included: per_sample returns rows x features
floats; the default returns one vector). It writes a CSV and a log-log plot.

    python benchmarks/bench_scaling.py                   # about 10 minutes
    python benchmarks/bench_scaling.py --quick           # seconds (CI smoke)
    python benchmarks/bench_scaling.py --csv s.csv --plot docs/img/scaling.png
"""

from __future__ import annotations

import argparse
import csv
import os
import time
import tracemalloc

import numpy as np
import xgboost as xgb

from skl_treeinner import tree_inner
from skl_treeinner._kernels import _compiled as _kernels


def _timed(fn):
    tracemalloc.start()
    t0 = time.perf_counter()
    fn()
    seconds = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return seconds, peak


def _best(fn, repeat):
    runs = [_timed(fn) for _ in range(repeat)]
    return min(r[0] for r in runs), max(r[1] for r in runs)


def _data(n, p, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)).astype(np.float32)
    y = X[:, :5].sum(axis=1, dtype=np.float64) + rng.normal(size=n)
    return X, y


def _measure(booster, X, y, threads, repeat):
    booster.set_param({"nthread": threads})
    tree_inner(booster, X[:1000], y[:1000])  # parse once, compile, warm up

    def route():
        booster.predict(xgb.DMatrix(X, nthread=threads), pred_leaf=True)

    t_leaf, _ = _best(route, repeat)
    t_inner, m_inner = _best(lambda: tree_inner(booster, X, y), repeat)
    t_rows, m_rows = _best(lambda: tree_inner(booster, X, y, per_sample=True), repeat)
    return {
        "leaf_s": t_leaf,
        "tree_inner_s": t_inner,
        "per_sample_s": t_rows,
        "ratio": t_inner / t_leaf,
        "ratio_per_sample": t_rows / t_leaf,
        "tree_inner_peak_mib": m_inner / 2**20,
        "per_sample_peak_mib": m_rows / 2**20,
        "X_mib": X.nbytes / 2**20,
    }


def _floats(text):
    return [int(float(v)) for v in text.split(",")]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="1e3,1e4,1e5,1e6,1e7")
    ap.add_argument("--trees", type=int, default=100, help="trees in the rows sweep")
    ap.add_argument("--tree-counts", default="10,100,1000,5000")
    ap.add_argument("--fixed-rows", type=int, default=10_000)
    ap.add_argument("--features", type=int, default=20)
    ap.add_argument("--depth", type=int, default=6)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--csv", default=None)
    ap.add_argument("--plot", default=None)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    if args.quick:
        args.rows, args.tree_counts, args.trees = "1e3,3e3", "5,20", 10
        args.fixed_rows, args.features, args.depth = 1000, 5, 3
    p = args.features
    print(
        f"features={p} depth={args.depth} threads={args.threads} "
        f"cores={os.cpu_count()} xgboost={xgb.__version__} "
        f"kernel={_kernels.backend()}"
    )
    results = []

    def train(n_trees):
        X, y = _data(20_000 if not args.quick else 1000, p, seed=0)
        params = {
            "max_depth": args.depth,
            "eta": 0.1,
            "tree_method": "hist",
            "nthread": args.threads,
            "seed": 0,
        }
        return xgb.train(params, xgb.DMatrix(X, y), n_trees)

    booster = train(args.trees)
    for n in _floats(args.rows):
        X, y = _data(n, p, seed=1)
        repeat = 3 if n <= 100_000 else 1
        row = {"sweep": "rows", "rows": n, "trees": args.trees}
        row.update(_measure(booster, X, y, args.threads, repeat))
        results.append(row)
        _print(row)
        del X, y

    counts = _floats(args.tree_counts)
    big = train(max(counts))
    X, y = _data(args.fixed_rows, p, seed=1)
    for t in counts:
        row = {"sweep": "trees", "rows": args.fixed_rows, "trees": t}
        row.update(_measure(big[:t], X, y, args.threads, 3))
        results.append(row)
        _print(row)

    if args.csv:
        with open(args.csv, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(results[0]))
            writer.writeheader()
            writer.writerows(results)
    if args.plot:
        _plot(results, args)


def _print(row):
    print(
        f"{row['sweep']:>5} rows={row['rows']:>9} trees={row['trees']:>5}  "
        f"leaf {row['leaf_s']:8.3f}s  tree_inner {row['tree_inner_s']:8.3f}s "
        f"({row['ratio']:.2f}x)  per_sample {row['per_sample_s']:8.3f}s "
        f"({row['ratio_per_sample']:.2f}x)  peak {row['tree_inner_peak_mib']:.1f} / "
        f"{row['per_sample_peak_mib']:.1f} MiB (X {row['X_mib']:.1f} MiB)",
        flush=True,
    )


def _plot(results, args):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(14, 4.2))
    for ax, sweep, x in ((axes[0], "rows", "rows"), (axes[1], "trees", "trees")):
        rows = [r for r in results if r["sweep"] == sweep]
        xs = [r[x] for r in rows]
        for key, label in (
            ("leaf_s", "DMatrix + pred_leaf"),
            ("tree_inner_s", "tree_inner"),
            ("per_sample_s", "tree_inner(per_sample=True)"),
        ):
            ax.plot(xs, [r[key] for r in rows], marker="o", label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(x)
        ax.set_ylabel("seconds")
        fixed = rows[0]["trees"] if sweep == "rows" else rows[0]["rows"]
        ax.set_title(
            f"{sweep} sweep ({'trees' if sweep == 'rows' else 'rows'}={fixed})"
        )
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    ax = axes[2]
    rows = [r for r in results if r["sweep"] == "rows"]
    xs = [r["rows"] for r in rows]
    ax.plot(xs, [r["X_mib"] for r in rows], "k--", label="X itself")
    ax.plot(
        xs, [r["tree_inner_peak_mib"] for r in rows], marker="o", label="tree_inner"
    )
    ax.plot(
        xs,
        [r["per_sample_peak_mib"] for r in rows],
        marker="o",
        label="per_sample (output is rows x features)",
    )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("rows")
    ax.set_ylabel("peak numpy memory (MiB)")
    ax.set_title("memory, rows sweep")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.suptitle(
        f"{args.features} features, depth {args.depth}, {args.threads} threads, "
        f"kernel={_kernels.backend()}, xgboost {xgb.__version__}"
    )
    fig.tight_layout()
    fig.savefig(args.plot, dpi=90)


if __name__ == "__main__":
    main()
