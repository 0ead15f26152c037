"""Repeated selections on the same rows (``n_repeats``, issue 53).

Each repeat draws its own folds, default booster seed and draws; the repeats'
tests are combined as the mean tested score over the mean standard error,
which keeps the level under any dependence between repeats. Checked here: the
first repeat is the one-repeat selection bit for bit, the combination is what
the docs say, a given splitter and booster make the repeats differ by their
draws alone, and ``selection_frequency_`` is each repeat's own selection. The
level under the null, by simulation: tests/statistical/test_calibration.py.
"""

import pickle

import numpy as np
import pytest
import xgboost as xgb
from scipy import stats
from sklearn.base import clone
from sklearn.model_selection import KFold

from skl_treeinner import TreeInnerSelector
from skl_treeinner._stats._inference import ScoreTest, combine_repeats


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    y = X[:, 0] - 0.6 * X[:, 1] + 0.25 * X[:, 2] + rng.normal(size=n)
    return X, y


def _reg(**kw):
    return xgb.XGBRegressor(n_estimators=20, max_depth=2, n_jobs=1, **kw)


def test_combine_repeats_is_the_mean_score_over_the_mean_standard_error():
    a = ScoreTest(np.array([4.0, -1.0, 0.0]), np.array([1.0, 2.0, 0.0]), None, 50)
    b = ScoreTest(np.array([2.0, 1.0, 0.0]), np.array([3.0, 2.0, 0.0]), None, 40)
    out = combine_repeats([a, b])
    np.testing.assert_allclose(out.scores, [3.0, 0.0, 0.0])
    np.testing.assert_allclose(out.se, [2.0, 2.0, 0.0])
    assert out.n_rows == 40  # the fewest units set the degrees of freedom
    np.testing.assert_allclose(out.pvalues[:2], stats.t.sf([1.5, 0.0], df=39))
    assert out.pvalues[2] == 1.0  # no spread in any repeat: no evidence
    assert combine_repeats([a]) is a


def test_the_first_repeat_is_the_one_repeat_selection():
    X, y = _data()
    one = TreeInnerSelector(_reg(), cv=3, random_state=0).fit(X, y)
    three = TreeInnerSelector(_reg(), cv=3, n_repeats=3, random_state=0).fit(X, y)
    first = three._repeat_statistics[0]
    for name in ("scores_", "null_scores_", "scores_se_", "pvalues_"):
        np.testing.assert_array_equal(first[name], getattr(one, name))
    assert len(three.estimators_) == 3 * 2  # 3 repeats of 3 chained folds
    assert three.split_scores_.shape == (6, 6)
    np.testing.assert_array_equal(three.split_scores_[:2], one.split_scores_)
    assert not hasattr(one, "_repeat_statistics")


def test_repeats_combine_as_documented():
    X, y = _data(seed=1)
    sel = TreeInnerSelector(_reg(), cv=3, n_repeats=4, random_state=0).fit(X, y)
    reps = sel._repeat_statistics
    assert len(reps) == 4
    tested = np.mean([r["scores_"] - r["null_scores_"] for r in reps], axis=0)
    se = np.mean([r["scores_se_"] for r in reps], axis=0)
    np.testing.assert_allclose(sel.scores_, np.mean([r["scores_"] for r in reps], 0))
    np.testing.assert_allclose(sel.scores_ - sel.null_scores_, tested, atol=1e-9)
    np.testing.assert_allclose(sel.scores_se_, se)
    np.testing.assert_allclose(
        sel.pvalues_, stats.t.sf(tested / se, df=sel.n_scored_rows_ - 1), rtol=1e-6
    )
    # The repeats differ: their own folds.
    assert not np.array_equal(reps[0]["scores_"], reps[1]["scores_"])
    assert sel.get_support()[:2].all() and not sel.get_support()[3:].any()


def test_a_given_splitter_and_seeded_booster_leave_the_draws_to_vary():
    X, y = _data(seed=2)
    cv = list(KFold(3, shuffle=True, random_state=0).split(X))
    sel = TreeInnerSelector(_reg(random_state=7), cv=cv, n_repeats=3, random_state=0)
    sel.fit(X, y)
    # The same splits and the same booster: the same scores in every repeat ...
    np.testing.assert_array_equal(sel.split_scores_[:3], sel.split_scores_[3:6])
    np.testing.assert_array_equal(sel.split_scores_[:3], sel.split_scores_[6:])
    assert {est.get_params()["random_state"] for est in sel.estimators_} == {7}
    # ... and the resampled scores of their own draws.
    nulls = [r["null_scores_"] for r in sel._repeat_statistics]
    assert not np.array_equal(nulls[0], nulls[1])


def test_the_default_booster_is_seeded_per_repeat():
    X, y = _data(n=200, seed=3)
    sel = TreeInnerSelector(cv=3, n_repeats=3, random_state=0).fit(X, y)
    seeds = [est.get_params()["random_state"] for est in sel.estimators_]
    one = TreeInnerSelector(cv=3, random_state=0).fit(X, y)
    # two chained splits per repeat, one seed per repeat, the first the fit's own
    assert seeds[0] == seeds[1] == one.estimator_.get_params()["random_state"]
    assert seeds[2] == seeds[3] and seeds[4] == seeds[5]
    assert len(set(seeds)) == 3


