"""Feature groups under the null: every group test calibrated, "any member" not.

Families of 2 to 50 columns with y independent of X (moved from
tests/unit/test_feature_groups.py, which checks the group statistics against
the public per-row terms and scipy).
"""

import numpy as np
import pytest
import xgboost as xgb

from skl_treeinner import TreeInnerSelector
from skl_treeinner.datasets import make_feature_families


# -- calibration: y independent of X, families of 2 to 50 columns ---------------
@pytest.mark.slow
def test_group_tests_are_calibrated_where_any_member_is_not():
    """Share of null families with p < 0.05 at most 0.05 for every group test.

    The same fits' rule "a family passes when any member does" must exceed
    0.05, so the check can fail: a test that combined members wrongly would.
    """
    shares = {m: [] for m in ("sum", "simes", "cauchy", "sum+simes", "any")}
    for seed in range(8):
        X, y, _, groups = make_feature_families("null", 400, random_state=seed)
        selector = TreeInnerSelector(
            xgb.XGBRegressor(
                n_estimators=60,
                learning_rate=0.1,
                max_depth=3,
                colsample_bytree=0.5,
                random_state=seed,
            ),
            cv=3,
            feature_groups=groups,
            random_state=seed,
        ).fit(X, y)
        for method in ("sum", "simes", "cauchy", "sum+simes"):
            selector.set_params(group_test=method)
            shares[method] += list(selector.group_pvalues_ < 0.05)
        shares["any"] += [
            bool((selector.pvalues_[m] < 0.05).any()) for m in selector.groups_.values()
        ]
    n = len(shares["any"])
    assert n == 8 * 15
    for method in ("sum", "simes", "cauchy", "sum+simes"):
        assert np.mean(shares[method]) <= 0.05, (method, np.mean(shares[method]))
    assert np.mean(shares["any"]) > 0.05
