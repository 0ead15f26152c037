"""The plots, checked through their artists (Agg backend), never their pixels."""

import sys

import numpy as np
import pytest
import xgboost as xgb
from conftest import make_data
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from skl_treeinner import TreeInnerSelector, tree_inner

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402

from skl_treeinner.plotting import (  # noqa: E402
    plot_score_path,
    plot_scores,
)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _booster(**params):
    return xgb.XGBRegressor(
        n_estimators=25, max_depth=2, learning_rate=0.3, n_jobs=1, **params
    )


@pytest.fixture(scope="module")
def selector():
    X, y = make_data(n=450, p=6, seed=31)
    # "median" puts the threshold away from 0, so the line's position is tested.
    return TreeInnerSelector(_booster(), cv=3, threshold="median", random_state=0).fit(
        X, y
    )


def _bars(ax):
    """(label, width, position, facecolor) of every bar, top to bottom."""
    ticks = [round(t) for t in ax.get_yticks()]
    texts = [t.get_text() for t in ax.get_yticklabels()]
    labels = dict(zip(ticks, texts, strict=True))
    rows = []
    for bar in ax.containers[0]:
        pos = round(bar.get_y() + bar.get_height() / 2)
        rows.append((labels[pos], bar.get_width(), pos, bar.get_facecolor()))
    return sorted(rows, key=lambda row: -row[2])


def _legend(ax):
    """The plot's legend: the figure's when the plot owns it, else the axes'."""
    return ax.get_legend() or ax.figure.legends[-1]


def _threshold_line(ax):
    lines = [line for line in ax.lines if line.get_gid() == "threshold"]
    assert len(lines) == 1
    return lines[0]


def test_bars_are_the_scores_sorted_and_colored(selector):
    ax = plot_scores(selector)
    rows = _bars(ax)
    assert len(rows) == 6
    scores = selector.scores_
    for label, width, _, color in rows:
        j = int(label[1:])  # "x3" -> 3: no feature_names_in_ for an array X
        assert width == pytest.approx(scores[j], rel=1e-12)
        expected = "tab:blue" if selector.support_[j] else "0.72"
        assert color == pytest.approx(to_rgba(expected))
    # The best by the test at the top: the order of ranking_ (issue 53).
    order = [int(row[0][1:]) for row in rows]
    assert order == np.argsort(selector.ranking_, kind="mergesort").tolist()
    assert order[0] == int(np.argmin(selector.pvalues_))
    # Both colors occur: median threshold keeps half.
    assert 0 < selector.support_.sum() < 6
    # The test of a column reads the score less its resampled score, so the
    # threshold is drawn as a tick on each bar, at the resampled score plus
    # the threshold; no line.
    tested = scores - selector.null_scores_
    assert selector.threshold_ == pytest.approx(np.median(tested))
    assert selector.threshold_ != 0
    assert not [line for line in ax.lines if line.get_gid() == "threshold"]
    (ticks,) = [c for c in ax.collections if c.get_gid() == "null"]
    np.testing.assert_allclose(
        ticks.get_offsets()[:, 0], selector.null_scores_[order] + selector.threshold_
    )
    np.testing.assert_array_equal(
        selector.support_, (tested > selector.threshold_) & (selector.pvalues_ < 0.05)
    )
    legend = [t.get_text() for t in _legend(ax).get_texts()]
    # Issue 28: the rule is said, so a grey bar past the threshold is explained;
    # issue 41: under the axis, where a long rule has room.
    k = selector.support_.sum()
    assert legend[0] == f"selected ({k})"
    caption = " ".join(ax.get_xlabel().split("\n", 1)[1].split())
    assert caption == "Selected: p < 0.05 and score > resampled score + threshold."
    assert any(t.startswith("resampled score\n+ threshold") for t in legend)
    plt.close(ax.figure)
    # The test of the model's use compares the scores with the threshold: a line.
    model = (
        clone(selector).set_params(test="model").fit(*make_data(n=450, p=6, seed=31))
    )
    ax = plot_scores(model)
    x = _threshold_line(ax).get_xdata()
    assert x[0] == x[1] == pytest.approx(model.threshold_)
    assert model.threshold_ == pytest.approx(np.median(model.scores_))
    assert ax.get_xlabel().endswith("\nSelected: p < 0.05 and score > threshold.")
    legend = [t.get_text() for t in _legend(ax).get_texts()]
    assert any(t.startswith("threshold = ") for t in legend)
    plt.close(ax.figure)


