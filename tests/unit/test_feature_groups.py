"""Feature groups: families of columns scored, tested and selected as one (issue 29).

The group statistics are checked against what we did not write: the sums of
the public per-row ``tree_inner`` terms of each fitted booster on its
held-out rows, the target's noise in them from ``tree_inner`` at ``y + 1``
(squared error) or at every label with the booster's own probabilities
(multi-class), and scipy's Student's t.
"""

import pickle

import numpy as np
import pytest
import xgboost as xgb
from scipy import stats
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import KFold

from skl_treeinner import TreeInnerSelector, tree_inner
from skl_treeinner._stats._feature_groups import (
    ColumnSums,
    cauchy_combination,
    resolve_feature_groups,
    simes,
)

pd = pytest.importorskip("pandas")


def _booster(**params):
    defaults = dict(n_estimators=40, max_depth=3, learning_rate=0.2, random_state=0)
    return xgb.XGBRegressor(**{**defaults, **params})


def _data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    y = 0.6 * X[:, 0] + 0.4 * X[:, 1] + 0.4 * X[:, 2] + rng.normal(size=n)
    return X, y


# -- reading the groups ----------------------------------------------------------
@pytest.mark.parametrize(
    ("groups", "error", "match"),
    [
        ({"a": [0, 1], "b": [1, 2]}, ValueError, "in groups 'a' and 'b'"),
        ({"a": [0, 0]}, ValueError, "twice in group 'a'"),
        ({"a": [0, 9]}, ValueError, "names column 9, but X has 6 columns"),
        ({"a": []}, ValueError, "is empty"),
        ({"a": ["f0"]}, ValueError, "X has no column names"),
        ({"x3": [0, 1]}, ValueError, "has the name of column 'x3'"),
        ([[0, 1]], TypeError, "instance of 'dict'"),
        ({"a": 0}, TypeError, "must be a list of columns"),
        ({"a": [0.5]}, TypeError, "by their names"),
    ],
)
def test_bad_groups_are_refused_before_any_fit(monkeypatch, groups, error, match):
    def no_fit(*args, **kwargs):
        raise AssertionError("a booster was fitted")

    monkeypatch.setattr(xgb.XGBRegressor, "fit", no_fit)
    X, y = _data(n=100)
    selector = TreeInnerSelector(_booster(), feature_groups=groups)
    with pytest.raises(error, match=match):
        selector.fit(X, y)
    assert not hasattr(selector, "scores_")


def test_groups_by_name_and_index_and_singletons():
    names = np.array(["a", "b", "c", "d"])
    groups = resolve_feature_groups({"bd": ["b", 3]}, 4, names)
    assert groups.names == ["a", "bd", "c"]
    assert [m.tolist() for m in groups.members] == [[0], [1, 3], [2]]
    assert groups.expand([False, True, False]).tolist() == [False, True, False, True]
    with pytest.raises(ValueError, match="'e', which is not a column of X"):
        resolve_feature_groups({"g": ["e"]}, 4, names)


def test_column_sums_place_one_to_one_and_add_many_to_one():
    values = np.arange(12.0).reshape(3, 4)
    placed = ColumnSums([2, 0, 3, 1], 4)(values)
    assert np.array_equal(placed[:, [2, 0, 3, 1]], values)
    summed = ColumnSums([0, 1, 1, 0], 2)(values)
    np.testing.assert_array_equal(
        summed,
        values[:, [0, 3]].sum(1)[:, None] * [1, 0]
        + values[:, [1, 2]].sum(1)[:, None] * [0, 1],
    )
    chained = ColumnSums([0, 1, 1, 2], 3).then(ColumnSums([1, 0, 1], 2))
    assert chained.index.tolist() == [1, 0, 0, 1]


def test_combinations_against_their_definitions():
    p = np.array([0.04, 0.01, 0.3, 0.9])
    assert simes(p) == pytest.approx(min(4 * 0.01 / 1, 4 * 0.04 / 2, 4 * 0.3 / 3, 1.0))
    t = np.mean(np.tan((0.5 - p) * np.pi))
    assert cauchy_combination(p) == pytest.approx(stats.cauchy.sf(t))
    # A p-value near 1 pulls the Cauchy combination far down (its weakness).
    assert cauchy_combination([1e-6, 1.0]) > 0.5
    assert cauchy_combination([1e-20]) == pytest.approx(1e-20, rel=1e-6)


