"""What the exact mean over held-out values would cost and buy (issue 53's lead).

The test of a column compares each held-out row's term with its mean over 3
draws of the column's value from other held-out rows. Its exact mean over all
n held-out values needs no draws: a row's term is piecewise constant in the
value, with breakpoints at the column's thresholds in the subtrees below the
first node of each of the row's paths that tests it (the margin the earlier
trees leave moves the later gradients, so the pieces are those of the union
over the row's trees). This measures, for the default booster's held-out rows
at 20,000 x 50:

- **cost**: the number of such pieces ("cells") per (row, column), and the
  walks the exact mean needs (cells times the row's trees of the column)
  against 3 draws' (3 times them), for the exact mean everywhere and for a
  hybrid that takes it only where a (row, column) has at most ``cap`` cells
  and draws elsewhere; the cells are found by a walk that is not counted;
- **what it buys**: the test's standard errors and t statistics with 1, 3, 10
  and 30 draws on a regression with 10 graded linear effects (30 draws stand
  in for the exact mean). For stability and the columns kept, run
  ``stability.py --draws 30``.

Usage::

    python benchmarks/exact_mean.py [--booster cheap|default] [--rows-counted 2000]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from numba import njit

sys.path.insert(0, str(Path(__file__).resolve().parent))

import where_time_goes  # noqa: E402

from skl_treeinner import TreeInnerSelector  # noqa: E402
from skl_treeinner._kernels._backend import backend_for  # noqa: E402
from skl_treeinner._kernels._structures import kernel_rows  # noqa: E402
from skl_treeinner._readers import default_estimator  # noqa: E402
from skl_treeinner._scoring import _permutation  # noqa: E402

#: The most cells the histogram tells apart (more are counted there).
TOP = 200


@njit(cache=False)
def _first_nodes(rows, i, offsets, left, right, feature, thr, n_cols, firsts, count):
    """Fill ``firsts[j, :count[j]]``: where each tree's path for row i first tests j."""
    count[:] = 0
    done = np.zeros(n_cols, np.bool_)
    for t in range(offsets.shape[0] - 1):
        done[:] = False
        node = offsets[t]
        while left[node] >= 0:
            j = feature[node]
            if not done[j]:
                done[j] = True
                firsts[j, count[j]] = node
                count[j] += 1
            node = left[node] if rows[i, j] < thr[node] else right[node]


@njit(cache=False)
def _cells(rows, offsets, left, right, feature, thr, n_cols):
    """Per (row, column): cells, and the (row, column, tree) walks, by cells."""
    firsts = np.empty((n_cols, offsets.shape[0]), np.int64)
    count = np.zeros(n_cols, np.int64)
    stack = np.empty(left.shape[0] + 1, np.int64)
    seen = np.empty(left.shape[0] + 1)
    pairs_by_cells = np.zeros(TOP, np.int64)
    units_by_cells = np.zeros(TOP, np.int64)
    for i in range(rows.shape[0]):
        _first_nodes(rows, i, offsets, left, right, feature, thr, n_cols, firsts, count)
        for j in range(n_cols):
            if count[j] == 0:
                continue
            ns = 0
            for q in range(count[j]):
                top = 0
                stack[0] = firsts[j, q]
                while top >= 0:  # the subtree, both ways at j's nodes only
                    node = stack[top]
                    top -= 1
                    if left[node] < 0:
                        continue
                    if feature[node] == j:
                        seen[ns] = thr[node]
                        ns += 1
                        stack[top + 1] = left[node]
                        stack[top + 2] = right[node]
                        top += 2
                    else:
                        f = feature[node]
                        nxt = left[node] if rows[i, f] < thr[node] else right[node]
                        stack[top + 1] = nxt
                        top += 1
            cells = min(np.unique(seen[:ns]).shape[0] + 1, TOP - 1)
            units_by_cells[cells] += 1
            pairs_by_cells[cells] += count[j]
    return units_by_cells, pairs_by_cells


