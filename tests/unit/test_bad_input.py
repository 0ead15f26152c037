"""Bad input and faults (issue 28): a clear error before any fit, or a correct result.

Each test names the case of the issue it pins. "Before any fit" is checked by
counting the booster's ``fit`` calls.
"""

import warnings

import numpy as np
import pytest
import xgboost as xgb

from skl_treeinner import TreeInnerSelector, tree_inner


@pytest.fixture
def fits(monkeypatch):
    """Count XGBoost fits (the refusals must come before the first)."""
    calls = []
    original = xgb.XGBRegressor.fit

    def fit(self, *args, **kwargs):
        calls.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(xgb.XGBRegressor, "fit", fit)
    return calls


def _data(n=300, p=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    return X, X[:, 0] + rng.normal(size=n)


def _small(**params):
    return xgb.XGBRegressor(n_estimators=10, max_depth=2, n_jobs=1, **params)


# 1. polars categorical columns with LightGBM aborted the process.
def test_polars_categorical_columns_with_lightgbm_work():
    pl = pytest.importorskip("polars")
    pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    lgb = pytest.importorskip("lightgbm")
    X, y = _data()
    frame = pl.DataFrame({f"x{j}": X[:, j] for j in range(4)}).with_columns(
        pl.Series("colour", np.array(["r", "g", "b"])[np.arange(300) % 3]).cast(
            pl.Categorical
        ),
        pl.Series("size", np.array(["s", "m"])[np.arange(300) % 2]).cast(
            pl.Enum(["s", "m"])
        ),
    )
    sel = TreeInnerSelector(
        lgb.LGBMRegressor(n_estimators=10, verbose=-1), cv=2, random_state=0
    ).fit(frame, y)
    assert np.isfinite(sel.scores_).all() and sel.get_support()[0]


# 2. Values beyond float32's range reached XGBoost's C++ error.
@pytest.mark.parametrize("value", [1e308, 4e38, -np.inf])
def test_values_beyond_float32_are_refused_before_any_fit(fits, value):
    X, y = _data()
    X[7, 2] = value
    with pytest.raises(ValueError, match=r"column 2 .*first at row 7"):
        TreeInnerSelector(_small()).fit(X, y)
    assert not fits
    model = _small().fit(*_data())
    with pytest.raises(ValueError, match="beyond float32's range"):
        tree_inner(model, X, y)


def test_values_within_float32_pass():
    X, y = _data()
    X[7, 2] = 3e38  # below float32's largest, 3.4e38
    TreeInnerSelector(_small(), cv=2).fit(X, y)


# 3. Duplicate column names raised AttributeError from our own code.
def test_repeated_column_names_are_refused_by_name(fits):
    pd = pytest.importorskip("pandas")
    X, y = _data()
    frame = pd.DataFrame(X, columns=["a", "b", "a", "c"])
    with pytest.raises(ValueError, match=r"repeated column names \['a'\]"):
        TreeInnerSelector(_small()).fit(frame, y)
    assert not fits
    model = _small().fit(X, y)
    with pytest.raises(ValueError, match="repeated column names"):
        tree_inner(model, frame, y)


# 4. CatBoost text features failed after the first fit, exporting the model.
def test_catboost_text_features_are_refused_before_any_fit():
    pd = pytest.importorskip("pandas")
    cb = pytest.importorskip("catboost")
    X, y = _data()
    frame = pd.DataFrame(X, columns=list("abcd"))
    frame["note"] = np.array(["good day", "bad day", "so so"])[np.arange(300) % 3]
    est = cb.CatBoostRegressor(iterations=5, verbose=0, text_features=["note"])
    with pytest.raises(ValueError, match="text_features=.*cat_features"):
        TreeInnerSelector(est, cv=2).fit(frame, y)
    assert not est.is_fitted()


# 6. Huge targets: XGBoost's float32 gains overflow and it fits noise.
@pytest.mark.parametrize("scale", [1e19, 1e30])
def test_targets_beyond_xgboosts_float32_are_refused_before_any_fit(fits, scale):
    X, y = _data()
    with pytest.raises(ValueError, match=r"y is too large for XGBRegressor.*y / 1e"):
        TreeInnerSelector(_small()).fit(X, y * scale)
    assert not fits


def test_large_targets_within_the_limit_pass_and_match_rescaled_ones():
    X, y = _data()
    big = TreeInnerSelector(_small(), cv=2, random_state=0).fit(X, y * 1e12)
    small = TreeInnerSelector(_small(), cv=2, random_state=0).fit(X, y)
    np.testing.assert_allclose(big.pvalues_, small.pvalues_, rtol=1e-3, atol=1e-6)


def test_a_model_with_non_finite_margins_is_refused(monkeypatch):
    # A booster that overflowed predicts inf or NaN; its leaves cannot be
    # checked against such margins, and nothing may be read from them.
    from skl_treeinner._readers._xgboost import XGBoostReader

    X, y = _data()
    model = _small().fit(X, y)
    original = XGBoostReader.raw_margin

    def overflowed(self, rows):
        margin = np.array(original(self, rows), dtype=np.float64)
        margin[::7] = np.inf
        return margin

    monkeypatch.setattr(XGBoostReader, "raw_margin", overflowed)
    with pytest.raises(ValueError, match="non-finite raw margins for 43 of 300"):
        tree_inner(model, X, y)


# 12. A cut-off that cannot apply was refused only after the cross-fit.
@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"max_features": 10}, "max_features=10 is larger than the 4 features"),
        ({"threshold": "banana"}, "threshold='banana' is not understood"),
        ({"threshold": "x*mean"}, "the scale 'x' is not a number"),
    ],
)
def test_a_cutoff_that_cannot_apply_is_refused_before_any_fit(fits, params, message):
    X, y = _data()
    with pytest.raises(ValueError, match=message):
        TreeInnerSelector(_small(), **params).fit(X, y)
    assert not fits


