"""What the command line draws and names: the ``--plot`` figure, ``--version``.

Apart from :mod:`skl_treeinner._cli._main` so that the figure code, which needs
the plotting module, stays out of the argument handling.
"""

from __future__ import annotations

from pathlib import Path

from .._readers import LIBRARIES

__all__ = ["draw_plot", "save_plot", "version_line"]


def save_plot(selector, path: Path, target: str) -> None:
    """Save ``--plot``: the figure of :func:`draw_plot`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure = draw_plot(selector, target)
    figure.savefig(path, dpi=150, bbox_inches="tight")
    plt.close(figure)


def draw_plot(selector, target: str):
    """Draw the scores, and below them the refit curve if fitted; return the figure."""
    import matplotlib.pyplot as plt
    from matplotlib.font_manager import FontProperties

    from ..plotting import _scores_figsize, plot_refit_curve, plot_scores
    from ..plotting._layout import wrap_to_axes
    from ..plotting._parts import check_top

    if getattr(selector, "cv_results_", None) is None:
        ax = plot_scores(selector)
    else:  # two subfigures: each plot lays out its own panel and legend
        bars = len(getattr(selector, "group_scores_", selector.scores_))
        top = check_top("auto", n_bars=bars)  # the rows plot_scores draws
        rows = bars if top is None else top + 1
        height = _scores_figsize(rows, [], pvalues=False)[0]
        figure = plt.figure(figsize=(10.0, height + 3.6), layout="constrained")
        top, bottom = figure.subfigures(2, 1, height_ratios=[height, 3.6])
        ax = plot_scores(selector, ax=top.subplots())
        plot_refit_curve(selector, ax=bottom.subplots())
    # The title is wrapped to the width of the laid-out axes: the legend stands
    # right of them, and a title as wide as a long target name ran under it.
    root = ax.figure.figure or ax.figure  # the root, where ax is in a subfigure
    ax.set_title("")
    root.canvas.draw()  # lays the figure out: the axes' width is known
    title = f"held-out TreeInner scores for {target!r}"
    size = FontProperties(size=plt.rcParams["axes.titlesize"]).get_size_in_points()
    ax.set_title(wrap_to_axes(title, ax, fontsize_pt=size))
    return root


def version_line() -> str:
    """Return the package version and those of the boosters installed beside it."""
    from importlib.metadata import PackageNotFoundError, version

    from .. import __version__

    parts = []
    for dist in dict.fromkeys(lib.distribution for lib in LIBRARIES):
        try:
            parts.append(f"{dist} {version(dist)}")
        except PackageNotFoundError:
            continue
    return f"{__version__} ({', '.join(parts)})"
