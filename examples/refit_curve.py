"""How many features does a model need: the refit curve, "best" and "1se".

scikit-learn's breast cancer data (30 real columns, binary target) with 10
injected noise columns. ``TreeInnerSelector(max_features="1se")`` ranks the
features on each split's training rows alone, refits the booster on the top
k for every k of a grid, scores each refit on the split's held-out rows (the
default for classifiers: minus the log loss), and keeps the k best of the
features its test keeps, k the fewest whose mean score is within one
standard error of the best. ``set_params(max_features="best")`` re-reads the
same curve: no refit.

Run: python examples/refit_curve.py [OUTPUT_DIR]
(writes refit-curve.png there; the picture in docs/plots.md comes from
``python examples/refit_curve.py docs/img``).
"""

import sys
from pathlib import Path

import numpy as np
import xgboost as xgb
from sklearn.datasets import load_breast_cancer
from sklearn.utils import shuffle

from skl_treeinner import TreeInnerSelector

X, y = load_breast_cancer(return_X_y=True, as_frame=True)
X, y = shuffle(X, y, random_state=0)  # the file's rows come sorted by class
rng = np.random.default_rng(0)
for i in range(10):
    X[f"noise_{i}"] = rng.normal(size=len(X))

booster = xgb.XGBClassifier(n_estimators=100, learning_rate=0.1, max_depth=3)
selector = TreeInnerSelector(booster, cv=3, max_features="1se", random_state=0)
selector.fit(X, y)

results = selector.cv_results_
print(" k  mean -log loss  std over 3 splits")
for k, mean, std in zip(
    results["n_features"],
    results["mean_test_score"],
    results["std_test_score"],
    strict=True,
):
    print(f"{k:>2}  {mean:.4f}         {std:.4f}")

for rule in ("1se", "best"):
    selector.set_params(max_features=rule)  # the same curve, no refit
    kept = selector.get_feature_names_out()
    noise = sum(name.startswith("noise") for name in kept)
    print(f'\nmax_features="{rule}": {selector.n_features_} features, {noise} noise')
    print("  " + ", ".join(kept))

if len(sys.argv) > 1:
    import matplotlib

    matplotlib.use("Agg")
    from skl_treeinner.plotting import plot_refit_curve

    ax = plot_refit_curve(selector)
    ax.set_title("breast cancer + 10 noise columns: refit curve")
    path = Path(sys.argv[1]) / "refit-curve.png"
    ax.figure.savefig(path, dpi=120, bbox_inches="tight")
    print(f"\nwrote {path}")
