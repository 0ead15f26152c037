"""The refit curve on Dask collections, with Dask boosters, on a real LocalCluster.

Every fit the selector makes is recorded from the booster's own ``fit``
(rows told apart by their first feature, which is continuous): the rankings
and refits of split j never touch its held-out rows, and the curve's points
are the scikit-learn scores of the recorded refits' own predictions.
"""

import functools

import numpy as np
import pytest
import xgboost as xgb
from sklearn.metrics import r2_score

from skl_treeinner import TreeInnerSelector as _TreeInnerSelector

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")
pd = pytest.importorskip("pandas")
import xgboost.dask as dxgb  # noqa: E402

#: These tests check the Dask engine's statistics, splits and refits against
#: in-memory references built for the test of the model's use (symmetric
#: folds, scores of the held-out rows alone), so they ask for it; the default
#: test of the column is checked on the cluster by the tests that name it
#: (``test="column"``).
TreeInnerSelector = functools.partial(_TreeInnerSelector, test="model")

#: A real cluster or a script run per test: slow (pytest -m 'not slow' skips).
pytestmark = pytest.mark.slow


def _data(n=600, p=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = 2 * X[:, 0] + X[:, 1] + rng.normal(size=n)
    return X, y


def _record(monkeypatch, cls):
    calls = []
    original = cls.fit

    def fit(self, X, y, **kwargs):
        rows = X.compute()
        evals = kwargs.get("eval_set") or ()
        calls.append(
            {
                "est": self,
                "key": np.asarray(
                    rows.iloc[:, 0] if hasattr(rows, "iloc") else rows[:, 0]
                ),
                "n_columns": rows.shape[1],
                "eval": [np.asarray(e[0].compute())[:, 0] for e in evals],
            }
        )
        return original(self, X, y, **kwargs)

    monkeypatch.setattr(cls, "fit", fit)
    return calls


def test_rankings_and_refits_never_touch_a_splits_held_out_rows(client, monkeypatch):
    X, y = _data()
    # column 0 always passes (alpha=None, threshold=-inf keep every column),
    # so every fit's first column tells its rows apart
    Xd, yd = da.from_array(X, chunks=(150, 5)), da.from_array(y, chunks=150)
    calls = _record(monkeypatch, dxgb.DaskXGBRegressor)
    est = dxgb.DaskXGBRegressor(n_estimators=15, max_depth=3, learning_rate=0.3)
    sel = TreeInnerSelector(
        est, cv=2, alpha=None, threshold=-np.inf, max_features="best", random_state=0
    ).fit(Xd, yd)
    res = sel.cv_results_
    assert res["n_features"].tolist() == [0, 1, 2, 3, 4, 5]
    main, inner, refits = calls[:2], calls[2:4], calls[4:]
    assert len(refits) == 2 * 5  # k = 1..5 per split; k = 0 is the prior mean
    for j in range(2):
        held_out = np.setdiff1d(X[:, 0], main[j]["key"])
        assert np.intersect1d(inner[j]["key"], held_out).size == 0
        assert inner[j]["key"].size < 0.6 * main[j]["key"].size  # half of them
        for i, call in enumerate(refits[5 * j : 5 * (j + 1)]):
            assert call["n_columns"] == i + 1
            np.testing.assert_array_equal(np.sort(call["key"]), np.sort(main[j]["key"]))
        # the last refit (every column): its own predictions, scikit-learn's R²
        last = refits[5 * j + 4]["est"]
        rows = np.isin(X[:, 0], held_out)
        predicted = last.get_booster().inplace_predict(X[rows])
        assert res[f"split{j}_test_score"][-1] == pytest.approx(
            r2_score(y[rows], predicted), rel=1e-5
        )
        assert res[f"split{j}_test_score"][0] == pytest.approx(
            r2_score(y[rows], np.full(rows.sum(), y[~rows].mean())), rel=1e-9
        )
    assert sel.get_support()[:2].all()


def test_groups_and_classifiers_on_the_cluster(client):
    X, y = _data(p=6, seed=1)
    frame = pd.DataFrame(X, columns=[f"x{i}" for i in range(6)])
    Xd = dd.from_pandas(frame, npartitions=3)
    labels = dd.from_pandas(pd.Series((y > 0).astype(int)), npartitions=3)
    clf = dxgb.DaskXGBClassifier(n_estimators=10, max_depth=2)
    groups = {"signal": ["x0", "x1"], "rest": ["x2", "x3", "x4"]}
    sel = TreeInnerSelector(
        clf, cv=2, max_features="1se", feature_groups=groups, random_state=0
    ).fit(Xd, labels)
    res = sel.cv_results_
    assert res["n_features"].max() <= 3  # two groups and x5
    # minus the log loss: the prior's, about -log(2) here, then much better
    assert res["split0_test_score"][0] == pytest.approx(-np.log(2), abs=0.01)
    assert res["mean_test_score"].max() > res["mean_test_score"][0] + 0.2
    kept = sel.get_support()
    assert kept[:2].all() and (kept[2:5].all() or not kept[2:5].any())
    with pytest.raises(ValueError, match="prefit=True"):
        model = xgb.XGBClassifier(n_estimators=3).fit(X, (y > 0).astype(int))
        TreeInnerSelector(model, prefit=True, max_features="best").fit(Xd, labels)


def test_refits_keep_lightgbm_categorical_feature_on_its_column(client, monkeypatch):
    # Regression: the Dask curve passed categorical_feature=[3] unchanged to
    # refits on fewer columns, where position 3 is another column or none.
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(0)
    n = 600
    X = rng.normal(size=(n, 5))
    X[:, 3] = rng.integers(0, 6, size=n)  # a coded category that drives y
    y = 0.3 * X[:, 0] + 3 * np.array([0, 3, -2, 1, -3, 2])[X[:, 3].astype(int)]
    y = y + 0.5 * rng.normal(size=n)
    Xd, yd = da.from_array(X, chunks=(150, 5)), da.from_array(y, chunks=150)
    calls = []
    original = lgb.DaskLGBMRegressor.fit

    def fit(self, X, y, **kwargs):
        rows = np.asarray(X.compute())
        integral = np.flatnonzero((rows == np.round(rows)).all(axis=0))
        calls.append((rows.shape[1], kwargs.get("categorical_feature"), integral))
        return original(self, X, y, **kwargs)

    monkeypatch.setattr(lgb.DaskLGBMRegressor, "fit", fit)
    est = lgb.DaskLGBMRegressor(
        n_estimators=10, num_leaves=7, cat_l2=0.0, min_data_per_group=5, verbose=-1
    )
    sel = TreeInnerSelector(
        est, cv=2, alpha=None, threshold=-np.inf, max_features="best", random_state=0
    ).fit(Xd, yd, categorical_feature=[3])
    assert np.isfinite(sel.cv_results_["mean_test_score"]).all()
    refits = calls[4:]  # after the two splits' fits and their two rankings
    assert len(refits) == 2 * 5
    # the category (the one column of whole numbers) is declared where a
    # refit keeps it, at its own position among the refit's columns
    kept = 0
    for _, cats, integral in refits:
        assert list(cats) == integral.tolist()
        kept += integral.size
    assert kept >= 8  # it ranks first: most refits keep it