# -- the statistics, against tree_inner's own per-row terms ---------------------
def _expected_sum_test(selector, splits, X, y, members, *, classes=None):
    """The group's score, s.e. and sum-test p-value from public tree_inner calls."""
    units = np.zeros(len(y))
    scored = np.zeros(len(y), dtype=bool)
    floor = resid2 = var = 0.0
    for est, (_, test) in zip(selector.estimators_, splits, strict=True):
        z = tree_inner(est, X[test], y[test], per_sample=True)[:, members].sum(axis=1)
        units[test] += z
        scored[test] = True
        if classes is None:  # squared error: slope in y, V = 1
            up = tree_inner(est, X[test], y[test] + 1.0, per_sample=True)
            slope = up[:, members].sum(axis=1) - z
            floor += np.sum(slope**2)
            resid2 += np.sum((y[test] - est.predict(X[test])) ** 2)
            var += test.size
        else:  # every label, the booster's own probabilities
            prob = est.predict_proba(X[test])
            first = second = 0.0
            for c in range(len(classes)):
                zc = tree_inner(est, X[test], np.full(test.size, c), per_sample=True)[
                    :, members
                ].sum(axis=1)
                first, second = first + prob[:, c] * zc**2, second + prob[:, c] * zc
            floor += np.sum(np.maximum(first - second**2, 0.0))
            resid2 = var = 1.0
    u = units[scored]
    m = u.size
    se = max(np.sqrt(m) * u.std(ddof=1), np.sqrt(floor * resid2 / var))
    return u.sum(), se, stats.t.sf(u.sum() / se, df=m - 1)


def test_group_statistics_are_sums_of_the_members_terms():
    X, y = _data()
    splits = list(KFold(3, shuffle=True, random_state=0).split(X))
    groups = {"pair": [1, 2], "noise": [3, 4, 5]}
    selector = TreeInnerSelector(
        _booster(), cv=splits, feature_groups=groups, group_test="sum", test="model"
    ).fit(X, y)
    plain = TreeInnerSelector(_booster(), cv=splits, test="model").fit(X, y)
    # The columns' own statistics are those of the selector without groups.
    for name in ("scores_", "scores_se_", "pvalues_", "split_scores_", "ranking_"):
        assert np.array_equal(getattr(selector, name), getattr(plain, name)), name
    assert list(selector.groups_) == ["x0", "pair", "noise"]
    for g, (name, members) in enumerate(selector.groups_.items()):
        score, se, p = _expected_sum_test(selector, splits, X, y, members)
        assert selector.group_scores_[g] == pytest.approx(score, rel=1e-9)
        # est.predict gives float32 predictions for the dispersion
        assert selector.group_scores_se_[g] == pytest.approx(se, rel=1e-7), name
        assert selector.group_pvalues_[g] == pytest.approx(p, rel=1e-7, abs=1e-300)
    # A group of one column is that column.
    assert selector.group_pvalues_[0] == selector.pvalues_[0]
    assert selector.group_scores_se_[0] == pytest.approx(selector.scores_se_[0])


def test_multiclass_group_noise_from_every_label():
    X, y = _data(n=700, seed=3)
    labels = np.digitize(y, [-0.5, 0.5])
    splits = [next(KFold(2, shuffle=True, random_state=1).split(X))]
    est = xgb.XGBClassifier(n_estimators=20, max_depth=3, random_state=0)
    selector = TreeInnerSelector(
        est, cv=splits, feature_groups={"pair": [1, 2]}, group_test="sum", test="model"
    ).fit(X, labels)
    g = list(selector.groups_).index("pair")
    score, se, p = _expected_sum_test(
        selector, splits, X, labels, [1, 2], classes=np.unique(labels)
    )
    assert selector.group_scores_[g] == pytest.approx(score, rel=1e-9)
    assert selector.group_scores_se_[g] == pytest.approx(se, rel=1e-7)
    assert selector.group_pvalues_[g] == pytest.approx(p, rel=1e-6)