# Issue 41: values users try, refused before any fit with what to pass instead
# (cv=1 for one split raised without naming cv=None; n_jobs=0 reached joblib;
# max_features=0 was accepted and only warned at transform).
@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"cv": 1}, r"Got 1 instead\. For one split pass cv=None"),
        ({"n_jobs": 0}, r"Got 0 instead\. n_jobs=None or 1 .* -1 uses every core"),
        ({"max_features": 0}, r"Got 0 instead\. max_features=0 would keep no"),
    ],
)
def test_values_users_try_are_refused_with_what_to_pass(fits, params, message):
    from sklearn.utils._param_validation import InvalidParameterError

    X, y = _data()
    with pytest.raises(InvalidParameterError, match=message):
        TreeInnerSelector(_small(), **params).fit(X, y)
    assert not fits
    # scikit-learn's own wording stays in front (its checks match on it)
    with pytest.raises(InvalidParameterError, match="parameter of TreeInnerSelector"):
        TreeInnerSelector(_small(), **params).fit(X, y)


def test_a_zero_one_float_target_warns_that_it_is_fitted_as_a_regression():
    # Issue 41: a 0/1 float target was fitted as a regression without a word,
    # where more than 20 distinct integers warn. The default booster only: a
    # regressor the user passes is the user's choice.
    X, y = _data()
    labels = (y > 0).astype(float)
    with pytest.warns(
        UserWarning, match=r"only the values 0\.0 and 1\.0.*astype\(int\)"
    ):
        TreeInnerSelector(cv=None, random_state=0).fit(X, labels)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        TreeInnerSelector(_small(), cv=None, random_state=0).fit(X, labels)
        TreeInnerSelector(cv=None, random_state=0).fit(X, labels.astype(int))
        TreeInnerSelector(cv=None, random_state=0).fit(X, np.where(labels, 2.0, 0.0))


def test_a_constant_target_warns_that_nothing_can_be_kept():
    # Issue 41: a constant y fitted and selected nothing without a word.
    X, _ = _data()
    with pytest.warns(UserWarning, match="y is constant") as record:
        selector = TreeInnerSelector(cv=None, random_state=0).fit(X, np.full(300, 2.5))
    assert record[0].filename == __file__  # at the user's line
    assert not selector.get_support().any()


def test_transform_before_fit_says_only_that_it_is_not_fitted():
    # Issue 41: a data frame warned about feature names before NotFittedError.
    pd = pytest.importorskip("pandas")
    from sklearn.exceptions import NotFittedError

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(NotFittedError):
            TreeInnerSelector().transform(pd.DataFrame({"a": [1.0, 2.0]}))


# Found by tests/unit/test_fuzz_input.py: errors from inside the booster or
# scikit-learn.
@pytest.mark.parametrize("cell", ["green", "pd.NA", {"a": 1}])
def test_object_arrays_of_non_numbers_are_refused_before_any_fit(fits, cell):
    X, y = _data()
    X = X.astype(object)
    X[3, 1] = pytest.importorskip("pandas").NA if cell == "pd.NA" else cell
    # float() raises ValueError for text, TypeError for what is no number at all
    error = ValueError if cell == "green" else TypeError
    with pytest.raises(error, match=r"column 1 holds .* \(row 3, counted from 0\)"):
        TreeInnerSelector(_small()).fit(X, y)
    assert not fits


