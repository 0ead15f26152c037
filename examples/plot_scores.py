"""Plot held-out TreeInner scores, and how they build up as trees are added.

On scikit-learn's breast cancer data (30 real columns with their real names,
569 rows) with 6 injected noise columns whose names say what they are: two
shuffled copies of real columns, two Gaussian columns and two record codes:

1. ``plot_scores``: a TreeInnerSelector with the default 5 chained folds; one
   bar per feature, ± one standard error (``scores_se_``), the resampled score
   the test of the column compares with (black ticks), the threshold (0), the
   selected features in color and, right of the axes, each feature's p-value
   adjusted as the selector's ``control`` asks.
2. ``plot_score_path``: one XGBoost model fitted on half of the rows and scored
   on the other half, iteration by iteration: the 6 columns of highest and the
   3 of lowest final score (the paper's Figure 3, for one model).
3. ``plot_scores`` of a selector fitted with ``feature_groups``: one bar per
   measurement (its mean, standard error and worst value together), and one
   for the noise columns.

Run: python examples/plot_scores.py [OUTPUT_DIR]
(default: a new temporary directory). The pictures in docs/plots.md come from
``python examples/plot_scores.py docs/img``.
"""

import sys
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import xgboost as xgb  # noqa: E402
from sklearn.datasets import load_breast_cancer  # noqa: E402
from sklearn.utils import shuffle  # noqa: E402

from skl_treeinner import TreeInnerSelector, tree_inner  # noqa: E402
from skl_treeinner.plotting import plot_score_path, plot_scores  # noqa: E402

out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp())
out.mkdir(parents=True, exist_ok=True)

X, y = load_breast_cancer(return_X_y=True, as_frame=True)
X, y = shuffle(X, y, random_state=0)  # the file's rows come sorted by class
rng = np.random.default_rng(0)
noise = {
    "shuffled worst radius (noise)": rng.permutation(X["worst radius"].to_numpy()),
    "shuffled mean texture (noise)": rng.permutation(X["mean texture"].to_numpy()),
    "gaussian noise 1": rng.normal(size=len(X)),
    "gaussian noise 2": rng.normal(size=len(X)),
    "record code (200 levels, noise)": rng.integers(0, 200, size=len(X)),
    "clinic code (12 levels, noise)": rng.integers(0, 12, size=len(X)),
}
X = X.assign(**noise)


def booster():
    return xgb.XGBClassifier(
        n_estimators=100, learning_rate=0.1, max_depth=3, n_jobs=1, random_state=0
    )


# 1. Held-out scores of a selector, summed over the chained folds.
selector = TreeInnerSelector(booster(), random_state=0).fit(X, y)
ax = plot_scores(selector, pvalues=True)
ax.figure.savefig(out / "plot-scores.png", dpi=100, bbox_inches="tight")
kept = selector.get_feature_names_out()
print(f"selected {kept.size} of {X.shape[1]} columns, noise among them:")
print(f"  {[name for name in kept if name in noise]}")

# 2. Score paths of one model on its held-out half.
half = X.shape[0] // 2
model = booster().fit(X.iloc[:half], y.iloc[:half])
final = tree_inner(model, X.iloc[half:], y.iloc[half:])
order = np.argsort(-final)
shown = [*order[:6], *order[-3:]]  # the 6 highest and the 3 lowest final scores
ax = plot_score_path(model, X.iloc[half:], y.iloc[half:], features=shown)
ax.figure.savefig(out / "plot-score-path.png", dpi=100, bbox_inches="tight")
print(f"columns ending lowest on the held-out half: {X.columns[order[-3:]].tolist()}")

# 3. Feature groups: one bar per measurement, one for the noise.
measures = [name.removeprefix("mean ") for name in X if name.startswith("mean ")]
groups = {
    measure: [f"mean {measure}", f"{measure} error", f"worst {measure}"]
    for measure in measures
}
groups["noise columns"] = list(noise)
grouped = TreeInnerSelector(booster(), feature_groups=groups, random_state=0)
grouped.fit(X, y)
ax = plot_scores(grouped, pvalues=True)
ax.figure.savefig(out / "plot-scores-groups.png", dpi=100, bbox_inches="tight")
print(
    f"kept groups: {[g for g, c in grouped.groups_.items() if grouped.support_[c[0]]]}"
)
print("wrote plot-scores.png, plot-score-path.png and plot-scores-groups.png")
