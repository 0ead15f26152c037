"""tree_inner on a Dask cluster: rows per second, and the client's memory (issue 17).

Scores an in-memory XGBoost model (trained on 20,000 rows) on Dask arrays of
random rows generated on the workers, with 1 and 2 worker processes (one thread
each, or ``--workers``), for growing numbers of rows. The client process's
resident memory is sampled every 20 ms during each call: it must stay flat as
rows grow, since only per-leaf sums come back from the workers.

    python benchmarks/bench_dask.py                  # 1e5, 1e6, 1e7 rows x 50
    python benchmarks/bench_dask.py --quick          # seconds (CI smoke)
    python benchmarks/bench_dask.py --rows 1e6 --workers 1,2,4
    python benchmarks/bench_dask.py --selector       # TreeInnerSelector.fit

With ``--selector`` it times ``TreeInnerSelector(DaskXGBRegressor(...)).fit``
instead (``--cv``: None for one held-out half, or k folds): the split, the
booster's own Dask fit and the scoring pass, all on the cluster; the same fit
on in-memory rows (``XGBRegressor``, the client's threads) is timed beside it
up to ``--memory-rows`` rows.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import threading
import time

import numpy as np
import xgboost as xgb

from skl_treeinner import tree_inner


class _PeakRSS:
    """The largest resident set size of this process while in the block."""

    def __enter__(self):
        import psutil

        self._proc = psutil.Process()
        self.peak = self._proc.memory_info().rss
        self.start = self.peak
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        return self

    def _watch(self):
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, self._proc.memory_info().rss)

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self._proc.memory_info().rss)


@contextlib.contextmanager
def _cluster(workers):
    """A LocalCluster of ``workers`` processes of one thread, and its client."""
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
        ) as cluster,
        Client(cluster) as client,
    ):
        yield client


def _rows(text):
    return [int(float(v)) for v in text.split(",")]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="1e5,1e6,1e7")
    ap.add_argument("--features", type=int, default=50)
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--depth", type=int, default=6)
    ap.add_argument("--chunk", type=int, default=250_000, help="rows per partition")
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--selector", action="store_true")
    ap.add_argument("--cv", default="None", help="None or k (with --selector)")
    ap.add_argument("--memory-rows", type=float, default=1e6)
    args = ap.parse_args(argv)
    if args.quick:
        args.rows, args.features, args.trees, args.chunk = "2e3,8e3", 5, 10, 2000
        args.workers = "1"
    if args.selector:
        return _selector(args)

    import dask.array as da

    p = args.features
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20_000, p))
    y = X[:, :5].sum(axis=1) + rng.normal(size=20_000)
    model = xgb.XGBRegressor(
        n_estimators=args.trees, max_depth=args.depth, random_state=0
    ).fit(X, y)
    print(
        f"features={p} trees={args.trees} depth={args.depth} "
        f"rows/partition={args.chunk} cores={os.cpu_count()} xgboost={xgb.__version__}"
    )
    for workers in _rows(args.workers):
        with _cluster(workers):
            # One small call first: imports and compilation on the workers.
            Xw = da.random.RandomState(1).normal(size=(2000, p), chunks=(1000, p))
            tree_inner(model, Xw, Xw[:, :5].sum(axis=1))
            for n in _rows(args.rows):
                state = da.random.RandomState(2)
                Xd = state.normal(size=(n, p), chunks=(args.chunk, p))
                yd = Xd[:, :5].sum(axis=1) + state.normal(size=n, chunks=args.chunk)
                with _PeakRSS() as rss:
                    t0 = time.perf_counter()
                    scores = tree_inner(model, Xd, yd)
                    seconds = time.perf_counter() - t0
                assert scores.shape == (p,)
                grew = (rss.peak - rss.start) / 2**20
                print(
                    f"workers={workers} rows={n:>9}  {seconds:8.2f}s  "
                    f"{n / seconds:12,.0f} rows/s  client RSS peak "
                    f"{rss.peak / 2**20:7.1f} MiB (+{grew:.1f} during the call)",
                    flush=True,
                )


def _selector(args):
    import dask.array as da
    import xgboost.dask as dxgb

    from skl_treeinner import TreeInnerSelector

    p = args.features
    cv = None if args.cv == "None" else int(args.cv)
    params = {"n_estimators": args.trees, "max_depth": args.depth, "random_state": 0}
    print(
        f"TreeInnerSelector(cv={cv}) features={p} trees={args.trees} "
        f"depth={args.depth} rows/partition={args.chunk} cores={os.cpu_count()} "
        f"xgboost={xgb.__version__}"
    )
    for workers in _rows(args.workers):
        with _cluster(workers):
            for n in _rows(args.rows):
                state = da.random.RandomState(2)
                Xd = state.normal(size=(n, p), chunks=(args.chunk, p))
                yd = Xd[:, :5].sum(axis=1) + state.normal(size=n, chunks=args.chunk)
                selector = TreeInnerSelector(
                    dxgb.DaskXGBRegressor(**params), cv=cv, random_state=0
                )
                with _PeakRSS() as rss:
                    t0 = time.perf_counter()
                    selector.fit(Xd, yd)
                    seconds = time.perf_counter() - t0
                assert selector.get_support()[:5].all()
                grew = (rss.peak - rss.start) / 2**20
                line = (
                    f"workers={workers} rows={n:>9}  {seconds:8.2f}s  "
                    f"{n / seconds:10,.0f} rows/s  client RSS +{grew:.1f} MiB"
                )
                if n <= args.memory_rows:
                    X, y = (a.compute() for a in (Xd, yd))
                    memory = TreeInnerSelector(
                        xgb.XGBRegressor(**params, n_jobs=workers),
                        cv=cv,
                        random_state=0,
                    )
                    t0 = time.perf_counter()
                    memory.fit(X, y)
                    line += f"  (in memory: {time.perf_counter() - t0:.2f}s)"
                print(line, flush=True)


if __name__ == "__main__":
    main()
