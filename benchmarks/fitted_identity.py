"""Fitted statistics of the selector on fixed configurations, compared bit for bit.

For a restructuring that must not change a number: capture the statistics
with the code before and after, then compare. Nineteen configurations: both
engines (a one-worker Dask LocalCluster), feature groups, weights, the
refit curve (best and 1se), prefit, RepeatedKFold, row groups, time
series, TreeSHAP, one split, LightGBM with categorical_feature::

    git worktree add /tmp/before <revision>
    PYTHONPATH=/tmp/before python benchmarks/fitted_identity.py capture /tmp/a.pkl
    python benchmarks/fitted_identity.py capture /tmp/b.pkl
    python benchmarks/fitted_identity.py compare /tmp/a.pkl /tmp/b.pkl

``compare`` prints each configuration as ``same`` or ``DIFF`` (with the
attributes that differ) and exits 1 on any difference. ``--no-dask`` skips
the Dask configurations. An error a configuration raises is captured and
compared too. The selector runs with ``test="model"`` (the default before
issue 40; see ``model_test_selector``), but for three configurations of the
test of the column (``column_test_configs``), which compare revisions since.
"""

import argparse
import pickle
import sys
import warnings

import numpy as np


def data(n=400, p=6, seed=0, classes=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    eta = X[:, 0] + X[:, 1] ** 2 - 0.5 * X[:, 2]
    y = eta + rng.normal(size=n)
    if classes:
        y = (eta + rng.logistic(size=n) > 0.8).astype(int)
    return X, y


#: Fitted attributes that are no statistic: the boosters, the selector's
#: own record of its max_features and of its feature groups (objects).
NOT_COMPARED = ("estimator_", "estimators_", "_fitted_max_features", "_feature_groups")
#: Derived attributes compared too: the selection and the groups' p-values.
DERIVED = ("support_", "group_pvalues_")


def stats(sel):
    """Every fitted statistic the selector stores (its ``_FITTED``) and derives."""
    # The selector's own module, wherever a revision keeps it.
    _FITTED = sys.modules[type(sel).__module__]._FITTED
    out = {}
    for name in (*_FITTED, *DERIVED):
        if name in NOT_COMPARED:
            continue
        try:
            out[name] = getattr(sel, name)
        except AttributeError:  # not fitted in this configuration
            pass
    return out


def model_test_selector():
    """The selector with ``test="model"`` where it has the parameter.

    The test of the model's use was the only test before issue 40 and its
    default until then, so these configurations compare it with any earlier
    revision, bit for bit; the column test's numbers are its own.
    """
    from skl_treeinner import TreeInnerSelector

    has_test = "test" in TreeInnerSelector().get_params()

    def make(*args, **kwargs):
        if has_test:
            kwargs.setdefault("test", "model")
        return TreeInnerSelector(*args, **kwargs)

    return make


def column_test_configs(X, y, Xc, yc, small):
    """The test of the column (the default since issue 40), in memory.

    Its resampling kernel is compared bit for bit by these; a revision
    before issue 40 has no such test, and these configurations then differ.
    """
    import xgboost as xgb

    from skl_treeinner import TreeInnerSelector

    yield (
        "column-cv3",
        lambda: TreeInnerSelector(
            xgb.XGBRegressor(**small), test="column", cv=3, random_state=20
        ).fit(X, y),
    )
    yield (
        "column-groups-clf-one-split",
        lambda: TreeInnerSelector(
            xgb.XGBClassifier(**small),
            test="column",
            cv=None,
            feature_groups={"ab": [0, 1], "rest": [2, 3, 4, 5]},
            random_state=21,
        ).fit(Xc, yc),
    )
    yield (
        "column-default-weights",
        lambda: TreeInnerSelector(test="column", random_state=22).fit(
            X, y, sample_weight=np.linspace(0.5, 2, len(y))
        ),
    )


def configs(with_dask=True):
    import pandas as pd
    import xgboost as xgb
    from sklearn.model_selection import RepeatedKFold, TimeSeriesSplit

    TreeInnerSelector = model_test_selector()

    small = dict(n_estimators=30, max_depth=3, learning_rate=0.3)
    X, y = data()
    Xc, yc = data(classes=True, seed=1)
    yield (
        "memory-cv3",
        lambda: TreeInnerSelector(xgb.XGBRegressor(**small), cv=3, random_state=0).fit(
            X, y
        ),
    )
    yield (
        "memory-default-one-split-clf",
        lambda: TreeInnerSelector(cv=None, random_state=1).fit(Xc, yc),
    )
    yield (
        "memory-groups-weights",
        lambda: TreeInnerSelector(
            xgb.XGBRegressor(**small),
            cv=3,
            feature_groups={"ab": [0, 1], "cd": [2, 3]},
            random_state=2,
        ).fit(X, y, sample_weight=np.linspace(0.5, 2, len(y))),
    )
    yield (
        "memory-curve-best",
        lambda: TreeInnerSelector(
            xgb.XGBRegressor(**small), cv=3, max_features="best", random_state=3
        ).fit(X, y),
    )
    yield (
        "memory-curve-1se-groups-clf",
        lambda: TreeInnerSelector(
            xgb.XGBClassifier(**small),
            cv=3,
            max_features="1se",
            feature_groups={"a": [0, 1], "b": [2], "c": [3, 4, 5]},
            random_state=4,
        ).fit(Xc, yc),
    )
    train = xgb.XGBRegressor(**small).fit(X[:200], y[:200])
    yield (
        "memory-prefit",
        lambda: TreeInnerSelector(train, prefit=True).fit(X[200:], y[200:]),
    )
    yield (
        "memory-repeated-kfold",
        lambda: TreeInnerSelector(
            xgb.XGBRegressor(**small),
            cv=RepeatedKFold(n_splits=2, n_repeats=2, random_state=0),
            random_state=5,
        ).fit(X, y),
    )
    rowgroups = np.repeat(np.arange(80), 5)
    yield (
        "memory-row-groups-curve",
        lambda: TreeInnerSelector(
            xgb.XGBRegressor(**small), cv=4, max_features="best", random_state=6
        ).fit(X, y, groups=rowgroups),
    )
    yield (
        "memory-timeseries",
        lambda: TreeInnerSelector(
            xgb.XGBRegressor(**small), cv=TimeSeriesSplit(3), random_state=7
        ).fit(X, y),
    )
    yield (
        "memory-treeshap-frame",
        lambda: TreeInnerSelector(
            xgb.XGBRegressor(**small),
            attribution="treeshap",
            cv=3,
            random_state=8,
        ).fit(pd.DataFrame(X, columns=[f"c{i}" for i in range(6)]), y),
    )
    yield from column_test_configs(X, y, Xc, yc, small)
    try:
        import lightgbm as lgb

        Xf = pd.DataFrame(X, columns=[f"c{i}" for i in range(6)])
        Xf["cat"] = pd.Categorical(np.random.default_rng(0).integers(0, 5, len(y)))
        yield (
            "memory-lgb-curve-catfeature",
            lambda: TreeInnerSelector(
                lgb.LGBMRegressor(n_estimators=30, verbose=-1),
                cv=3,
                max_features="best",
                random_state=9,
            ).fit(Xf.assign(cat=Xf["cat"].cat.codes), y, categorical_feature=[6]),
        )
    except ImportError:
        pass

    if not with_dask:
        return
    import dask.array as da
    import distributed
    import xgboost.dask as dxgb

    # One worker: XGBoost's allreduce over two workers sums histograms in an
    # order that varies between runs (1e-8 relative), which is not a change.
    cluster = distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
    )
    client = distributed.Client(cluster)
    dX, dy = da.from_array(X, chunks=100), da.from_array(y, chunks=100)
    dXc, dyc = da.from_array(Xc, chunks=100), da.from_array(yc, chunks=100)
    yield (
        "dask-cv2",
        lambda: TreeInnerSelector(
            dxgb.DaskXGBRegressor(**small), cv=2, random_state=10
        ).fit(dX, dy),
    )
    yield (
        "dask-default-clf-one-split",
        lambda: TreeInnerSelector(cv=None, random_state=11).fit(dXc, dyc),
    )
    yield (
        "dask-groups-curve",
        lambda: TreeInnerSelector(
            dxgb.DaskXGBRegressor(**small),
            cv=2,
            max_features="best",
            feature_groups={"ab": [0, 1], "rest": [2, 3, 4, 5]},
            random_state=12,
        ).fit(
            dX, dy, sample_weight=da.from_array(np.linspace(0.5, 2, len(y)), chunks=100)
        ),
    )
    yield (
        "dask-curve-clf",
        lambda: TreeInnerSelector(
            dxgb.DaskXGBClassifier(**small), cv=2, max_features="1se", random_state=13
        ).fit(dXc, dyc),
    )
    yield (
        "dask-prefit",
        lambda: TreeInnerSelector(train, prefit=True).fit(dX[200:], dy[200:]),
    )
    client.close()
    cluster.close()


