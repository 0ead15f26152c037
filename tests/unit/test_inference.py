"""Standard errors, p-values and the test-based cut-off of TreeInnerSelector.

The statistics are checked against scipy's one-sample t-test on the per-row
terms tree_inner(per_sample=True) computes; the p-values' calibration under
the null, by simulation, is in tests/statistical/test_calibration.py.
"""

import numpy as np
import pytest
import sklearn
import xgboost as xgb
from scipy import stats
from sklearn.model_selection import KFold, RepeatedKFold

from skl_treeinner import TreeInnerSelector, predecomp, tree_inner
from skl_treeinner._engines.memory._splits import make_splits
from skl_treeinner._stats._inference import one_sided_test, pool_noise, pool_rows


def _reg(**kw):
    params = dict(n_estimators=30, max_depth=3, learning_rate=0.2, n_jobs=1)
    return xgb.XGBRegressor(**{**params, **kw})


def _data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    X[:, 4] = rng.integers(0, 300, size=n)  # high-cardinality noise
    y = 1.5 * X[:, 0] - X[:, 1] + rng.normal(size=n)
    return X, y


# -- the test itself ------------------------------------------------------------------
def test_one_sided_test_is_scipys_t_test():
    rng = np.random.default_rng(0)
    z = rng.standard_t(3, size=(80, 4)) + np.array([0.0, 0.3, -0.3, 1.0])
    test = one_sided_test(z)
    ref = stats.ttest_1samp(z, 0.0, alternative="greater")
    np.testing.assert_allclose(test.scores, z.sum(axis=0))
    np.testing.assert_allclose(test.se, np.sqrt(80) * z.std(axis=0, ddof=1))
    np.testing.assert_allclose(test.scores / test.se, ref.statistic)
    np.testing.assert_allclose(test.pvalues, ref.pvalue, rtol=1e-10)
    assert test.n_rows == 80


def test_the_test_does_not_depend_on_the_scale_of_the_terms():
    # Rows are the units, weights part of each row's term: weights multiplied
    # by c multiply every term by c and leave t and p unchanged.
    rng = np.random.default_rng(1)
    z = rng.normal(0.2, 1.0, size=(30, 3))
    base = one_sided_test(z)
    for c in (1e-3, 10.0):
        scaled = one_sided_test(c * z)
        np.testing.assert_allclose(scaled.pvalues, base.pvalues, rtol=1e-10)
        np.testing.assert_allclose(scaled.se, c * base.se)
        assert scaled.n_rows == 30


def test_columns_without_spread_are_not_evidence():
    z = np.zeros((10, 3))
    z[:, 1] = 0.5  # every row the same positive term: no spread to judge by
    z[:, 2] = np.arange(10.0)
    test = one_sided_test(z)
    assert test.pvalues[0] == 1.0 and test.se[0] == 0.0  # never split on
    assert test.pvalues[1] == 1.0 and test.se[1] == 0.0
    assert 0.0 < test.pvalues[2] < 1e-3


def test_too_few_units_are_refused():
    with pytest.raises(ValueError, match="at least 2 scored rows"):
        one_sided_test(np.ones((1, 2)))


def test_pool_rows_sums_a_row_scored_twice_drops_zero_weights_and_pools_groups():
    tests = [np.array([0, 1, 2]), np.array([2, 3])]
    contributions = [np.ones((3, 2)), 2 * np.ones((2, 2))]
    z = pool_rows(5, tests, contributions)
    np.testing.assert_array_equal(z, [[1, 1], [1, 1], [3, 3], [2, 2]])
    z = pool_rows(5, tests, contributions, np.array([1.0, 0.0, 2.0, 1.0, 1.0]))
    np.testing.assert_array_equal(z, [[1, 1], [3, 3], [2, 2]])
    z = pool_rows(5, tests, contributions, groups=np.array(["a", "b", "a", "b", "c"]))
    np.testing.assert_array_equal(z, [[4, 4], [3, 3]])  # groups a and b; c unscored