def test_nothing_changes_without_groups_and_singletons_keep_their_pvalues():
    X, y = _data(seed=5)
    a = TreeInnerSelector(_booster(), random_state=0).fit(X, y)
    b = TreeInnerSelector(_booster(), random_state=0, feature_groups={}).fit(X, y)
    for name in ("scores_", "scores_se_", "pvalues_"):
        assert np.array_equal(getattr(a, name), getattr(b, name))
    assert np.array_equal(a.support_, b.support_)
    assert np.array_equal(b.group_pvalues_, b.pvalues_)
    assert not hasattr(a, "groups_")


# -- selection -------------------------------------------------------------------
def test_selection_acts_on_groups_and_never_splits_one():
    X, y = _data(seed=7)
    groups = {"strong_and_noise": [0, 5], "pair": [1, 2]}
    selector = TreeInnerSelector(_booster(), feature_groups=groups, random_state=0).fit(
        X, y
    )
    support = selector.support_
    for members in selector.groups_.values():
        assert len(set(support[members])) == 1
    assert support[[0, 5]].all() and support[[1, 2]].all()
    # max_features counts groups, the best by their test first: the smallest
    # group p-value (by group_test), ties by the larger t.
    selector.set_params(max_features=1, alpha=None, threshold=-np.inf)
    tested = selector.group_scores_ - selector.group_null_scores_
    t = tested / selector.group_scores_se_
    order = np.lexsort((-t, selector.group_pvalues_))
    assert np.array_equal(
        selector.support_, selector._feature_groups.expand(np.arange(4) == order[0])
    )
    selector.set_params(max_features=0.5)  # half of the 4 groups
    assert selector.support_.sum() == sum(
        len(m) for g, m in enumerate(selector.groups_.values()) if g in order[:2]
    )
    # threshold compares the groups' tested scores (the test of a column: less
    # their resampled scores); "mean" is the groups' mean.
    selector.set_params(max_features=None, threshold="mean")
    assert selector.threshold_ == pytest.approx(tested.mean())
    assert np.array_equal(
        selector.support_, selector._feature_groups.expand(tested > tested.mean())
    )


def test_group_test_reselects_without_refitting_and_groups_need_a_refit():
    X, y = _data(seed=8)
    selector = TreeInnerSelector(
        _booster(), feature_groups={"noise": [3, 4, 5]}, random_state=0
    ).fit(X, y)
    estimators = selector.estimators_
    values = {}
    for method in ("sum", "simes", "cauchy", "sum+simes"):
        selector.set_params(group_test=method)
        values[method] = selector.group_pvalues_.copy()
    assert selector.estimators_ is estimators
    noise = list(selector.groups_).index("noise")
    p_members = selector.pvalues_[[3, 4, 5]]
    # members no tree uses (no spread) are left out
    p_members = p_members[selector.scores_se_[[3, 4, 5]] > 0]
    assert values["simes"][noise] == pytest.approx(simes(p_members))
    assert values["cauchy"][noise] == pytest.approx(cauchy_combination(p_members))
    assert values["sum+simes"][noise] == pytest.approx(
        simes([values["sum"][noise], values["simes"][noise]])
    )
    # The same groups written again are the same groups.
    selector.set_params(feature_groups={"noise": [3, 4, 5]})
    _ = selector.support_
    selector.set_params(feature_groups={"noise": [4, 5]})
    with pytest.raises(NotFittedError, match="feature_groups was changed"):
        _ = selector.support_
    selector.set_params(feature_groups={"noise": [3, 4, 5]}, group_test="nope")
    with pytest.raises(ValueError, match="group_test='nope'"):
        _ = selector.support_


def test_clone_pickle_and_frames_with_names():
    X, y = _data(seed=9)
    frame = pd.DataFrame(X, columns=list("abcdef"))
    selector = TreeInnerSelector(
        _booster(), feature_groups={"bc": ["b", "c"], "tail": ["d", "e", "f"]}
    ).set_output(transform="pandas")
    selector.fit(frame, y)
    assert list(selector.groups_) == ["a", "bc", "tail"]
    copy = clone(selector)
    assert copy.feature_groups == selector.feature_groups
    assert not hasattr(copy, "groups_")
    restored = pickle.loads(pickle.dumps(selector))
    assert np.array_equal(restored.support_, selector.support_)
    kept = selector.transform(frame)
    assert set(kept.columns) <= set("abcdef")
    assert {"b", "c"} <= set(kept.columns) or not {"b", "c"} & set(kept.columns)


