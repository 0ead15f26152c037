"""The refit curve on null data: an honest curve stays at chance.

A ranking that saw the held-out rows makes the curve rise; the selector's
does not (moved from tests/unit/test_refit_curve.py).
"""

import numpy as np
import pytest
import xgboost as xgb

from skl_treeinner import TreeInnerSelector
from skl_treeinner._engines.memory import _run
from skl_treeinner._stats._refit_curve import curve_standard_error


def _booster(**kw):
    params = dict(n_estimators=60, learning_rate=0.1, max_depth=3, n_jobs=1)
    return xgb.XGBRegressor(**{**params, **kw})


def _at_chance(res):
    """The curve's best mean is within two standard errors of the intercept's."""
    best = int(np.argmax(res["mean_test_score"]))
    se = curve_standard_error(res)
    return res["mean_test_score"][best] <= res["mean_test_score"][0] + 2 * se[best]


@pytest.mark.slow
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

    monkeypatch.setattr(_run, "inner_splits", leaky)
    leaked = TreeInnerSelector(_booster(), **params).fit(X, y)
    assert not _at_chance(leaked.cv_results_)
    assert leaked.cv_results_["mean_test_score"].max() > 0.1