def _held_out_model(booster, X, y):
    """The selector's last held-out model and rows (its reader and rows)."""
    seen = []
    original = _permutation.resampled_terms

    def keep(*args, **kwargs):
        seen.append(args[:2])
        return original(*args, **kwargs)

    _permutation.resampled_terms = keep
    try:
        TreeInnerSelector(booster, cv=5, random_state=0).fit(X, y)
    finally:
        _permutation.resampled_terms = original
    return seen[-1]


def cost(args):
    """Print the cells' histogram and the exact mean's walks against 3 draws'."""
    X, y = where_time_goes._data(20000, 50, "regression")
    booster = default_estimator(False, 0, n_rows=X.shape[0])
    if args.booster == "cheap":
        booster.set_params(n_estimators=100, learning_rate=0.04)
    reader, rows = _held_out_model(booster, X, y)
    trees, rule = (
        backend_for(reader).cpu.arrays.trees,
        backend_for(reader).cpu.arrays.rule,
    )
    assert rule.strict  # XGBoost's x < threshold, as _cells walks
    rows = kernel_rows(reader.treeshap_rows(rows))[: args.rows_counted]
    units, pairs = _cells(
        rows, trees.offsets, trees.left, trees.right, trees.feature, rule.threshold,
        X.shape[1],
    )  # fmt: skip
    cells = np.arange(TOP)
    print(
        f"{args.booster} booster ({reader.ensemble.n_trees} trees), "
        f"{rows.shape[0]} held-out rows: {pairs.sum() / rows.shape[0]:.0f} "
        "(column, tree) pairs per row"
    )
    print()
    print("| cells per (row, column) | 2 | 3 | 4 | 5–8 | 9–20 | over 20 |")
    print("|---|---|---|---|---|---|---|")
    share = units / units.sum()
    bins = [(2, 2), (3, 3), (4, 4), (5, 8), (9, 20), (21, TOP)]
    print(
        "| share of (row, column) | "
        + " | ".join(f"{share[a : b + 1].sum():.3f}" for a, b in bins)
        + " |"
    )
    print()
    print("| exact mean where cells ≤ | walks / 3 draws' | (row, column) exact |")
    print("|---|---|---|")
    for cap in (2, 4, 8, 16, TOP):
        small = cells <= cap
        walks = (pairs[small] * cells[small]).sum() + 3 * pairs[~small].sum()
        name = "everywhere" if cap == TOP else str(cap)
        print(
            f"| {name} | {walks / (3 * pairs.sum()):.2f} | {share[small].sum():.3f} |"
        )


def buys():
    """Print the test's standard errors and t at 1, 3, 10 and 30 draws."""
    rng = np.random.default_rng(1)
    n, p = 4000, 30
    X = rng.normal(size=(n, p))
    beta = np.r_[np.linspace(0.4, 0.05, 10), np.zeros(p - 10)]
    y = X @ beta + 0.3 * X[:, 0] * X[:, 1] + rng.normal(size=n)
    saved = _permutation.DRAWS
    fitted = {}
    try:
        for draws in (1, 3, 10, 30):
            _permutation.DRAWS = draws
            fitted[draws] = TreeInnerSelector(cv=5, random_state=0).fit(X, y)
    finally:
        _permutation.DRAWS = saved
    print()
    print(
        "| draws | s.e. / 3 draws' (median: 10 effects; 20 noise columns) "
        "| t of the 10 effects | kept |"
    )
    print("|---|---|---|---|")
    for draws, sel in fitted.items():
        ratio = sel.scores_se_ / fitted[3].scores_se_
        t = (sel.scores_ - sel.null_scores_) / sel.scores_se_
        print(
            f"| {draws} | {np.median(ratio[:10]):.3f}; {np.median(ratio[10:]):.3f} "
            f"| {' '.join(f'{v:.1f}' for v in t[:10])} | {sel.support_.sum()} |"
        )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--booster", choices=["cheap", "default"], default="default",
        help="cheap: 100 trees at 0.04 (the repeats' booster)",
    )  # fmt: skip
    parser.add_argument("--rows-counted", type=int, default=2000)
    args = parser.parse_args(argv)
    cost(args)
    buys()


if __name__ == "__main__":
    main()
