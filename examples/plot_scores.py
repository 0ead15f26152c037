"""Plot held-out TreeInner scores, and how they build up as trees are added.

On the paper's simulated classification data (50 features, 5 relevant):

1. ``plot_scores``: a TreeInnerSelector with 3 chained folds; one bar per
   feature (the 20 best), ± one standard error (``scores_se_``), the
   threshold (0), the selected features (the default: p < min(0.05, 1/50)) in
   color and, beside each bar, its p-value adjusted as the selector's
   ``control`` asks.
2. ``plot_score_path``: one XGBoost model fitted on half of the rows and scored
   on the other half, iteration by iteration. The relevant features (marked
   ``*``) climb; the noise features the model splits on drift below zero as
   trees are added (the paper's Figure 3, for one model).
3. ``plot_scores`` of a selector fitted with ``feature_groups``: one bar per
   group (``make_feature_families("lags")``: two relevant and three irrelevant
   blocks of 8 lags).

Run: python examples/plot_scores.py [OUTPUT_DIR]
(default: a new temporary directory). The pictures in docs/plots.md come from
``python examples/plot_scores.py docs/img``.
"""

import sys
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import xgboost as xgb  # noqa: E402

from skl_treeinner import TreeInnerSelector, tree_inner  # noqa: E402
from skl_treeinner.datasets import (  # noqa: E402
    make_feature_families,
    make_paper_simulation,
)
from skl_treeinner.plotting import plot_score_path, plot_scores  # noqa: E402

out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp())
out.mkdir(parents=True, exist_ok=True)

X, y, relevant = make_paper_simulation("classification", random_state=0)


def booster():
    return xgb.XGBClassifier(
        n_estimators=150, learning_rate=0.05, max_depth=4, n_jobs=1, random_state=0
    )


# 1. Held-out scores of a selector, summed over 3 chained folds (2 splits).
selector = TreeInnerSelector(booster(), cv=3, random_state=0).fit(X, y)
_, ax = plt.subplots(figsize=(12, 6.5), layout="constrained")
ax = plot_scores(selector, top=20, pvalues=True, ax=ax)
ax.figure.savefig(out / "plot-scores.png", dpi=100, bbox_inches="tight")
kept = np.flatnonzero(selector.support_)
print(f"selected {kept.size} features: {kept.tolist()}")
print(f"relevant features: {np.flatnonzero(relevant).tolist()}")

# 2. Score paths of one model on its held-out half: the relevant features and
#    the four noise features with the lowest final score.
half = X.shape[0] // 2
model = booster().fit(X[:half], y[:half])
final = tree_inner(model, X[half:], y[half:])
noise = np.flatnonzero(~relevant)
lowest_noise = noise[np.argsort(final[noise])[:4]]
names = [f"x{j} *" if relevant[j] else f"x{j}" for j in range(X.shape[1])]
ax = plot_score_path(
    model,
    X[half:],
    y[half:],
    features=[*np.flatnonzero(relevant), *lowest_noise],
    feature_names=names,
)
ax.figure.savefig(out / "plot-score-path.png", dpi=100, bbox_inches="tight")
print(f"noise features ending lowest: {lowest_noise.tolist()}")

# 3. Feature groups: one bar per block of lags.
X, y, relevant, groups = make_feature_families(
    "lags", n_relevant=2, n_irrelevant=3, random_state=0
)
grouped = TreeInnerSelector(
    xgb.XGBRegressor(n_estimators=300, learning_rate=0.02, max_depth=3, n_jobs=1),
    feature_groups=groups,
    random_state=0,
).fit(X, y)
ax = plot_scores(grouped, pvalues=True)
ax.figure.savefig(out / "plot-scores-groups.png", dpi=100, bbox_inches="tight")
print(
    f"kept groups: {[g for g, c in grouped.groups_.items() if grouped.support_[c[0]]]}"
)
print(f"wrote plot-scores.png, plot-score-path.png and plot-scores-groups.png to {out}")