def test_selection_frequency_is_each_repeats_own_selection():
    X, y = _data(seed=4)
    sel = TreeInnerSelector(_reg(), cv=3, n_repeats=5, random_state=0).fit(X, y)
    freq = sel.selection_frequency_
    assert freq.shape == (6,)
    assert set(np.round(freq * 5).astype(int)) <= set(range(6))
    np.testing.assert_allclose(freq * 5, np.round(freq * 5), atol=1e-12)
    # each repeat alone, by the rule on its own p-values and tested scores
    expected = np.mean(
        [
            (r["pvalues_"] < min(0.05, 1 / 6)) & (r["scores_"] - r["null_scores_"] > 0)
            for r in sel._repeat_statistics
        ],
        axis=0,
    )
    np.testing.assert_allclose(freq, expected)
    # derived: re-selects with the cut-off, no refit
    fitted = sel.estimators_
    assert (sel.set_params(alpha=1e-12).selection_frequency_ <= freq).all()
    assert sel.estimators_ is fitted
    one = TreeInnerSelector(_reg(), cv=3, random_state=0).fit(X, y)
    np.testing.assert_array_equal(one.selection_frequency_, one.support_.astype(float))


def test_feature_groups_combine_their_sums_too():
    X, y = _data(seed=5)
    groups = {"pair": [0, 1], "rest": [3, 4, 5]}
    sel = TreeInnerSelector(
        _reg(), cv=3, n_repeats=3, feature_groups=groups, random_state=0
    ).fit(X, y)
    reps = sel._repeat_statistics
    np.testing.assert_allclose(
        sel.group_scores_se_, np.mean([r["group_scores_se_"] for r in reps], axis=0)
    )
    freq = sel.selection_frequency_
    for cols in sel.groups_.values():  # a group's members share its frequency
        assert len(set(freq[cols])) == 1
    assert sel.group_support_[list(sel.groups_).index("pair")]


def test_n_repeats_is_a_parameter_like_any_other():
    X, y = _data(n=150, seed=6)
    sel = TreeInnerSelector(_reg(), cv=2, n_repeats=2, random_state=0)
    assert clone(sel).get_params()["n_repeats"] == 2
    sel.fit(X, y)
    back = pickle.loads(pickle.dumps(sel))
    np.testing.assert_array_equal(back.selection_frequency_, sel.selection_frequency_)
    with pytest.raises(ValueError, match="n_repeats"):
        TreeInnerSelector(n_repeats=0).fit(X, y)


def test_a_warning_about_the_data_comes_once_not_once_per_repeat():
    from sklearn.datasets import load_breast_cancer

    from skl_treeinner.exceptions import DependentRowsWarning

    # scikit-learn's file is stored partly sorted by diagnosis: its rows look
    # ordered to the check, which every repeat runs on its own folds
    X, y = load_breast_cancer(return_X_y=True)
    clf = xgb.XGBClassifier(n_estimators=10, max_depth=2, n_jobs=1)
    with pytest.warns(DependentRowsWarning) as record:
        TreeInnerSelector(clf, cv=3, n_repeats=3, random_state=0).fit(X[:, :5], y)
    ordered = [w for w in record if issubclass(w.category, DependentRowsWarning)]
    assert len(ordered) == 1
    assert ordered[0].filename == __file__  # it points at the user's line


def test_repeats_respect_a_time_ordered_splitter_and_row_groups(monkeypatch):
    """Issue 53, item 4: averaging keeps the splitter and the groups it was given."""
    from sklearn.model_selection import TimeSeriesSplit

    from skl_treeinner._engines.memory import _run

    X, y = _data(n=240, seed=8)
    sel = TreeInnerSelector(
        _reg(random_state=1), cv=TimeSeriesSplit(3), n_repeats=2, random_state=0
    ).fit(X, y)
    assert sel.test_units_ == "blocks"
    # the same time-ordered splits (and booster) in both repeats: the same scores
    np.testing.assert_array_equal(sel.split_scores_[:3], sel.split_scores_[3:])
    # an int cv with groups: every repeat's folds keep each group on one side
    drawn = []
    make_splits = _run.make_splits

    def record(*args, **kwargs):
        splits = make_splits(*args, **kwargs)
        drawn.append(splits)
        return splits

    monkeypatch.setattr(_run, "make_splits", record)
    groups = np.repeat(np.arange(60), 4)
    TreeInnerSelector(_reg(), cv=3, n_repeats=3, random_state=0).fit(
        X, y, groups=groups
    )
    assert len(drawn) == 3
    assert drawn[0][0][1].tolist() != drawn[1][0][1].tolist()  # other folds
    for splits in drawn:
        for train, test in splits:
            assert not set(groups[train]) & set(groups[test])
