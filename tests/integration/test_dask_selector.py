"""TreeInnerSelector on Dask collections, with Dask boosters, on a real LocalCluster.

The selector's results are recomputed here without its Dask code: the rows each
split's booster was fitted on are recorded from the booster's own ``fit``, the
held-out rows are the rest, and ``tree_inner`` on them in memory, pooled by
``one_sided_test``, must give the selector's scores, standard errors and
p-values. Rows are told apart by their first feature (continuous, distinct).
"""

import functools

import numpy as np
import pytest
import xgboost as xgb

from skl_treeinner import TreeInnerSelector as _TreeInnerSelector
from skl_treeinner import tree_inner
from skl_treeinner._readers import read_model
from skl_treeinner._scoring._noise import row_noise, row_noise_sums
from skl_treeinner._stats._inference import one_sided_test, pool_noise, pool_rows

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")
pd = pytest.importorskip("pandas")
lgb = pytest.importorskip("lightgbm")
import xgboost.dask as dxgb  # noqa: E402

#: These tests check the Dask engine's statistics, splits and refits against
#: in-memory references built for the test of the model's use (symmetric
#: folds, scores of the held-out rows alone), so they ask for it; the default
#: test of the column is checked on the cluster by the tests that name it
#: (``test="column"``).
TreeInnerSelector = functools.partial(_TreeInnerSelector, test="model")

#: A real cluster or a script run per test: slow (pytest -m 'not slow' skips).
pytestmark = pytest.mark.slow