def test_the_legend_covers_no_bar(selector):
    for n_shown in (2, 6):
        ax = plot_scores(selector, top=n_shown)
        ax.figure.canvas.draw()
        box = _legend(ax).get_window_extent()
        for bar in ax.patches:
            assert not box.overlaps(bar.get_window_extent())
        plt.close(ax.figure)


def test_error_bars_are_the_standard_error_of_the_score(selector):
    ax = plot_scores(selector)
    assert len(ax.containers) == 2
    errorbar = ax.containers[1]
    (segments,) = [c.get_segments() for c in errorbar.lines[2]]
    se = selector.scores_se_
    assert se.shape == (6,) and np.all(se > 0)
    by_position = {pos: int(label[1:]) for label, _, pos, _ in _bars(ax)}
    assert len(segments) == 6
    for (x_lo, y_lo), (x_hi, y_hi) in segments:
        assert y_lo == y_hi
        j = by_position[round(y_lo)]
        assert (x_lo + x_hi) / 2 == pytest.approx(selector.scores_[j], rel=1e-12)
        assert (x_hi - x_lo) / 2 == pytest.approx(se[j], rel=1e-12)
    assert "s.e." in errorbar.get_label()


def test_one_split_has_error_bars_too_and_they_can_be_off(selector):
    # The standard error comes from the held-out rows, not from the splits.
    X, y = make_data(n=300, p=4, seed=32)
    single = TreeInnerSelector(_booster(), cv=None, random_state=0).fit(X, y)
    assert single.split_scores_.shape == (1, 4)
    ax = plot_scores(single)
    assert len(ax.containers) == 2
    assert "1 split" in ax.get_xlabel()
    assert len(plot_scores(selector, error_bars=False).containers) == 1


def test_top_and_column_order(selector):
    ax = plot_scores(selector, top=3, sort=False)
    rows = _bars(ax)
    assert len(rows) == 3
    best3 = np.argsort(-selector.scores_)[:3]
    assert [row[0] for row in rows] == [f"x{j}" for j in sorted(best3)]
    assert "top 3 of 6" in ax.get_title()
    with pytest.raises(ValueError, match="top must be a positive int"):
        plot_scores(selector, top=0)


def test_feature_names_and_features_cut_by_max_features():
    pd = pytest.importorskip("pandas")
    X, y = make_data(n=450, p=5, seed=33)
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d", "e"])
    sel = TreeInnerSelector(
        _booster(), cv=3, threshold=-np.inf, max_features=2, random_state=0
    ).fit(frame, y)
    fig, ax = plt.subplots()
    assert plot_scores(sel, ax=ax) is ax
    rows = _bars(ax)
    assert sorted(row[0] for row in rows) == list("abcde")
    # All five pass the threshold, only the two best are kept: the others
    # are drawn as not selected.
    colors = [row[3] for row in rows]
    assert colors[:2] == [pytest.approx(to_rgba("tab:blue"))] * 2
    assert colors[2:] == [pytest.approx(to_rgba("0.72"))] * 3


def test_unfitted_selector_is_refused():
    with pytest.raises(NotFittedError):
        plot_scores(TreeInnerSelector())


