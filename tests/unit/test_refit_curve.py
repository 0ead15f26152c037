"""The refit curve: max_features="best" / "1se", cv_results_, honest by construction."""

import numpy as np
import pytest
import xgboost as xgb
from sklearn.dummy import DummyRegressor
from sklearn.exceptions import NotFittedError
from sklearn.metrics import (
    log_loss,
    make_scorer,
    r2_score,
    recall_score,
    roc_auc_score,
)
from sklearn.model_selection import GroupKFold, KFold, TimeSeriesSplit

from skl_treeinner import TreeInnerSelector
from skl_treeinner._engines.memory import _splits
from skl_treeinner._stats._refit_curve import choose_k, curve_standard_error, k_grid


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
    n_splits = 4  # cv=5, chained by the test of the column
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


@pytest.mark.slow
def test_classifiers_score_log_loss_in_the_users_labels_and_take_a_scoring():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 6))
    y = np.where(X[:, 0] + rng.normal(size=400) > 0, "yes", "no")
    clf = xgb.XGBClassifier(n_estimators=40, max_depth=2, n_jobs=1)
    cv = KFold(2, shuffle=True, random_state=0)
    params = dict(cv=cv, max_features="best", alpha=None, threshold=-np.inf)
    sel = TreeInnerSelector(clf, **params).fit(X, y)
    res = sel.cv_results_
    train, test = next(cv.split(X, y))
    prior = np.mean(y[train] == "yes")
    assert res["split0_test_score"][0] == pytest.approx(
        -log_loss(y[test], np.full(test.size, prior), labels=["no", "yes"])
    )
    full = xgb.XGBClassifier(n_estimators=40, max_depth=2, n_jobs=1)
    full.fit(X[train], (y[train] == "yes").astype(int))
    proba = full.predict_proba(X[test])
    assert res["split0_test_score"][-1] == pytest.approx(
        -log_loss(y[test], proba, labels=["no", "yes"]), rel=1e-6
    )
    # scorers see the user's labels: pos_label="yes" means "yes"
    recall_yes = make_scorer(recall_score, pos_label="yes")
    sel.set_params(scoring=recall_yes).fit(X, y)
    predicted = np.array(["no", "yes"])[full.predict(X[test])]
    assert sel.cv_results_["split0_test_score"][-1] == pytest.approx(
        recall_score(y[test], predicted, pos_label="yes")
    )
    sel.set_params(scoring="roc_auc").fit(X, y)
    assert sel.cv_results_["split0_test_score"][-1] == pytest.approx(
        roc_auc_score(y[test] == "yes", proba[:, 1]), rel=1e-6
    )
    # three classes, one missing from a held-out part: the default still scores
    y3 = np.digitize(X[:, 0] + rng.normal(size=400), [-0.5, 0.5])
    y3[:10] = y3[140:150] = 3  # class 3 not in KFold(3)'s last held-out part
    multi = TreeInnerSelector(clf, cv=KFold(3), max_features="1se").fit(X, y3)
    assert np.isfinite(multi.cv_results_["mean_test_score"]).all()
    with pytest.raises(ValueError, match="scoring failed on a split's held-out"):
        TreeInnerSelector(
            clf, cv=KFold(3), max_features="1se", alpha=None, scoring="roc_auc_ovr"
        ).fit(X, y3)


def test_what_the_refits_cannot_use_fails_before_any_fit(monkeypatch):
    X, y = _data(200)
    fits = []
    original = xgb.XGBRegressor.fit
    monkeypatch.setattr(
        xgb.XGBRegressor,
        "fit",
        lambda self, *a, **k: fits.append(1) or original(self, *a, **k),
    )
    # XGBoost applies a shorter monotone_constraints to the first columns
    with pytest.raises(ValueError, match="monotone_constraints=.* by position"):
        TreeInnerSelector(_booster(monotone_constraints=(1,)), max_features="best").fit(
            X, y
        )
    with pytest.raises(ValueError, match="not a valid scoring value"):
        TreeInnerSelector(_booster(), max_features="best", scoring="r3").fit(X, y)

    def unweighted(est, X, y):
        return 0.0

    with pytest.raises(ValueError, match="without a sample_weight"):
        TreeInnerSelector(_booster(), max_features="best", scoring=unweighted).fit(
            X, y, sample_weight=np.ones(y.size)
        )
    assert fits == []
    with pytest.raises(ValueError, match="scoring gave nan on the held-out rows"):
        TreeInnerSelector(
            _booster(), max_features="best", scoring=lambda e, X, y: np.nan
        ).fit(X, y)