# -- the selector's statistics ----------------------------------------------------
def test_selector_statistics_are_the_t_test_on_held_out_rows():
    X, y = _data()
    folds = list(KFold(4, shuffle=True, random_state=0).split(X))
    sel = TreeInnerSelector(_reg(), cv=folds, random_state=0, test="model").fit(X, y)
    z = np.vstack(
        [
            tree_inner(est, X[test], y[test], per_sample=True)
            for est, (_, test) in zip(sel.estimators_, folds, strict=True)
        ]
    )
    ref = stats.ttest_1samp(z, 0.0, alternative="greater")
    np.testing.assert_allclose(sel.scores_, z.sum(axis=0), rtol=1e-10)
    # The floor of the spread, from the booster's own predictions: each row's
    # term is affine in y with slope its PreDecomp over the learning rate
    # (squared error), times the pooled spread of y around the predictions.
    slopes = np.vstack(
        [
            predecomp(est, X[test]) / 0.2
            for est, (_, test) in zip(sel.estimators_, folds, strict=True)
        ]
    )
    residuals = np.concatenate(
        [
            y[test] - est.predict(X[test])
            for est, (_, test) in zip(sel.estimators_, folds, strict=True)
        ]
    )
    floor = np.sqrt((slopes**2).sum(axis=0) * np.mean(residuals**2))
    sample = np.sqrt(400) * z.std(0, ddof=1)
    np.testing.assert_allclose(sel.scores_se_, np.maximum(sample, floor), rtol=1e-4)
    spread = sample >= floor
    assert spread[:2].all() and not spread.all()  # both at work here
    np.testing.assert_allclose(
        sel.pvalues_[spread], ref.pvalue[spread], rtol=1e-8, atol=1e-300
    )
    t = sel.scores_ / np.maximum(sample, floor)
    np.testing.assert_allclose(
        sel.pvalues_, stats.t.sf(t, df=399), rtol=1e-3, atol=1e-300
    )
    assert sel.n_scored_rows_ == 400
    # The two real features are kept, the noise is not.
    assert sel.get_support(indices=True).tolist() == [0, 1]


def test_prefit_statistics_and_weights():
    X, y = _data(seed=2)
    model = _reg().fit(X[:200], y[:200])
    w = np.random.default_rng(0).integers(0, 3, size=200).astype(float)
    sel = TreeInnerSelector(model, prefit=True, test="model").fit(X[200:], y[200:], w)
    z = tree_inner(model, X[200:], y[200:], sample_weight=w, per_sample=True)
    keep = w > 0
    ref = stats.ttest_1samp(z[keep], 0.0, alternative="greater")
    # The t-test, wherever the rows' spread is above the floor of the target's
    # noise (test_selector_statistics_are_the_t_test_on_held_out_rows).
    sample = np.sqrt(keep.sum()) * z[keep].std(axis=0, ddof=1)
    assert np.all(sel.scores_se_ >= sample * (1 - 1e-12))
    spread = np.isclose(sel.scores_se_, sample, rtol=1e-12)
    assert spread.sum() >= 3
    np.testing.assert_allclose(
        sel.pvalues_[spread], ref.pvalue[spread], rtol=1e-8, atol=1e-300
    )
    assert sel.n_scored_rows_ == keep.sum()
    # Rescaled weights give the same p-values (a regression test: when weights
    # counted as repeated rows, weights x 10 made noise significant).
    scaled = TreeInnerSelector(model, prefit=True, test="model").fit(
        X[200:], y[200:], 10 * w
    )
    np.testing.assert_allclose(scaled.pvalues_, sel.pvalues_, rtol=1e-8)
    np.testing.assert_allclose(scaled.scores_se_, 10 * sel.scores_se_)


def test_too_few_rows_of_nonzero_weight_are_refused():
    # A regression test: one row of weight 5 among zeros gave p = 0.
    X, y = _data(seed=2)
    model = _reg().fit(X[:200], y[:200])
    w = np.zeros(200)
    w[3] = 5.0
    with pytest.raises(ValueError, match="1 held-out row"):
        TreeInnerSelector(model, prefit=True).fit(X[200:], y[200:], w)
    with pytest.raises(ValueError, match="2 held-out row"):
        TreeInnerSelector(model, prefit=True).fit(X[200:202], y[200:202])


def test_groups_are_held_out_whole_and_counted_as_units():
    # A regression test: with the default int cv, groups were ignored (KFold)
    # and noise constant within groups came out with p = 0.
    rng = np.random.default_rng(0)
    g = np.repeat(np.arange(30), 10)
    X = np.column_stack(
        [rng.normal(size=300)] + [rng.normal(size=30)[g] for _ in range(4)]
    )
    y = X[:, 0] + rng.normal(size=30)[g] + 0.3 * rng.normal(size=300)
    sel = TreeInnerSelector(_reg(), random_state=0).fit(X, y, groups=g)
    for classifier in (False, True):
        splits = make_splits(
            X,
            (y > 0).astype(int) if classifier else y,
            cv=5,
            validation_fraction=0.5,
            classifier=classifier,
            groups=g,
            split_params={},
            seed=0,
        )
        assert len(splits) == 5
        for train, test in splits:
            assert not set(g[train]) & set(g[test])
    # cv=5 chained by the test of the column: 4 splits, 4 of 5 folds of groups
    assert sel.split_scores_.shape == (4, 5) and sel.n_scored_rows_ == 24
    assert sel.get_support(indices=True).tolist() == [0]
    assert (sel.pvalues_[1:] > 0.05).all()
    with sklearn.config_context(enable_metadata_routing=True):
        est = _reg().set_fit_request(sample_weight=False)
        routed = TreeInnerSelector(est, random_state=0).fit(X, y, groups=g)
    np.testing.assert_allclose(routed.pvalues_, sel.pvalues_)


