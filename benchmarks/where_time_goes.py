"""Where the selector's time goes, against one fit of its booster (issue 42).

For the default ``TreeInnerSelector`` (XGBoost, the test of the column) on
generated data of a given size, this times

- **one fit**: the default booster fitted once on all rows with every thread
  (what a user compares a selector with);
- the selector with ``cv=5`` (chained: 4 fits) and with ``cv=None`` (one fit
  on half the rows), and splits that time into stages by wrapping the
  package's own functions for the run (seconds summed over the threads
  that ran them, so they can exceed the wall time when splits run side by
  side):

  - ``fit``: the booster's training on each split (``_crossfit._fit``);
  - ``scoring``: scoring a split's held-out rows (``score_features``), of
    which ``terms`` (the rows' TreeInner terms, ``row_terms``), ``resample``
    (the test of the column's resampled terms, ``resampled_terms``) and
    ``booster predict`` (every call into XGBoost's ``Booster.predict`` and
    ``inplace_predict``: the leaves, the routing check, the margins; inside
    the other two);
  - ``checks``: the dependent-rows checks;
  - ``outside the splits``: the selector's wall time not spent in
    ``run_splits`` (validation, statistics, storing).

Usage::

    python benchmarks/where_time_goes.py                       # 20,000 x 50
    python benchmarks/where_time_goes.py --rows 100000 --cols 100
    python benchmarks/where_time_goes.py --rows 300 --cols 2000 --task classification
    python benchmarks/where_time_goes.py --rows 300 --cols 2000 --max-bin 32
    python benchmarks/where_time_goes.py --device cuda   # a GPU booster (XGBoost's)
    python benchmarks/where_time_goes.py --configs cv=5 \
        n_repeats=4,cv=3,n_estimators=100,learning_rate=0.04   # repeats (issue 53)

With ``--device cuda`` the booster (one fit and the selector's) trains on the
GPU; the selector's target there is at most 1.3x the GPU booster's own
training (issue 55), so the ``fit`` column is the one to compare with.
"""

from __future__ import annotations

import argparse
import functools
import threading
import time
from collections import defaultdict

import numpy as np
import xgboost as xgb

from skl_treeinner import TreeInnerSelector
from skl_treeinner._engines.memory import _crossfit, _run
from skl_treeinner._readers import DEFAULT_BOOSTER_PARAMS, default_estimator
from skl_treeinner._scoring import _permutation
from skl_treeinner._scoring import _sums as _scoring
from skl_treeinner._stats import _dependence

_LOCK = threading.Lock()
_SPENT = defaultdict(float)
_INSIDE = threading.local()


def _timed(category, function):
    """``function``, adding its run time to ``category`` (outermost call only)."""

    @functools.wraps(function)
    def run(*args, **kwargs):
        depth = getattr(_INSIDE, category, 0)
        setattr(_INSIDE, category, depth + 1)
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            setattr(_INSIDE, category, depth)
            if depth == 0:
                with _LOCK:
                    _SPENT[category] += time.perf_counter() - start

    return run


def _instrument():
    """Wrap the stages; return a function that undoes it."""
    patches = [
        (_crossfit, "_fit", "fit"),
        (_crossfit, "score_features", "scoring"),
        (_permutation, "resampled_terms", "resample"),
        (_permutation, "row_terms", "terms"),
        (_scoring, "row_terms", "terms"),
        (_dependence, "check_dependent_rows", "checks"),
        (_run, "check_dependent_rows", "checks"),
        (_run, "run_splits", "splits"),
        (xgb.Booster, "predict", "predict"),
        (xgb.Booster, "inplace_predict", "predict"),
    ]
    saved = []
    for owner, name, category in patches:
        if not hasattr(owner, name):
            continue
        original = getattr(owner, name)
        saved.append((owner, name, original))
        setattr(owner, name, _timed(category, original))
    return lambda: [setattr(o, n, f) for o, n, f in saved]


def _data(rows, cols, task, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(rows, cols))
    signal = X[:, 0] + 0.5 * X[:, 1] - 0.5 * X[:, 2] + 0.3 * X[:, 3] * X[:, 4]
    if task == "classification":
        y = (signal + rng.normal(size=rows) > 0).astype(int)
    else:
        y = signal + rng.normal(size=rows)
    return X, y


