"""Plots of TreeInner scores: per feature, and as trees are added.

- :func:`plot_scores`: the held-out scores of a fitted
  :class:`~skl_treeinner.TreeInnerSelector`, one bar per feature, with
  ± one standard error, the threshold and the selected features.
- :func:`plot_score_path`: the cumulative TreeInner score of each feature as
  boosting iterations are added (the paper's Figure 3, for one model).

Their pieces (bars, ticks, the rule's text) are in ``_parts``, the sizes
that follow the columns' names in ``_layout``. matplotlib is an optional
dependency (``python -m pip install ".[plot]"``);
it is imported only when a plot is drawn.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._engines import engine_for
from .._engines._plan import is_classifier
from .._readers import read_model
from .._readers._base import feature_names_of
from .._stats._cutoff import adjusts
from .._stats._refit_curve import (
    CURVE_RULES,
    choose_k,
    curve_standard_error,
    scoring_name,
)
from .._utils._validation import check_attribution, check_params
from ._layout import axes_for, make_room, place_legend, scale_axis, shorten
from ._parts import (
    bar_notes,
    bars,
    check_score_options,
    check_top,
    draw_error_bars,
    null_ticks,
    pyplot,
    rule_text,
    threshold_line,
    unit_ranking,
    write_notes,
)

__all__ = ["plot_refit_curve", "plot_score_path", "plot_scores"]

_FITTED = ["scores_", "scores_se_", "split_scores_"]
#: The most lines :func:`plot_score_path`'s legend names; it counts the rest.
MAX_LEGEND = 20


def plot_scores(
    selector,
    *,
    ax=None,
    top="auto",
    sort=True,
    error_bars=True,
    pvalues=False,
    by_group=None,
    selected_color="tab:blue",
    other_color="0.72",
):
    """Bar chart of a fitted selector's held-out TreeInner scores.

    One horizontal bar per feature, of length ``selector.scores_`` (the
    TreeInner score of Def. 4, Eq. 21, on held-out rows, summed over splits);
    the features the selector keeps (``support_``) in ``selected_color``, the
    others in ``other_color``; error bars of ± one standard error of the
    score (``scores_se_``, from the spread of the per-row terms of the
    score over the held-out rows: the same convention as the command
    line's s.e. column); and what the test compares each bar with. With
    ``test="column"`` (the default), a black tick at each feature's
    resampled score (``null_scores_``, plus ``threshold_`` where it is not
    0): a feature selected by the test at level a has its bar end more than
    t_a standard errors right of its tick (about 1.65 at 0.05). With
    ``test="model"``, a dashed vertical line at ``threshold_``, and a
    selected bar ends more than t_a standard errors right of zero. The level
    is ``alpha``, or, where ``control`` lowers it, the caption names the
    rule. Bars are in the order of the test (``ranking_``).

    Parameters
    ----------
    selector : TreeInnerSelector
        A fitted selector (or any object with ``scores_``, ``scores_se_``,
        ``split_scores_``, ``support_`` and ``threshold_`` in the same
        layout).
    ax : matplotlib Axes, default=None
        Where to draw; a new figure, sized to the number of bars and the
        length of their names, if None.
    top : int, "auto" or None, default="auto"
        Show only the ``top`` highest-scoring features, and a last row that
        says how many more there are and how many of them are selected.
        "auto": all up to 40 features, else the best 30. None: all.
    sort : bool, default=True
        Order bars as the selector's test ranks them (``ranking_``: the
        smallest p-value at the top); if False, in column order (the first
        column at the top).
    error_bars : bool, default=True
        Draw ± one standard error (``scores_se_``) around each score.
    pvalues : bool, default=False
        Write in a column right of the axes, level with each bar, the p-value
        the selection compared with ``alpha``: ``pvalues_adjusted_``,
        labelled ``adj. p`` where ``control`` changes it for this many
        features (as the command line's column), else ``p``. A selector
        fitted with ``n_repeats`` > 1 always has that column, which then
        also says in how many repeats alone each bar's feature is kept
        (``selection_frequency_``), as ``kept in 12/16``.
    by_group : bool or None, default=None
        One bar per feature group (``group_scores_``, ``group_scores_se_``,
        ``group_pvalues_adjusted_``; labelled with the group's name and its
        number of columns), as the selection decides, instead of one per
        column. None: by group when the selector was fitted with
        ``feature_groups``.
    selected_color, other_color : color, default="tab:blue", "0.72"
        Bar colors of the selected and of the other features.

    Returns
    -------
    ax : matplotlib Axes
        The axes drawn on. ``ax.containers[0]`` holds the bars, top to
        bottom. The x label says below the axis which rule selected the
        colored bars.

    Raises
    ------
    sklearn.exceptions.NotFittedError
        If the selector is not fitted.
    ImportError
        If matplotlib is not installed.
    ValueError
        If ``top`` is not a positive int.

    See Also
    --------
    plot_score_path : How the scores build up as trees are added.

    Notes
    -----
    Feature names come from ``feature_names_in_`` when the selector was
    fitted on a DataFrame with string column names, else ``x0, x1, ...``;
    names over 40 characters are shortened in the middle.

    The legend stands beside the axes when the plot owns its figure: a new
    one, or a figure of the user's whose only axes is ``ax`` (given a
    constrained layout if it has no layout engine). In a figure shared with
    other axes it goes inside the axes, where it hides the least; lay such a
    figure out with ``layout="constrained"``.
    A feature can score above the threshold and still not be selected when
    ``max_features`` cut it; its bar is then in ``other_color``.

    References
    ----------
    Y. Sun, "Individualized and Global Feature Attributions for Gradient
    Boosted Trees in the Presence of ℓ2 Regularization", AISTATS 2023.
    Def. 4, Eq. 20-21 (TreeInner), Sec. 4 (held-out scores for selection).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np, xgboost as xgb
    >>> from skl_treeinner import TreeInnerSelector
    >>> from skl_treeinner.plotting import plot_scores
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 4)); y = X[:, 0] + rng.normal(size=300)
    >>> est = xgb.XGBRegressor(n_estimators=20, max_depth=2)
    >>> sel = TreeInnerSelector(est, cv=3, random_state=0).fit(X, y)
    >>> ax = plot_scores(sel)
    >>> len(ax.containers[0])                              # one bar per feature
    4
    >>> ax.get_yticklabels()[0].get_text()                 # the best at the top
    'x0'
    """
    check_is_fitted(selector, _FITTED)
    grouped = getattr(selector, "_feature_groups", None) is not None
    by_group = check_score_options(
        grouped, sort=sort, error_bars=error_bars, pvalues=pvalues, by_group=by_group
    )
    plt = pyplot()
    from matplotlib.patches import Patch

    scores, se, support, names, adjusted_p, unit, null = bars(selector, by_group)
    top = check_top(top, n_bars=scores.size)
    by_rank = np.argsort(unit_ranking(selector, by_group), kind="mergesort")
    shown = by_rank[:top] if top is not None else by_rank
    rest = by_rank[shown.size :]
    if not sort:
        shown = np.sort(shown)
    n = shown.size
    spread = se if error_bars else None
    n_repeats = selector._fitted_repeats()
    names_shown = [names[j] for j in shown]
    size = _scores_figsize(n + (rest.size > 0), names_shown, pvalues, n_repeats > 1)
    given = ax is not None
    ax, owned = axes_for(plt, ax, *size)
    if given:  # a user's axes: room for every row, or say that there is none
        make_room(ax, owned, size[0], n + (rest.size > 0))
    pos = np.arange(n)[::-1]  # first shown at the top
    colors = np.where(support[shown], selected_color, other_color).tolist()
    ax.barh(pos, scores[shown], color=colors, height=0.7, gid="scores")
    # What the selection counted: the groups when it has them.
    n_units = len(selector.groups_) if grouped else scores.size
    adjusted = adjusts(
        getattr(selector, "control", "per_feature"),
        getattr(selector, "alpha", None),
        n_units,
    ) and (by_group or not grouped)
    rule = rule_text(selector, n_units, grouped)
    if pvalues and adjusted and rule.startswith("p <"):  # say the column's cut
        rule = f"adj. p < {selector.alpha:g}, that is {rule}"
    rule = f"Selected: {rule}."
    if grouped and not by_group:  # columns kept or dropped with their group
        rule = f"Selected with their group, whose {rule[len('Selected: ') :]}"
        adjusted_p = selector.pvalues_
    handles = [
        Patch(color=selected_color, label=f"selected ({int(support.sum())})"),
        Patch(color=other_color, label=f"not selected ({int((~support).sum())})"),
    ]
    if spread is not None:
        handles.append(draw_error_bars(ax, scores[shown], pos, spread[shown]))
    threshold = float(selector.threshold_)
    if null is None:  # the test of the model's use: scores against the threshold
        handles.append(threshold_line(ax, threshold))
    else:  # the test of a column compares each bar with its tick
        # (plus the threshold, where it applies to these bars)
        shift = threshold if by_group or not grouped else 0.0
        handles.append(null_ticks(ax, null[shown] + shift, pos, shift))
    labels = [names[j] for j in shown]
    if rest.size:  # say what the cut hides, and whether any of it is kept
        kept = int(support[rest].sum())
        labels.append(f"… and {rest.size} more ({kept or 'none'} selected)")
        pos = np.append(pos, -1)
    ax.set_yticks(pos, labels=labels)
    if rest.size:
        ax.get_yticklabels()[-1].set_fontstyle("italic")
    ax.set_ylim(pos[-1] - 0.6, n - 0.4)
    notes = bar_notes(
        selector, by_group, shown, adjusted_p if pvalues else None,
        "adj. p" if adjusted else "p",
    )  # fmt: skip
    if notes is not None:
        write_notes(ax, notes, pos[:n])
    n_splits = np.asarray(selector.split_scores_).shape[0] // n_repeats
    splits = "1 split" if n_splits == 1 else f"sum over {n_splits} splits"
    if n_repeats > 1:
        splits += f", mean of {n_repeats} repeats"
    scale_axis(ax, "x", f"held-out TreeInner score ({splits})", caption=rule)
    title = "TreeInner scores"
    if rest.size:
        title += f" (top {n} of {scores.size} {unit})"
    elif by_group:
        title += f" of {scores.size} feature groups"
    ax.set_title(title)
    place_legend(ax, owned, handles)
    ax.grid(axis="x", alpha=0.3)
    return ax


def _scores_figsize(rows, names, pvalues, repeats=False):
    """(height, width) in inches of a bar chart with these rows and names."""
    longest = max((len(name) for name in names), default=2)
    notes = (0.9 if pvalues else 0.0) + (0.8 if repeats else 0.0)
    width = min(5.6 + 0.075 * max(longest, 12) + notes, 11.0)
    return min(2.0 + 0.24 * max(rows, 4), 60.0), width


def plot_score_path(
    model,
    X,
    y,
    *,
    attribution="predecomp",
    features=None,
    top=10,
    sample_weight=None,
    ax=None,
    feature_names=None,
    verbose=0,
):
    """Cumulative TreeInner score of each feature as boosting iterations are added.

    For every shown feature k, the curve at iteration r is the TreeInner score
    (Def. 4, Eq. 21) of the model truncated after its first r iterations,
    Σ_{r' <= r} of :func:`~skl_treeinner.tree_inner` with
    ``per_iteration=True``; its last point is ``tree_inner(model, X, y)[k]``.
    On held-out rows the curves of noisy features bend down and end below the
    zero line as trees are added, the paper's Figure 3 for a single model; on
    the training rows every curve only rises (each step is a split gain,
    Prop. 3).

    Parameters
    ----------
    model : fitted booster
        Any model :func:`~skl_treeinner.tree_inner` accepts.
    X : array-like, sparse matrix or DataFrame of shape (n_samples, n_features)
        Rows to score on; held-out rows show overfitting. A Dask array or
        DataFrame (with y and ``sample_weight`` partitioned alike) is scored
        on the cluster, as :func:`~skl_treeinner.tree_inner` scores it; only
        the per-iteration scores come back.
    y : array-like of shape (n_samples,)
        Target of those rows, as for :func:`~skl_treeinner.tree_inner`.
    attribution : {"predecomp", "treeshap"}, default="predecomp"
        Per-tree attribution, as for :func:`~skl_treeinner.tree_inner`.
    features : sequence of int or str, default=None
        Features to draw, by column index or name. None draws the ``top``
        features of largest absolute final score.
    top : int or None, default=10
        With ``features=None``, how many features to draw, those with the
        largest ``|tree_inner(model, X, y)|`` (ties in column order); None
        draws every feature. Ignored when ``features`` is given.
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the inner product.
    ax : matplotlib Axes, default=None
        Where to draw; a new figure if None.
    feature_names : sequence of str, default=None
        Names for the legend; by default the model's own feature names, else
        X's string column names, else ``x0, x1, ...``.
    verbose : int, default=0
        Progress of the score computation on stderr, as in
        :func:`~skl_treeinner.tree_inner`.

    Returns
    -------
    ax : matplotlib Axes
        The axes drawn on: one line per shown feature (in ``ax.lines``, in
        the order of the legend, which names the first 20 and counts the
        others) and a dotted zero line (``gid="zero"``).

    Raises
    ------
    ImportError
        If matplotlib is not installed.
    ValueError
        If ``features`` names an unknown feature, ``top`` is not a positive
        int, ``feature_names`` has the wrong length, or as
        :func:`~skl_treeinner.tree_inner` raises.
    TypeError
        If the model type is not supported.

    See Also
    --------
    skl_treeinner.tree_inner : The scores, with ``per_iteration=True``.
    plot_scores : Final held-out scores of a fitted selector.

    References
    ----------
    Y. Sun, "Individualized and Global Feature Attributions for Gradient
    Boosted Trees in the Presence of ℓ2 Regularization", AISTATS 2023.
    Def. 4, Eq. 20-21 (TreeInner), Prop. 3, Sec. 4.4 and Figure 3.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np, xgboost as xgb
    >>> from skl_treeinner import tree_inner
    >>> from skl_treeinner.plotting import plot_score_path
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 5)); y = X[:, 0] + rng.normal(size=400)
    >>> model = xgb.XGBRegressor(n_estimators=30, max_depth=3).fit(X[:200], y[:200])
    >>> ax = plot_score_path(model, X[200:], y[200:], top=3)
    >>> [line.get_label() for line in ax.lines if line.get_gid() != "zero"][0]
    'x0'
    >>> final = tree_inner(model, X[200:], y[200:])
    >>> bool(np.isclose(ax.lines[0].get_ydata()[-1], final[0]))
    True
    """
    check_attribution(attribution)
    check_params("plot_score_path", {"verbose": ["verbose"]}, {"verbose": verbose})
    top = check_top(top)
    plt = pyplot()
    from matplotlib.lines import Line2D

    reader = read_model(model)
    path = engine_for(X, y, sample_weight).tree_inner(
        reader,
        X,
        y,
        attribution=attribution,
        sample_weight=sample_weight,
        per_iteration=True,
        verbose=verbose,
    )
    n_iter, n_features = path.shape
    names = _feature_names(reader, X, feature_names, n_features)
    cumulative = np.cumsum(path, axis=0)
    final = cumulative[-1]
    if features is None:
        order = np.argsort(-np.abs(final), kind="mergesort")
        shown = order[:top] if top is not None else order
    else:
        shown = _resolve_features(features, names)

    longest = max((len(shorten(names[j])) for j in shown), default=2)
    ax, owned = axes_for(plt, ax, 4.2, width=min(6.4 + 0.07 * longest, 10.0))
    iterations = np.arange(1, n_iter + 1)
    for j in shown:
        ax.plot(iterations, cumulative[:, j], label=shorten(names[j]), linewidth=1.4)
    ax.axhline(0.0, color="k", linestyle=":", linewidth=1.0, gid="zero")
    ax.set_xlabel("boosting iterations")
    ax.set_xlim(1, max(n_iter, 2))
    scale_axis(ax, "y", "cumulative TreeInner score")
    ax.set_title(f"TreeInner score as trees are added ({attribution})")
    lines = [line for line in ax.lines if line.get_gid() != "zero"]
    if len(lines) > MAX_LEGEND:  # name the first ones, count the others
        more = len(lines) - MAX_LEGEND
        lines = lines[:MAX_LEGEND]
        lines.append(Line2D([], [], color="none", label=f"… and {more} more"))
    place_legend(ax, owned, lines, beside=True, frameon=False)
    ax.grid(alpha=0.3)
    return ax


def plot_refit_curve(selector, *, ax=None, color="tab:blue"):
    """Plot the refit curve: held-out score against the number of features kept.

    One point per k of ``selector.cv_results_`` (the booster refitted on
    the k best-ranked candidates; k counts feature groups with
    ``feature_groups``), the mean over the splits with ± one standard error
    (their standard deviation / √splits), and the k each rule of
    ``max_features`` keeps marked: ``"best"`` (the highest mean) and
    ``"1se"`` (the smallest k within one standard error of it). See
    :mod:`skl_treeinner._stats._refit_curve` for how the curve stays honest.

    Parameters
    ----------
    selector : TreeInnerSelector
        Fitted with ``max_features="best"`` or ``"1se"`` (which fit the
        curve); ``set_params(max_features=...)`` since does not matter.
    ax : matplotlib Axes, default=None
        Where to draw; a new figure if None.
    color : color, default="tab:blue"
        Of the curve.

    Returns
    -------
    ax : matplotlib Axes
        ``ax.lines[0]`` is the curve; the two rules' k are vertical lines
        labelled in the legend.

    Raises
    ------
    NotFittedError
        If the selector is not fitted.
    AttributeError
        If it was fitted without a curve (``max_features`` not a rule).
    """
    check_is_fitted(selector, "scores_")
    results = getattr(selector, "cv_results_", None)
    if results is None:
        raise AttributeError(
            "This selector has no refit curve: fit it with max_features='best' "
            "or '1se' to draw one."
        )
    plt = pyplot()
    ax, owned = axes_for(plt, ax, 4.0, width=8.0)
    ks = np.asarray(results["n_features"])
    mean = np.asarray(results["mean_test_score"])
    se = curve_standard_error(results)
    ax.errorbar(ks, mean, yerr=se, color=color, marker="o", ms=3, capsize=2)
    styles = {"best": ("-", "tab:green"), "1se": ("--", "tab:orange")}
    kept = selector.n_features_
    for rule in CURVE_RULES:
        k = choose_k(ks, mean, se, rule)
        style, line_color = styles[rule]
        label = f'"{rule}": k = {k}'
        if rule == selector.max_features and kept != k:  # fewer pass on all rows
            label += f" ({kept} kept: all that pass)"
        ax.axvline(k, ls=style, color=line_color, label=label)
    grouped = getattr(selector, "_feature_groups", None) is not None
    ax.set_xlabel(
        ("feature groups" if grouped else "features") + " kept (the k best-ranked)"
    )
    scoring = scoring_name(selector.scoring, is_classifier(selector.estimator_))
    scale_axis(ax, "y", f"held-out {scoring}\nof the refit booster")
    ax.xaxis.get_major_locator().set_params(integer=True)
    place_legend(ax, owned, framealpha=0.9)
    return ax


def _feature_names(reader, X, feature_names, n_features):
    if feature_names is not None:
        names = [str(name) for name in feature_names]
        if len(names) != n_features:
            raise ValueError(
                f"feature_names has {len(names)} entries but the model has "
                f"{n_features} features; pass one name per column of X."
            )
        return names
    names = reader.ensemble.feature_names or feature_names_of(X)
    if names is not None and len(names) == n_features:
        return [str(name) for name in names]
    return [f"x{j}" for j in range(n_features)]


def _resolve_features(features, names):
    if isinstance(features, str | Integral):
        features = [features]
    index = {name: j for j, name in enumerate(names)}
    shown = []
    for f in features:
        if isinstance(f, str):
            if f not in index:
                raise ValueError(
                    f"features: {f!r} is not a feature of the model; its "
                    f"features are {names[:10]}{' ...' if len(names) > 10 else ''}."
                )
            shown.append(index[f])
        elif isinstance(f, Integral) and not isinstance(f, bool):
            if not -len(names) <= f < len(names):
                raise ValueError(
                    f"features: index {f} is out of range for a model with "
                    f"{len(names)} features."
                )
            shown.append(int(f) % len(names))
        else:
            raise ValueError(f"features must hold column indices or names, got {f!r}.")
    if not shown:
        raise ValueError("features is empty; pass at least one feature, or None.")
    return np.asarray(shown)