def test_a_row_scored_by_several_splits_enters_once():
    X, y = _data(n=240, seed=3)
    cv = list(RepeatedKFold(n_splits=3, n_repeats=2, random_state=0).split(X))
    sel = TreeInnerSelector(
        _reg(n_estimators=10), cv=cv, random_state=0, test="model"
    ).fit(X, y)
    per_row = np.zeros((240, 5))
    slopes = np.zeros((240, 5))  # each row's terms share its y: |slopes| add
    residuals = []
    for est, (_, test) in zip(sel.estimators_, cv, strict=True):
        per_row[test] += tree_inner(est, X[test], y[test], per_sample=True)
        slopes[test] += np.abs(predecomp(est, X[test]) / 0.2)
        residuals.append(y[test] - est.predict(X[test]))
    sample = np.sqrt(240) * per_row.std(0, ddof=1)
    floor = np.sqrt((slopes**2).sum(axis=0) * np.mean(np.concatenate(residuals) ** 2))
    np.testing.assert_allclose(sel.scores_se_, np.maximum(sample, floor), rtol=1e-4)
    assert sel.n_scored_rows_ == 240


def test_alpha_reselects_without_refitting():
    X, y = _data(seed=4)
    sel = TreeInnerSelector(_reg(), cv=3, random_state=0).fit(X, y)
    fitted, p = sel.estimators_, sel.pvalues_.copy()
    with pytest.raises(ValueError, match="'alpha' parameter"):
        sel.set_params(alpha=1.5).get_support()  # checked at use, as at fit
    for alpha in [0.5, 1e-6, None, 0.05]:
        sel.set_params(alpha=alpha)
        assert sel.estimators_ is fitted
        fresh = TreeInnerSelector(_reg(), cv=3, alpha=alpha, random_state=0).fit(X, y)
        np.testing.assert_array_equal(sel.get_support(), fresh.get_support())
        # The threshold reads what the test reads: the score less its
        # resampled score (the test of a column, the default).
        expected = sel.scores_ - sel.null_scores_ > 0
        if alpha is not None:
            expected &= sel.pvalues_adjusted_ < alpha
        np.testing.assert_array_equal(sel.get_support(), expected)
    # alpha, threshold and max_features combine: test, then threshold, then
    # the top k by the test.
    sel.set_params(alpha=0.5, threshold=-np.inf, max_features=1)
    assert sel.get_support(indices=True).tolist() == [int(np.argmin(sel.ranking_))]
    assert sel.ranking_[np.argmin(p)] == 1
    sel.set_params(alpha=1e-300, threshold=-np.inf, max_features=None)
    assert not sel.get_support().any()


@pytest.mark.parametrize("alpha", [0, 1, 1.5, -0.1, "0.05"])
def test_bad_alpha_is_refused(alpha):
    X, y = _data(n=100)
    with pytest.raises(ValueError, match="alpha"):
        TreeInnerSelector(_reg(n_estimators=3), alpha=alpha).fit(X, y)


def test_pvalues_have_power_on_a_real_signal():
    # The counterpart: the calibrated test still finds weak real features.
    rng = np.random.default_rng(5)
    n = 600
    X = rng.normal(size=(n, 6))
    y = 0.4 * X[:, 0] + 0.6 * (X[:, 1] > 0) + rng.normal(size=n)
    est = _reg(n_estimators=60, learning_rate=0.05)
    sel = TreeInnerSelector(est, cv=5, random_state=0).fit(X, y)
    assert sel.pvalues_[0] < 0.01 and sel.pvalues_[1] < 0.05
    assert sel.support_[:2].all()


