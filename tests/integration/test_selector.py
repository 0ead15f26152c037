"""TreeInnerSelector with XGBoost: scikit-learn's checks, composition, errors.

The scores are compared with numbers computed independently of the selector:
``tree_inner`` called by hand on the same rows (itself pinned to XGBoost's
total gain and margins in test_total_gain.py / test_local_accuracy.py).
"""

import pickle

import numpy as np
import pytest
import xgboost as xgb
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import (
    GridSearchCV,
    GroupKFold,
    KFold,
    StratifiedKFold,
    cross_validate,
)
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from skl_treeinner import TreeInnerSelector, tree_inner


def small_reg(**kw):
    params = dict(n_estimators=8, max_depth=2, learning_rate=0.3, n_jobs=1)
    return xgb.XGBRegressor(**{**params, **kw})


def small_clf(**kw):
    params = dict(n_estimators=8, max_depth=2, learning_rate=0.3, n_jobs=1)
    return xgb.XGBClassifier(**{**params, **kw})


def make_data(n=300, p=6, seed=0, classification=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    signal = 2 * X[:, 0] - X[:, 1]
    y = signal + rng.normal(size=n)
    if classification:
        y = (y > 0).astype(int)
    return X, y


# -- scikit-learn's own estimator checks ----------------------------------------
# Every expected failure, with its reason.
_WEIGHTS_ARE_NOT_COUNTS = (
    "The test of each score counts rows, not weights: a row of weight 2 is one "
    "draw, not two, so that p-values do not depend on the scale of the weights "
    "(weights multiplied by 10 would otherwise turn noise significant). Fitting "
    "with integer weights therefore cannot equal fitting on repeated rows."
)
EXPECTED_FAILED_CHECKS: dict = {
    "check_sample_weight_equivalence_on_dense_data": _WEIGHTS_ARE_NOT_COUNTS,
    "check_sample_weight_equivalence_on_sparse_data": _WEIGHTS_ARE_NOT_COUNTS,
}


@pytest.mark.slow
@parametrize_with_checks(
    [
        TreeInnerSelector(small_reg(n_estimators=3), random_state=0),
        # the refit curve (issue 30): nested rankings and refits in every check
        TreeInnerSelector(
            small_reg(n_estimators=3), cv=3, max_features="1se", random_state=0
        ),
    ],
    expected_failed_checks=lambda est: EXPECTED_FAILED_CHECKS,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


# -- the scores are tree_inner on held-out rows ---------------------------------
def test_single_split_equals_tree_inner_on_held_out_rows():
    X, y = make_data()
    sel = TreeInnerSelector(small_reg(), cv=None, random_state=0).fit(X, y)
    test = np.setdiff1d(np.arange(len(y)), _train_rows(sel.estimator_, X, y))
    assert test.size == 150  # validation_fraction=0.5
    expected = tree_inner(sel.estimator_, X[test], y[test])
    np.testing.assert_allclose(sel.scores_, expected, rtol=1e-12)
    assert sel.split_scores_.shape == (1, 6)
    assert sel.estimators_ == [sel.estimator_]


def _train_rows(model, X, y):
    """Rows a model was fitted on, recovered by refitting on candidate splits."""
    from sklearn.model_selection import ShuffleSplit

    # The selector's single split is ShuffleSplit seeded from random_state=0.
    rng = np.random.RandomState(0)
    seed = int(rng.randint(2**31 - 1, size=2)[0])
    train, _ = next(ShuffleSplit(1, test_size=0.5, random_state=seed).split(X))
    refit = clone(model).fit(X[train], y[train])
    np.testing.assert_array_equal(refit.predict(X), model.predict(X))
    return train


def test_cv_splits_sum_manual_tree_inner_calls():
    X, y = make_data(classification=True)
    cv = StratifiedKFold(3, shuffle=True, random_state=1)
    sel = TreeInnerSelector(small_clf(), cv=cv).fit(X, y)
    manual = []
    for (train, test), est in zip(cv.split(X, y), sel.estimators_, strict=True):
        model = small_clf().fit(X[train], y[train])
        np.testing.assert_array_equal(model.predict(X), est.predict(X))
        manual.append(tree_inner(model, X[test], y[test]))
    np.testing.assert_allclose(sel.split_scores_, np.array(manual), rtol=1e-12)
    np.testing.assert_allclose(sel.scores_, np.sum(manual, axis=0), rtol=1e-12)
    assert sel.estimator_ is sel.estimators_[0]


def test_iterable_cv_and_int_cv():
    X, y = make_data()
    splits = list(KFold(2).split(X))
    sel = TreeInnerSelector(small_reg(), cv=splits).fit(X, y)
    manual = [
        tree_inner(small_reg().fit(X[tr], y[tr]), X[te], y[te]) for tr, te in splits
    ]
    np.testing.assert_allclose(sel.split_scores_, manual, rtol=1e-12)
    sel5 = TreeInnerSelector(small_reg(), cv=5, random_state=0).fit(X, y)
    assert sel5.split_scores_.shape == (4, 6) and len(sel5.estimators_) == 4  # chained
    sel5 = TreeInnerSelector(small_reg(), cv=5, test="model", random_state=0)
    sel5.fit(X, y)
    assert sel5.split_scores_.shape == (5, 6) and len(sel5.estimators_) == 5


def test_sample_weight_weights_the_inner_product_and_the_fit():
    X, y = make_data()
    w = np.random.default_rng(3).uniform(0.2, 3.0, size=len(y))
    splits = list(KFold(2, shuffle=True, random_state=0).split(X))
    sel = TreeInnerSelector(small_reg(), cv=splits).fit(X, y, sample_weight=w)
    for (train, test), est, got in zip(
        splits, sel.estimators_, sel.split_scores_, strict=True
    ):
        model = small_reg().fit(X[train], y[train], sample_weight=w[train])
        np.testing.assert_array_equal(model.predict(X), est.predict(X))
        expected = tree_inner(model, X[test], y[test], sample_weight=w[test])
        np.testing.assert_allclose(got, expected, rtol=1e-12)
        unweighted = tree_inner(model, X[test], y[test])
        assert not np.allclose(got, unweighted)


def test_multiclass_scores_sum_over_classes_and_string_labels():
    X, y = make_data(n=300)
    labels = np.array(["low", "mid", "high"])[np.digitize(y, [-1.0, 1.0])]
    splits = list(StratifiedKFold(2, shuffle=True, random_state=0).split(X, labels))
    sel = TreeInnerSelector(small_clf(), cv=splits).fit(X, labels)
    codes = np.unique(labels, return_inverse=True)[1]
    for (train, test), got in zip(splits, sel.split_scores_, strict=True):
        model = small_clf().fit(X[train], codes[train])
        np.testing.assert_allclose(
            got, tree_inner(model, X[test], codes[test]), rtol=1e-12
        )
    assert np.argmax(sel.scores_) in (0, 1)


def test_treeshap_attribution():
    X, y = make_data(n=200)
    sel = TreeInnerSelector(
        small_reg(), attribution="treeshap", cv=None, random_state=0
    )
    sel.fit(X, y)
    test = np.setdiff1d(np.arange(len(y)), _train_rows(sel.estimator_, X, y))
    expected = tree_inner(sel.estimator_, X[test], y[test], attribution="treeshap")
    np.testing.assert_allclose(sel.scores_, expected, rtol=1e-10)


@pytest.mark.slow
def test_default_estimator_is_the_papers_xgboost():
    from threadpoolctl import threadpool_limits

    X, y = make_data(n=120, classification=True)
    with threadpool_limits(1):  # XGBoost's all-cores default crawls when shared
        sel = TreeInnerSelector(random_state=0).fit(X, y)
        sel_r = TreeInnerSelector(random_state=0).fit(X, y + 0.5 * X[:, 0])
    est = sel.estimator_
    assert isinstance(est, xgb.XGBClassifier)
    params = est.get_params()
    assert (params["n_estimators"], params["learning_rate"], params["max_depth"]) == (
        400,
        0.01,
        4,
    )
    assert params["min_child_weight"] == 1 and params["reg_lambda"] == 1
    assert params["random_state"] is not None
    assert isinstance(sel_r.estimator_, xgb.XGBRegressor)


def _trained_max_bin(model):
    """max_bin as XGBoost's own configuration of the trained booster says."""
    import json

    config = json.loads(model.get_booster().save_config())
    return int(config["learner"]["gradient_booster"]["tree_train_param"]["max_bin"])


def test_default_booster_bins_follow_the_rows_and_a_users_booster_keeps_its_own():
    from skl_treeinner._engines._plan import known_rows
    from skl_treeinner._readers import default_estimator
    from skl_treeinner._readers._xgboost import bins_for_rows

    # One bin per 16 rows, 16 to 256: XGBoost's hist cost grows with its
    # bins whatever the rows (benchmarks/default_bins.py).
    assert [bins_for_rows(n) for n in (10, 300, 1000, 4095, 4096, 10**6)] == [
        16, 18, 62, 255, 256, 256,
    ]  # fmt: skip
    assert default_estimator(False, 0, n_rows=10**5).get_params()["max_bin"] == 256
    assert default_estimator(False, 0).get_params().get("max_bin") is None
    assert known_rows([[1.0], [2.0]]) == 2 and known_rows(np.ones((7, 2))) == 7
    X, y = make_data(n=300)
    sel = TreeInnerSelector(cv=2, random_state=0).fit(X, y)
    assert {_trained_max_bin(m) for m in sel.estimators_} == {18}
    own = TreeInnerSelector(small_reg(), cv=2, random_state=0).fit(X, y)
    assert {_trained_max_bin(m) for m in own.estimators_} == {256}


# -- selection rules ----------------------------------------------------------------
def test_threshold_ranking_and_max_features():
    # The cut-off alone (alpha=None: no test), as SelectFromModel's, on the
    # number the test reads: the score less its resampled score (issue 53).
    X, y = make_data()
    sel = TreeInnerSelector(small_reg(), cv=2, alpha=None, random_state=0).fit(X, y)
    s = sel.scores_ - sel.null_scores_
    np.testing.assert_array_equal(sel.support_, s > 0)
    assert sel.threshold_ == 0.0
    # ranking: 1 = best, a permutation, in the order of the test: p-values
    # up, and the t statistics down where they tie
    assert sorted(sel.ranking_) == list(range(1, 7))
    order = np.argsort(sel.ranking_)
    assert np.all(np.diff(sel.pvalues_[order]) >= 0)
    # one Student's t: the same order, among the columns the boosters use
    # (the others have no spread, p = 1, and rank last)
    used = order[sel.scores_se_[order] > 0]
    assert np.all(np.diff(s[used] / sel.scores_se_[used]) <= 0)
    assert np.all(sel.pvalues_[order[used.size :]] == 1.0)
    for threshold, value in [
        ("mean", s.mean()),
        ("median", np.median(s)),
        ("1.5*mean", 1.5 * s.mean()),
        ("0.5 * median", 0.5 * np.median(s)),
        (lambda v: np.sort(v)[-2], np.sort(s)[-2]),
        (-1e9, -1e9),
    ]:
        sel.set_params(threshold=threshold).fit(X, y)
        assert sel.threshold_ == pytest.approx(value)
        np.testing.assert_array_equal(sel.support_, s > value)
    sel.set_params(threshold=-np.inf, max_features=2).fit(X, y)
    np.testing.assert_array_equal(sel.get_support(indices=True), np.sort(order[:2]))
    sel.set_params(max_features=0.5).fit(X, y)
    assert sel.support_.sum() == 3
    sel.set_params(max_features=lambda X: 1).fit(X, y)
    assert sel.get_support(indices=True).tolist() == [int(order[0])]
    sel.set_params(threshold=0.0, max_features=6).fit(X, y)
    np.testing.assert_array_equal(sel.support_, s > 0)
    # The test of the model's use reads the scores themselves.
    model = TreeInnerSelector(
        small_reg(), cv=2, alpha=None, test="model", random_state=0
    ).fit(X, y)
    np.testing.assert_array_equal(model.support_, model.scores_ > 0)
    model.set_params(threshold="median")
    assert model.threshold_ == pytest.approx(np.median(model.scores_))


def _one_feature(X):
    return 1


def test_set_params_reselects_without_refitting():
    # As SelectFromModel's threshold: the cut-off is a function of the fitted
    # scores (here max_features too, which SelectFromModel fixes at fit), so
    # changing threshold or max_features after fit re-selects at once.
    X, y = make_data()
    sel = TreeInnerSelector(small_reg(), cv=2, alpha=None, random_state=0).fit(X, y)
    s, fitted = sel.scores_.copy(), sel.estimators_
    for threshold in ["mean", -1e9, 0.5 * s.max(), lambda v: np.median(v)]:
        sel.set_params(threshold=threshold)
        assert sel.estimators_ is fitted  # no refit
        np.testing.assert_array_equal(sel.scores_, s)
        expected = TreeInnerSelector(
            small_reg(), cv=2, alpha=None, random_state=0, threshold=threshold
        ).fit(X, y)
        assert sel.threshold_ == pytest.approx(expected.threshold_)
        np.testing.assert_array_equal(sel.get_support(), expected.get_support())
        assert sel.transform(X).shape[1] == int(expected.support_.sum())
    sel.set_params(threshold=-np.inf, max_features=2)
    np.testing.assert_array_equal(
        sel.get_support(indices=True), np.sort(np.argsort(-s)[:2])
    )
    sel.set_params(max_features=0.5)
    assert sel.support_.sum() == 3
    # A bad cut-off set after fit fails when used, with the fit-time message.
    sel.set_params(threshold="x*mean")
    with pytest.raises(ValueError, match="is not a number"):
        sel.get_support()
    # A callable max_features is evaluated on fit's X: a new one needs a fit.
    sel.set_params(threshold=-np.inf, max_features=lambda X: 1).fit(X, y)
    assert sel.max_features_ == 1 and sel.support_.sum() == 1
    sel.set_params(max_features=lambda X: 2)
    with pytest.raises(NotFittedError, match="new callable after fit"):
        sel.get_support()
    # Pickling keeps the fitted callable recognised as the one fit saw.
    sel.set_params(max_features=_one_feature).fit(X, y)
    np.testing.assert_array_equal(
        pickle.loads(pickle.dumps(sel)).get_support(), sel.get_support()
    )


@pytest.mark.parametrize(
    "text, value",
    [
        ("0", None),  # keeps nothing: refused (issue 41)
        ("1", 1),
        ("6", 6),
        ("0.5", 0.5),
        ("1.0", 1.0),
        ("-1", None),
        ("1.5", None),
        ("0.0", None),
        ("nan", None),
        ("two", None),
    ],
)
def test_cli_reads_max_features_as_the_selector_does(text, value):
    # One home for the cut-off: the CLI's parser accepts exactly the numbers
    # the selector's parameter validation accepts.
    from sklearn.utils._param_validation import InvalidParameterError

    from skl_treeinner._cli._options import parse_max_features

    X, y = make_data(n=120)
    if value is None:
        with pytest.raises(ValueError, match="neither a number of features"):
            parse_max_features(text)
        try:
            number = int(text)
        except ValueError:
            number = float(text) if text != "two" else text
        with pytest.raises(InvalidParameterError):
            TreeInnerSelector(small_reg(), max_features=number).fit(X, y)
    else:
        parsed = parse_max_features(text)
        assert parsed == value and type(parsed) is type(value)
        sel = TreeInnerSelector(small_reg(), max_features=parsed).fit(X, y)
        assert sel.max_features_ == (
            value if isinstance(value, int) else int(6 * value)
        )


def test_ranking_is_stable_under_ties():
    X, y = make_data(n=200, p=4)
    X[:, 2:] = 0.0  # constant columns: never split on, score exactly 0
    sel = TreeInnerSelector(small_reg(), random_state=0).fit(X, y)
    assert sel.scores_[2] == sel.scores_[3] == 0.0
    assert sel.ranking_[2] + 1 == sel.ranking_[3]
    assert not sel.support_[2:].any()  # zero is not above the 0.0 threshold


# -- composition ------------------------------------------------------------------
@pytest.mark.slow
def test_pipeline_gridsearch_cross_validate():
    X, y = make_data(n=200, classification=True)
    pipe = Pipeline(
        [
            ("select", TreeInnerSelector(small_clf(), random_state=0)),
            ("model", small_clf()),
        ]
    )
    grid = GridSearchCV(
        pipe,
        {
            "select__threshold": [0.0, "mean"],
            "select__attribution": ["predecomp", "treeshap"],
            "select__estimator__max_depth": [1, 2],
        },
        cv=2,
    ).fit(X, y)
    assert len(grid.cv_results_["params"]) == 8
    best = grid.best_estimator_.named_steps["select"]
    assert best.estimator_.get_params()["max_depth"] in (1, 2)
    res = cross_validate(pipe, X, y, cv=2, return_estimator=True)
    assert res["test_score"].shape == (2,)
    assert all(hasattr(e.named_steps["select"], "scores_") for e in res["estimator"])


def test_estimator_may_be_a_pipeline():
    X, y = make_data()
    X[::7, 3] = np.nan
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer

    # ColumnTransformer reorders the columns; scores must follow the names.
    pre = ColumnTransformer(
        [("late", SimpleImputer(), [3, 4, 5]), ("early", StandardScaler(), [0, 1, 2])]
    )
    pipe = Pipeline([("pre", pre), ("xgb", small_reg())])
    splits = list(KFold(2, shuffle=True, random_state=0).split(X))
    sel = TreeInnerSelector(pipe, cv=splits).fit(X, y)
    for (train, test), got in zip(splits, sel.split_scores_, strict=True):
        fitted = clone(pipe).fit(X[train], y[train])
        raw = tree_inner(fitted[-1], fitted[:-1].transform(X[test]), y[test])
        np.testing.assert_allclose(got, np.r_[raw[3:], raw[:3]], rtol=1e-12)
    assert np.argmax(sel.scores_) == 0
    # one-hot encoding does not keep one column per feature: refused
    from sklearn.preprocessing import PolynomialFeatures

    # A step that mixes features cannot be mapped back (issue 29 maps the
    # expanding encoders: tests/unit/test_pipeline_columns.py).
    mixed = make_pipeline(PolynomialFeatures(2), small_reg())
    with pytest.raises(ValueError, match="do not each come from one input feature"):
        TreeInnerSelector(mixed, random_state=0).fit(X[:, :2], y)


def test_pickle_and_clone():
    X, y = make_data()
    sel = TreeInnerSelector(small_reg(), cv=2, random_state=0).fit(X, y)
    again = pickle.loads(pickle.dumps(sel))
    np.testing.assert_array_equal(again.scores_, sel.scores_)
    np.testing.assert_array_equal(again.transform(X), sel.transform(X))
    fresh = clone(sel)
    assert not hasattr(fresh, "scores_")
    assert fresh.get_params()["cv"] == 2
    np.testing.assert_array_equal(fresh.fit(X, y).scores_, sel.scores_)


def test_estimator_is_not_modified():
    X, y = make_data()
    est = small_reg()
    before = est.get_params()
    TreeInnerSelector(est, cv=2, n_jobs=2, random_state=0).fit(X, y)
    assert est.get_params() == before
    with pytest.raises(NotFittedError):
        est.get_booster()


def test_n_jobs_and_random_state_reproducible():
    X, y = make_data(n=400)
    est = small_reg(subsample=0.7, colsample_bytree=0.7, n_jobs=None)
    one = TreeInnerSelector(est, cv=3, random_state=5, n_jobs=1).fit(X, y)
    two = TreeInnerSelector(est, cv=3, random_state=5, n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(one.split_scores_, two.split_scores_)
    # the booster got a share of the cores, the user's estimator kept None
    assert two.estimators_[0].get_params()["n_jobs"] >= 1
    assert est.get_params()["n_jobs"] is None
    other = TreeInnerSelector(est, cv=3, random_state=6).fit(X, y)
    assert not np.array_equal(one.scores_, other.scores_)


def test_verbose_prints_progress(capsys):
    pytest.importorskip("tqdm")
    X, y = make_data(n=120)
    TreeInnerSelector(small_reg(), cv=3, verbose=1, random_state=0).fit(X, y)
    err = capsys.readouterr().err
    # verbose=1: a bar over the splits (cv=3 chained: 2), no line per split
    assert "TreeInnerSelector: fitting and scoring" in err and "2/2" in err
    assert "held-out rows" not in err
    TreeInnerSelector(small_reg(), cv=3, verbose=2, random_state=0).fit(X, y)
    err = capsys.readouterr().err
    assert "split 1/2" in err and "split 2/2" in err and "held-out rows" in err
    TreeInnerSelector(small_reg(), cv=3, random_state=0).fit(X, y)
    assert capsys.readouterr().err == ""


def test_verbose_progress_in_parallel_keeps_split_order(capsys):
    # Splits may finish in any order under n_jobs > 1 (the bar follows them as
    # they finish); the fitted attributes must still be in split order.
    from joblib import parallel_config

    X, y = make_data(n=120)
    serial = TreeInnerSelector(small_reg(), cv=3, random_state=0).fit(X, y)
    with parallel_config(backend="threading"):
        par = TreeInnerSelector(
            small_reg(), cv=3, n_jobs=3, verbose=2, random_state=0
        ).fit(X, y)
    err = capsys.readouterr().err
    assert all(f"split {i}/2" in err for i in (1, 2))  # cv=3 chained
    np.testing.assert_array_equal(par.split_scores_, serial.split_scores_)
    for a, b in zip(par.estimators_, serial.estimators_, strict=True):
        np.testing.assert_array_equal(a.predict(X), b.predict(X))


def test_groups_reach_the_splitter():
    X, y = make_data(n=120)
    groups = np.repeat(np.arange(12), 10)
    sel = TreeInnerSelector(small_reg(), cv=GroupKFold(3)).fit(X, y, groups=groups)
    for (train, test), got in zip(
        GroupKFold(3).split(X, y, groups), sel.split_scores_, strict=True
    ):
        assert not set(groups[train]) & set(groups[test])
        model = small_reg().fit(X[train], y[train])
        np.testing.assert_allclose(got, tree_inner(model, X[test], y[test]), rtol=1e-12)
    # cv=None with groups: whole groups are held out
    sel = TreeInnerSelector(small_reg(), cv=None, random_state=0)
    sel.fit(X, y, groups=groups)
    assert sel.split_scores_.shape == (1, 6)


def test_fit_params_are_routed_and_split_with_the_rows():
    X, y = make_data(n=200)
    base_margin = np.full(len(y), 0.5)
    splits = list(KFold(2).split(X))
    sel = TreeInnerSelector(small_reg(), cv=splits)
    sel.fit(X, y, base_margin=base_margin)
    train = splits[0][0]
    model = small_reg().fit(X[train], y[train], base_margin=base_margin[train])
    np.testing.assert_array_equal(
        model.predict(X, output_margin=True),
        sel.estimators_[0].predict(X, output_margin=True),
    )


def test_metadata_routing_sample_weight():
    import sklearn

    X, y = make_data(n=200)
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=len(y))
    splits = list(KFold(2).split(X))
    plain = TreeInnerSelector(small_reg(), cv=splits).fit(X, y, sample_weight=w)
    with sklearn.config_context(enable_metadata_routing=True):
        booster = small_reg().set_fit_request(sample_weight=True)
        sel = TreeInnerSelector(booster, cv=splits).set_fit_request(sample_weight=True)
        routed = sel.fit(X, y, sample_weight=w)
        np.testing.assert_allclose(routed.scores_, plain.scores_, rtol=1e-12)
        # inside a Pipeline, the selector receives the weights it requested
        model = small_reg().set_fit_request(sample_weight=False)
        pipe = Pipeline([("sel", sel), ("model", model)])
        pipe.fit(X, y, sample_weight=w)
        np.testing.assert_allclose(
            pipe.named_steps["sel"].scores_, plain.scores_, rtol=1e-12
        )
        # the booster declined the weights: only the inner product uses them
        declined = small_reg().set_fit_request(sample_weight=False)
        sel2 = TreeInnerSelector(declined, cv=splits).fit(X, y, sample_weight=w)
        for (train, test), got in zip(splits, sel2.split_scores_, strict=True):
            model = small_reg().fit(X[train], y[train])
            expected = tree_inner(model, X[test], y[test], sample_weight=w[test])
            np.testing.assert_allclose(got, expected, rtol=1e-12)


# -- early stopping -------------------------------------------------------------
def test_xgboost_early_stopping_rows_come_from_the_training_part():
    X, y = make_data(n=400)
    est = small_reg(n_estimators=200, learning_rate=0.3, early_stopping_rounds=3)
    splits = list(KFold(2, shuffle=True, random_state=0).split(X))
    sel = TreeInnerSelector(est, cv=splits, random_state=0).fit(X, y)
    for (_train, test), fitted, got in zip(
        splits, sel.estimators_, sel.split_scores_, strict=True
    ):
        assert fitted.best_iteration < 199  # it did stop early
        evals = fitted.evals_result()["validation_0"]["rmse"]
        # The eval rows are 10% of the training part, never the held-out rows:
        # find them by recomputing the eval metric on candidate rows.
        model_margin = fitted.predict(X, iteration_range=(0, len(evals)))
        rmse_test = np.sqrt(np.mean((model_margin[test] - y[test]) ** 2))
        assert not np.isclose(rmse_test, evals[-1], rtol=1e-5)
        expected = tree_inner(fitted, X[test], y[test])
        np.testing.assert_allclose(got, expected, rtol=1e-12)
    # the split of the training part is the documented one: seeded, 10%
    from skl_treeinner._selection._selector import EARLY_STOPPING_FRACTION

    assert EARLY_STOPPING_FRACTION == 0.1
    again = TreeInnerSelector(est, cv=splits, random_state=0).fit(X, y)
    np.testing.assert_array_equal(again.scores_, sel.scores_)


def test_xgboost_early_stopping_eval_rows_exactly():
    """Refit by hand on the documented carve-out and compare models exactly."""
    from sklearn.model_selection import train_test_split

    X, y = make_data(n=300, classification=True)
    est = small_clf(n_estimators=100, early_stopping_rounds=2)
    splits = list(StratifiedKFold(2, shuffle=True, random_state=0).split(X, y))
    sel = TreeInnerSelector(est, cv=splits, random_state=7).fit(X, y)
    rng = np.random.RandomState(7)
    rng.randint(2**31 - 1, size=2)  # split seed, default-booster seed
    seeds = rng.randint(2**31 - 1, size=len(splits))
    for (train, test), seed, fitted in zip(splits, seeds, sel.estimators_, strict=True):
        fit_rows, es_rows = train_test_split(
            train, test_size=0.1, stratify=y[train], random_state=int(seed)
        )
        assert not set(es_rows) & set(test)
        model = clone(est).fit(
            X[np.sort(fit_rows)],
            y[np.sort(fit_rows)],
            eval_set=[(X[np.sort(es_rows)], y[np.sort(es_rows)])],
            verbose=False,
        )
        assert model.best_iteration == fitted.best_iteration
        np.testing.assert_array_equal(model.predict_proba(X), fitted.predict_proba(X))


# -- pandas / polars --------------------------------------------------------------
def frame_data(n=300, seed=0):
    pd = pytest.importorskip("pandas")
    X, y = make_data(n=n, p=4, seed=seed)
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    df.loc[rng.random(n) < 0.1, "b"] = np.nan
    cat = rng.choice(["u", "v", "w"], size=n)
    df["cat"] = pd.Categorical(cat)
    y = y + (cat == "u") * 2.0
    return df, y


def test_pandas_nan_and_categorical_pass_through():
    df, y = frame_data()
    est = small_reg(enable_categorical=True, tree_method="hist")
    splits = list(KFold(2, shuffle=True, random_state=0).split(df))
    sel = TreeInnerSelector(est, cv=splits).fit(df, y)
    assert list(sel.feature_names_in_) == ["a", "b", "c", "d", "cat"]
    for (train, test), got in zip(splits, sel.split_scores_, strict=True):
        model = clone(est).fit(df.iloc[train], y[train])
        expected = tree_inner(model, df.iloc[test], y[test])
        np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert sel.scores_[4] > 0  # the categorical column is used and scored
    sel.set_params(threshold=-1e9, max_features=3).fit(df, y)
    kept = sel.get_feature_names_out()
    assert len(kept) == 3
    out = sel.set_output(transform="pandas").transform(df)
    assert list(out.columns) == list(kept)
    for col in kept:
        assert out[col].dtype == df[col].dtype
    if "cat" in kept:
        assert out["cat"].dtype.name == "category"
    np.testing.assert_array_equal(out.index, df.index)
    # default output: a frame in gives a frame (issue 54: a numpy array of
    # objects broke the next step of a pipeline)
    out = sel.set_output(transform="default").transform(df)
    assert type(out) is type(df) and out.dtypes.equals(df[kept].dtypes)


def test_polars_nan_and_categorical_pass_through():
    pl = pytest.importorskip("polars")
    df, y = frame_data()
    est = small_reg(enable_categorical=True, tree_method="hist")
    pdf = pl.from_pandas(df)
    assert pdf["cat"].dtype == pl.Categorical
    splits = list(KFold(2, shuffle=True, random_state=0).split(df))
    sel = TreeInnerSelector(est, cv=splits, threshold=-1e9).fit(pdf, y)
    from_pandas = TreeInnerSelector(est, cv=splits, threshold=-1e9).fit(df, y)
    np.testing.assert_allclose(sel.scores_, from_pandas.scores_, rtol=1e-12)
    out = sel.set_output(transform="polars").transform(pdf)
    assert isinstance(out, pl.DataFrame)
    assert out.schema == pdf.select(list(sel.get_feature_names_out())).schema
    out_pd = sel.set_output(transform="pandas").transform(pdf)
    assert out_pd["cat"].dtype.name == "category"


# -- prefit -----------------------------------------------------------------------
def test_prefit_scores_all_rows_without_refitting():
    X, y = make_data()
    model = small_reg().fit(X[:150], y[:150])
    sel = TreeInnerSelector(model, prefit=True).fit(X[150:], y[150:])
    np.testing.assert_allclose(
        sel.scores_, tree_inner(model, X[150:], y[150:]), rtol=1e-12
    )
    assert sel.estimator_ is not model
    np.testing.assert_array_equal(sel.estimator_.predict(X), model.predict(X))
    # a prefit classifier trained on its own labels
    labels = np.where(y > 0, 1, 0)
    clf = small_clf().fit(X[:150], labels[:150])
    sel = TreeInnerSelector(clf, prefit=True).fit(X[150:], labels[150:])
    np.testing.assert_allclose(
        sel.scores_, tree_inner(clf, X[150:], labels[150:]), rtol=1e-12
    )


def test_prefit_errors():
    X, y = make_data()
    with pytest.raises(
        NotFittedError, match="prefit=True, but the XGBRegressor is not"
    ):
        TreeInnerSelector(small_reg(), prefit=True).fit(X, y)
    model = small_reg().fit(X[:, :4], y)
    sel = TreeInnerSelector(model, prefit=True)
    with pytest.raises(ValueError, match="trained on 4 features, but X has 6"):
        sel.fit(X, y)
    assert not hasattr(sel, "n_features_in_")  # nothing half-fitted
    # cv is not used with prefit=True: the model is scored on all rows (here
    # its training rows, which the selector recognises).
    from skl_treeinner.exceptions import TrainingRowsWarning

    with pytest.warns(TrainingRowsWarning):
        sel = TreeInnerSelector(model, prefit=True, cv=2).fit(X[:, :4], y)
    assert sel.split_scores_.shape == (1, 4)


# -- bad input --------------------------------------------------------------------
def _assert_unfitted(sel):
    for name in ("scores_", "support_", "n_features_in_", "estimators_"):
        assert not hasattr(sel, name), name


def test_errors_leave_nothing_half_fitted():
    X, y = make_data(n=60)
    sel = TreeInnerSelector(small_reg(), random_state=0).fit(X, y)
    y_bad = y.copy()
    y_bad[[3, 7]] = np.nan
    with pytest.raises(ValueError, match=r"y contains 2 NaN .*rows \[3, 7\]"):
        sel.fit(X, y_bad)
    _assert_unfitted(sel)
    y_bad[[3, 7]] = np.inf
    with pytest.raises(ValueError, match="NaN or infinite"):
        sel.fit(X, y_bad)


def test_error_single_class_held_out():
    X, y = make_data(n=40, classification=True)
    order = np.argsort(y, kind="mergesort")
    n0 = int((y == 0).sum())
    splits = [(order[: n0 - 5], order[n0 - 5 : n0]), (order[5:], order[:5])]
    sel = TreeInnerSelector(small_clf(), cv=splits[:1])
    with pytest.raises(ValueError, match="held-out rows of split 0 hold a single"):
        sel.fit(X, y)
    _assert_unfitted(sel)
    with pytest.raises(ValueError, match=r"training rows of split 0 lack the class"):
        TreeInnerSelector(small_clf(), cv=[(order[:n0], order)]).fit(X, y)


def test_error_too_few_rows():
    X, y = make_data(n=4)
    with pytest.raises(ValueError, match="Cannot split the 4 rows as cv=5"):
        TreeInnerSelector(small_reg(), cv=5).fit(X, y)
    Xc, yc = make_data(n=3, classification=True)
    with pytest.raises(ValueError, match="Cannot split the 3 rows"):
        TreeInnerSelector(small_clf()).fit(Xc, np.array([0, 0, 1]))
    est = small_reg(early_stopping_rounds=2)
    with pytest.raises(ValueError, match="for early stopping"):
        TreeInnerSelector(est, cv=[(np.array([0]), np.array([1, 2, 3]))]).fit(X, y)


def test_error_regression_target_to_classifier():
    X, y = make_data()
    sel = TreeInnerSelector(small_clf())
    with pytest.raises(ValueError, match="is a classifier, but y is a continuous"):
        sel.fit(X, y)
    _assert_unfitted(sel)
    with pytest.raises(ValueError, match="is a regressor, but y has dtype"):
        TreeInnerSelector(small_reg()).fit(X, np.where(y > 0, "a", "b"))


def test_error_transform_with_other_features():
    pd = pytest.importorskip("pandas")
    X, y = make_data()
    sel = TreeInnerSelector(small_reg(), random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="X has 5 features"):
        sel.transform(X[:, :5])
    df = pd.DataFrame(X, columns=list("abcdef"))
    sel.fit(df, y)
    with pytest.raises(ValueError, match="feature names should match"):
        sel.transform(df.rename(columns={"a": "z"}))
    with pytest.raises(ValueError, match="feature names should match"):
        sel.set_output(transform="pandas").transform(df.rename(columns={"a": "z"}))


def test_error_unsupported_estimator():
    from sklearn.ensemble import RandomForestRegressor
    from sklearn.linear_model import LinearRegression

    X, y = make_data()
    for est in (
        RandomForestRegressor(n_estimators=2),
        make_pipeline(LinearRegression()),
    ):
        sel = TreeInnerSelector(est)
        with pytest.raises(TypeError, match="cannot score a .* Pass one of"):
            sel.fit(X, y)
        _assert_unfitted(sel)


def test_error_bad_threshold_and_max_features():
    X, y = make_data(n=100)
    with pytest.raises(ValueError, match="'1.2\\*max' is not understood"):
        TreeInnerSelector(small_reg(), threshold="1.2*max").fit(X, y)
    with pytest.raises(ValueError, match="threshold evaluated to NaN"):
        TreeInnerSelector(small_reg(), threshold=np.nan).fit(X, y)
    with pytest.raises(ValueError, match="scale 'x' is not a number"):
        TreeInnerSelector(small_reg(), threshold="x*mean").fit(X, y)
    with pytest.raises(ValueError, match="max_features=7 is larger than the 6"):
        TreeInnerSelector(small_reg(), max_features=7).fit(X, y)
    with pytest.raises(ValueError, match=r"max_features\(X\) must return an int"):
        TreeInnerSelector(small_reg(), max_features=lambda X: 2.5).fit(X, y)
    from sklearn.utils._param_validation import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="validation_fraction"):
        TreeInnerSelector(small_reg(), validation_fraction=1.0).fit(X, y)
    with pytest.raises(InvalidParameterError, match="attribution"):
        TreeInnerSelector(small_reg(), attribution="gain").fit(X, y)


def test_pipeline_with_early_stopping_gets_transformed_eval_rows():
    from sklearn.model_selection import train_test_split

    X, y = make_data(n=300)
    X[:, 0] *= 100.0
    pipe = Pipeline(
        [
            ("scale", StandardScaler()),
            ("xgb", small_reg(n_estimators=100, early_stopping_rounds=2)),
        ]
    )
    splits = list(KFold(2, shuffle=True, random_state=0).split(X))
    w = np.linspace(0.5, 2.0, len(y))
    sel = TreeInnerSelector(pipe, cv=splits, random_state=4)
    sel.fit(X, y, sample_weight=w)
    rng = np.random.RandomState(4)
    rng.randint(2**31 - 1, size=2)
    seeds = rng.randint(2**31 - 1, size=2)
    for (train, test), seed, fitted, got in zip(
        splits, seeds, sel.estimators_, sel.split_scores_, strict=True
    ):
        fit_rows, es_rows = (
            np.sort(r)
            for r in train_test_split(train, test_size=0.1, random_state=seed)
        )
        scaler = StandardScaler().fit(X[fit_rows])
        model = clone(pipe[-1]).fit(
            scaler.transform(X[fit_rows]),
            y[fit_rows],
            sample_weight=w[fit_rows],
            eval_set=[(scaler.transform(X[es_rows]), y[es_rows])],
            sample_weight_eval_set=[w[es_rows]],
            verbose=False,
        )
        assert model.best_iteration == fitted[-1].best_iteration < 99
        Xt = scaler.transform(X[test])
        np.testing.assert_array_equal(model.predict(Xt), fitted.predict(X[test]))
        expected = tree_inner(model, Xt, y[test], sample_weight=w[test])
        np.testing.assert_allclose(got, expected, rtol=1e-12)
