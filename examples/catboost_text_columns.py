"""CatBoost with text columns: which columns does the model really use?

A pandas frame with a numeric signal, a numeric noise column, a text column
with 5 levels that moves the target (``colour``) and a text column with 500
levels that does not (``store``). CatBoost turns text columns into target
statistics (CTRs) itself, so the selector hands the frame over untouched and
declares the text columns as ``cat_features`` on its copy of the booster.

1. ``TreeInnerSelector`` with ``CatBoostRegressor`` (5-fold cross-fitting,
   early stopping on rows set aside from each training part): every column's
   held-out TreeInner score, its p-value, and which are kept.
2. CatBoost's own ``PredictionValuesChange`` importance on the training rows,
   for comparison: it gives ``store`` a share, since it measures how much the
   fitted trees move with each column, not whether that helps on new rows.

``max_ctr_complexity=1`` keeps every split on one column, which TreeInner needs
to attribute it (CatBoost's default combines columns).

Run: python examples/catboost_text_columns.py
"""

import catboost as cb
import numpy as np
import pandas as pd

from skl_treeinner import TreeInnerSelector

rng = np.random.default_rng(0)
n = 3000
X = pd.DataFrame(
    {
        "signal": rng.normal(size=n),
        "noise": rng.normal(size=n),
        "colour": rng.choice(["red", "green", "blue", "black", "white"], size=n),
        "store": rng.choice([f"store-{i}" for i in range(500)], size=n),
    }
)
effect = {"red": 1.0, "green": 0.5, "blue": 0.0, "black": -0.5, "white": -1.0}
y = X["signal"] + X["colour"].map(effect) + rng.normal(size=n)

booster = cb.CatBoostRegressor(
    iterations=500,
    learning_rate=0.1,
    depth=4,
    max_ctr_complexity=1,
    early_stopping_rounds=20,
    thread_count=2,
    verbose=0,
    allow_writing_files=False,
)
selector = TreeInnerSelector(booster, cv=5, random_state=0).fit(X, y)

booster.fit(X, y, cat_features=["colour", "store"])
gain = booster.get_feature_importance(type="PredictionValuesChange")

header = ("column", "held-out score", "p-value", "kept", "CatBoost PVC %")
print(f"{header[0]:<8}{header[1]:>16}{header[2]:>10}{header[3]:>6}{header[4]:>16}")
for j, name in enumerate(X.columns):
    print(
        f"{name:<8}{selector.scores_[j]:>16.1f}{selector.pvalues_[j]:>10.3f}"
        f"{'yes' if selector.support_[j] else 'no':>6}{gain[j]:>16.1f}"
    )
print("kept:", list(selector.get_feature_names_out()))
assert set(selector.get_feature_names_out()) == {"signal", "colour"}
