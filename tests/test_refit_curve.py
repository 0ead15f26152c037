"""The refit curve: max_features="best" / "1se", cv_results_, honest by construction."""

import numpy as np
import pytest
import xgboost as xgb
from sklearn.dummy import DummyRegressor
from sklearn.exceptions import NotFittedError
from sklearn.metrics import r2_score, roc_auc_score
from sklearn.model_selection import GroupKFold, KFold, TimeSeriesSplit

from skl_treeinner import TreeInnerSelector, _splits
from skl_treeinner._refit_curve import choose_k, curve_standard_error, k_grid


def _booster(**kw):
    params = dict(n_estimators=60, learning_rate=0.1, max_depth=3, n_jobs=1)
    return xgb.XGBRegressor(**{**params, **kw})


def _data(n=500, p=8, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = X[:, 0] + 0.5 * X[:, 1] + 0.2 * X[:, 2] + rng.normal(size=n)
    return X, y


def test_curve_keys_and_rules_reselect_without_refit():
    X, y = _data()
    sel = TreeInnerSelector(_booster(), max_features="best", random_state=0).fit(X, y)
    res = sel.cv_results_
    n_splits = 5
    assert set(res) == {
        "n_features",
        "mean_test_score",
        "std_test_score",
        *(f"split{i}_test_score" for i in range(n_splits)),
    }
    assert res["n_features"][0] == 0 and np.all(np.diff(res["n_features"]) > 0)
    splits = np.vstack([res[f"split{i}_test_score"] for i in range(n_splits)])
    np.testing.assert_allclose(res["mean_test_score"], splits.mean(axis=0))
    np.testing.assert_allclose(res["std_test_score"], splits.std(axis=0))
    se = curve_standard_error(res)
    best_k = choose_k(res["n_features"], res["mean_test_score"], se, "best")
    one_se_k = choose_k(res["n_features"], res["mean_test_score"], se, "1se")
    assert res["mean_test_score"].max() > 0.3  # the signal is found
    estimators = sel.estimators_
    sel.set_params(max_features=None)  # the candidates: those passing the test
    candidates = sel.support_.copy()
    sel.set_params(max_features="best")
    assert sel.n_features_ == min(best_k, candidates.sum()) == sel.support_.sum()
    # the kept ones are the top of the candidates by score
    top = np.argsort(-np.where(candidates, sel.scores_, -np.inf))[: sel.n_features_]
    assert set(np.flatnonzero(sel.support_)) == set(top)
    sel.set_params(max_features="1se")
    assert sel.n_features_ == min(one_se_k, candidates.sum()) <= best_k
    assert sel.estimators_ is estimators
    sel.set_params(max_features=2)
    assert sel.n_features_ == 2 and "cv_results_" in vars(sel)


def test_the_default_is_unchanged_and_a_curve_needs_a_curve_fit():
    X, y = _data(300)
    plain = TreeInnerSelector(_booster(), random_state=3).fit(X, y)
    curved = TreeInnerSelector(_booster(), max_features="1se", random_state=3)
    curved.fit(X, y)
    for name in ("scores_", "scores_se_", "pvalues_", "split_scores_"):
        np.testing.assert_array_equal(getattr(plain, name), getattr(curved, name))
    assert not hasattr(plain, "cv_results_")
    plain.set_params(max_features="best")
    with pytest.raises(NotFittedError, match="refit curve"):
        plain.get_support()


def test_curve_matches_refits_we_did_not_write():
    # All columns pass (alpha=None, threshold=-inf), so the curve's last
    # point refits every column; k = 0 is the training mean.
    X, y = _data(300, p=5)
    cv = KFold(3)
    sel = TreeInnerSelector(
        _booster(), cv=cv, alpha=None, threshold=-np.inf, max_features="best"
    ).fit(X, y)
    res = sel.cv_results_
    assert res["n_features"][-1] == 5
    for i, (train, test) in enumerate(cv.split(X)):
        full = _booster().fit(X[train], y[train])
        assert res[f"split{i}_test_score"][-1] == pytest.approx(
            r2_score(y[test], full.predict(X[test])), rel=1e-6
        )
        mean = DummyRegressor().fit(X[train], y[train]).predict(X[test])
        assert res[f"split{i}_test_score"][0] == pytest.approx(r2_score(y[test], mean))


def _at_chance(res):
    """The curve's best mean is within two standard errors of the intercept's."""
    best = int(np.argmax(res["mean_test_score"]))
    se = curve_standard_error(res)
    return res["mean_test_score"][best] <= res["mean_test_score"][0] + 2 * se[best]


def test_honest_curve_stays_at_chance_where_a_leaky_ranking_does_not(monkeypatch):
    # y independent of 300 columns on 160 rows; alpha=None: the curve runs
    # over every column with a positive inner score.
    rng = np.random.default_rng(1)
    X = rng.normal(size=(160, 300))
    y = rng.normal(size=160)
    params = dict(max_features="best", alpha=None, random_state=0)
    honest = TreeInnerSelector(_booster(), **params).fit(X, y)
    assert _at_chance(honest.cv_results_)

    # The leaky variant: every split's ranking fitted and scored on all
    # rows, its held-out rows included.
    def leaky(jobs, **_):
        rows = np.arange(y.size)
        return [(rows, rows) for _ in jobs]

    monkeypatch.setattr(_splits, "inner_splits", leaky)
    leaked = TreeInnerSelector(_booster(), **params).fit(X, y)
    assert not _at_chance(leaked.cv_results_)
    assert leaked.cv_results_["mean_test_score"].max() > 0.1


def test_feature_groups_are_ranked_counted_and_kept_whole():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(600, 9))
    y = X[:, 0] + X[:, 1] + 0.5 * X[:, 4] + rng.normal(size=600)
    groups = {"a": [0, 1], "b": [2, 3], "c": [4, 5, 6]}  # 7, 8 alone
    sel = TreeInnerSelector(
        _booster(), feature_groups=groups, max_features="best", random_state=0
    ).fit(X, y)
    res = sel.cv_results_
    assert res["n_features"].max() <= 5  # counts groups: 3 named + 2 alone
    assert sel.n_features_ == sel.group_support_.sum()
    kept = sel.get_support()
    for cols in groups.values():
        assert kept[cols].all() or not kept[cols].any()
    assert kept[[0, 1]].all()