def _data(n=900, p=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = X[:, 0] + X[:, 1] ** 2 - 0.5 * X[:, 2] + rng.normal(size=n)
    return X, y


def _record_fits(monkeypatch, cls):
    """Record, per call of ``cls.fit``, the first feature of its fit and eval rows."""
    calls = []
    original = cls.fit

    def fit(self, X, y, **kwargs):
        evals = kwargs.get("eval_set") or list(
            zip(kwargs.get("eval_X") or (), kwargs.get("eval_y") or (), strict=True)
        )
        calls.append(
            {
                "fit": _keys(X),
                "eval": [_keys(X_e) for X_e, _ in evals],
                "weighted": kwargs.get("sample_weight") is not None,
            }
        )
        return original(self, X, y, **kwargs)

    monkeypatch.setattr(cls, "fit", fit)
    return calls


def _keys(X):
    X = X.compute()
    return np.asarray(X.iloc[:, 0] if hasattr(X, "iloc") else X[:, 0])


def _expected(selector, calls, X, y, w=None, labels=None):
    """The selector's statistics recomputed in memory from the recorded fits."""
    key = np.asarray(X.iloc[:, 0] if hasattr(X, "iloc") else X[:, 0])
    tests, terms, noise = [], [], []
    y_scored = y if labels is None else np.searchsorted(labels, y)
    for est, call in zip(selector.estimators_, calls, strict=True):
        used = np.concatenate([call["fit"], *call["eval"]])
        test = np.flatnonzero(~np.isin(key, used))
        rows = X.iloc[test] if hasattr(X, "iloc") else X[test]
        terms.append(
            tree_inner(
                est,
                rows,
                y_scored[test],
                sample_weight=None if w is None else w[test],
                per_sample=True,
                attribution=selector.attribution,
            )
        )
        tests.append(test)
        reader = read_model(est)
        rows, n, y_rows, w_rows = reader.rows(
            rows, y_scored[test], None if w is None else w[test]
        )
        noise.append(
            row_noise(
                reader,
                rows,
                n,
                y_rows,
                w_rows,
                attribution=selector.attribution,
                terms=terms[-1],
            )
        )
    return (
        tests,
        terms,
        one_sided_test(
            pool_rows(len(y), tests, terms, w), pool_noise(len(y), tests, noise, w)
        ),
    )


def _assert_same(selector, tests, terms, expected):
    close = {"rtol": 1e-9, "atol": 1e-9}
    np.testing.assert_allclose(selector.scores_, expected.scores, **close)
    np.testing.assert_allclose(selector.scores_se_, expected.se, **close)
    np.testing.assert_allclose(selector.pvalues_, expected.pvalues, **close)
    np.testing.assert_allclose(
        selector.split_scores_, np.vstack([z.sum(axis=0) for z in terms]), **close
    )
    assert selector.n_scored_rows_ == expected.n_rows


def test_cross_fitting_with_weights_matches_in_memory(client, monkeypatch):
    X, y = _data()
    w = np.random.default_rng(1).uniform(0.5, 2.0, size=len(y))
    w[:30] = 0.0  # rows of weight 0 are not scored
    Xd, yd, wd = (da.from_array(a, chunks=(180,) + a.shape[1:]) for a in (X, y, w))
    calls = _record_fits(monkeypatch, dxgb.DaskXGBRegressor)
    est = dxgb.DaskXGBRegressor(n_estimators=20, max_depth=3, learning_rate=0.3)
    selector = TreeInnerSelector(est, cv=3, random_state=0).fit(
        Xd, yd, sample_weight=wd
    )
    assert len(calls) == 3 and all(call["weighted"] for call in calls)
    tests, terms, expected = _expected(selector, calls, X, y, w)
    # Cross-fitting: every row is held out by exactly one split, in folds of
    # about equal size, and never fitted on by the split that scores it.
    held = np.concatenate(tests)
    assert np.array_equal(np.sort(held), np.arange(len(y)))
    assert all(abs(t.size - len(y) / 3) < 60 for t in tests)
    _assert_same(selector, tests, terms, expected)
    assert expected.n_rows == len(y) - 30
    assert all(isinstance(e, dxgb.DaskXGBRegressor) for e in selector.estimators_)
    # The same seed and partitions give the same split; the scores follow.
    again = TreeInnerSelector(est, cv=3, random_state=0).fit(Xd, yd, sample_weight=wd)
    for first, second in zip(calls[:3], calls[3:], strict=True):
        assert np.array_equal(np.sort(first["fit"]), np.sort(second["fit"]))
    np.testing.assert_allclose(again.scores_, selector.scores_, rtol=1e-6)
    # transform stays lazy and keeps the selected columns.
    out = selector.transform(Xd)
    assert isinstance(out, da.Array)
    np.testing.assert_array_equal(out.compute(), X[:, selector.get_support()])


def test_early_stopping_rows_come_from_the_training_part(client, monkeypatch):
    X, y = _data(n=1000, seed=2)
    Xd, yd = da.from_array(X, chunks=(250, 5)), da.from_array(y, chunks=250)
    calls = _record_fits(monkeypatch, dxgb.DaskXGBRegressor)
    est = dxgb.DaskXGBRegressor(
        n_estimators=300, learning_rate=0.3, max_depth=3, early_stopping_rounds=3
    )
    selector = TreeInnerSelector(est, cv=None, random_state=3).fit(Xd, yd)
    (call,) = calls
    (es_rows,) = call["eval"]
    assert np.intersect1d(es_rows, call["fit"]).size == 0
    train = es_rows.size + call["fit"].size
    assert abs(train - 500) < 60  # validation_fraction=0.5
    assert abs(es_rows.size - 0.1 * train) < 25  # EARLY_STOPPING_FRACTION
    assert selector.estimator_.best_iteration < 299  # it stopped early
    _assert_same(selector, *_expected(selector, calls, X, y))
    # Under cross-fitting every split draws its own early-stopping rows.
    calls.clear()
    selector = TreeInnerSelector(est, cv=3, random_state=3).fit(Xd, yd)
    stops = [call["eval"][0] for call in calls]
    for stop, call in zip(stops, calls, strict=True):
        assert np.intersect1d(stop, call["fit"]).size == 0
    assert np.intersect1d(stops[0], stops[1]).size < 0.5 * stops[0].size
    _assert_same(selector, *_expected(selector, calls, X, y))


def test_classes_on_dataframes_default_booster(client, monkeypatch):
    X, y = _data(n=1200, seed=4)
    labels = np.array(["high", "low", "mid"])[np.digitize(y, [0.5, 2.0]) % 3]
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    frame["target"] = labels
    ddf = dd.from_pandas(frame, npartitions=4)
    X_dd, y_dd = ddf.drop(columns="target"), ddf["target"]
    calls = _record_fits(monkeypatch, dxgb.DaskXGBClassifier)
    selector = TreeInnerSelector(cv=3, random_state=0).fit(X_dd, y_dd)
    assert isinstance(selector.estimator_, dxgb.DaskXGBClassifier)
    assert selector.estimator_.n_estimators == 400  # the default booster
    assert list(selector.feature_names_in_) == list(X_dd.columns)
    X_mem = frame.drop(columns="target")
    tests, terms, expected = _expected(
        selector, calls, X_mem, labels, labels=np.unique(labels)
    )
    _assert_same(selector, tests, terms, expected)
    # Stratified: each held-out part has about the classes' overall shares.
    share = np.unique(labels, return_counts=True)[1] / len(labels)
    for test in tests:
        held = np.unique(labels[test], return_counts=True)[1] / test.size
        assert np.abs(held - share).max() < 0.03
    out = selector.transform(X_dd)
    assert isinstance(out, dd.DataFrame)
    assert list(out.columns) == list(selector.get_feature_names_out())


def test_filtered_frame_with_unknown_divisions_and_a_category(client, monkeypatch):
    # dask-expr may move a row filter below a map_partitions; codes drawn
    # from positions must still pair every row of X with its own y (this
    # case once handed XGBoost parts of 204 rows of X and 220 labels).
    X, y = _data(n=1500, seed=9)
    rng = np.random.default_rng(9)
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    frame["kind"] = pd.Categorical(rng.choice(["u", "v", "w"], size=len(y)))
    frame["y"] = y + 2.0 * (frame["kind"] == "u")
    frame.index = rng.permutation(len(y))
    ddf = dd.from_pandas(frame, npartitions=5, sort=False)
    assert not ddf.known_divisions
    kept = ddf[ddf["f1"] > -0.5]
    calls = _record_fits(monkeypatch, dxgb.DaskXGBRegressor)
    selector = TreeInnerSelector(cv=3, random_state=2).fit(
        kept.drop(columns="y"), kept["y"]
    )
    assert selector.estimator_.enable_categorical  # the default booster
    local = frame[frame["f1"] > -0.5]
    tests, terms, expected = _expected(
        selector, calls, local.drop(columns="y"), local["y"].to_numpy()
    )
    assert sum(t.size for t in tests) == len(local)
    _assert_same(selector, tests, terms, expected)
    assert selector.get_support()[[0, 5]].all()  # f0 and kind carry y


def test_lightgbm_dask_boosters(client, monkeypatch):
    X, y = _data(n=800, seed=5)
    Xd, yd = da.from_array(X, chunks=(200, 5)), da.from_array(y, chunks=200)
    calls = _record_fits(monkeypatch, lgb.DaskLGBMRegressor)
    est = lgb.DaskLGBMRegressor(n_estimators=15, num_leaves=7, verbose=-1)
    selector = TreeInnerSelector(est, cv=None, random_state=0).fit(
        Xd,
        yd,
        callbacks=[lgb.log_evaluation(period=0)],  # passed on, not split
    )
    _assert_same(selector, *_expected(selector, calls, X, y))
    binary = (y > 1).astype(np.int64)
    calls = _record_fits(monkeypatch, lgb.DaskLGBMClassifier)
    est = lgb.DaskLGBMClassifier(n_estimators=10, num_leaves=5, verbose=-1)
    selector = TreeInnerSelector(est, cv=2, random_state=1).fit(
        Xd, da.from_array(binary, chunks=200)
    )
    _assert_same(selector, *_expected(selector, calls, X, binary, labels=[0, 1]))
    with pytest.raises(ValueError, match="cannot stop early"):
        TreeInnerSelector(
            lgb.DaskLGBMRegressor(n_estimators=5, early_stopping_round=2)
        ).fit(Xd, yd)


def test_prefit_scores_equal_the_in_memory_selector(client):
    X, y = _data(n=700, seed=6)
    model = xgb.XGBRegressor(n_estimators=15, max_depth=3, n_jobs=1)
    model.fit(X[:300], y[:300])
    memory = TreeInnerSelector(model, prefit=True).fit(X[300:], y[300:])
    Xd = da.from_array(X[300:], chunks=(150, 5))
    cluster = TreeInnerSelector(model, prefit=True).fit(
        Xd, da.from_array(y[300:], chunks=150)
    )
    for name in ("scores_", "scores_se_", "pvalues_", "split_scores_"):
        np.testing.assert_allclose(
            getattr(cluster, name), getattr(memory, name), rtol=1e-9, atol=1e-12
        )
    assert cluster.n_scored_rows_ == memory.n_scored_rows_ == 400
    np.testing.assert_array_equal(cluster.support_, memory.support_)


def test_in_a_pipeline_with_a_dask_booster(client):
    from sklearn.pipeline import make_pipeline

    X, y = _data(n=600, seed=7)
    Xd, yd = da.from_array(X, chunks=(200, 5)), da.from_array(y, chunks=200)
    pipe = make_pipeline(
        TreeInnerSelector(
            dxgb.DaskXGBRegressor(n_estimators=20, max_depth=3),
            cv=None,
            alpha=None,
            random_state=0,
        ),
        dxgb.DaskXGBRegressor(n_estimators=10, max_depth=2),
    ).fit(Xd, yd)
    kept = pipe[0].get_support()
    assert kept[0] and kept[1]  # the two strongest features
    prediction = pipe.predict(Xd)
    assert isinstance(prediction, da.Array)
    local = pipe[-1].get_booster().inplace_predict(X[:, kept])
    np.testing.assert_allclose(prediction.compute(), local, rtol=1e-6)


def test_bad_input_is_refused_and_nothing_is_left_fitted(client):
    X, y = _data(n=300, seed=8)
    Xd, yd = da.from_array(X, chunks=(100, 5)), da.from_array(y, chunks=100)
    est = dxgb.DaskXGBRegressor(n_estimators=3)
    selector = TreeInnerSelector(est)
    with pytest.raises(TypeError, match=r"lightgbm.DaskLGBMRegressor\(\*\*"):
        TreeInnerSelector(lgb.LGBMRegressor()).fit(Xd, yd)
    with pytest.raises(TypeError, match="groups are not supported"):
        selector.fit(Xd, yd, groups=np.zeros(300))
    with pytest.raises(TypeError, match="'base_margin' looks row-aligned"):
        selector.fit(Xd, yd, base_margin=da.zeros(300, chunks=100))
    with pytest.raises(TypeError, match="cv must be an int"):
        TreeInnerSelector(est, cv=[(np.arange(10), np.arange(10, 20))]).fit(Xd, yd)
    y_nan = y.copy()
    y_nan[5] = np.nan
    with pytest.raises(ValueError, match="1 NaN or infinite"):
        selector.fit(Xd, da.from_array(y_nan, chunks=100))
    w = np.ones(300)
    w[7] = -1.0
    with pytest.raises(ValueError, match="sample_weight contains 1 negative"):
        selector.fit(Xd, yd, sample_weight=da.from_array(w, chunks=100))
    with pytest.raises(ValueError, match="partitioned alike"):
        selector.fit(Xd, da.from_array(y, chunks=150))
    with pytest.raises(TypeError, match="y must be a Dask collection too"):
        selector.fit(Xd, y)
    with pytest.raises(ValueError, match="fewer than 2 rows"):
        classes = np.r_[np.zeros(299), 1.0].astype(np.int64)
        TreeInnerSelector(dxgb.DaskXGBClassifier(n_estimators=2)).fit(
            Xd, da.from_array(classes, chunks=100)
        )
    # Categorical columns XGBoost refuses inside its fit, refused first.
    unit = pd.Series(np.where(X[:, 0] > 0, 2.0, 1.0)).astype("category")
    frame = pd.DataFrame(X, columns=list("abcde")).assign(a=unit)
    y_frame = dd.from_pandas(pd.Series(y), npartitions=3)
    with pytest.raises(ValueError, match=r"'a'.*floats \(1, 2\).*\(str\)"):
        TreeInnerSelector().fit(dd.from_pandas(frame, npartitions=3), y_frame)
    with pytest.raises(ValueError, match="built without enable_categorical=True"):
        selector.fit(dd.from_pandas(frame, npartitions=3), y_frame)
    assert not hasattr(selector, "scores_")
    assert not hasattr(selector, "n_features_in_")
    fixed = frame.assign(a=unit.cat.rename_categories(str))  # the advice, followed
    est.set_params(enable_categorical=True)
    selector.set_params(cv=None).fit(dd.from_pandas(fixed, npartitions=3), y_frame)
    assert selector.scores_.shape == (5,)


def test_parquet_frames_set_output_and_misaligned_targets(client, tmp_path):
    # Read from parquet, dask-expr merges the partitions of a one-column
    # projection (y) but not X's; X and y travel as one frame instead.
    pytest.importorskip("pyarrow")
    X, y = _data(n=800, seed=10)
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    frame["target"] = y
    dd.from_pandas(frame, npartitions=8).to_parquet(tmp_path / "rows")
    rows = dd.read_parquet(tmp_path / "rows")
    X_dd, y_dd = rows.drop(columns="target"), rows["target"]
    assert y_dd.optimize().npartitions < X_dd.optimize().npartitions
    est = dxgb.DaskXGBRegressor(n_estimators=10, max_depth=3)
    selector = TreeInnerSelector(est, cv=2, random_state=0, alpha=None)
    selector.set_output(transform="pandas")
    out = selector.fit_transform(X_dd, y_dd)
    assert isinstance(out, dd.DataFrame)  # lazy, not computed into pandas
    assert isinstance(selector.transform(X_dd), dd.DataFrame)
    assert isinstance(selector.transform(da.from_array(X, chunks=(200, 5))), da.Array)
    assert selector.get_support()[0]
    # y with rows dropped is aligned by index, not paired by position.
    kept = rows["target"].where(rows["f1"] > -1.2).dropna()
    dropped = int((frame["f1"] <= -1.2).sum())
    with pytest.raises(ValueError, match=f"y contains {dropped} NaN"):
        TreeInnerSelector(est).fit(X_dd, kept)
    labels = pd.Series(np.where(y > 1, "yes", None))
    with pytest.raises(ValueError, match="missing class label"):
        TreeInnerSelector(dxgb.DaskXGBClassifier(n_estimators=2)).fit(
            dd.from_pandas(frame.drop(columns="target"), npartitions=4),
            dd.from_pandas(labels, npartitions=4),
        )


def test_ordered_rows_warn_and_time_ordered_splitters_are_refused(client):
    from sklearn.model_selection import TimeSeriesSplit

    from skl_treeinner.datasets import make_time_series
    from skl_treeinner.exceptions import DependentRowsWarning

    X, y, _ = make_time_series(600, n_noise=4, random_state=0)
    Xd, yd = da.from_array(X, chunks=(200, 5)), da.from_array(y, chunks=200)
    est = dxgb.DaskXGBRegressor(n_estimators=5, max_depth=2)
    with pytest.warns(
        DependentRowsWarning, match="compute the rows into memory"
    ) as caught:
        sel = TreeInnerSelector(est, cv=2, random_state=0).fit(Xd, yd)
    assert sel.test_units_ == "rows"
    assert caught[0].filename == __file__  # points at the user's call
    import dask

    from skl_treeinner._engines.dask._fit import _head

    unknown = yd[yd > -np.inf]  # chunk sizes unknown
    np.testing.assert_array_equal(_head(dask, unknown), y)
    frame = dd.from_pandas(pd.Series(y), npartitions=3)  # a Series' head too
    Xf = dd.from_pandas(pd.DataFrame(X), npartitions=3)
    with pytest.warns(DependentRowsWarning, match="draws every row's fold"):
        TreeInnerSelector(est, cv=None, random_state=0).fit(Xf, frame)
    with pytest.raises(TypeError, match=r"time-ordered splits \(TimeSeriesSplit\)"):
        TreeInnerSelector(est, cv=TimeSeriesSplit(3)).fit(Xd, yd)


class _KillRankOneOnce(xgb.callback.TrainingCallback):
    """Kill the worker training as rank 1 at iteration 5, once (a marker file)."""

    def __init__(self, marker):
        self.marker = marker

    def after_iteration(self, model, epoch, evals_log):
        import os

        if epoch == 5 and xgb.collective.get_rank() == 1:
            if not os.path.exists(self.marker):
                open(self.marker, "w").close()
                os._exit(1)
        return False


def test_a_worker_killed_while_a_split_trains_is_survived(client, tmp_path):
    # Issue 28: XGBoost's "Ring allreduce failed" reached the user within
    # 0.2 s. The split is fitted again once the nanny has restarted the worker.
    import sys
    import warnings

    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # for the workers
    X, y = _data(n=4000, seed=11)
    Xd, yd = da.from_array(X, chunks=(1000, 5)), da.from_array(y, chunks=1000)
    marker = tmp_path / "killed"
    # Rank 1 must exist: both workers up (an earlier test's restart may still
    # be under way), so that xgboost.dask trains on both.
    client.wait_for_workers(2, timeout=120)

    def fit():
        est = dxgb.DaskXGBRegressor(
            n_estimators=30, max_depth=3, callbacks=[_KillRankOneOnce(str(marker))]
        )
        return TreeInnerSelector(est, cv=None, random_state=0).fit(Xd, yd)

    marker.touch()  # the undisturbed run: nobody is killed
    undisturbed = fit()
    marker.unlink()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        survived = fit()
    assert marker.exists()  # a worker was killed
    lost = [w for w in caught if "a Dask worker was lost" in str(w.message)]
    assert len(lost) == 1 and "retry 1 of 2" in str(lost[0].message)
    assert lost[0].filename == __file__  # points at the user's fit
    assert "Error: " in str(lost[0].message)  # says what failed, by name
    # Same folds; xgboost.dask's trees depend on which worker holds which
    # partition, which the restart changes: the strong features agree closely.
    assert survived.n_scored_rows_ == undisturbed.n_scored_rows_
    np.testing.assert_allclose(survived.scores_[:2], undisturbed.scores_[:2], rtol=0.02)
    assert survived.support_[:2].all() and np.isfinite(survived.pvalues_).all()


def test_a_split_that_keeps_losing_workers_says_so(client, monkeypatch):
    from skl_treeinner._engines.dask import _fits

    calls = []

    def lost(*args, **kwargs):
        calls.append(1)
        raise xgb.core.XGBoostError(
            "[10:00:00] result.cc:83: [histogram.h:197|10:00:00]:\n"
            "- [allreduce.cc:135|10:00:00]: Ring Allreduce failed.\n"
            "Stack trace:\n  [bt] (0) libxgboost.so"
        )

    monkeypatch.setattr(_fits, "_fit_split", lost)
    monkeypatch.setattr(_fits, "_a_worker_left", lambda *args: True)
    X, y = _data(n=300, seed=12)
    Xd, yd = da.from_array(X, chunks=(100, 5)), da.from_array(y, chunks=100)
    est = dxgb.DaskXGBRegressor(n_estimators=3)
    with (
        pytest.warns(RuntimeWarning, match=r"Ring Allreduce failed.*retry 2 of 2"),
        pytest.raises(RuntimeError, match="failed 3 times because a Dask worker"),
    ):
        TreeInnerSelector(est, cv=None).fit(Xd, yd)
    assert len(calls) == 3

    def refused(*args, **kwargs):  # anything else is raised at once
        calls.append(1)
        raise ValueError("objective not supported")

    monkeypatch.setattr(_fits, "_fit_split", refused)
    with pytest.raises(ValueError, match="objective not supported"):
        TreeInnerSelector(est, cv=None).fit(Xd, yd)
    assert len(calls) == 4
    # A peer's "Allreduce failed" while every worker stayed (one failed on
    # its data, say) is raised at once too, as are Dask's KilledWorker.
    monkeypatch.setattr(_fits, "_fit_split", lost)
    monkeypatch.setattr(_fits, "_a_worker_left", lambda *args: False)
    with pytest.raises(xgb.core.XGBoostError, match="Ring Allreduce failed"):
        TreeInnerSelector(est, cv=None).fit(Xd, yd)
    assert len(calls) == 5
    from types import SimpleNamespace

    from distributed import KilledWorker

    worker = SimpleNamespace(address="tcp://127.0.0.1:1")
    assert not _fits._lost_worker(KilledWorker("task", worker, 3))


def test_a_target_too_large_for_xgboost_is_refused_on_dask_too(client):
    X, y = _data(n=300, seed=13)
    Xd = da.from_array(X, chunks=(100, 5))
    est = dxgb.DaskXGBRegressor(n_estimators=3)
    with pytest.raises(ValueError, match="y is too large for DaskXGBRegressor"):
        TreeInnerSelector(est).fit(Xd, da.from_array(y * 1e19, chunks=100))
    w = da.from_array(np.ones(300), chunks=100)
    with pytest.raises(ValueError, match="y is too large"):
        TreeInnerSelector(est).fit(
            Xd, da.from_array(y * 1e19, chunks=100), sample_weight=w
        )


def test_feature_groups_match_the_in_memory_statistics(client, monkeypatch):
    # Issue 29: the group sums' score, standard error and p-value, from the
    # partitions' moments, equal those of the held-out rows in memory.
    from scipy import stats

    X, y = _data(n=900, p=6, seed=12)
    Xd, yd = da.from_array(X, chunks=(225, 6)), da.from_array(y, chunks=225)
    calls = _record_fits(monkeypatch, dxgb.DaskXGBRegressor)
    est = dxgb.DaskXGBRegressor(n_estimators=20, max_depth=3, learning_rate=0.3)
    groups = {"pair": [1, 2], "rest": [3, 4, 5]}
    selector = TreeInnerSelector(
        est, cv=3, random_state=0, feature_groups=groups, group_test="sum"
    ).fit(Xd, yd)
    tests, terms, expected = _expected(selector, calls, X, y)
    _assert_same(selector, tests, terms, expected)  # the columns as without groups
    assert list(selector.groups_) == ["x0", "pair", "rest"]
    for g, members in enumerate(selector.groups_.values()):
        units, slope2, resid2 = np.zeros(len(y)), 0.0, 0.0
        for fitted, test in zip(selector.estimators_, tests, strict=True):
            booster = fitted.get_booster()
            z = tree_inner(booster, X[test], y[test], per_sample=True)
            up = tree_inner(booster, X[test], y[test] + 1.0, per_sample=True)
            units[test] = z[:, members].sum(axis=1)
            slope2 += np.sum((up - z)[:, members].sum(axis=1) ** 2)
            margin = booster.predict(xgb.DMatrix(X[test]), output_margin=True)
            resid2 += np.sum((y[test] - margin) ** 2)
        m = len(y)
        se = max(np.sqrt(m) * units.std(ddof=1), np.sqrt(slope2 * resid2 / m))
        close = {"rel": 1e-9}
        assert selector.group_scores_[g] == pytest.approx(units.sum(), **close)
        assert selector.group_scores_se_[g] == pytest.approx(se, rel=1e-6)
        p = stats.t.sf(units.sum() / se, df=m - 1)
        assert selector.group_pvalues_[g] == pytest.approx(p, rel=1e-5)
    # And to 1e-9 against the in-memory engine's own primitives on the same rows.
    from skl_treeinner._stats._feature_groups import resolve_feature_groups

    fg = resolve_feature_groups(groups, 6)
    noise = []
    for fitted, test in zip(selector.estimators_, tests, strict=True):
        reader = read_model(fitted)
        rows, n, y_rows, w_rows = reader.rows(X[test], y[test], None)
        z = tree_inner(fitted, X[test], y[test], per_sample=True)
        noise.append(
            row_noise_sums(
                reader,
                rows,
                n,
                y_rows,
                w_rows,
                attribution="predecomp",
                terms=z,
                sums=[None, fg.sums],
            )[1]
        )
    in_memory = one_sided_test(
        fg.sums(pool_rows(len(y), tests, terms)), pool_noise(len(y), tests, noise)
    )
    close = {"rtol": 1e-9, "atol": 1e-9}
    np.testing.assert_allclose(selector.group_scores_, in_memory.scores, **close)
    np.testing.assert_allclose(selector.group_scores_se_, in_memory.se, **close)
    selector.set_params(group_test="sum")
    np.testing.assert_allclose(selector.group_pvalues_, in_memory.pvalues, **close)


def test_column_test_resamples_within_partitions(client):
    """test="column" on Dask: each partition's rows resampled among themselves.

    The statistics equal the in-memory primitives run partition by partition
    with the engine's seeds (split, role, partition), their moments added.
    """
    from skl_treeinner._engines._plan import selection_seeds
    from skl_treeinner._scoring._permutation import column_terms
    from skl_treeinner._stats import _inference

    X, y = _data(n=700, seed=8)
    model = xgb.XGBRegressor(n_estimators=15, max_depth=3, n_jobs=1)
    model.fit(X[:300], y[:300])
    Xd = da.from_array(X[300:], chunks=(150, 5))
    cluster = TreeInnerSelector(model, prefit=True, test="column", random_state=3)
    cluster.fit(Xd, da.from_array(y[300:], chunks=150))
    reader = read_model(model)
    seed = selection_seeds(3)[0]
    tested = terms = None
    for number, start in enumerate(range(300, 700, 150)):
        rows = slice(start, min(start + 150, 700))
        got = column_terms(
            reader, X[rows], len(y[rows]), y[rows], None, attribution="predecomp",
            into=None, feature_groups=None, seed=[seed, 0, 2, number],
        )  # fmt: skip
        d = _inference.moments(got.tested, got.noise)
        z = _inference.moments(got.terms)
        tested = d if tested is None else _inference.combine_moments(tested, d)
        terms = z if terms is None else _inference.combine_moments(terms, z)
    test = _inference.score_test(
        tested._replace(peak=np.maximum(tested.peak, terms.peak))
    )
    np.testing.assert_allclose(cluster.scores_, terms.total, rtol=1e-9)
    np.testing.assert_allclose(
        cluster.null_scores_, terms.total - tested.total, rtol=1e-9, atol=1e-9
    )
    np.testing.assert_allclose(cluster.scores_se_, test.se, rtol=1e-9)
    np.testing.assert_allclose(cluster.pvalues_, test.pvalues, rtol=1e-9, atol=1e-12)
    assert cluster.support_[0] and not cluster.support_[3:].any()


def test_column_test_chains_the_folds_on_dask(client):
    """cv=3 with test="column": two splits, fitted on fold 0 and on folds 0-1."""
    X, y = _data(n=900, seed=9)
    Xd, yd = da.from_array(X, chunks=(300, 5)), da.from_array(y, chunks=300)
    booster = dxgb.DaskXGBRegressor(n_estimators=10, max_depth=2)
    column = TreeInnerSelector(booster, cv=3, test="column", random_state=0)
    column.fit(Xd, yd)
    assert len(column.estimators_) == 2
    # Every fold holds about a third of the rows; folds 1 and 2 are scored.
    assert 450 < column.n_scored_rows_ < 750
    assert column.pvalues_[0] < 1e-3


def test_repeats_combine_on_dask(client):
    """n_repeats=2: each repeat its own folds and draws, combined as in memory."""
    X, y = _data(n=900, seed=9)
    Xd, yd = da.from_array(X, chunks=(300, 5)), da.from_array(y, chunks=300)
    booster = dxgb.DaskXGBRegressor(n_estimators=10, max_depth=2)
    params = dict(cv=3, test="column", random_state=0)
    two = TreeInnerSelector(booster, n_repeats=2, **params).fit(Xd, yd)
    one = TreeInnerSelector(booster, **params).fit(Xd, yd)
    assert len(two.estimators_) == 4 and two.split_scores_.shape == (4, 5)
    first, second = two._repeat_statistics
    # XGBoost's Dask training is not bit for bit the same from run to run
    # (its allreduce sums in any order); p-values far in the tail magnify that.
    np.testing.assert_allclose(first["scores_"], one.scores_, rtol=1e-6)
    np.testing.assert_allclose(first["pvalues_"], one.pvalues_, rtol=1e-3)
    assert not np.allclose(first["scores_"], second["scores_"])  # other folds
    tested = [r["scores_"] - r["null_scores_"] for r in (first, second)]
    se = (first["scores_se_"] + second["scores_se_"]) / 2
    np.testing.assert_allclose(two.scores_se_, se)
    t = np.mean(tested, axis=0) / se
    from scipy import stats

    np.testing.assert_allclose(
        two.pvalues_, stats.t.sf(t, df=two.n_scored_rows_ - 1), rtol=1e-6
    )
    assert two.pvalues_[0] < 1e-3 and two.selection_frequency_[0] == 1.0


def test_the_dask_default_keeps_256_bins_whatever_the_rows():
    """A Dask DataFrame's rows are unknown without computing, so the Dask
    default keeps XGBoost's bins for arrays and DataFrames alike; in memory,
    300 rows give 18 (one per 16 rows)."""
    from skl_treeinner._engines._plan import known_rows
    from skl_treeinner._engines.dask import DaskEngine
    from skl_treeinner._engines.memory import InMemory

    frame = dd.from_pandas(pd.DataFrame({"a": np.arange(300.0)}), npartitions=2)
    assert known_rows(frame) is None
    assert known_rows(da.ones((300, 2), chunks=100)) == 300
    twin = DaskEngine().default_estimator(False, 0, n_rows=300)
    assert isinstance(twin, dxgb.DaskXGBRegressor)
    assert twin.get_params()["max_bin"] is None  # XGBoost's own 256
    assert InMemory().default_estimator(False, 0, 300).get_params()["max_bin"] == 18


def test_persisted_arrays_give_the_arrays_selection(client):
    """Arrays persisted on the cluster, as users keep them, select as before.

    On dask 2024.12 (the lowest allowed) a persisted array's optimized blocks
    reached the tasks as their keys, and the selector refused them: "Partition
    2 holds 3 rows of X but 2 of y". A classifier also reads its labels from
    y's blocks.
    """
    import distributed

    X, y = _data(n=900, seed=13)
    labels = (y > np.median(y)).astype(int)
    for target, est in (
        (y, dxgb.DaskXGBRegressor(n_estimators=10, max_depth=2)),
        (labels, dxgb.DaskXGBClassifier(n_estimators=10, max_depth=2)),
    ):
        Xd = da.from_array(X, chunks=(300, 5))
        yd = da.from_array(target, chunks=300)
        plain = TreeInnerSelector(est, cv=None, random_state=0).fit(Xd, yd)
        Xp, yp = client.persist([Xd, yd])
        distributed.wait([Xp, yp])
        kept = TreeInnerSelector(est, cv=None, random_state=0).fit(Xp, yp)
        assert kept.n_scored_rows_ == plain.n_scored_rows_
        np.testing.assert_allclose(kept.scores_, plain.scores_, rtol=1e-6)
        assert kept.support_[0] and np.array_equal(kept.support_, plain.support_)


@pytest.mark.slow
def test_an_integer_price_is_a_regression_on_dask_too(client):
    # Issue 54: the task rule is one for both engines: more than 20 distinct
    # integers are numbers, said once (counted on the cluster).
    X, y = _data(n=300, seed=14)
    price = np.round(y * 1000 + 150_000).astype(np.int64)
    Xd, yd = da.from_array(X, chunks=(100, 5)), da.from_array(price, chunks=100)
    with pytest.warns(UserWarning, match="distinct integers.*regression") as record:
        selector = TreeInnerSelector(cv=None, random_state=0).fit(Xd, yd)
    assert sum("distinct integers" in str(w.message) for w in record) == 1
    assert isinstance(selector.estimator_, dxgb.DaskXGBRegressor)


def test_memory_says_dask_collections_are_not_cached(client, tmp_path):
    # Issue 54: the selector's cache holds selections of rows in memory only.
    X, y = _data(n=300, seed=15)
    Xd, yd = da.from_array(X, chunks=(100, 5)), da.from_array(y, chunks=100)
    est = dxgb.DaskXGBRegressor(n_estimators=3)
    selector = TreeInnerSelector(est, cv=None, random_state=0, memory=tmp_path)
    with pytest.warns(UserWarning, match="memory is not used: Dask collections"):
        selector.fit(Xd, yd)
    assert selector.scores_.shape == (5,) and not list(tmp_path.rglob("output.pkl"))
