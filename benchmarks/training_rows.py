"""How far a prefit model's scores are from its total gain, on its rows and others.

``TreeInnerSelector(prefit=True)`` warns (``TrainingRowsWarning``) when the
rows it scores look like the model's training rows: PreDecomp's TreeInner
equal to the booster's total gain (Prop. 3) within a relative L1 distance of
``skl_treeinner._selection._prefit_check.TOLERANCE`` (1e-4). This prints that distance
for boosters of every library fitted on half of scikit-learn's diabetes and
breast cancer data (with a 300-level noise code added), scored on the half
they were trained on and on the other half; an underfit booster (20 trees at
learning rate 0.01) is the hardest case, its held-out scores nearest its gain.

Usage: python benchmarks/training_rows.py
"""

from __future__ import annotations

import warnings

import numpy as np
import xgboost as xgb
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.ensemble import (
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
)

from skl_treeinner import TreeInnerSelector
from skl_treeinner._selection._prefit_check import TOLERANCE, training_rows_distance


def _boosters(classes):
    import lightgbm as lgb

    xgb_cls = xgb.XGBClassifier if classes else xgb.XGBRegressor
    boosters = {
        "XGBoost, 100 trees": xgb_cls(n_estimators=100, max_depth=3, n_jobs=1),
        "XGBoost, 20 trees at 0.01": xgb_cls(
            n_estimators=20, learning_rate=0.01, max_depth=2, n_jobs=1
        ),
        "LightGBM": (lgb.LGBMClassifier if classes else lgb.LGBMRegressor)(
            n_estimators=100, verbose=-1
        ),
        "HistGradientBoosting": (
            HistGradientBoostingClassifier if classes else HistGradientBoostingRegressor
        )(max_iter=100),
    }
    if not classes:
        boosters["GradientBoosting"] = GradientBoostingRegressor(n_estimators=100)
    return boosters


def main():
    """Print the distance on training and held-out rows, and whether it warns."""
    rng = np.random.default_rng(0)
    print(f"tolerance {TOLERANCE:g}")
    print("| data | booster | training rows | held-out rows |")
    print("|---|---|---|---|")
    for name, load, classes in (
        ("diabetes", load_diabetes, False),
        ("breast cancer", load_breast_cancer, True),
    ):
        X, y = load(return_X_y=True)
        X = np.column_stack([X, rng.integers(0, 300, len(y))])
        half = len(y) // 2
        for label, booster in _boosters(classes).items():
            booster.fit(X[:half], y[:half])
            cells = []
            for rows in (slice(None, half), slice(half, None)):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    selector = TreeInnerSelector(booster, prefit=True, test="model")
                    selector.fit(X[rows], y[rows])
                distance = training_rows_distance(booster, selector.scores_)
                cells.append(f"{distance:.1e}")
            print(f"| {name} | {label} | {cells[0]} | {cells[1]} |")


if __name__ == "__main__":
    main()
