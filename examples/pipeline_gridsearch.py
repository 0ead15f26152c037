"""TreeInnerSelector inside a Pipeline, tuned with GridSearchCV.

The selector is an ordinary scikit-learn transformer: put it in front of any
model and tune its parameters like any other step. Here a logistic regression
is fitted on the features the selector keeps, on generated data with 4
informative features and 56 pure-noise ones.

GridSearchCV compares no selection at all (``"passthrough"``) with the
selector under two rules (the default ``alpha=0.05``: keep the features whose
test finds that they tell something about y, at p < min(0.05, 1/60) here; and
``alpha=None``: keep every feature that scores above its resampled self) and an
optional cap ``max_features=5``. Every candidate is refitted on each of
GridSearchCV's training folds, so the selector never sees the fold it is
evaluated on: the search estimates the whole procedure, selection included.

GridSearchCV clones the pipeline per candidate, so a setting the selector
could change on a fitted selector for free (``set_params`` of ``alpha``,
``threshold``, ``max_features``) would cost one selection per candidate and
fold. ``memory`` (a folder, as ``Pipeline(memory=...)``) keeps each fold's
selection and gives it to the fold's other candidates: the selector's 5
chained folds fit the booster 4 times, so 3 folds plus the refit on all rows
make 16 booster fits instead of 52 (4 candidates x 3 folds + 1). It needs an
int ``random_state``, so that the candidates' selections are the same one.

Run: python examples/pipeline_gridsearch.py
"""

import tempfile

import numpy as np
import pandas as pd
import xgboost as xgb
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import Pipeline

from skl_treeinner import TreeInnerSelector

# 4 informative features (columns 0-3: shuffle=False) and 56 pure-noise ones
X, y = make_classification(
    n_samples=600,
    n_features=60,
    n_informative=4,
    n_redundant=0,
    flip_y=0.05,
    shuffle=False,
    random_state=0,
)
# shuffle=False also leaves the rows sorted by class: put them in random order,
# as a real sample comes (the selector warns of rows that look ordered, since its
# folds would then hold out rows between their neighbours)
rows = np.random.default_rng(0).permutation(len(y))
X, y = X[rows], y[rows]
relevant = np.arange(X.shape[1]) < 4

booster = xgb.XGBClassifier(
    n_estimators=50, learning_rate=0.2, max_depth=3, n_jobs=1, random_state=0
)
cache = tempfile.TemporaryDirectory()  # the selections, shared by the candidates
selector = TreeInnerSelector(booster, random_state=0, memory=cache.name)
pipe = Pipeline([("select", selector), ("model", LogisticRegression(max_iter=1000))])
param_grid = [
    {"select": ["passthrough"]},
    {
        "select": [selector],
        "select__alpha": [0.05, None],
        "select__max_features": [None, 5],
    },
]
search = GridSearchCV(
    pipe,
    param_grid,
    scoring="roc_auc",
    cv=StratifiedKFold(3, shuffle=True, random_state=0),
)
search.fit(X, y)

results = pd.DataFrame(search.cv_results_)
results["selection"] = [
    "none (passthrough)"
    if params["select"] == "passthrough"
    else f"alpha={params['select__alpha']}, "
    f"max_features={params['select__max_features']}"
    for params in results["params"]
]
print("ROC AUC of the logistic regression, 3-fold cross-validated:")
print(
    results.sort_values("rank_test_score")[
        ["selection", "mean_test_score", "std_test_score"]
    ].to_string(index=False, float_format="{:.3f}".format)
)

best = search.best_estimator_.named_steps["select"]
best_row = results.loc[search.best_index_, "selection"]
print(f"\nbest: {best_row}")
if best != "passthrough":
    kept = np.flatnonzero(best.get_support())
    print(f"refitted on all rows, it keeps features {kept.tolist()}")
    print(f"the relevant features are        {np.flatnonzero(relevant).tolist()}")
    print(
        f"{relevant[kept].sum()} of the {kept.size} kept are relevant; "
        f"{relevant.sum()} are relevant in all"
    )
cache.cleanup()
