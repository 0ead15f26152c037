"""The selector's ``memory``: GridSearchCV over the cut-off fits one selection per fold.

Issue 54: a user tuned ``alpha`` and ``max_features`` with GridSearchCV and paid
for a selection per candidate and fold (24 for 8 settings x 3 folds), where the
user guide had said that ``set_params`` re-selects without refitting.
"""

import numpy as np
import pytest
import xgboost as xgb
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import Pipeline

from skl_treeinner import TreeInnerSelector

FITTED = ("scores_", "scores_se_", "null_scores_", "pvalues_", "split_scores_")


@pytest.fixture
def fits(monkeypatch):
    """Count the booster's fits."""
    calls = []
    original = xgb.XGBClassifier.fit

    def fit(self, *args, **kwargs):
        calls.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(xgb.XGBClassifier, "fit", fit)
    return calls


def _data():
    return make_classification(300, 12, n_informative=3, n_redundant=0, random_state=0)


def _booster():
    return xgb.XGBClassifier(n_estimators=10, max_depth=2, n_jobs=1)


def test_a_grid_over_the_cut_off_fits_one_selection_per_fold(fits, tmp_path):
    X, y = _data()
    grid = {"select__alpha": [0.05, 0.01, None], "select__max_features": [None, 3]}
    selector = TreeInnerSelector(_booster(), cv=3, random_state=0, memory=tmp_path)
    pipe = Pipeline([("select", selector), ("model", LogisticRegression())])
    search = GridSearchCV(pipe, grid, cv=KFold(3)).fit(X, y)
    # 3 folds and the refit on all rows, each one selection of 2 chained fits;
    # without memory: 6 candidates x 3 folds + 1 = 19 selections.
    assert len(fits) == (3 + 1) * 2
    best = search.best_estimator_[0]
    fresh = TreeInnerSelector(_booster(), cv=3, random_state=0).fit(X, y)
    for name in FITTED:
        np.testing.assert_array_equal(getattr(best, name), getattr(fresh, name))
    fresh.set_params(**{k.split("__")[1]: v for k, v in search.best_params_.items()})
    np.testing.assert_array_equal(best.get_support(), fresh.get_support())


def test_what_the_fit_reads_is_in_the_key(fits, tmp_path):
    X, y = _data()
    selector = TreeInnerSelector(_booster(), cv=3, random_state=0, memory=tmp_path)
    first = selector.fit(X, y).pvalues_.copy()
    selector.set_params(alpha=None, threshold=1.0, max_features=2, n_jobs=2)
    selector.fit(X, y)  # the cut-off and the threads: no new fit
    assert len(fits) == 2  # (n_jobs=2 would fit in processes not counted here)
    assert len(list(tmp_path.rglob("output.pkl"))) == 1  # one selection kept
    np.testing.assert_array_equal(selector.pvalues_, first)
    selector.set_params(n_jobs=None)  # fits in this process, to be counted
    changed = X.copy()
    changed[0, 0] += 1.0  # one cell of the data
    selector.fit(changed, y)
    selector.set_params(random_state=1).fit(X, y)  # the seeds
    selector.set_params(random_state=0, cv=4).fit(X, y)  # a fitting parameter
    assert len(fits) == 2 + 2 + 2 + 3
    assert len(list(tmp_path.rglob("output.pkl"))) == 4


def test_without_a_fixed_seed_the_cache_is_not_used_and_says_so(fits, tmp_path):
    X, y = _data()
    selector = TreeInnerSelector(_booster(), cv=3, memory=tmp_path)
    with pytest.warns(UserWarning, match="memory is not used.*int random_state"):
        selector.fit(X, y)
    assert len(fits) == 2 and selector.scores_.shape == (12,)


def test_a_fit_that_reuses_a_selection_says_what_the_first_fit_said(fits, tmp_path):
    from skl_treeinner.exceptions import DependentRowsWarning

    rng = np.random.default_rng(0)
    level = np.cumsum(rng.normal(size=300))  # a series, stored in time order
    X = np.column_stack([level + rng.normal(size=300), rng.normal(size=300)])
    y = (level > np.median(level)).astype(int)
    selector = TreeInnerSelector(_booster(), cv=3, random_state=0, memory=tmp_path)
    for _ in range(2):  # fitted, then reused
        with pytest.warns(DependentRowsWarning, match="rows look ordered") as said:
            selector.fit(X, y)
        assert said[0].filename == __file__  # at the user's line
    assert len(fits) == 2