def test_missing_matplotlib_names_the_extra(selector, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(
        ImportError, match=r'pip install matplotlib \(or the "plot" extra'
    ):
        plot_scores(selector)
    X, y = make_data(n=100, seed=34)
    model = _booster().fit(X, y)
    with pytest.raises(ImportError, match=r'pip install matplotlib \(or the "plot"'):
        plot_score_path(model, X, y)


# -- plot_score_path -----------------------------------------------------------------
@pytest.fixture(scope="module")
def held_out():
    X, y = make_data(n=600, p=8, seed=35)
    model = _booster().fit(X[:300], y[:300])
    return model, X[300:], y[300:]


def _curves(ax):
    return [line for line in ax.lines if line.get_gid() != "zero"]


@pytest.mark.parametrize("attribution", ["predecomp", "treeshap"])
def test_path_ends_at_tree_inner(held_out, attribution):
    model, X, y = held_out
    final = tree_inner(model, X, y, attribution=attribution)
    ax = plot_score_path(model, X, y, attribution=attribution, top=4)
    curves = _curves(ax)
    assert len(curves) == 4
    # The default picks the largest |final score|, in that order.
    top4 = np.argsort(-np.abs(final), kind="mergesort")[:4]
    assert [c.get_label() for c in curves] == [f"x{j}" for j in top4]
    for line, j in zip(curves, top4, strict=True):
        np.testing.assert_array_equal(line.get_xdata(), np.arange(1, 26))
        assert line.get_ydata()[-1] == pytest.approx(final[j], rel=1e-9, abs=1e-9)
    zero = [line for line in ax.lines if line.get_gid() == "zero"]
    assert len(zero) == 1 and list(zero[0].get_ydata()) == [0, 0]
    legend = [t.get_text() for t in _legend(ax).get_texts()]
    assert legend == [f"x{j}" for j in top4]


def test_path_features_by_name_or_index(held_out):
    model, X, y = held_out
    names = list("abcdefgh")
    final = tree_inner(model, X, y)
    ax = plot_score_path(model, X, y, features=["c", 7, -1], feature_names=names)
    curves = _curves(ax)
    assert [c.get_label() for c in curves] == ["c", "h", "h"]
    assert curves[0].get_ydata()[-1] == pytest.approx(final[2], rel=1e-9, abs=1e-9)
    assert len(_curves(plot_score_path(model, X, y, top=None))) == 8
    with pytest.raises(ValueError, match="'z' is not a feature"):
        plot_score_path(model, X, y, features=["z"], feature_names=names)
    with pytest.raises(ValueError, match="out of range"):
        plot_score_path(model, X, y, features=[8])
    with pytest.raises(ValueError, match="feature_names has 2 entries"):
        plot_score_path(model, X, y, feature_names=["a", "b"])
    with pytest.raises(ValueError, match="attribution='shap' is not supported"):
        plot_score_path(model, X, y, attribution="shap")


def test_path_names_from_the_model(held_out):
    pd = pytest.importorskip("pandas")
    model, X, y = held_out
    cols = [f"col{j}" for j in range(8)]
    named = _booster().fit(pd.DataFrame(X, columns=cols), y)
    ax = plot_score_path(named, pd.DataFrame(X, columns=cols), y, top=2)
    assert all(c.get_label().startswith("col") for c in _curves(ax))


def test_groups_are_drawn_one_bar_each():
    X, y = make_data(n=450, p=6, seed=32)
    sel = TreeInnerSelector(
        _booster(), cv=3, random_state=0, feature_groups={"tail": [3, 4, 5]}
    ).fit(X, y)
    ax = plot_scores(sel, pvalues=True)
    rows = _bars(ax)
    assert [r[0] for r in rows][0] in {"x0", "x1", "x2", "tail (3)"}
    assert len(rows) == 4
    by_label = {label: width for label, width, _, _ in rows}
    tail = list(sel.groups_).index("tail")
    assert by_label["tail (3)"] == pytest.approx(sel.group_scores_[tail], rel=1e-12)
    errorbar = ax.containers[1]
    segments = errorbar.lines[2][0].get_segments()
    half = {round(s[0][1]): (s[1][0] - s[0][0]) / 2 for s in segments}
    pos = len(rows) - 1 - [r[0] for r in rows].index("tail (3)")
    assert half[pos] == pytest.approx(sel.group_scores_se_[tail], rel=1e-9)
    assert "of 4 feature groups" in ax.get_title()
    plt.close(ax.figure)
    columns = plot_scores(sel, by_group=False)
    assert len(_bars(columns)) == 6
    plain = TreeInnerSelector(_booster(), cv=3, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="fitted with feature_groups"):
        plot_scores(plain, by_group=True)


def test_plot_refit_curve_marks_both_rules():
    from skl_treeinner._stats._refit_curve import choose_k, curve_standard_error
    from skl_treeinner.plotting import plot_refit_curve

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 6))
    y = X[:, 0] + 0.3 * X[:, 1] + rng.normal(size=300)
    est = xgb.XGBRegressor(n_estimators=30, max_depth=2, n_jobs=1)
    sel = TreeInnerSelector(est, cv=3, max_features="best", random_state=0)
    sel.fit(X, y)
    ax = plot_refit_curve(sel)
    res = sel.cv_results_
    np.testing.assert_allclose(ax.lines[0].get_xdata(), res["n_features"])
    np.testing.assert_allclose(ax.lines[0].get_ydata(), res["mean_test_score"])
    se = curve_standard_error(res)
    labels = ax.get_legend_handles_labels()[1]
    for rule in ("best", "1se"):
        k = choose_k(res["n_features"], res["mean_test_score"], se, rule)
        assert any(label.startswith(f'"{rule}": k = {k}') for label in labels)
    assert "R²" in ax.get_ylabel()
    with pytest.raises(AttributeError, match="max_features='best'"):
        plot_refit_curve(TreeInnerSelector(est, cv=3).fit(X, y))