def test_classifiers_score_roc_auc_and_take_a_scoring():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 6))
    y = (X[:, 0] + rng.normal(size=400) > 0).astype(int)
    clf = xgb.XGBClassifier(n_estimators=40, max_depth=2, n_jobs=1)
    cv = KFold(2, shuffle=True, random_state=0)
    sel = TreeInnerSelector(
        clf, cv=cv, max_features="best", alpha=None, threshold=-np.inf
    ).fit(X, y)
    res = sel.cv_results_
    assert res["split0_test_score"][0] == pytest.approx(0.5)  # the prior
    train, test = next(cv.split(X, y))
    full = xgb.XGBClassifier(n_estimators=40, max_depth=2, n_jobs=1)
    full.fit(X[train], y[train])
    assert res["split0_test_score"][-1] == pytest.approx(
        roc_auc_score(y[test], full.predict_proba(X[test])[:, 1]), rel=1e-6
    )
    sel.set_params(scoring="neg_log_loss").fit(X, y)
    assert sel.cv_results_["mean_test_score"].max() < 0
    y3 = np.digitize(X[:, 0] + rng.normal(size=400), [-0.5, 0.5])
    multi = TreeInnerSelector(clf, cv=cv, max_features="1se").fit(X, y3)
    assert 0.5 < multi.cv_results_["mean_test_score"].max() <= 1


def test_prefit_is_refused_before_scoring():
    X, y = _data(200)
    model = _booster().fit(X, y)
    with pytest.raises(ValueError, match="prefit=True"):
        TreeInnerSelector(model, prefit=True, max_features="best").fit(X, y)


def test_inner_splits_keep_groups_apart_and_time_in_order():
    n = 240
    y = np.random.default_rng(0).normal(size=n)
    groups = np.repeat(np.arange(24), 10)
    splits = list(GroupKFold(4).split(np.zeros((n, 1)), y, groups))
    jobs = [_splits.SplitJob(i, tr, te) for i, (tr, te) in enumerate(splits)]
    pairs = _splits.inner_splits(
        jobs, y=y, classifier=False, labels=None, groups=groups, ordered=False, seed=0
    )
    for job, (fit_rows, ranked) in zip(jobs, pairs, strict=True):
        assert np.intersect1d(groups[fit_rows], groups[ranked]).size == 0
        assert np.intersect1d(np.union1d(fit_rows, ranked), job.test).size == 0
    splits = list(TimeSeriesSplit(3).split(np.zeros((n, 1))))
    jobs = [_splits.SplitJob(i, tr, te) for i, (tr, te) in enumerate(splits)]
    pairs = _splits.inner_splits(
        jobs, y=y, classifier=False, labels=None, groups=None, ordered=True, seed=0
    )
    for job, (fit_rows, ranked) in zip(jobs, pairs, strict=True):
        assert fit_rows.max() < ranked.min() and ranked.max() < job.test.min()


def test_k_grid_is_dense_where_curves_bend():
    assert k_grid(0).tolist() == [0]
    grid = k_grid(1000)
    assert grid[:11].tolist() == list(range(11)) and grid[-1] == 1000
    assert grid.size <= 30
