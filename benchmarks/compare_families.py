"""Families of columns in ``compare_selectors.py`` (issue 29), and its heatmaps.

Family data sets (``family-*``): :func:`skl_treeinner.datasets.
make_feature_families` with 1,500 rows (1,000 for the selectors), two
relevant and two irrelevant families whose members are weak alone:
12-level one-hot blocks (effect 0.3), blocks of 8 correlated lags (0.3),
a column with three engineered twins (0.25), and the null's 15 families of
2 to 50 columns (y independent of X). Every selector runs on them; a family
counts as *found* when the selector keeps any of its members, and an
irrelevant family as *picked* likewise, so per-column selectors are judged
generously.

Selectors that need the families (run on ``family-*`` data only):

- ``treeinner-groups``: ``TreeInnerSelector(feature_groups=families)`` with
  the package's defaults (the group test, ``control`` over the families);
- ``treeinner-any-member``: the same fit, a family kept whole when any
  member's own p-value is below 0.05 (the rule users apply by hand);
- ``mlxtend-sfs``: mlxtend's ``SequentialFeatureSelector`` with
  ``feature_groups`` (forward, ``k_features="best"``, 3 folds, R² or log
  loss), the only peer that takes groups; no test.
"""

from __future__ import annotations

import time

import numpy as np

from skl_treeinner import TreeInnerSelector
from skl_treeinner.datasets import make_feature_families

__all__ = [
    "FAMILY_DATASETS",
    "clear_fits",
    "GROUP_SELECTORS",
    "family_datasets",
    "family_metrics",
    "family_tables",
    "heatmaps",
]

#: name: keyword arguments of make_feature_families.
FAMILY_DATASETS = {
    "family-onehot": {"kind": "onehot", "effect": 0.3},
    "family-lags": {"kind": "lags", "effect": 0.3},
    "family-twins": {"kind": "twins", "effect": 0.25},
    "family-null": {"kind": "null"},
}
#: Rows of a family data set (two thirds go to the selectors).
N_FAMILY = 1500

#: The fit of the current cell that the group selectors share.
_GROUP_FITS: dict = {}


def family_datasets(smoke):
    """Name -> callable(seed) returning (X, y, relevant, feature_groups)."""
    n = 600 if smoke else N_FAMILY
    return {
        name: lambda seed, kw=kw: make_feature_families(
            n_samples=n, random_state=seed, **kw
        )
        for name, kw in FAMILY_DATASETS.items()
    }


def family_metrics(groups, relevant, support):
    """Share of relevant families found and of irrelevant families picked."""
    support = np.asarray(support, dtype=bool)
    found, picked = [], []
    for cols in groups.values():
        kept = bool(support[cols].any())
        (found if relevant[cols[0]] else picked).append(kept)
    return {
        "fam_found": float(np.mean(found)) if found else np.nan,
        "fam_false": float(np.mean(picked)) if picked else np.nan,
    }


def clear_fits():
    """Forget the cell's fit (call at the start of every cell).

    A function of this module, so that joblib's workers clear this module's
    cache and not a pickled copy of it.
    """
    _GROUP_FITS.clear()


def _group_fit(X, y, booster, seed, groups):
    if not _GROUP_FITS:
        start = time.perf_counter()
        sel = TreeInnerSelector(booster, feature_groups=groups, random_state=seed)
        sel.set_params(n_jobs=1).fit(X, y)
        _GROUP_FITS["fit"] = (sel, time.perf_counter() - start)
    return _GROUP_FITS["fit"]


def _treeinner_groups(X, y, c, seed, smoke, groups, booster):
    sel, seconds = _group_fit(X, y, booster, seed, groups)
    return sel.get_support(), sel.scores_, seconds


def _treeinner_any_member(X, y, c, seed, smoke, groups, booster):
    sel, seconds = _group_fit(X, y, booster, seed, groups)
    support = np.zeros(X.shape[1], dtype=bool)
    for cols in sel.groups_.values():
        support[cols] = bool((sel.pvalues_[cols] < 0.05).any())
    return support, sel.scores_, seconds


def _mlxtend_sfs(X, y, c, seed, smoke, groups, booster):
    from mlxtend.feature_selection import SequentialFeatureSelector

    families = [list(cols) for cols in groups.values()]
    sfs = SequentialFeatureSelector(
        booster,
        k_features="best",
        forward=True,
        scoring="neg_log_loss" if c else "r2",
        cv=3,
        feature_groups=families,
        n_jobs=1,
    ).fit(X, y)
    support = np.zeros(X.shape[1], dtype=bool)
    support[list(sfs.k_feature_idx_)] = True
    return support, None


#: name -> function(X, y, c, seed, smoke, groups, booster) -> (support, scores, ...)
GROUP_SELECTORS = {
    "treeinner-groups": _treeinner_groups,
    "treeinner-any-member": _treeinner_any_member,
    "mlxtend-sfs": _mlxtend_sfs,
}


