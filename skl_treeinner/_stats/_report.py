"""One score table for every place that shows a selector's scores.

The command line (screen, CSV, JSON), the demo and
:func:`skl_treeinner.plotting.plot_scores` show the same numbers with one
spread convention: the **standard error of the score**, ``scores_se_``,
computed from the per-row terms of the held-out score
(``sqrt(m) · std(z_·k)`` over the ``m`` scored rows; see
:class:`~skl_treeinner.TreeInnerSelector`), beside the one-sided p-value
``pvalues_`` it gives. The spread of the split scores, ``split_sd``, is kept
in the files for those who compare splits; it is not a standard error.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["format_group_table", "format_table", "group_table", "score_table"]


def _feature_names(selector, names=None) -> list[str]:
    """``names``, else ``feature_names_in_``, else ``x0``, ``x1``, ..., as str."""
    if names is None:
        fitted = getattr(selector, "feature_names_in_", None)
        n = selector.scores_.shape[0]
        names = fitted if fitted is not None else [f"x{j}" for j in range(n)]
    return [str(n) for n in names]


def score_table(selector, names=None) -> list[dict]:
    """One dict per feature of a fitted selector, best first.

    Keys: ``rank``, ``feature``, ``column`` (its index in X), ``score``,
    ``score_se`` (its standard error, ``scores_se_``), ``pvalue``
    (``pvalues_``), ``pvalue_adjusted`` (``pvalues_adjusted_``, for the
    selector's ``control``), ``split_sd`` (the standard deviation of the split
    scores, ``None`` with one split), ``positive_splits``, ``n_splits``,
    ``selected``, ``split_scores`` (a list), ``n_repeats`` and
    ``selection_frequency`` (``selection_frequency_``: the share of the
    repeats that keep the feature on their own); with feature groups also
    ``group``, the name of the feature's group; with ``test="column"`` also
    ``null_score`` (``null_scores_``: the score with the feature resampled,
    which the test compares the score with).

    ``names`` defaults to ``feature_names_in_``, else ``x0``, ``x1``, ...
    """
    names = _feature_names(selector, names)
    split = np.asarray(selector.split_scores_, dtype=np.float64)
    n_splits = split.shape[0]
    sd = split.std(axis=0, ddof=1) if n_splits > 1 else None
    support = selector.support_
    adjusted = selector.pvalues_adjusted_
    frequency = selector.selection_frequency_
    n_repeats = selector._fitted_repeats()
    group_of = None
    if getattr(selector, "_feature_groups", None) is not None:
        group_of = {
            int(j): str(name) for name, cols in selector.groups_.items() for j in cols
        }
    rows = []
    for j in np.argsort(selector.ranking_, kind="mergesort"):
        rows.append(
            {
                "rank": int(selector.ranking_[j]),
                "feature": names[j],
                "column": int(j),
                "score": float(selector.scores_[j]),
                "score_se": float(selector.scores_se_[j]),
                "pvalue": float(selector.pvalues_[j]),
                "pvalue_adjusted": float(adjusted[j]),
                "split_sd": None if sd is None else float(sd[j]),
                "positive_splits": int((split[:, j] > 0).sum()),
                "n_splits": n_splits,
                "selected": bool(support[j]),
                "split_scores": [float(v) for v in split[:, j]],
                "n_repeats": n_repeats,
                "selection_frequency": float(frequency[j]),
            }
        )
        if group_of is not None:
            rows[-1]["group"] = group_of[int(j)]
        null = getattr(selector, "null_scores_", None)
        if null is not None:
            rows[-1]["null_score"] = float(null[j])
    return rows


def group_table(selector, names=None) -> list[dict]:
    """One dict per feature group of a selector fitted with ``feature_groups``.

    In the order of the test (the smallest group p-value first; ties by the
    larger t). Keys: ``rank``, ``group``, ``columns`` (the
    members' names), ``score`` (``group_scores_``), ``score_se``
    (``group_scores_se_``), ``pvalue`` (``group_pvalues_``, by the
    selector's ``group_test``), ``pvalue_adjusted``
    (``group_pvalues_adjusted_``) and ``selected``. ``names`` as in
    :func:`score_table`.
    """
    names = _feature_names(selector, names)
    support = selector.support_
    pvalues = selector.group_pvalues_
    adjusted = selector.group_pvalues_adjusted_
    scores = selector.group_scores_
    order = np.argsort(
        selector._unit_ranking(selector._fitted_groups()), kind="mergesort"
    )
    items = list(selector.groups_.items())
    rows = []
    for rank, g in enumerate(order, start=1):
        group, members = items[g]
        rows.append(
            {
                "rank": rank,
                "group": str(group),
                "columns": [names[j] for j in members],
                "score": float(scores[g]),
                "score_se": float(selector.group_scores_se_[g]),
                "pvalue": float(pvalues[g]),
                "pvalue_adjusted": float(adjusted[g]),
                "selected": bool(support[members[0]]),
            }
        )
    return rows


def format_group_table(rows: list[dict], *, adjusted=False) -> str:
    """Lay out :func:`group_table` rows as text, one line per group.

    Columns: rank, group, number of columns, score, s.e., p-value (and,
    with ``adjusted``, the p-value adjusted for the number of groups),
    selected.
    """
    width = max(5, *(len(row["group"]) for row in rows))
    score = number_format([row["score"] for row in rows])
    spread = number_format([row["score_se"] for row in rows])
    header = (
        f"{'rank':>4}  {'group':<{width}}  {'cols':>4}  {'score':>11}  "
        f"{'s.e.':>11}  {'p-value':>7}  "
        + (f"{'adj. p':>7}  " if adjusted else "")
        + "selected"
    )
    lines = [header]
    for row in rows:
        lines.append(
            f"{row['rank']:>4}  {row['group']:<{width}}  {len(row['columns']):>4}  "
            f"{score(row['score']):>11}  {spread(row['score_se']):>11}  "
            f"{format_pvalue(row['pvalue']):>7}  "
            + (f"{format_pvalue(row['pvalue_adjusted']):>7}  " if adjusted else "")
            + ("yes" if row["selected"] else "-")
        )
    return "\n".join(lines)


def format_pvalue(p: float) -> str:
    """Write a p-value in at most 7 characters: 0.0123, 3.1e-05, <1e-99."""
    if p >= 1e-3:
        return f"{p:.4f}"
    if p < 1e-99:
        return "<1e-99"
    return f"{p:.1e}"


def number_format(values):
    """One format for a column of numbers, so that they line up."""
    finite = [abs(v) for v in values if v is not None and math.isfinite(v)]
    largest = max(finite, default=0.0)
    if largest == 0.0:
        return lambda v: f"{v:.1f}"
    if largest >= 1e6 or largest < 1e-3:
        return lambda v: f"{v:.4e}"
    decimals = max(0, 4 - int(math.floor(math.log10(largest))))
    return lambda v: f"{v:.{decimals}f}"


def format_table(rows: list[dict], extra=(), *, adjusted=False) -> str:
    """Lay out :func:`score_table` rows as text, one line per feature.

    Columns: rank, feature, score, (with the test of a column, the
    resampled score it is compared with,) s.e., one-sided p-value (and, with
    ``adjusted``, the p-value adjusted for the number of features), in how
    many splits the score is above 0, selected (and, with several repeats,
    in how many of them alone it is kept); then ``extra``, pairs
    ``(header, values)`` with one value per column of X (indexed by each
    row's ``column``).
    """
    width = max(7, *(len(row["feature"]) for row in rows))
    null = "null_score" in rows[0]
    score = number_format(
        [row["score"] for row in rows] + [row["null_score"] for row in rows if null]
    )
    spread = number_format([row["score_se"] for row in rows])
    added = [(h, [str(values[row["column"]]) for row in rows]) for h, values in extra]
    widths = [max(len(h), *(len(c) for c in cells)) for h, cells in added]
    repeats = rows[0].get("n_repeats", 1)
    header = (
        f"{'rank':>4}  {'feature':<{width}}  {'score':>11}  "
        + (f"{'resampled':>11}  " if null else "")
        + f"{'s.e.':>11}  {'p-value':>7}  "
        + (f"{'adj. p':>7}  " if adjusted else "")
        + f"{'>0 in':>6}  selected"
        + (f"  {'kept in':>7}" if repeats > 1 else "")
    )
    header += "".join(f"  {h:<{w}}" for (h, _), w in zip(added, widths, strict=True))
    lines = [header.rstrip()]
    for i, row in enumerate(rows):
        positive = f"{row['positive_splits']}/{row['n_splits']}"
        line = (
            f"{row['rank']:>4}  {row['feature']:<{width}}  {score(row['score']):>11}  "
            + (f"{score(row['null_score']):>11}  " if null else "")
            + f"{spread(row['score_se']):>11}  {format_pvalue(row['pvalue']):>7}  "
            + (f"{format_pvalue(row['pvalue_adjusted']):>7}  " if adjusted else "")
            + f"{positive:>6}  {'yes' if row['selected'] else '-':<8}"
        )
        if repeats > 1:  # how many repeats alone keep it
            kept = round(row["selection_frequency"] * repeats)
            line += f"  {f'{kept}/{repeats}':>7}"
        line += "".join(
            f"  {cells[i]:<{w}}" for (_, cells), w in zip(added, widths, strict=True)
        )
        lines.append(line.rstrip())
    return "\n".join(lines)
