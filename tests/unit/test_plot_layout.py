"""Every plot keeps its texts in view with real, long names (issue 41).

Each figure is drawn (Agg) as it is made, not saved with ``bbox_inches="tight"``
(which would crop around texts outside it): every drawn text must lie inside
the figure and no two texts may overlap. The names are breast cancer's
("worst concave points") and 40-character synthetic ones, with 1 to 200
features.
"""

import numpy as np
import pytest
import xgboost as xgb
from sklearn.datasets import load_breast_cancer

from skl_treeinner import TreeInnerSelector

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
pd = pytest.importorskip("pandas")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from skl_treeinner._cli._output import draw_plot  # noqa: E402
from skl_treeinner.plotting import (  # noqa: E402
    plot_refit_curve,
    plot_score_path,
    plot_scores,
)

#: A 40-character name: as long as plots show whole.
LONG = "customer lifetime value, rolling 90 days"


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _booster(classes=False, **params):
    cls = xgb.XGBClassifier if classes else xgb.XGBRegressor
    return cls(n_estimators=25, max_depth=3, learning_rate=0.3, n_jobs=1, **params)


@pytest.fixture(scope="module")
def cancer():
    """Breast cancer in a shuffled order, with its real names."""
    data = load_breast_cancer(as_frame=True)
    order = np.random.default_rng(0).permutation(len(data.target))
    X = data.data.iloc[order].reset_index(drop=True)
    return X, data.target.to_numpy()[order]


@pytest.fixture(scope="module")
def cancer_1se(cancer):
    X, y = cancer
    selector = TreeInnerSelector(
        _booster(classes=True), cv=3, max_features="1se", random_state=0
    )
    return selector.fit(X, y)