def family_tables(summary, selectors):
    """Markdown: per family data set, families found and picked by each selector."""
    fam = summary[summary["dataset"].str.startswith("family-")]
    if fam.empty or "fam_found" not in fam:
        return []
    order = {s: i for i, s in enumerate(selectors)}
    lines = [
        "### Families (`family-*`): one decision per family",
        "",
        "A family is found when the selector keeps any of its members, and an "
        "irrelevant one picked likewise (per-column selectors are judged "
        "generously). `family-null` has no relevant family.",
        "",
        "| selector | "
        + " | ".join(
            f"{d.removeprefix('family-')}: found / picked"
            for d in dict.fromkeys(fam["dataset"])
        )
        + " | refit score (mean over family-*) | time (s) |",
        "|---|" + "---|" * (fam["dataset"].nunique() + 2),
    ]
    datasets = list(dict.fromkeys(fam["dataset"]))
    for selector, g in sorted(
        fam.groupby("selector", sort=False), key=lambda kv: order.get(kv[0], 99)
    ):
        g = g.set_index("dataset")
        cells = []
        for d in datasets:
            if d not in g.index:
                cells.append("n/a")
                continue
            found, picked = g.loc[d, "fam_found"], g.loc[d, "fam_false"]
            found = "–" if np.isnan(found) else f"{found:.2f}"
            cells.append(f"{found} / {picked:.2f}")
        lines.append(
            f"| {selector} | "
            + " | ".join(cells)
            + f" | {g['refit'].mean():.3f} | {g['time'].mean():.1f} |"
        )
    lines.append("")
    return lines


def _heatmap(ax, matrix, rows, cols, *, fmt, higher_is_better=True, log=False):
    """One selector x data set panel: colour by rank within each data set."""
    shade = np.full(matrix.shape, np.nan)
    for j in range(matrix.shape[1]):
        column = matrix[:, j]
        ok = np.isfinite(column)
        if ok.sum() < 2:
            continue
        values = np.log(column[ok]) if log else column[ok]
        low, high = values.min(), values.max()
        scaled = (values - low) / (high - low) if high > low else np.full(ok.sum(), 0.5)
        shade[ok, j] = scaled if higher_is_better else 1.0 - scaled
    masked = np.ma.masked_invalid(shade)
    ax.imshow(masked, cmap="RdYlGn", vmin=0, vmax=1, aspect="auto")
    ax.set_facecolor("0.9")
    for i in range(matrix.shape[0]):
        for j in range(matrix.shape[1]):
            v = matrix[i, j]
            ax.text(
                j,
                i,
                "" if not np.isfinite(v) else fmt(v),
                ha="center",
                va="center",
                fontsize=7,
            )
    ax.set_xticks(range(len(cols)), cols, rotation=35, ha="right", fontsize=7)
    ax.set_yticks(range(len(rows)), rows, fontsize=8)
    ax.tick_params(length=0)


def heatmaps(summary, img_dir, selectors, peers):
    """Write compare-<metric>.png (default and peers) and -variants.png.

    Each is a selector x data set heatmap with the numbers, coloured within
    each data set from worst (red) to best (green); ``compare-families.png``
    shows families found and irrelevant families picked.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    img_dir.mkdir(parents=True, exist_ok=True)
    present = [s for s in selectors if s in set(summary["selector"])]
    panels = {
        "": [s for s in present if s in peers],
        "-variants": ["treeinner"]
        + [s for s in present if s not in peers and s != "treeinner"],
    }
    datasets = list(dict.fromkeys(summary["dataset"]))
    specs = [
        ("f1", "F1 of the selected set (null cases: n/a)", True, False, "{:.2f}"),
        (
            "refit",
            "held-out score of the refit booster (R² or ROC AUC)",
            True,
            False,
            "{:.2f}",
        ),
        ("auc", "ROC AUC of the scores against the truth", True, False, "{:.2f}"),
        (
            "time_ratio",
            "wall time / TreeInnerSelector's default",
            False,
            True,
            "{:.2g}",
        ),
    ]
    paths = []
    for col, title, better, log, fmt in specs:
        for suffix, rows in panels.items():
            if len(rows) < 2 and suffix:
                continue
            table = summary.pivot_table(index="selector", columns="dataset", values=col)
            table = table.reindex(index=rows, columns=datasets)
            keep = [d for d in datasets if table[d].notna().any()]
            table = table[keep]
            fig, ax = plt.subplots(
                figsize=(max(6, 0.62 * len(keep) + 2.5), 0.36 * len(rows) + 1.6)
            )
            _heatmap(
                ax,
                table.to_numpy(dtype=float),
                rows,
                keep,
                fmt=fmt.format,
                higher_is_better=better,
                log=log,
            )
            which = "the default beside its peers" if not suffix else "variants"
            ax.set_title(f"{title}: {which}", fontsize=9)
            fig.tight_layout()
            path = img_dir / f"compare-{col.replace('_', '-')}{suffix}.png"
            fig.savefig(path, dpi=110)
            plt.close(fig)
            paths.append(path)
    fam = summary[summary["dataset"].str.startswith("family-")]
    if not fam.empty and "fam_found" in fam:
        rows = [s for s in present if s in set(fam["selector"])]
        fam_sets = list(dict.fromkeys(fam["dataset"]))
        fig, axes = plt.subplots(
            1,
            2,
            figsize=(2 * max(3.5, 0.8 * len(fam_sets) + 2.2), 0.36 * len(rows) + 1.8),
        )
        for ax, (col, title, better) in zip(
            axes,
            [
                ("fam_found", "relevant families found", True),
                ("fam_false", "irrelevant families picked", False),
            ],
            strict=True,
        ):
            table = fam.pivot_table(index="selector", columns="dataset", values=col)
            table = table.reindex(index=rows, columns=fam_sets)
            table = table[[d for d in fam_sets if table[d].notna().any()]]
            _heatmap(
                ax,
                table.to_numpy(dtype=float),
                rows,
                [d.removeprefix("family-") for d in table.columns],
                fmt="{:.2f}".format,
                higher_is_better=better,
            )
            ax.set_title(title, fontsize=9)
        fig.tight_layout()
        path = img_dir / "compare-families.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths
