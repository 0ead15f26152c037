"""Measure how exactly the identities hold, against XGBoost's own numbers.

For every supported objective and tree method: the largest deviation of
in-sample TreeInner from total gain (Prop. 3, l1-normalised) and of
PreDecomp + bias from the raw margin (Prop. 1). Tests assert the bounds;
this prints the measured values.

    python benchmarks/identities.py
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from conftest import OBJECTIVES, fit, l1, make_data, margin, total_gain  # noqa: E402

from skl_treeinner import predecomp, tree_inner  # noqa: E402


def main():
    X, y = make_data(n=600, nan_frac=0.1, seed=1)
    y = np.nan_to_num(y)
    worst3 = worst1 = 0.0
    print(f"{'objective':<24}{'method':<8}{'Prop. 3 (l1)':>14}{'Prop. 1':>12}")
    for objective in sorted(OBJECTIVES):
        for method in ("exact", "hist", "approx"):
            model, target = fit(
                objective, X, y, tree_method=method, n_estimators=50, max_depth=5
            )
            gain = total_gain(model, X.shape[1])
            d3 = np.abs(l1(tree_inner(model, X, target)) - l1(gain)).max()
            values, bias = predecomp(model, X, return_bias=True)
            d1 = np.abs(values.sum(axis=1) + bias - margin(model, X)).max()
            worst3, worst1 = max(worst3, d3), max(worst1, d1)
            print(f"{objective:<24}{method:<8}{d3:>14.1e}{d1:>12.1e}")
    print(f"worst: Prop. 3 {worst3:.1e} (bound 1e-6), Prop. 1 {worst1:.1e} (1e-5)")


if __name__ == "__main__":
    main()
