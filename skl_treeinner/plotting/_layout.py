"""How :mod:`skl_treeinner.plotting`'s figures keep every text in view.

- Names longer than :data:`MAX_NAME` characters are shortened in the middle.
- A plot that owns its figure (one it made, or a user's figure that holds
  only its axes) puts the legend beside the axes, in the figure's
  constrained layout; in a figure shared with other axes the legend goes
  inside the axes where it hides the least.
- Long rule texts are wrapped to the figure's width.
- Numbers of 10,000 and over (or under 0.01) are written scaled, with the
  power of ten in the axis label, not in an offset text that collides with
  the label or the title.
"""

from __future__ import annotations

import math
import textwrap

__all__ = [
    "MAX_NAME",
    "axes_for",
    "make_room",
    "place_legend",
    "scale_axis",
    "shorten",
    "wrap_to_axes",
]

#: Longest name shown whole; longer ones keep their start and end.
MAX_NAME = 40


def shorten(name, width: int = MAX_NAME) -> str:
    """Return ``name`` as str, cut in the middle to ``width`` characters."""
    name = str(name)
    if len(name) <= width:
        return name
    head = width // 2
    tail = width - 1 - head
    return f"{name[:head]}…{name[len(name) - tail :]}"


def axes_for(plt, ax, height, width=6.4):
    """Return ``(ax, owned)``: the axes to draw on, and whether it owns a figure.

    A new figure (``ax=None``) is made with a constrained layout. A user's
    figure (or subfigure) whose only axes is ``ax``, a subplot, is owned too;
    if it has no layout engine it gets a constrained one, so that long tick
    labels and the legend stay in view (``fig.tight_layout()`` after the plot
    replaces that engine and lets the legend fall over the axes). In any
    other figure, and for an axes placed by hand (``fig.add_axes``), the
    plot lays out only its axes' contents.
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(width, height), layout="constrained")
        return ax, True
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    figure = ax.figure
    root = getattr(figure, "figure", figure) or figure
    alone = ax.get_subplotspec() is not None and figure.axes == [ax]
    if alone and root.get_layout_engine() is None and len(root.axes) == 1:
        root.set_layout_engine("constrained")
    return ax, alone and isinstance(root.get_layout_engine(), ConstrainedLayoutEngine)


#: Height of a bar's row below which its tick labels overlap (inches).
MIN_ROW_HEIGHT = 0.16


def make_room(ax, owned, height, rows) -> None:
    """Give ``rows`` bars the height they need on a user's axes.

    ``height`` is what the plot's own figure would be (inches). A user's
    figure that holds only this axes (``owned``) grows to it where it is
    shorter; elsewhere (a figure shared with other axes, a subfigure) a
    warning says how many rows overlap and what to pass instead.
    """
    figure = ax.figure
    root = getattr(figure, "figure", None) or figure  # a subfigure's root
    width, now = root.get_size_inches()
    if owned and root is figure and now < height:
        figure.set_size_inches(width, height)
        return
    available = ax.get_position().height * root.get_size_inches()[1]
    if available < rows * MIN_ROW_HEIGHT:
        import warnings

        from .._utils._validation import user_stacklevel

        warnings.warn(
            f"{rows} bars in axes about {available:.1f} inches tall: their names "
            f"overlap. Pass top=k to draw the best k, or axes about {height:.0f} "
            "inches tall (plot_scores makes such a figure itself with ax=None).",
            UserWarning,
            stacklevel=user_stacklevel(),
        )


#: The gid of the figure legend a plot adds, so that drawing again replaces it.
LEGEND_GID = "skl_treeinner.legend"


def place_legend(ax, owned, handles=None, *, beside=False, **kwargs):
    """Place the legend where it hides nothing the plot drew.

    Beside the axes, in the figure's layout, when the plot owns its figure
    (replacing a legend an earlier plot put there). Otherwise inside the
    axes where it hides least, or, with ``beside``, anchored right of the
    axes (for lines, which a legend inside would cover).
    """
    if handles is None:
        handles = ax.get_legend_handles_labels()[0]
    if owned:
        for legend in list(ax.figure.legends):
            if legend.get_gid() == LEGEND_GID:
                legend.remove()
        legend = ax.figure.legend(
            handles=handles, loc="outside right upper", fontsize="small", **kwargs
        )
        legend.set_gid(LEGEND_GID)
        return legend
    if beside:
        return ax.legend(
            handles=handles,
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
            fontsize="small",
            **kwargs,
        )
    return ax.legend(handles=handles, loc="best", fontsize="small", **kwargs)


def wrap_to_axes(text: str, ax, fontsize_pt: float = 10.0) -> str:
    """Wrap ``text`` to about the width the axes has before any layout."""
    box = ax.get_window_extent()
    width_pt = 0.9 * box.width / ax.figure.dpi * 72.0
    chars = max(30, int(width_pt / (0.6 * fontsize_pt)))
    lines = []
    for part in text.split("\n"):  # whole words first; a word too long is cut
        for line in textwrap.wrap(
            part, chars, break_on_hyphens=False, break_long_words=False
        ) or [""]:
            lines += [line[i : i + chars] for i in range(0, len(line), chars)] or [""]
    return "\n".join(lines)


def scale_axis(ax, which: str, label: str, caption: str | None = None) -> None:
    """Label an axis; write its ticks scaled when its numbers are large or small.

    Call after the data are drawn: the scale follows the view limits. The
    power of ten joins ``label``; ``caption`` (wrapped) goes below it. An
    axis shared with another axes keeps matplotlib's formatter: the other
    axes' label could not say its scale.
    """
    from matplotlib import rcParams
    from matplotlib.ticker import FuncFormatter

    axis = ax.xaxis if which == "x" else ax.yaxis
    shared = ax.get_shared_x_axes() if which == "x" else ax.get_shared_y_axes()
    lo, hi = ax.get_xlim() if which == "x" else ax.get_ylim()
    largest = max(abs(lo), abs(hi))
    alone = len(shared.get_siblings(ax)) == 1
    if alone and math.isfinite(largest) and largest > 0 and not 1e-2 <= largest < 1e4:
        power = math.floor(math.log10(largest))
        scale = 10.0**power
        minus = "\N{MINUS SIGN}" if rcParams["axes.unicode_minus"] else "-"
        axis.set_major_formatter(
            FuncFormatter(lambda v, _: f"{v / scale:.6g}".replace("-", minus))
        )
        label = f"{label}, ×$10^{{{power}}}$"
    if caption:
        label = f"{label}\n{wrap_to_axes(caption, ax)}"
    axis.set_label_text(label)