def test_plot_scores_marks_the_resampled_scores_of_the_column_test():
    """test="column": a tick at each resampled score (what the test compares with)."""
    X, y = make_data(n=400, p=5)
    selector = TreeInnerSelector(
        xgb.XGBRegressor(n_estimators=20, max_depth=2), cv=3, test="column",
        random_state=0, feature_groups={"pair": [0, 1]},
    ).fit(X, y)  # fmt: skip
    for by_group, null in ((False, selector.null_scores_), (True, None)):
        ax = plot_scores(selector, by_group=by_group, sort=False)
        ticks = [c for c in ax.collections if c.get_gid() == "null"]
        assert len(ticks) == 1
        xs = ticks[0].get_offsets()[:, 0]
        expected = selector.group_null_scores_ if by_group else null
        np.testing.assert_allclose(np.sort(xs), np.sort(expected))
        plt.close(ax.figure)


def test_repeats_write_how_often_each_bar_is_kept():
    """n_repeats > 1 (issue 53): "kept in k/R" right of each bar (feature, group)."""
    X, y = make_data(n=300, p=5, seed=32)
    selector = TreeInnerSelector(
        _booster(), cv=3, n_repeats=3, random_state=0,
        feature_groups={"pair": [3, 4]},
    ).fit(X, y)  # fmt: skip
    freq = selector.selection_frequency_
    for by_group, pvalues in ((False, False), (True, True)):
        ax = plot_scores(selector, by_group=by_group, pvalues=pvalues, sort=False)
        (column,) = [a for a in ax.child_axes if a.get_gid() == "pvalue"]
        notes = [t.get_text() for t in column.get_yticklabels()]
        units = list(selector.groups_.values()) if by_group else [[j] for j in range(5)]
        assert len(notes) == len(units)
        for note, cols in zip(notes, units, strict=True):
            assert note.endswith(f"kept in {round(freq[cols[0]] * 3)}/3")
            assert note.startswith("p ") == pvalues
        assert "(sum over 2 splits, mean of 3 repeats)" in ax.get_xlabel()
        plt.close(ax.figure)
    # one repeat: no column unless p-values are asked for
    one = TreeInnerSelector(_booster(), cv=3, random_state=0).fit(X, y)
    ax = plot_scores(one)
    assert not [a for a in ax.child_axes if a.get_gid() == "pvalue"]
    plt.close(ax.figure)