@pytest.mark.parametrize("shape", [(0, 3), (20, 0)])
def test_empty_x_gets_our_message(shape):
    with pytest.raises(ValueError, match=rf"X has shape \({shape[0]}, {shape[1]}\)"):
        TreeInnerSelector(_small()).fit(np.empty(shape), np.zeros(shape[0]))


def test_categorical_columns_without_enable_categorical_are_refused_first(fits):
    pd = pytest.importorskip("pandas")
    X, y = _data()
    frame = pd.DataFrame(X, columns=list("abcd"))
    frame["colour"] = pd.Categorical(np.array(["r", "g"])[np.arange(300) % 2])
    with pytest.raises(ValueError, match="'colour' of X is categorical.*enable_categ"):
        TreeInnerSelector(_small()).fit(frame, y)
    assert not fits


def test_a_target_too_large_for_catboost_is_refused_before_any_fit():
    cb = pytest.importorskip("catboost")
    X, y = _data()
    est = cb.CatBoostRegressor(iterations=5, verbose=0)
    with pytest.raises(ValueError, match="y is too large for CatBoostRegressor"):
        TreeInnerSelector(est, cv=2).fit(X, y * 1e40)
    assert not est.is_fitted()
    TreeInnerSelector(est, cv=2).fit(X, y * 1e30)  # CatBoost fits this as it fits y


def test_a_diverged_booster_is_refused_not_read():
    # learning_rate=2.5 without regularisation diverges (training gradients
    # 2e17 times the intercept's); its held-out scores selected a noise column.
    X, y = _data(n=1000, p=6)
    est = xgb.XGBRegressor(
        n_estimators=50, learning_rate=2.5, max_depth=3, reg_lambda=0
    )
    with pytest.raises(ValueError, match="split 1 is worse on its own training rows"):
        TreeInnerSelector(est, random_state=0).fit(X, y)
    ok = xgb.XGBRegressor(n_estimators=50, learning_rate=1.0, max_depth=3)
    TreeInnerSelector(ok, random_state=0).fit(X, y)


def test_a_target_far_from_zero_for_its_spread_is_refused_before_any_fit(fits):
    # y = 1e6 + signal: XGBoost's float32 margins round its small leaves away,
    # in-sample TreeInner missed total gain by 200 % and R² fell to 0.
    X, y = _data()
    with pytest.raises(ValueError, match=r"y's mean, 1e\+06, is .*\(y - y.mean\(\)"):
        TreeInnerSelector(_small()).fit(X, y + 1e6)
    assert not fits
    TreeInnerSelector(_small(), cv=2).fit(X, y + 100.0)  # an ordinary offset


def test_the_offset_rule_spares_classifiers_and_other_links():
    # A helper review's false refusals of the first version: class indices
    # with the highest class the majority, a gamma regressor far from 0.
    lgb = pytest.importorskip("lightgbm")
    from skl_treeinner._readers._lightgbm import LightGBMReader
    from skl_treeinner._readers._xgboost import XGBoostReader

    assert XGBoostReader.target_offset_limit(xgb.XGBClassifier()) is None
    assert LightGBMReader.target_offset_limit(lgb.LGBMClassifier()) is None
    gamma = xgb.XGBRegressor(objective="reg:gamma", n_estimators=5, n_jobs=1)
    assert XGBoostReader.target_offset_limit(gamma) is None
    # the limit follows the learning rate: the leaves' size does
    assert XGBoostReader.target_offset_limit(xgb.XGBRegressor()) == 60000.0
    rate = xgb.XGBRegressor(learning_rate=0.1)
    assert XGBoostReader.target_offset_limit(rate) == pytest.approx(20000.0)
    X, y = _data(n=1000)
    TreeInnerSelector(gamma, cv=2).fit(X, 1000 + np.abs(y))


def test_a_well_fitted_gamma_model_is_not_called_diverged():
    # Σ g² can rise as a gamma fit improves (g = 1 - y/μ): the divergence
    # check keeps to losses whose gradient is (mean - y).
    rng = np.random.default_rng(1)
    X = (rng.random((2000, 1)) > 0.5).astype(float)
    y = np.where(X[:, 0] > 0, 5 * rng.gamma(400, size=2000), rng.gamma(0.5, size=2000))
    est = xgb.XGBRegressor(objective="reg:gamma", n_estimators=30, n_jobs=1)
    TreeInnerSelector(est, cv=2, random_state=0).fit(X, y + 1e-3)