@pytest.fixture(scope="module")
def wide():
    """200 columns named up to 60 characters, 3 of them relevant."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 200))
    y = X[:, 0] + X[:, 1] - X[:, 2] + rng.normal(size=300)
    names = [f"{LONG[: 30 + j % 11]}{j}" for j in range(200)]
    names[0] = LONG + " and a long tail of words"  # 65: shortened
    return pd.DataFrame(X, columns=names), y


def _drawn_tick_labels(figure):
    drawn = set()
    every = set()
    for ax in figure.findobj(lambda a: hasattr(a, "xaxis") and hasattr(a, "yaxis")):
        for axis in (ax.xaxis, ax.yaxis):
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                every.update((id(tick.label1), id(tick.label2)))
            for tick in axis._update_ticks():  # the ticks the axis draws
                if tick.label1.get_visible():
                    drawn.add(id(tick.label1))
                if tick.label2.get_visible():
                    drawn.add(id(tick.label2))
    return drawn, every


def texts_in_view(figure):
    """Assert every drawn text is inside ``figure`` and none overlaps another."""
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    drawn, ticks = _drawn_tick_labels(figure)
    boxes = []
    for text in set(figure.findobj(Text)):
        if not text.get_visible() or not text.get_text().strip():
            continue
        if id(text) in ticks and id(text) not in drawn:
            continue
        boxes.append((text.get_text(), text.get_window_extent(renderer)))
    assert boxes
    whole = figure.bbox
    for label, box in boxes:
        assert (
            box.x0 >= whole.x0 - 1
            and box.y0 >= whole.y0 - 1
            and box.x1 <= whole.x1 + 1
            and box.y1 <= whole.y1 + 1
        ), f"{label!r} at {box.extents} outside the figure {whole.extents}"
    for i, (a, box_a) in enumerate(boxes):
        for b, box_b in boxes[i + 1 :]:
            shrunk = box_a.shrunk(0.999, 0.999).padded(-1.0)
            assert not shrunk.overlaps(box_b.padded(-1.0)), f"{a!r} overlaps {b!r}"
    return boxes


def _no_offset_text(ax):
    for axis in (ax.xaxis, ax.yaxis):
        assert axis.get_offset_text().get_text() == ""


def _texts(figure):
    return [t.get_text() for t in figure.findobj(Text)]


@pytest.mark.parametrize("top", ["auto", 15])
def test_plot_scores_with_breast_cancer_names(cancer_1se, top):
    ax = plot_scores(cancer_1se, top=top, pvalues=True)
    boxes = texts_in_view(ax.figure)
    labels = [label for label, _ in boxes]
    assert "worst concave points" in labels
    # The rule that cut the grey bars is said, whole, under the axis.
    caption = " ".join(ax.get_xlabel().split())
    assert "by the refit curve (1se)" in caption
    # The column shows adjusted p-values: the caption gives their cut-off too.
    assert "Selected: adj. p < 0.05, that is p < 0.0333 = min(0.05, 1/30)" in caption
    if top == 15:
        assert any(label.startswith("… and 15 more (") for label in labels)
    # The bars are still most of the width.
    width = ax.get_window_extent().width / ax.figure.bbox.width
    assert width > 0.35


def test_plot_scores_on_a_users_axes(cancer_1se):
    _, ax = plt.subplots(figsize=(10, 8))
    assert plot_scores(cancer_1se, pvalues=True, ax=ax) is ax
    texts_in_view(ax.figure)


def test_plot_scores_in_a_shared_figure_keeps_its_legend_inside(cancer_1se):
    figure, (left, right) = plt.subplots(1, 2, figsize=(16, 8), layout="constrained")
    plot_scores(cancer_1se, ax=right)
    assert right.get_legend() is not None and not figure.legends
    texts_in_view(figure)


def test_200_features_with_long_names_show_the_best_30_and_how_many_more(wide):
    X, y = wide
    selector = TreeInnerSelector(_booster(), cv=None, random_state=0).fit(X, y)
    ax = plot_scores(selector, pvalues=True)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == 31 and labels[-1].startswith("… and 170 more (")
    assert all(len(label) <= 40 for label in labels[:-1])
    assert "top 30 of 200 features" in ax.get_title()
    texts_in_view(ax.figure)
    every = plot_scores(selector, top=None)
    assert len(every.get_yticklabels()) == 200
    with pytest.raises(ValueError, match="'auto' or None"):
        plot_scores(selector, top="all")


def test_one_feature_and_large_scores():
    rng = np.random.default_rng(2)
    X = pd.DataFrame({LONG: rng.normal(size=300)})
    y = 1e4 * (X[LONG].to_numpy() + rng.normal(size=300))  # scores near 1e9
    selector = TreeInnerSelector(_booster(), cv=3, random_state=0).fit(X, y)
    ax = plot_scores(selector, pvalues=True)
    texts_in_view(ax.figure)
    _no_offset_text(ax)
    assert "×$10^{" in ax.get_xlabel()


def test_groups_with_long_names(wide):
    X, y = wide
    groups = {LONG: list(X.columns[:3]), "noise block of thirty": list(X.columns[3:33])}
    selector = TreeInnerSelector(
        _booster(), cv=None, random_state=0, feature_groups=groups
    ).fit(X.iloc[:, :40], y)
    ax = plot_scores(selector, pvalues=True)
    assert f"{LONG} (3)" in " ".join(t.get_text() for t in ax.get_yticklabels())
    texts_in_view(ax.figure)


def test_score_path_with_long_names(cancer):
    X, y = cancer
    X = X.rename(columns={"worst concave points": LONG})
    model = _booster(classes=True).fit(X.iloc[:300], y[:300])
    ax = plot_score_path(model, X.iloc[300:], y[300:])
    labels = [line.get_label() for line in ax.lines if line.get_gid() != "zero"]
    assert len(labels) == 10
    texts_in_view(ax.figure)


def test_score_path_of_200_features(wide):
    X, y = wide
    model = _booster().fit(X, y)
    ax = plot_score_path(model, X, y, top=None)
    assert len([line for line in ax.lines if line.get_gid() != "zero"]) == 200
    labels = [t.get_text() for t in ax.figure.legends[0].get_texts()]
    assert len(labels) == 21 and labels[-1] == "… and 180 more"
    texts_in_view(ax.figure)


def test_refit_curve_with_large_scores():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 6))
    y = 3e3 * (X[:, 0] + 0.3 * X[:, 1] + rng.normal(size=300))  # MSE near 1e7
    selector = TreeInnerSelector(
        _booster(), cv=3, max_features="1se", scoring="neg_mean_squared_error",
        random_state=0,
    ).fit(X, y)  # fmt: skip
    ax = plot_refit_curve(selector)
    texts_in_view(ax.figure)
    _no_offset_text(ax)


def test_the_command_lines_figure_with_groups_and_a_curve(cancer):
    X, y = cancer
    groups = {"mean": [c for c in X if c.startswith("mean ")]}
    selector = TreeInnerSelector(
        _booster(classes=True), cv=3, max_features="1se", feature_groups=groups,
        random_state=0,
    ).fit(X, y)  # fmt: skip
    figure = draw_plot(selector, "diagnosis")
    texts_in_view(figure)
    assert any("held-out TreeInner scores for 'diagnosis'" in t for t in _texts(figure))
    # Both panels are wide: the legends stand beside them, not over them.
    for ax in figure.axes:
        if ax.get_label() != "<colorbar>" and ax.get_xlabel():
            assert ax.get_window_extent().width > 0.4 * figure.bbox.width


def test_drawing_again_replaces_the_legend_and_hand_placed_axes_are_left_alone(
    cancer_1se,
):
    figure, ax = plt.subplots(figsize=(10, 8))
    plot_scores(cancer_1se, ax=ax)
    ax.clear()
    plot_scores(cancer_1se, ax=ax)
    assert len(figure.legends) == 1  # not one per call
    placed = plt.figure(figsize=(10, 8))
    by_hand = placed.add_axes([0.35, 0.1, 0.4, 0.8])
    plot_scores(cancer_1se, ax=by_hand)
    assert placed.get_layout_engine() is None and by_hand.get_legend() is not None


def test_a_shared_axis_is_not_rescaled_under_one_label():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(400, 3))
    y = 1e4 * (X[:, 0] + rng.normal(size=400))
    model = _booster().fit(X[:200], y[:200])
    figure, (left, right) = plt.subplots(1, 2, sharey=True, layout="constrained")
    plot_score_path(model, X[200:], y[200:], ax=left)
    plot_score_path(model, X[:200], y[:200], ax=right)
    assert "×" not in left.get_ylabel() + right.get_ylabel()
    alone = plot_score_path(model, X[200:], y[200:])
    assert "×$10^{" in alone.get_ylabel()


def _overlap(a, b):
    return a.overlaps(b.padded(-1.0))


@pytest.mark.parametrize("curve", [False, True])
def test_the_command_lines_title_stays_clear_of_its_legend(cancer, curve):
    # Issue 54: with a long target name the title ran under the legend
    # ("...for 'Sale_Pric").
    X, y = cancer
    X = X.iloc[:, :12]
    params = {"max_features": "best"} if curve else {}
    target = "Sale_Price_in_US_dollars_adjusted_for_inflation"
    selector = TreeInnerSelector(_booster(), cv=3, random_state=0, **params)
    figure = draw_plot(selector.fit(X, y.astype(float)), target)
    texts_in_view(figure)
    renderer = figure.canvas.get_renderer()
    title = figure.axes[0].title
    assert "Sale_Price" in title.get_text()
    legends = figure.legends + [
        ax.get_legend() for ax in figure.axes if ax.get_legend() is not None
    ]
    for sub in getattr(figure, "subfigs", []):
        legends += sub.legends
    assert legends
    for legend in legends:
        box = legend.get_window_extent(renderer)
        assert not _overlap(title.get_window_extent(renderer), box)


def test_every_one_of_74_bars_is_readable_on_a_users_default_figure(wide):
    # Issue 54: plot_scores(top=None) with 74 features on the default 6.4 x 4.8
    # figure squeezed the rows until names and bars overlapped.
    X, y = wide
    X = X.iloc[:, :74]
    selector = TreeInnerSelector(_booster(), cv=None, random_state=0).fit(X, y)
    figure, ax = plt.subplots()
    plot_scores(selector, top=None, ax=ax)
    assert figure.get_size_inches()[1] >= 74 * 0.2  # grown to the rows' height
    texts_in_view(figure)
    # A figure shared with other axes is not resized: a warning says what to do.
    figure, (left, right) = plt.subplots(1, 2)
    with pytest.warns(UserWarning, match=r"74 bars .* overlap. Pass top=k"):
        plot_scores(selector, top=None, ax=right)
