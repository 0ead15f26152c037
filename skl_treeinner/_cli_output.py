"""What the command line draws and names: the ``--plot`` figure, ``--version``.

Apart from :mod:`skl_treeinner._cli` so that the figure code, which needs
the plotting module, stays out of the argument handling.
"""

from __future__ import annotations

from pathlib import Path

from ._readers import LIBRARIES

__all__ = ["save_plot", "version_line"]


def save_plot(selector, path: Path, target: str) -> None:
    """Draw ``--plot``: the scores, and below them the refit curve if fitted."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .plotting import plot_refit_curve, plot_scores

    if getattr(selector, "cv_results_", None) is None:
        ax = plot_scores(selector)
    else:
        bars = len(getattr(selector, "group_scores_", selector.scores_))
        height = min(max(2.0, 0.25 * bars), 12.0)  # as plot_scores sizes itself
        _, (ax, curve) = plt.subplots(
            2,
            1,
            figsize=(6.4, height + 3.2),
            height_ratios=[height, 3.2],
            layout="constrained",
        )
        plot_scores(selector, ax=ax)
        plot_refit_curve(selector, ax=curve)
    ax.set_title(f"held-out TreeInner scores for {target!r}")
    ax.figure.savefig(path, dpi=150, bbox_inches="tight")
    plt.close(ax.figure)


def version_line() -> str:
    """Return the package version and those of the boosters installed beside it."""
    from importlib.metadata import PackageNotFoundError, version

    from . import __version__

    parts = []
    for dist in dict.fromkeys(lib.distribution for lib in LIBRARIES):
        try:
            parts.append(f"{dist} {version(dist)}")
        except PackageNotFoundError:
            continue
    return f"{__version__} ({', '.join(parts)})"
