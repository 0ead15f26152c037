"""A one-hot encoded noise categorical with rare levels: the column or the model?

The data (``make_rare_levels``): four numeric columns (``x0`` and ``x1``
move y), the dummies of a 50-level categorical that moves y, and the
dummies of a 50-level categorical that does not; both have a few common and
many rare levels. A split on a rare noise dummy isolates a few training rows
with outlying residuals, which helps an underfit booster on new rows
whichever column made the split.

1. ``test="model"`` asks whether the fitted model's use of a column helps
   on new rows: it keeps noise dummies.
2. ``test="column"`` (the default) asks whether the column tells anything
   about y: each held-out row's term against the same model's term with the
   column's value drawn from other held-out rows. It keeps none of them.

Run: python examples/rare_levels.py
"""

import numpy as np

from skl_treeinner import TreeInnerSelector
from skl_treeinner.datasets import make_rare_levels

X, y, relevant, noise = make_rare_levels(3000, random_state=0)
dummies = relevant.copy()
dummies[:4] = False
print(
    f"{X.shape[1]} columns: 4 numeric, {dummies.sum()} dummies of the relevant "
    f"categorical, {noise.sum()} of the noise one\n"
)
for test in ("model", "column"):
    selector = TreeInnerSelector(test=test, random_state=0).fit(X, y)
    kept = selector.get_support()
    p = selector.pvalues_
    print(
        f'test="{test}": kept {int((kept & dummies).sum())} relevant dummies and '
        f"{int((kept & noise).sum())} noise dummies; smallest noise p-value "
        f"{p[noise].min():.2g}"
    )
    if test == "column":
        j = int(np.argmax(np.where(noise, selector.scores_, -np.inf)))
        print(
            f"  the best-scoring noise dummy (column {j}): score "
            f"{selector.scores_[j]:.4g}, resampled {selector.null_scores_[j]:.4g}, "
            f"p = {p[j]:.2g}"
        )
