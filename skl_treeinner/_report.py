"""One score table for every place that shows a selector's scores.

The command line (screen, CSV, JSON) and the demo print the same rows, built
by :func:`score_table`, with one spread convention, shared with
:func:`skl_treeinner.plotting.plot_scores`: the **standard error of the
score**. ``scores_`` is the sum of the ``S`` split scores, so if the splits
were independent draws its standard error would be
``sqrt(S) * std(split_scores_, ddof=1)`` (:func:`score_standard_error`).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["format_table", "score_standard_error", "score_table"]


def score_standard_error(split_scores) -> np.ndarray | None:
    """Return the standard error of each feature's summed score (None: one split).

    Parameters
    ----------
    split_scores : array-like of shape (n_splits, n_features)
        The score of each split on its own held-out rows.

    Returns
    -------
    ndarray of shape (n_features,) or None
        ``sqrt(n_splits) * std(split_scores, axis=0, ddof=1)``; ``None`` when
        a single split gives no estimate of the spread.
    """
    split_scores = np.asarray(split_scores, dtype=np.float64)
    n_splits = split_scores.shape[0]
    if n_splits < 2:
        return None
    return math.sqrt(n_splits) * split_scores.std(axis=0, ddof=1)


def score_table(selector, names=None) -> list[dict]:
    """One dict per feature of a fitted selector, best first.

    Keys: ``rank``, ``feature``, ``column`` (its index in X), ``score``,
    ``score_se`` (the standard error, ``None`` with one split), ``split_sd``
    (the standard deviation of the split scores, ``None`` with one split),
    ``positive_splits``, ``n_splits``, ``selected`` and ``split_scores``
    (a list).

    ``names`` defaults to ``feature_names_in_``, else ``x0``, ``x1``, ...
    """
    if names is None:
        fitted = getattr(selector, "feature_names_in_", None)
        n = selector.scores_.shape[0]
        names = fitted if fitted is not None else [f"x{j}" for j in range(n)]
    names = [str(n) for n in names]
    split = np.asarray(selector.split_scores_, dtype=np.float64)
    n_splits = split.shape[0]
    sd = split.std(axis=0, ddof=1) if n_splits > 1 else None
    se = None if sd is None else math.sqrt(n_splits) * sd
    support = selector.support_
    rows = []
    for j in np.argsort(selector.ranking_, kind="mergesort"):
        rows.append(
            {
                "rank": int(selector.ranking_[j]),
                "feature": names[j],
                "column": int(j),
                "score": float(selector.scores_[j]),
                "score_se": None if se is None else float(se[j]),
                "split_sd": None if sd is None else float(sd[j]),
                "positive_splits": int((split[:, j] > 0).sum()),
                "n_splits": n_splits,
                "selected": bool(support[j]),
                "split_scores": [float(v) for v in split[:, j]],
            }
        )
    return rows


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


def format_table(rows: list[dict], extra=()) -> str:
    """Lay out :func:`score_table` rows as text, one line per feature.

    Columns: rank, feature, score, s.e., in how many splits the score is
    above 0, selected; then ``extra``, pairs ``(header, values)`` with one
    value per column of X (indexed by each row's ``column``).
    """
    width = max(7, *(len(row["feature"]) for row in rows))
    score = number_format([row["score"] for row in rows])
    spread = number_format([row["score_se"] for row in rows])
    added = [(h, [str(values[row["column"]]) for row in rows]) for h, values in extra]
    widths = [max(len(h), *(len(c) for c in cells)) for h, cells in added]
    header = (
        f"{'rank':>4}  {'feature':<{width}}  {'score':>11}  {'s.e.':>11}  "
        f"{'>0 in':>6}  selected"
    )
    header += "".join(f"  {h:<{w}}" for (h, _), w in zip(added, widths, strict=True))
    lines = [header.rstrip()]
    for i, row in enumerate(rows):
        se = "-" if row["score_se"] is None else spread(row["score_se"])
        positive = f"{row['positive_splits']}/{row['n_splits']}"
        line = (
            f"{row['rank']:>4}  {row['feature']:<{width}}  {score(row['score']):>11}  "
            f"{se:>11}  {positive:>6}  {'yes' if row['selected'] else '-':<8}"
        )
        line += "".join(
            f"  {cells[i]:<{w}}" for (_, cells), w in zip(added, widths, strict=True)
        )
        lines.append(line.rstrip())
    return "\n".join(lines)