def test_pool_noise_adds_the_standard_deviations_of_a_row_scored_twice():
    # A row scored by two splits is one unit whose terms share its target:
    # the floor counts (sd_1 + sd_2)^2 for it, not sd_1^2 + sd_2^2.
    tests = [np.array([0, 1]), np.array([1, 2])]
    noise = [
        (np.array([[1.0], [4.0]]), np.ones(2), np.ones(2)),
        (np.array([[9.0], [1.0]]), np.ones(2), np.ones(2)),
    ]
    np.testing.assert_allclose(pool_noise(3, tests, noise), [1 + (2 + 3) ** 2 + 1])
    # the dispersion: resid2 over var, pooled; zero weights leave rows out
    noise[1] = (noise[1][0], np.array([3.0, 3.0]), np.ones(2))
    np.testing.assert_allclose(pool_noise(3, tests, noise), [27 * (8 / 4)])
    w = np.array([1.0, 0.0, 1.0])
    np.testing.assert_allclose(pool_noise(3, tests, noise, w), [2 * (4 / 2)])
    assert pool_noise(3, tests, [noise[0], None]) is None


def test_floor_of_a_logistic_regression_on_fractions():
    # reg:logistic on targets in [0, 1]: the term is affine in y, and the
    # floor is the slope squared times φ p(1 - p), φ the pooled dispersion
    # Σ (y - p)² / Σ p(1 - p), here from the booster's own predictions.
    rng = np.random.default_rng(3)
    X = rng.normal(size=(600, 4))
    y = 1 / (1 + np.exp(-(X[:, 0] + 0.5 * rng.normal(size=600))))
    est = xgb.XGBRegressor(
        objective="reg:logistic", n_estimators=30, max_depth=3, learning_rate=0.2
    )
    model = est.fit(X[:300], y[:300])
    sel = TreeInnerSelector(model, prefit=True, test="model").fit(X[300:], y[300:])
    p = model.predict(X[300:])
    slopes = predecomp(model, X[300:]) / 0.2
    phi = np.sum((y[300:] - p) ** 2) / np.sum(p * (1 - p))
    floor = np.sqrt((slopes**2 * (p * (1 - p))[:, None]).sum(axis=0) * phi)
    z = tree_inner(model, X[300:], y[300:], per_sample=True)
    sample = np.sqrt(300) * z.std(axis=0, ddof=1)
    np.testing.assert_allclose(sel.scores_se_, np.maximum(sample, floor), rtol=1e-4)
    assert phi < 0.5  # fractions, not labels: far below the Bernoulli bound


def test_floor_with_treeshap_from_xgboost_own_contributions():
    # With TreeSHAP attributions the term's slope in y is the row's total
    # TreeSHAP value over the learning rate: XGBoost's own pred_contribs.
    X, y = _data(seed=6)
    folds = list(KFold(3, shuffle=True, random_state=0).split(X))
    sel = TreeInnerSelector(
        _reg(), cv=folds, attribution="treeshap", random_state=0, test="model"
    ).fit(X, y)
    slopes, residuals, terms = [], [], []
    for est, (_, test) in zip(sel.estimators_, folds, strict=True):
        contribs = est.get_booster().predict(xgb.DMatrix(X[test]), pred_contribs=True)
        slopes.append(contribs[:, :-1] / 0.2)
        residuals.append(y[test] - est.predict(X[test]))
        terms.append(
            tree_inner(est, X[test], y[test], attribution="treeshap", per_sample=True)
        )
    floor = np.sqrt(
        (np.vstack(slopes) ** 2).sum(axis=0) * np.mean(np.concatenate(residuals) ** 2)
    )
    sample = np.sqrt(400) * np.vstack(terms).std(axis=0, ddof=1)
    np.testing.assert_allclose(sel.scores_se_, np.maximum(sample, floor), rtol=1e-4)
    assert (floor > sample).any() and (sample > floor).any()


def test_a_feature_the_test_passes_is_not_dropped_by_its_raw_score():
    """Issue 53: one rule. The threshold reads the number the test reads.

    A column whose held-out score is negative but far above its score
    resampled (the booster's use of it is bad, its values still tell about
    y) passes the test of a column; the default threshold of 0 on the raw
    score dropped it.
    """
    X, y = _data(seed=4)
    sel = TreeInnerSelector(_reg(), cv=3, random_state=0).fit(X, y)
    # The fitted statistics of such a column, in place of feature 0's:
    # score -162 against -400 resampled, p = 0.001.
    sel.scores_ = sel.scores_.copy()
    sel.null_scores_ = sel.null_scores_.copy()
    sel.pvalues_ = sel.pvalues_.copy()
    sel.scores_[0], sel.null_scores_[0], sel.pvalues_[0] = -162.0, -400.0, 0.001
    assert sel.get_support()[0]
    assert sel.threshold_ == 0.0
    # a threshold on the same number: 238 above its resampled score
    assert not sel.set_params(threshold=240).get_support()[0]
    assert sel.set_params(threshold=230).get_support()[0]
