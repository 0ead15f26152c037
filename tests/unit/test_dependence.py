"""Dependent rows: the checks that notice them, and the test's blocks under time order.

The order check's moments are checked against every order of small data, its
p-value against random orders; the selector end to end on the data sets of
issue 27 (``make_time_series``, ``make_panel``). The blocks' calibration by
simulation is in tests/statistical/test_block_calibration.py.
"""

import itertools
import warnings

import numpy as np
import pytest
from scipy.signal import lfilter
from sklearn.model_selection import KFold, TimeSeriesSplit

from skl_treeinner import TreeInnerSelector
from skl_treeinner._stats._dependence import (
    ALARM_LEVEL,
    adjacent_matches,
    block_sums,
    check_dependent_rows,
    entity_columns,
    keeps_time_order,
    order_evidence,
)
from skl_treeinner._stats._inference import one_sided_test
from skl_treeinner.datasets import make_panel, make_time_series
from skl_treeinner.exceptions import DependentRowsWarning


def _small_booster(classes=False):
    import xgboost as xgb

    cls = xgb.XGBClassifier if classes else xgb.XGBRegressor
    return cls(n_estimators=40, max_depth=3, learning_rate=0.2, n_jobs=1)


# -- the order check -------------------------------------------------------------------
@pytest.mark.parametrize("values", [[0, 0, 0, 1, 1, 2, 3], [0, 0, 1, 1, 1, 1, 2, 2]])
def test_adjacent_matches_moments_are_exact_over_every_order(values):
    counts = [
        sum(a == b for a, b in itertools.pairwise(order))
        for order in itertools.permutations(values)
    ]
    count, mean, var = adjacent_matches(values)
    assert count == sum(a == b for a, b in itertools.pairwise(values))
    assert mean == pytest.approx(np.mean(counts))
    assert var == pytest.approx(np.var(counts))


def test_order_check_p_values_hold_for_a_rare_class():
    # The normal approximation alone warned on 2.7 % of 50-row orders with a
    # 2 % class; the permutations keep the p-values valid.
    rng = np.random.default_rng(0)
    y = np.zeros(60, dtype=int)
    y[:2] = 1
    p = np.array([order_evidence(rng.permutation(y), True)[2] for _ in range(2000)])
    assert np.mean(p < 0.01) <= 0.015
    assert np.mean(p < ALARM_LEVEL) <= 0.003


def test_order_check_sees_a_persistent_series_and_not_its_shuffle():
    _, y, _ = make_time_series(500, n_noise=0, random_state=0)
    share, expected, p = order_evidence(y, False)
    assert p < ALARM_LEVEL and share > 3 * expected
    assert order_evidence(np.random.default_rng(1).permutation(y), False)[2] > 0.01


def test_splits_that_keep_time_order():
    X = np.zeros((100, 1))
    assert keeps_time_order(list(TimeSeriesSplit(4).split(X)))
    assert keeps_time_order(list(TimeSeriesSplit(4, gap=5).split(X)))
    purged = [
        (np.r_[0:18, 42:100], np.arange(20, 40)),
        (np.r_[0:38, 62:100], np.arange(40, 60)),
    ]
    assert keeps_time_order(purged)
    assert keeps_time_order(list(TimeSeriesSplit(3, max_train_size=20).split(X)))
    assert not keeps_time_order([(np.arange(100), np.arange(80, 100))])  # inside
    assert not keeps_time_order([(np.arange(50, 100), np.arange(0, 40))])  # the past
    assert not keeps_time_order(list(KFold(4).split(X)))  # trains next to them
    assert not keeps_time_order(list(KFold(4, shuffle=True, random_state=0).split(X)))


# -- blocks ----------------------------------------------------------------------------
def _ar(rng, phi, n, k):
    e = rng.standard_normal((k, n + 300)) * np.sqrt(1 - phi**2)
    e[:, 0] = rng.standard_normal(k)
    return lfilter([1.0], [1.0, -phi], e, axis=1)[:, 300:]


def test_blocks_are_long_for_persistent_terms_and_many_otherwise():
    rng = np.random.default_rng(0)
    assert block_sums(rng.normal(size=(2000, 3))).shape == (20, 3)
    z = _ar(rng, 0.95, 2000, 1).T
    units = block_sums(z)
    assert 2 <= units.shape[0] < 20
    np.testing.assert_allclose(units.sum(axis=0), z.sum(axis=0))


# -- the selector ----------------------------------------------------------------------
def test_time_ordered_splits_count_blocks_and_do_not_warn():
    X, y, _ = make_time_series(600, n_noise=4, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DependentRowsWarning)
        sel = TreeInnerSelector(
            _small_booster(), cv=TimeSeriesSplit(4, gap=2), random_state=0
        ).fit(X, y)
    assert sel.test_units_ == "blocks"
    assert 2 <= sel.n_scored_rows_ <= 20


