"""tree_inner and predecomp on Dask collections, on a real LocalCluster.

The cluster is conftest's ``client``: two worker processes, and more partitions
than workers here; every result must equal the in-memory one on the same rows.
"""

import numpy as np
import pytest
import xgboost as xgb
from conftest import make_data

from skl_treeinner import predecomp, tree_inner

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")
pd = pytest.importorskip("pandas")
lgb = pytest.importorskip("lightgbm")
import xgboost.dask  # noqa: E402

#: A real cluster or a script run per test: slow (pytest -m 'not slow' skips).
pytestmark = pytest.mark.slow


def _data(n=1200, p=5, seed=0):
    X, y = make_data(n=n, p=p, seed=seed, nan_frac=0.05)
    return X, np.nan_to_num(y)


def _close(got, expected):
    scale = max(1.0, float(np.abs(expected).max()))
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-11 * scale)


def test_arrays_with_more_partitions_than_workers(client):
    X, y = _data()
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=len(y))
    model = xgb.XGBRegressor(n_estimators=15, max_depth=3, n_jobs=1).fit(X, y)
    Xd, yd, wd = (da.from_array(a, chunks=250) for a in (X, y, w))  # 5 partitions
    assert Xd.numblocks[0] == 5
    _close(tree_inner(model, Xd, yd), tree_inner(model, X, y))
    _close(
        tree_inner(model, Xd, yd, sample_weight=wd, per_iteration=True),
        tree_inner(model, X, y, sample_weight=w, per_iteration=True),
    )
    rows = tree_inner(model, Xd, yd, sample_weight=wd, per_sample=True)
    assert isinstance(rows, da.Array) and rows.chunks[0] == Xd.chunks[0]
    _close(rows.compute(), tree_inner(model, X, y, sample_weight=w, per_sample=True))
    values, bias = predecomp(model, Xd, return_bias=True)
    assert isinstance(values, da.Array) and values.chunks[0] == Xd.chunks[0]
    _close(values.compute(), predecomp(model, X))
    assert bias == predecomp(model, X, return_bias=True)[1]
    _close(
        tree_inner(model, Xd, yd, attribution="treeshap", per_iteration=True),
        tree_inner(model, X, y, attribution="treeshap", per_iteration=True),
    )


def test_dataframes_with_a_multiclass_model(client):
    X, y = _data(seed=1)
    labels = np.digitize(y, [0.0, 1.5])
    frame = pd.DataFrame(X, columns=[f"c{i}" for i in range(X.shape[1])])
    model = xgb.XGBClassifier(n_estimators=8, max_depth=3, n_jobs=1)
    model.fit(frame, labels)
    ddf = dd.from_pandas(frame, npartitions=3)
    target = dd.from_pandas(pd.Series(labels), npartitions=3)
    _close(tree_inner(model, ddf, target), tree_inner(model, frame, labels))
    values = predecomp(model, ddf)
    assert values.ndim == 3
    _close(values.compute(), predecomp(model, frame))
    _close(
        tree_inner(model, ddf, target, per_sample=True).compute(),
        tree_inner(model, frame, labels, per_sample=True),
    )


def test_models_trained_on_the_cluster(client):
    X, y = _data(seed=2)
    Xd, yd = da.from_array(X, chunks=300), da.from_array(y, chunks=300)
    dask_xgb = xgb.dask.DaskXGBRegressor(n_estimators=10, max_depth=3)
    dask_xgb.client = client
    dask_xgb.fit(Xd, yd)
    _close(tree_inner(dask_xgb, Xd, yd), tree_inner(dask_xgb.get_booster(), X, y))
    trained = xgb.dask.train(
        client, {"max_depth": 3}, xgb.dask.DaskDMatrix(client, Xd, yd), 6
    )
    booster = trained["booster"]
    _close(tree_inner(booster, Xd, yd), tree_inner(booster, X, y))
    dask_lgb = lgb.DaskLGBMRegressor(
        n_estimators=10, num_leaves=7, verbose=-1, client=client
    )
    dask_lgb.fit(Xd, yd)
    local = dask_lgb.to_local()
    _close(tree_inner(dask_lgb, Xd, yd), tree_inner(local, X, y))
    binary = (y > 1).astype(float)
    bd = da.from_array(binary, chunks=300)
    clf = xgb.dask.DaskXGBClassifier(n_estimators=6, max_depth=2)
    clf.client = client
    clf.fit(Xd, bd)
    _close(tree_inner(clf, Xd, bd), tree_inner(clf.get_booster(), X, binary))