def test_review_findings_max_features_blocks_used_members_and_old_pickles(
    monkeypatch,
):
    X, y = _data(seed=11)
    groups = {"a": [0, 1, 2], "b": [3, 4, 5]}
    # An int max_features above the number of groups fails before any fit.
    fitted = []
    original = xgb.XGBRegressor.fit
    monkeypatch.setattr(
        xgb.XGBRegressor,
        "fit",
        lambda self, *a, **k: fitted.append(1) or original(self, *a, **k),
    )
    with pytest.raises(ValueError, match="larger than the 2 feature groups"):
        TreeInnerSelector(_booster(), feature_groups=groups, max_features=3).fit(X, y)
    assert not fitted
    selector = TreeInnerSelector(_booster(), feature_groups=groups).fit(X, y)
    # A used member is combined whatever its p-value: the mask is the spread.
    used = selector.scores_se_ > 0
    selector.set_params(group_test="simes")
    for g, cols in enumerate(selector.groups_.values()):
        kept = selector.pvalues_[cols][used[cols]]
        expected = simes(kept) if kept.size else 1.0
        assert selector.group_pvalues_[g] == pytest.approx(expected)
    # Without groups, group_pvalues_ is absent, with a message.
    plain = TreeInnerSelector(_booster()).fit(X, y)
    with pytest.raises(AttributeError, match="fitted with feature_groups"):
        _ = plain.group_pvalues_
    # A selector pickled before the parameters existed gets their defaults.
    state = plain.__getstate__()
    del state["feature_groups"], state["group_test"]
    old = TreeInnerSelector.__new__(TreeInnerSelector)
    old.__setstate__(state)
    assert old.get_params()["group_test"] == "sum+simes"
    assert np.array_equal(old.support_, plain.support_)


def test_time_blocks_of_the_sums_are_long_enough_for_the_sums():
    from sklearn.model_selection import TimeSeriesSplit

    from skl_treeinner.datasets import make_time_series

    X, y, _ = make_time_series(600, n_noise=4, phi=0.9, effect=0.5, random_state=0)
    selector = TreeInnerSelector(
        _booster(n_estimators=20),
        cv=TimeSeriesSplit(3),
        feature_groups={"noise": [1, 2, 3, 4]},
        test="model",
    ).fit(X, y)
    assert selector.test_units_ == "blocks"
    plain = TreeInnerSelector(
        _booster(n_estimators=20), cv=TimeSeriesSplit(3), test="model"
    ).fit(X, y)
    assert np.array_equal(selector.pvalues_, plain.pvalues_)
    assert selector.group_scores_[1] == pytest.approx(selector.scores_[1:].sum())


def test_new_user_findings_labels_positions_and_plots():
    X, y = _data(seed=12)
    frame = pd.DataFrame(X, columns=list("abcdef"))
    selector = TreeInnerSelector(
        _booster(), feature_groups={"tail": ["f", "d", "e"], "pair": ["b", "c"]}
    ).fit(frame, y)
    # The group arrays follow groups_ (first column order), not the dict's.
    assert list(selector.groups_) == ["a", "pair", "tail"]
    support = dict(zip(selector.groups_, selector.group_support_, strict=True))
    assert support["pair"] == selector.support_[1]
    # An int is a position: negative ones are refused.
    with pytest.raises(ValueError, match="an int is a position"):
        TreeInnerSelector(_booster(), feature_groups={"g": [-1, 0]}).fit(X, y)


def test_plot_of_columns_of_a_grouped_selector_says_the_group_decides():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from skl_treeinner.plotting import plot_scores

    X, y = _data(seed=13)
    selector = TreeInnerSelector(
        _booster(), feature_groups={"pair": [1, 2]}, max_features=2
    ).fit(X, y)
    ax = plot_scores(selector, by_group=False)
    label = " ".join(ax.get_xlabel().split())  # the rule, under the axis
    assert "Selected with their group" in label and "at most 2 groups" in label
    import matplotlib.pyplot as plt

    plt.close("all")