def test_breast_cancer_in_its_stored_order_gets_a_short_warning():
    # Issue 41, item 9: ~700 characters before. benchmarks/stored_order.py
    # measured that this order leaks nothing into the shuffled folds (the kept
    # sets overlap as much with a shuffled copy's as shuffled copies' do), so
    # the message says in a few words when it matters and where to read more.
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    with pytest.warns(DependentRowsWarning) as caught:
        TreeInnerSelector(_small_booster(classes=True), random_state=0).fit(X, y)
    (message,) = [str(w.message) for w in caught if w.category is DependentRowsWarning]
    assert len(message) <= 420, len(message)
    assert message.startswith("The rows look ordered")
    assert "TimeSeriesSplit" in message and "Time series and panels" in message


def test_shuffled_folds_on_a_time_series_warn():
    X, y, _ = make_time_series(600, n_noise=4, random_state=0)
    with pytest.warns(
        DependentRowsWarning, match=r"TimeSeriesSplit\(n_splits=5, gap"
    ) as caught:
        sel = TreeInnerSelector(_small_booster(), random_state=0).fit(X, y)
    assert sel.test_units_ == "rows"
    assert caught[0].filename == __file__  # points at the user's call


def test_prefit_model_on_ordered_rows_counts_blocks():
    X, y, _ = make_time_series(600, n_noise=4, random_state=0)
    model = _small_booster().fit(X[:300], y[:300])
    sel = TreeInnerSelector(model, prefit=True).fit(X[300:], y[300:])
    assert sel.test_units_ == "blocks"
    shuffled = np.random.default_rng(0).permutation(300)
    sel = TreeInnerSelector(model, prefit=True).fit(
        X[300:][shuffled], y[300:][shuffled]
    )
    assert sel.test_units_ == "rows"


def test_a_panel_without_groups_warns_and_with_groups_does_not():
    X, y, groups = make_panel(60, 8, random_state=0)
    with pytest.warns(DependentRowsWarning, match=r"x0, x1, x2, x3, x4.*groups="):
        TreeInnerSelector(_small_booster(), random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DependentRowsWarning)
        sel = TreeInnerSelector(_small_booster(), random_state=0)
        sel.fit(X, y, groups=groups)
    # cv=5 chained by the test of the column: 4 of the 5 folds of groups scored
    assert sel.test_units_ == "groups" and sel.n_scored_rows_ == 48


def test_entity_check_names_data_frame_columns():
    pd = pytest.importorskip("pandas")
    X, y, _ = make_panel(60, 8, n_entity_noise=2, random_state=0)
    frame = pd.DataFrame(X, columns=["size", "age", *[f"r{j}" for j in range(5)]])
    splits = list(KFold(5, shuffle=True, random_state=0).split(X))
    with pytest.warns(DependentRowsWarning, match="Columns size, age take equal"):
        check_dependent_rows(
            frame, y, splits, classifier=False, grouped=False, what="cv=5"
        )


def test_a_column_coded_twice_that_drives_y_is_not_an_entity():
    # Age and birth year share their partition, and y follows age: a helper
    # review's false alarm (Kruskal-Wallis p = 9e-159) of the first version.
    rng = np.random.default_rng(0)
    age = rng.integers(18, 80, size=2000).astype(float)
    X = np.column_stack([age, 2024 - age, rng.normal(size=2000)])
    assert entity_columns(X, 0.05 * age + rng.normal(size=2000)) is None


def test_blocks_of_too_few_units_are_left_to_the_test():
    assert block_sums(np.ones((1, 3))).shape == (1, 3)
    with pytest.raises(ValueError, match="at least 2 scored rows"):
        one_sided_test(block_sums(np.ones((1, 3))))


def test_repeated_values_of_independent_rows_are_not_entities():
    rng = np.random.default_rng(0)
    n = 2000
    code = rng.integers(0, 50, size=n)
    X = np.column_stack([rng.integers(0, 5, size=n), rng.poisson(3, size=n), code])
    assert entity_columns(X, rng.normal(size=n)) is None  # no shared partition
    X = np.column_stack([X, np.sin(code)])  # a code and its label share one
    positions, _, p = entity_columns(X, rng.normal(size=n))
    assert positions.tolist() == [2, 3] and p > ALARM_LEVEL  # y does not cluster


def test_exchangeable_rows_keep_rows_as_units():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = X[:, 0] + rng.normal(size=300)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DependentRowsWarning)
        sel = TreeInnerSelector(_small_booster(), random_state=0).fit(X, y)
    # cv=5 chained by the test of the column: 4 of the 5 folds scored
    assert sel.test_units_ == "rows" and sel.n_scored_rows_ == 240


def test_rows_sorted_by_the_target_are_not_a_series():
    y = np.repeat([0, 1, 2], 50)  # iris's order
    assert order_evidence(y, True)[2] == 1.0
    assert (
        order_evidence(np.sort(np.random.default_rng(0).normal(size=200)), False)[2]
        == 1.0
    )


def test_panel_over_time_counts_entities_with_time_ordered_folds():
    X, y, groups = make_panel(40, 10, shuffle=False, random_state=1)
    by_time = np.lexsort((groups, np.tile(np.arange(10), 40)))  # period, then entity
    sel = TreeInnerSelector(
        _small_booster(), cv=TimeSeriesSplit(3, gap=40), random_state=0
    ).fit(X[by_time], y[by_time], groups=groups[by_time])
    assert sel.test_units_ == "groups" and sel.n_scored_rows_ == 40