def test_partitions_must_match(client):
    X, y = _data(n=600)
    model = xgb.XGBRegressor(n_estimators=3, max_depth=2, n_jobs=1).fit(X, y)
    Xd = da.from_array(X, chunks=200)
    with pytest.raises(ValueError, match="partitioned alike"):
        tree_inner(model, Xd, da.from_array(y, chunks=300))
    with pytest.raises(TypeError, match="y must be a Dask collection too"):
        tree_inner(model, Xd, y)


def test_empty_partitions_and_mixed_collections(client):
    X, y = _data(n=900, seed=3)
    model = xgb.XGBRegressor(n_estimators=5, max_depth=3, n_jobs=1).fit(X, y)
    frame = pd.DataFrame(X, columns=[f"c{i}" for i in range(X.shape[1])])
    frame["y"] = y
    frame["i"] = np.arange(len(frame))
    ddf = dd.from_pandas(frame, npartitions=3)
    kept = ddf[(ddf.i < 300) | (ddf.i >= 600)]  # the middle partition is empty
    assert list(kept.map_partitions(len).compute()) == [300, 0, 300]
    keep = (frame.i < 300) | (frame.i >= 600)
    cols = [f"c{i}" for i in range(X.shape[1])]
    _close(
        tree_inner(model, kept[cols], kept["y"]),
        tree_inner(model, X[keep], y[keep]),
    )
    _close(
        tree_inner(model, kept[cols], kept["y"], per_sample=True).compute(),
        tree_inner(model, X[keep], y[keep], per_sample=True),
    )
    with pytest.raises(TypeError, match="both be Dask arrays or both Dask"):
        tree_inner(model, ddf[cols], da.from_array(y, chunks=300))


def test_functions_without_a_dask_path_refuse_collections(client):
    from skl_treeinner import TreeInnerSelector, global_importance

    X, y = _data(n=300, seed=4)
    model = xgb.XGBRegressor(n_estimators=3, max_depth=2, n_jobs=1).fit(X, y)
    Xd, yd = da.from_array(X, chunks=100), da.from_array(y, chunks=100)
    with pytest.raises(TypeError, match="does not take Dask collections yet"):
        global_importance(model, Xd, yd, method="tree_inner")
    with pytest.raises(TypeError, match="DaskXGBRegressor"):
        TreeInnerSelector(xgb.XGBRegressor()).fit(Xd, yd)


def test_dask_classifier_with_classes_in_order_of_appearance(client):
    # DaskXGBClassifier takes classes_ from a DataFrame's drop_duplicates: in
    # one partition, in the order met ([1, 0] here); XGBoost still fits label
    # k as output k.
    X, y = _data(n=600, seed=5)
    labels = (y > 1).astype(np.int64)
    labels[0] = 1
    frame = pd.DataFrame(X, columns=[f"c{i}" for i in range(X.shape[1])])
    ddf = dd.from_pandas(frame, npartitions=1)
    target = dd.from_pandas(pd.Series(labels), npartitions=1)
    clf = xgboost.dask.DaskXGBClassifier(n_estimators=5, max_depth=2)
    clf.client = client
    clf.fit(ddf, target)
    assert clf.classes_.tolist() == [1, 0]
    expected = tree_inner(clf.get_booster(), frame, labels)
    _close(tree_inner(clf, ddf, target), expected)
    _close(tree_inner(clf, frame, labels), expected)


def test_score_path_plot_of_a_dataframe_on_the_cluster(client):
    # plot_score_path runs tree_inner through the engine of its X, so a Dask
    # DataFrame is scored on the cluster: the curves equal the in-memory ones.
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from skl_treeinner.plotting import plot_score_path

    X, y = _data(seed=6)
    frame = pd.DataFrame(X, columns=[f"c{i}" for i in range(X.shape[1])])
    model = xgb.XGBRegressor(n_estimators=12, max_depth=3, n_jobs=1).fit(frame, y)
    ddf = dd.from_pandas(frame, npartitions=4)
    target = dd.from_pandas(pd.Series(y), npartitions=4)
    on_cluster = plot_score_path(model, ddf, target, top=3)
    in_memory = plot_score_path(model, frame, y, top=3)
    got = [(line.get_label(), line.get_ydata()) for line in on_cluster.lines]
    expected = [(line.get_label(), line.get_ydata()) for line in in_memory.lines]
    assert [label for label, _ in got] == [label for label, _ in expected]
    for (_, a), (_, b) in zip(got, expected, strict=True):
        _close(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    # Functions without a path for an engine still refuse its collections.
    with pytest.raises(TypeError, match="does not take Dask collections yet"):
        tree_inner(model, frame, target)
