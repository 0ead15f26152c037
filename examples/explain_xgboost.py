"""Explain an XGBoost classifier with PreDecomp and TreeInner.

Fits a binary classifier on half of scikit-learn's breast-cancer data plus
some appended noise columns, then:

1. PreDecomp: per-row attributions on the log-odds scale that add up exactly to
   the model's margin (local accuracy, Prop. 1).
2. TreeInner on the training rows reproduces the booster's total gain
   (Prop. 3) and so inherits its optimism about the noise columns.
3. TreeInner on the held-out rows: the noise columns drop to about zero or
   below, the real features stay positive.

Run: python examples/explain_xgboost.py
"""

import numpy as np
import xgboost as xgb
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split

from skl_treeinner import predecomp, tree_inner

data = load_breast_cancer()
rng = np.random.default_rng(0)
noise = rng.integers(0, 1000, size=(len(data.target), 5)).astype(float)
X = np.hstack([data.data, noise])
names = list(data.feature_names) + [f"noise_{i}" for i in range(5)]
X_train, X_test, y_train, y_test = train_test_split(
    X, data.target, test_size=0.5, stratify=data.target, random_state=0
)

model = xgb.XGBClassifier(
    n_estimators=300, learning_rate=0.05, max_depth=4, n_jobs=1, random_state=0
).fit(X_train, y_train)

# 1. PreDecomp of the first test row
values, bias = predecomp(model, X_test, return_bias=True)
margin = model.predict(X_test, output_margin=True)
print(
    f"row 0: bias {bias:+.3f} + sum of attributions {values[0].sum():+.3f} "
    f"= {bias + values[0].sum():+.4f}; model margin {margin[0]:+.4f}"
)
print("largest attributions of row 0:")
for j in np.argsort(-np.abs(values[0]))[:3]:
    print(f"  {names[j]:<24} {values[0, j]:+.3f}")
assert np.allclose(values.sum(axis=1) + bias, margin, atol=1e-5)

# 2. In-sample TreeInner = total gain
in_sample = tree_inner(model, X_train, y_train)
gain = model.get_booster().get_score(importance_type="total_gain")
gain = np.array([gain.get(f"f{j}", 0.0) for j in range(X.shape[1])])
print(
    f"\nmax |in-sample TreeInner - total gain| / max gain: "
    f"{np.abs(in_sample - gain).max() / gain.max():.1e}"
)

# 3. Held-out TreeInner
held_out = tree_inner(model, X_test, y_test)
print(f"\n{'feature':<24} {'total gain':>11} {'held-out TreeInner':>19}")
for j in np.argsort(-held_out)[:5]:
    print(f"{names[j]:<24} {gain[j]:>11.2f} {held_out[j]:>19.2f}")
print("...")
for j in range(X.shape[1] - 5, X.shape[1]):
    print(f"{names[j]:<24} {gain[j]:>11.2f} {held_out[j]:>19.2f}")
