"""Families of columns as one decision: a one-hot encoded city, and lag blocks.

A store chain's weekly sales depend on the store's city (24 cities, each a
small effect), on the price, and on last weeks' footfall, kept as seven lag
columns. Beside them: an unrelated promotion code (30 levels) and seven lags
of an unrelated index. The cities are one-hot encoded inside the pipeline,
so the selector scores the ``city`` column as the sum of its 24 dummies; the
lags are grouped with ``feature_groups``, so each block is kept or dropped
as one, with one test.
"""

import numpy as np
import pandas as pd
import xgboost as xgb
from sklearn.compose import make_column_transformer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

from skl_treeinner import TreeInnerSelector

rng = np.random.default_rng(0)
n = 2000
city = rng.integers(24, size=n)
promo = rng.integers(30, size=n)


def lags(phi=0.7, width=7):
    """Each row's last ``width`` weeks of a persistent series (rows independent)."""
    out = np.empty((n, width))
    out[:, 0] = rng.standard_normal(n)
    for k in range(1, width):
        out[:, k] = phi * out[:, k - 1] + np.sqrt(1 - phi**2) * rng.standard_normal(n)
    return out


footfall, index = lags(), lags()
X = pd.DataFrame(
    {
        "city": pd.Categorical([f"city_{c}" for c in city]),
        "promo_code": pd.Categorical([f"code_{c}" for c in promo]),
        "price": rng.uniform(5, 15, size=n),
    }
)
for k in range(7):
    X[f"footfall_lag{k + 1}"] = footfall[:, k]
    X[f"index_lag{k + 1}"] = index[:, k]
city_effect = np.linspace(-0.5, 0.5, 24)[rng.permutation(24)]
y = (
    city_effect[city]
    - 0.05 * X["price"].to_numpy()
    + 0.12 * footfall.sum(axis=1) / np.sqrt(7)
    + rng.normal(size=n)
)

encode = make_column_transformer(
    (OneHotEncoder(handle_unknown="ignore"), ["city", "promo_code"]),
    remainder="passthrough",
)
booster = xgb.XGBRegressor(
    n_estimators=400, learning_rate=0.02, max_depth=4, colsample_bytree=0.5
)
groups = {
    "footfall lags": [f"footfall_lag{k}" for k in range(1, 8)],
    "index lags": [f"index_lag{k}" for k in range(1, 8)],
}

# Column by column: one score per input column (the cities' 24 dummies added).
columns = TreeInnerSelector(make_pipeline(encode, booster), random_state=0)
columns.fit(X, y)
print("column by column, kept:", list(columns.get_feature_names_out()))

# The lag blocks as groups: one test each, kept or dropped whole.
grouped = TreeInnerSelector(
    make_pipeline(encode, booster), feature_groups=groups, random_state=0
)
grouped.fit(X, y)
print(f"\n{'group':<15} {'columns':>7} {'score':>9} {'p-value':>9}  kept")
support = grouped.get_support()
for g, (name, members) in enumerate(grouped.groups_.items()):
    print(
        f"{name:<15} {len(members):>7} {grouped.group_scores_[g]:>9.1f} "
        f"{grouped.group_pvalues_[g]:>9.2g}  {'yes' if support[members[0]] else '-'}"
    )
print("\nwith groups, kept:", list(grouped.get_feature_names_out()))