def capture(path, with_dask=True):
    import skl_treeinner

    print(f"skl_treeinner from {skl_treeinner.__file__}", flush=True)
    results = {}
    for name, run in configs(with_dask):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                results[name] = stats(run())
            except Exception as e:  # noqa: BLE001 - an error is a result too
                results[name] = {"error": repr(e)}
        print(name, "error" if "error" in results[name] else "fitted", flush=True)
    with open(path, "wb") as f:
        pickle.dump(results, f)


def equal(a, b):
    if isinstance(a, dict):
        return (
            isinstance(b, dict)
            and a.keys() == b.keys()
            and all(equal(a[k], b[k]) for k in a)
        )
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.dtype.kind in "fc":
            return a.shape == b.shape and np.array_equal(a, b, equal_nan=True)
        return a.shape == b.shape and bool(np.all(a == b))
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def compare(path_a, path_b) -> int:
    with open(path_a, "rb") as f:
        a = pickle.load(f)
    with open(path_b, "rb") as f:
        b = pickle.load(f)
    bad = 0
    for name in a:
        same = name in b and equal(a[name], b[name])
        bad += not same
        print(("same " if same else "DIFF ") + name)
        if not same and name in b:
            for key in a[name]:
                if not equal(a[name][key], b[name].get(key)):
                    print("   ", key, a[name][key], b[name].get(key))
    print(f"{len(a) - bad} of {len(a)} configurations bit-identical")
    return int(bad > 0)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    cap = sub.add_parser("capture", help="fit every configuration, pickle the results")
    cap.add_argument("out")
    cap.add_argument("--no-dask", action="store_true")
    cmp = sub.add_parser("compare", help="compare two captures bit for bit")
    cmp.add_argument("a")
    cmp.add_argument("b")
    args = parser.parse_args(argv)
    if args.command == "capture":
        capture(args.out, with_dask=not args.no_dask)
        return 0
    return compare(args.a, args.b)


if __name__ == "__main__":
    sys.exit(main())
