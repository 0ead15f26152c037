"""The parts of :mod:`skl_treeinner.plotting`'s figures that draw nothing alone.

matplotlib imported on demand, new axes, the options' checks, what a bar
chart of scores shows (:func:`bars`) and the selection rule it states
(:func:`rule_text`), the p-values written beside the bars.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np

from .._stats._cutoff import describe_rule
from .._stats._report import format_pvalue
from .._utils._optional import import_optional
from .._utils._validation import check_params
from ._layout import shorten

__all__ = [
    "bars",
    "check_score_options",
    "check_top",
    "draw_error_bars",
    "null_ticks",
    "pyplot",
    "rule_text",
    "threshold_line",
    "unit_ranking",
    "bar_notes",
    "write_notes",
]


def pyplot():
    """Import matplotlib.pyplot, or say how to install it."""
    return import_optional(
        "matplotlib.pyplot", extra="plot", purpose="skl_treeinner.plotting"
    )


#: With ``top="auto"``, every bar is drawn up to this many ...
AUTO_ALL = 40
#: ... and above it the best this many.
AUTO_TOP = 30


def check_top(top, name="top", n_bars=None):
    """Return ``top`` as an int or None; "auto" (where ``n_bars`` is given)."""
    if top is None:
        return None
    if n_bars is not None and isinstance(top, str) and top == "auto":
        return None if n_bars <= AUTO_ALL else AUTO_TOP
    if isinstance(top, bool) or not isinstance(top, Integral) or top < 1:
        allowed = "a positive int, 'auto' or None"
        if n_bars is None:
            allowed = "a positive int or None"
        raise ValueError(f"{name} must be {allowed}, got {top!r}.")
    return int(top)


def check_score_options(grouped, *, sort, error_bars, pvalues, by_group) -> bool:
    """Check :func:`~skl_treeinner.plotting.plot_scores`' switches; return by_group.

    ``by_group=None`` follows the selector (``grouped``: fitted with
    feature groups).
    """
    check_params(
        "plot_scores",
        {
            "sort": ["boolean"],
            "error_bars": ["boolean"],
            "pvalues": ["boolean"],
            "by_group": ["boolean", None],
        },
        {
            "sort": sort,
            "error_bars": error_bars,
            "pvalues": pvalues,
            "by_group": by_group,
        },
    )
    if by_group is None:
        return grouped
    if by_group and not grouped:
        raise ValueError(
            "by_group=True needs a selector fitted with feature_groups; this "
            "one scored columns only."
        )
    return by_group


def bars(selector, by_group):
    """Return what the bars show: scores, s.e., kept, names, p-values, unit, null.

    ``names``: shortened to :data:`~skl_treeinner.plotting._layout.MAX_NAME`
    characters, a group's before its number of columns.

    ``null``: the resampled scores the test of a column compares with
    (``null_scores_``, ``group_null_scores_``), or None.
    """
    support = np.asarray(selector.support_, dtype=bool)
    if by_group:
        members = list(selector.groups_.values())
        names = [
            f"{shorten(name)} ({len(cols)})" if len(cols) > 1 else shorten(name)
            for name, cols in selector.groups_.items()
        ]
        return (
            np.asarray(selector.group_scores_, dtype=np.float64),
            np.asarray(selector.group_scores_se_, dtype=np.float64),
            np.array([support[cols[0]] for cols in members], dtype=bool),
            names,
            selector.group_pvalues_adjusted_,
            "groups",
            _floats(getattr(selector, "group_null_scores_", None)),
        )
    scores = np.asarray(selector.scores_, dtype=np.float64)
    names = getattr(selector, "feature_names_in_", None)
    if names is None:
        names = [f"x{j}" for j in range(scores.size)]
    return (
        scores,
        np.asarray(selector.scores_se_, dtype=np.float64),
        support,
        [shorten(name) for name in names],
        getattr(selector, "pvalues_adjusted_", selector.pvalues_),
        "features",
        _floats(getattr(selector, "null_scores_", None)),
    )


def draw_error_bars(ax, scores, pos, spread):
    """Draw ± one standard error around each bar's end."""
    return ax.errorbar(
        scores,
        pos,
        xerr=spread,
        fmt="none",
        ecolor="0.2",
        elinewidth=1.0,
        capsize=2.5,
        label="±1 s.e.",
        gid="spread",
    )