#: What ``--configs`` may set on the booster rather than on the selector.
BOOSTER_KEYS = ("n_estimators", "learning_rate")


def config(text):
    """``"cv=3,n_repeats=4"`` as keyword arguments (None, ints and floats read)."""
    params = {}
    for item in filter(None, text.split(",")):
        key, _, value = item.partition("=")
        if value == "None":
            params[key] = None
        else:
            params[key] = float(value) if "." in value else int(value)
    return params


def selector_spec(text):
    """``--selector`` text as the selector's keyword arguments, for this run.

    ``n_estimators`` and ``learning_rate`` change the selector's default
    booster (``DEFAULT_BOOSTER_PARAMS``, in this process: a measurement of a
    candidate default, whose seed each repeat still varies); every other key
    is the selector's own (``cv``, ``n_repeats``, ...).
    """
    params = config(text)
    DEFAULT_BOOSTER_PARAMS.update(
        {k: params.pop(k) for k in BOOSTER_KEYS if k in params}
    )
    return params


def _best(seconds_of, repeats):
    return min(seconds_of() for _ in range(repeats))


def main(argv=None):
    """Print one fit's time and the selector's stages, as a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--cols", type=int, default=50)
    parser.add_argument("--task", choices=["regression", "classification"],
                        default="regression")  # fmt: skip
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--max-bin", type=int, default=None,
                        help="the booster's max_bin (default: its own)")  # fmt: skip
    parser.add_argument(
        "--draws", type=int, default=None,
        help="draws per row of the test of a column (default: the selector's)",
    )  # fmt: skip
    parser.add_argument(
        "--device", default="cpu", help="XGBoost's device for the booster"
    )
    parser.add_argument(
        "--configs", nargs="+", default=["cv=5", "cv=None"],
        help="selectors to time, as key=value,...: cv, n_repeats, and the "
        "booster's n_estimators and learning_rate (e.g. "
        "n_repeats=4,cv=3,n_estimators=100,learning_rate=0.04)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if args.draws is not None:  # a measurement of the choice, not an option
        from skl_treeinner._scoring import _permutation

        _permutation.DRAWS = args.draws
    X, y = _data(args.rows, args.cols, args.task)
    classifier = args.task == "classification"
    # The selector's default booster for these rows (its bins follow them).
    booster = default_estimator(classifier, 0, n_rows=args.rows)
    if args.max_bin is not None:
        booster.set_params(max_bin=args.max_bin)
    if args.device != "cpu":
        booster.set_params(device=args.device)
    own_booster = args.max_bin is not None or args.device != "cpu"

    def one_fit():
        model = booster.__class__(**{**booster.get_params(), "n_jobs": -1})
        start = time.perf_counter()
        model.fit(X, y)
        return time.perf_counter() - start

    single = _best(one_fit, args.repeats)
    print(
        f"{args.rows} x {args.cols} {args.task}: one all-thread fit of the default "
        f"booster (device={args.device}) on all rows {single:.2f} s"
    )
    print()
    print("| selector | wall s | × one fit | fit | scoring | terms | resample "
          "| booster predict | checks | outside the splits |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|")
    for spec in args.configs:
        params = config(spec)
        trees = {k: params.pop(k) for k in BOOSTER_KEYS if k in params}
        estimator = booster if own_booster else None
        if trees:
            estimator = booster.__class__(**{**booster.get_params(), **trees})
        selector = TreeInnerSelector(estimator, random_state=0, **params)
        selector.fit(X[:500], y[:500])  # warm
        runs = []
        for _ in range(args.repeats):
            _SPENT.clear()
            undo = _instrument()
            try:
                start = time.perf_counter()
                selector.fit(X, y)
                wall = time.perf_counter() - start
            finally:
                undo()
            runs.append((wall, dict(_SPENT)))
        wall, spent = min(runs, key=lambda run: run[0])
        cells = [
            spent.get(key, 0.0)
            for key in ("fit", "scoring", "terms", "resample", "predict", "checks")
        ]
        cells.append(wall - spent.get("splits", 0.0))
        print(
            f"| {spec} | {wall:.2f} | {wall / single:.2f} | "
            + " | ".join(f"{c:.2f}" for c in cells)
            + " |",
            flush=True,
        )


if __name__ == "__main__":
    main()