def test_a_users_eval_set_is_cut_to_the_refits_columns():
    X, y = _data(300)
    booster = _booster(n_estimators=200, early_stopping_rounds=5)
    sel = TreeInnerSelector(booster, max_features="best", alpha=None, cv=3)
    sel.fit(X[:250], y[:250], eval_set=[(X[250:], y[250:])])
    assert sel.cv_results_["n_features"][-1] > 1


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
        assert np.intersect1d(np.union1d(fit_rows, ranked), job.held_out).size == 0
    splits = list(TimeSeriesSplit(3).split(np.zeros((n, 1))))
    jobs = [_splits.SplitJob(i, tr, te) for i, (tr, te) in enumerate(splits)]
    pairs = _splits.inner_splits(
        jobs, y=y, classifier=False, labels=None, groups=None, ordered=True, seed=0
    )
    for job, (fit_rows, ranked) in zip(jobs, pairs, strict=True):
        assert fit_rows.max() < ranked.min() and ranked.max() < job.held_out.min()


def test_k_grid_is_dense_where_curves_bend():
    assert k_grid(0).tolist() == [0]
    grid = k_grid(1000)
    assert grid[:11].tolist() == list(range(11)) and grid[-1] == 1000
    assert grid.size <= 30


def test_max_features_counts_only_the_features_that_pass():
    from skl_treeinner._stats._cutoff import select

    # the best-scoring feature fails the test: it takes no place of the two
    kept = select(
        [5.0, 4.0, 3.0],
        0.0,
        2,
        ranking=[1, 2, 3],
        pvalues=[0.5, 0.01, 0.01],
        alpha=0.05,
    )
    assert kept.tolist() == [False, True, True]
    # of those that pass, the best by the ranking (the test), not by score
    kept = select([5.0, 4.0, 3.0], 0.0, 1, ranking=[3, 2, 1])
    assert kept.tolist() == [False, False, True]


def test_catboost_frames_with_categories_refit_on_any_subset():
    catboost = pytest.importorskip("catboost")
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(4)
    frame = pd.DataFrame(rng.normal(size=(300, 3)), columns=["a", "b", "c"])
    frame["city"] = rng.choice(["x", "y", "z"], size=300)
    y = frame["a"] + (frame["city"] == "x") + rng.normal(size=300)
    model = catboost.CatBoostRegressor(iterations=30, depth=3, verbose=0)
    sel = TreeInnerSelector(model, cv=3, max_features="best", alpha=None)
    sel.fit(frame, y)  # the probe of the cut-off does not clone CatBoost
    assert sel.cv_results_["n_features"][-1] >= 2
    with pytest.raises(ValueError, match="Leave cat_features out"):
        TreeInnerSelector(
            catboost.CatBoostRegressor(iterations=5, cat_features=["city"]),
            max_features="best",
        ).fit(frame, y)


def test_refits_cut_histgradientboostings_validation_rows_to_their_columns():
    # Regression: X_val (scikit-learn's own validation rows, a fit parameter)
    # reached refits on fewer columns whole, and HistGradientBoosting refused
    # it ("X has 5 features, but ... is expecting 2").
    import inspect

    from sklearn.ensemble import HistGradientBoostingRegressor

    if "X_val" not in inspect.signature(HistGradientBoostingRegressor.fit).parameters:
        pytest.skip("scikit-learn before 1.7 takes no X_val")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 5))
    y = X[:, 0] + 0.5 * X[:, 1] + rng.normal(size=400)
    X_val = rng.normal(size=(100, 5))
    y_val = X_val[:, 0] + 0.5 * X_val[:, 1] + rng.normal(size=100)
    est = HistGradientBoostingRegressor(max_iter=20, early_stopping=True)
    sel = TreeInnerSelector(
        est, cv=2, alpha=None, threshold=-np.inf, max_features="best", random_state=0
    ).fit(X, y, X_val=X_val, y_val=y_val)
    assert sel.cv_results_["n_features"].tolist() == [0, 1, 2, 3, 4, 5]
    assert np.isfinite(sel.cv_results_["mean_test_score"]).all()


@pytest.mark.parametrize(
    "library, params",
    [
        ("lightgbm", {"monotonic_cst": [1, 0, 0]}),  # LightGBM's alias
        ("lightgbm", {"categorical_features": [0]}),  # LightGBM's alias
        ("catboost", {"feature_weights": [1.0, 2.0, 3.0]}),
    ],
)
def test_positional_settings_are_refused_under_their_aliases(library, params):
    # Regression: the readers' own lists of positional settings missed these
    # names, which the one list before them (_refit_curve) refused.
    module = pytest.importorskip(library)
    cls = module.LGBMRegressor if library == "lightgbm" else module.CatBoostRegressor
    X, y = _data(100)
    with pytest.raises(ValueError, match="by position"):
        TreeInnerSelector(cls(**params), max_features="best").fit(X, y)