def threshold_line(ax, threshold):
    """Draw the threshold the scores are compared with."""
    return ax.axvline(
        threshold,
        color="tab:red",
        linestyle="--",
        linewidth=1.2,
        label=f"threshold = {threshold:.3g}",
        gid="threshold",
    )


def null_ticks(ax, cut, pos, threshold=0.0):
    """Mark what the test of a column compares the bars with: the resampled scores.

    ``cut``: each bar's resampled score plus ``threshold`` (the threshold
    applies to the score less its resampled score).
    """
    label = "resampled score\n(test of the column)"
    if threshold != 0:
        label = f"resampled score\n+ threshold ({threshold:.3g})"
    return ax.scatter(
        cut,
        pos,
        marker="|",
        s=160,
        linewidths=2.0,
        color="black",
        zorder=3,
        label=label,
        gid="null",
    )


def unit_ranking(selector, by_group) -> np.ndarray:
    """Rank of each bar by the selector's test, 1 for the best (``ranking_``'s rule)."""
    if not by_group:
        return np.asarray(selector.ranking_)
    return selector._unit_ranking(selector._fitted_groups())


def _floats(values):
    return None if values is None else np.asarray(values, dtype=np.float64)


def rule_text(selector, n_units, grouped) -> str:
    """Say the selection rule, always: a bar past the threshold can be grey."""
    control = getattr(selector, "control", "per_feature")
    alpha = getattr(selector, "alpha", None)
    rule = "score > threshold"
    if getattr(selector, "null_scores_", None) is not None:  # the test of a column
        rule = "score > resampled score"
        if float(selector.threshold_) != 0:
            rule += " + threshold"
    if alpha is not None:
        rule = f"{describe_rule(control, alpha, n_units)} and {rule}"
    cap = selector._max_count()
    if isinstance(selector.max_features, str):  # the refit curve's rule
        unit = " groups" if grouped else ""
        rule += f", the best {cap}{unit} by the refit curve ({selector.max_features})"
        cap = None
    if cap is not None:
        rule += f", at most {cap}" + (" groups" if grouped else "")
    return rule


def bar_notes(selector, by_group, shown, pvalues=None, label="p"):
    """Return what to write right of each shown bar (p-values, repeats), or None.

    ``pvalues``: the p-values the selection compared with ``alpha`` (one per
    bar), written as ``label``; with several repeats (``n_repeats``), also
    in how many of them alone the bar's feature (group) is kept
    (``selection_frequency_``).
    """
    repeats = selector._fitted_repeats()
    if pvalues is None and repeats == 1:
        return None
    frequency = None
    if repeats > 1:
        frequency = np.asarray(selector.selection_frequency_)
        if by_group:  # a group's members share its frequency
            frequency = frequency[[cols[0] for cols in selector.groups_.values()]]
    notes = []
    for j in shown:
        parts = [] if pvalues is None else [f"{label} {format_pvalue(pvalues[j])}"]
        if frequency is not None:
            parts.append(f"kept in {round(frequency[j] * repeats)}/{repeats}")
        notes.append("  ".join(parts))
    return notes


def write_notes(ax, notes, pos):
    """Write one note per shown bar right of the axes (:func:`bar_notes`).

    A secondary y axis holds them as tick labels, level with their bars: in
    the layout, and never over a bar, an error bar or the legend.
    """
    column = ax.secondary_yaxis("right")
    column.set_gid("pvalue")
    column.set_yticks(pos, labels=notes)
    column.tick_params(axis="y", length=0, labelsize="x-small")
    return column