def test_a_one_step_pipeline_is_checked_like_its_booster():
    from sklearn.pipeline import Pipeline

    X, y = _data()
    TreeInnerSelector(Pipeline([("m", _small())]), cv=2).fit(X, y)


def test_an_xgboost_classifier_with_a_base_score_near_one_is_read():
    # A single row of class 0 among 1,500: base_score 0.9993333; XGBoost's
    # own float32 logit differed from ours by 7e-5 and the routing check
    # refused the honest model (RoutingError on 1,500 of 1,500 rows).
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1500, 3))
    for minority in (0, 1):
        y = np.full(1500, 1 - minority)
        y[:1] = minority
        model = xgb.XGBClassifier(n_estimators=5, max_depth=2, n_jobs=1).fit(X, y)
        assert np.isfinite(tree_inner(model, X, y)).all()


def test_infinity_in_an_object_array_is_refused_before_any_fit(fits):
    # Found by tests/unit/test_fuzz_input.py: the infinity check looked at float
    # arrays only, and XGBoost refused an object array's inf inside fit.
    X, y = _data()
    X = X.astype(object)
    X[4, 2] = np.inf
    with pytest.raises(ValueError, match=r"column 2 .*first at row 4"):
        TreeInnerSelector(_small()).fit(X, y)
    assert not fits


@pytest.mark.parametrize("library", ["xgboost", "lightgbm", "sklearn"])
def test_a_prefit_model_scored_on_its_training_rows_is_recognised(library):
    """Issue 41, item 3: on its training rows TreeInner is total gain (Prop. 3).

    Every column the model splits on is then kept, a 300-level pure-noise
    code included; held-out rows of the same model raise no warning.
    """
    from sklearn.ensemble import HistGradientBoostingRegressor

    from skl_treeinner.exceptions import TrainingRowsWarning

    if library == "lightgbm":
        lgb = pytest.importorskip("lightgbm")
        model = lgb.LGBMRegressor(n_estimators=40, verbose=-1, n_jobs=1)
    elif library == "sklearn":
        model = HistGradientBoostingRegressor(max_iter=40)
    else:
        model = xgb.XGBRegressor(n_estimators=40, max_depth=3, n_jobs=1)
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.normal(size=(600, 3)), rng.integers(0, 300, 600)])
    y = X[:, 0] + rng.normal(size=600)
    model.fit(X[:300], y[:300])
    with pytest.warns(TrainingRowsWarning, match="Pass rows the model never saw"):
        trained = TreeInnerSelector(model, prefit=True).fit(X[:300], y[:300])
    assert trained.support_[3]  # the noise code: why the warning matters
    with warnings.catch_warnings():
        warnings.simplefilter("error", TrainingRowsWarning)
        held_out = TreeInnerSelector(model, prefit=True).fit(X[300:], y[300:])
    assert not held_out.support_[3]


@pytest.mark.parametrize("test", ["column", "model"])
def test_what_the_scale_of_the_weights_changes(test):
    """Issue 41, item 8: the user guide's sentence on weights times 10, made true.

    Given the boosters, the p-values do not depend on the scale of the weights
    (a row's weight is part of its term; the test counts rows). The booster
    itself does: λ and min_child_weight are absolute, so weights times 10 fit
    other trees, unless both are 0.
    """
    rng = np.random.default_rng(4)
    X = rng.normal(size=(600, 4))
    y = X[:, 0] + 0.3 * X[:, 1] + rng.normal(size=600)
    w = rng.uniform(0.5, 2.0, size=600)
    model = _small().fit(X[:300], y[:300], sample_weight=w[:300])
    prefit = [
        TreeInnerSelector(model, prefit=True, test=test, random_state=0).fit(
            X[300:], y[300:], sample_weight=scale * w[300:]
        )
        for scale in (1.0, 10.0)
    ]
    np.testing.assert_allclose(prefit[1].pvalues_, prefit[0].pvalues_, rtol=1e-9)
    np.testing.assert_allclose(prefit[1].scores_, 10 * prefit[0].scores_, rtol=1e-9)

    def refit(booster, scale):
        selector = TreeInnerSelector(booster, cv=3, test=test, random_state=0)
        return selector.fit(X, y, sample_weight=scale * w).pvalues_

    unregularised = _small(reg_lambda=0.0, min_child_weight=0.0)
    np.testing.assert_allclose(
        refit(unregularised, 10.0), refit(unregularised, 1.0), rtol=1e-6
    )
    assert not np.allclose(refit(_small(), 10.0), refit(_small(), 1.0), rtol=1e-6)
