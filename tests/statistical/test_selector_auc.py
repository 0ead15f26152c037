"""The default TreeInnerSelector on the paper's simulated regression data.

Paper 000, Sec. 4 and Table 4: out-of-sample TreeInner (PreDecomp) ranks the
5 relevant features above the 45 noisy ones with mean ROC AUC 0.638 on the
regression data (1000 rows to fit, 1000 to score). This is the full-size
experiment (400 trees, as the default estimator), 20 seeds; the booster runs
on one thread, which is faster than several on a shared machine and gives the
same trees. benchmarks/selector_auc.py runs it with cv=2 and cv=5 as well.
"""

import numpy as np
import pytest
import xgboost as xgb
from sklearn.metrics import roc_auc_score
from threadpoolctl import threadpool_limits

from skl_treeinner import TreeInnerSelector
from skl_treeinner.datasets import make_paper_simulation


@pytest.mark.slow
def test_default_selector_auc_on_paper_regression_data():
    held_out, gain = [], []
    with threadpool_limits(1):
        for seed in range(20):
            X, y, relevant = make_paper_simulation(
                "regression", 2000, random_state=seed
            )
            # One split, the paper's setting (cv=5, the default, ranks better).
            sel = TreeInnerSelector(cv=None, random_state=seed).fit(X, y)
            assert isinstance(sel.estimator_, xgb.XGBRegressor)
            assert sel.estimator_.get_params()["n_estimators"] == 400
            held_out.append(roc_auc_score(relevant, sel.scores_))
            total_gain = sel.estimator_.get_booster().get_score(
                importance_type="total_gain"
            )
            in_sample = [total_gain.get(f"f{j}", 0.0) for j in range(X.shape[1])]
            gain.append(roc_auc_score(relevant, in_sample))
    # Measured: 0.626 held out (se 0.025); in-sample gain far lower.
    assert np.mean(held_out) >= 0.58
    assert np.mean(gain) < np.mean(held_out) - 0.1
