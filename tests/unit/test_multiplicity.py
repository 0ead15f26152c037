"""Selection with a guarantee on many features: ``control`` (issue 26).

The adjustments are checked against statsmodels' ``multipletests`` (which we
did not write) and the selector re-selects on ``set_params`` without
refitting; on wide data with y independent of X the guarantees hold in
simulation (tests/statistical/test_wide_null.py).
"""

import json

import numpy as np
import pytest
from conftest import small_regressor as _small
from conftest import wide_data as _wide
from hypothesis import given, settings
from hypothesis import strategies as st

from skl_treeinner import TreeInnerSelector
from skl_treeinner._stats._cutoff import CONTROLS, adjusted_pvalues, describe_rule

multitest = pytest.importorskip("statsmodels.stats.multitest")

STATSMODELS = {"family_wise": "holm", "false_discovery": "fdr_bh"}


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.floats(min_value=0.0, max_value=1.0, allow_nan=False), min_size=1,
        max_size=60,
    ),
    st.sampled_from(sorted(STATSMODELS)),
    st.floats(min_value=0.001, max_value=0.5),
)  # fmt: skip
def test_adjustments_match_statsmodels(pvalues, control, alpha):
    p = np.asarray(pvalues)
    expected = multitest.multipletests(p, alpha=alpha, method=STATSMODELS[control])
    got = adjusted_pvalues(p, control, alpha)
    np.testing.assert_allclose(got, expected[1], rtol=1e-12, atol=1e-15)
    # kept exactly where statsmodels rejects (away from ties at alpha)
    away = np.abs(got - alpha) > 1e-12
    np.testing.assert_array_equal((got < alpha)[away], expected[0][away])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.floats(min_value=0.0, max_value=1.0, allow_nan=False), min_size=1,
        max_size=300,
    ),
    st.floats(min_value=0.001, max_value=0.5),
)  # fmt: skip
def test_expected_false_is_a_per_feature_level_of_min_alpha_and_one_over_m(
    pvalues, alpha
):
    p = np.asarray(pvalues)
    level = min(alpha, 1 / p.size)
    kept = adjusted_pvalues(p, "expected_false", alpha) < alpha
    away = np.abs(p - level) > 1e-12 * max(1.0, alpha * p.size)
    np.testing.assert_array_equal(kept[away], (p < level)[away])
    assert np.all(adjusted_pvalues(p, "per_feature", alpha) == p)


def test_set_params_reselects_without_refitting():
    X, y = _wide()
    selector = TreeInnerSelector(_small(), cv=3, random_state=0).fit(X, y)
    fitted = selector.estimators_
    kept = {}
    for control in CONTROLS:
        selector.set_params(control=control)
        assert selector.estimators_ is fitted
        adjusted = selector.pvalues_adjusted_
        np.testing.assert_allclose(
            adjusted, adjusted_pvalues(selector.pvalues_, control, 0.05)
        )
        expected = (adjusted < 0.05) & (selector.scores_ > 0)
        np.testing.assert_array_equal(selector.support_, expected)
        kept[control] = set(np.flatnonzero(selector.support_))
    assert {0, 1} <= kept["family_wise"]  # the two real columns survive Holm
    assert len(kept["per_feature"]) > len(kept["family_wise"])  # noise let in
    fresh = TreeInnerSelector(_small(), cv=3, random_state=0, control="family_wise")
    selector.set_params(control="family_wise")
    np.testing.assert_array_equal(fresh.fit(X, y).support_, selector.support_)


def test_a_bad_control_fails_fit_and_a_later_bad_one_fails_at_use():
    X, y = _wide(m=10)
    with pytest.raises(ValueError, match="control"):
        TreeInnerSelector(_small(), control="bonferroni").fit(X, y)
    selector = TreeInnerSelector(_small(), cv=2).fit(X, y)
    selector.control = "bonferroni"
    with pytest.raises(ValueError, match="control"):
        selector.get_support()


def test_rules_are_described():
    assert describe_rule("per_feature", 0.05, 10) == "p < 0.05"
    assert describe_rule("family_wise", 0.01, 10) == "Holm-adjusted p < 0.01"
    # Up to 1/alpha features expected_false is the per-feature rule, said so.
    assert describe_rule("expected_false", 0.05, 20) == "p < 0.05"
    assert describe_rule("expected_false", 0.05, 21).startswith("p < 0.0476 = min(")
    assert describe_rule("expected_false", 0.05, 200).startswith("p < 0.005 = ")
    assert describe_rule("false_discovery", None, 10) == "no test"


def test_expected_false_keeps_one_null_feature_on_average_from_uniform_pvalues():
    # The rule's promise where its assumption holds exactly (uniform p-values):
    # E[false picks] = m · min(alpha, 1/m) = 1 for m >= 20, alpha · m below.
    rng = np.random.default_rng(0)
    for m, expected in ((500, 1.0), (10, 0.5)):
        picks = [
            int((adjusted_pvalues(rng.random(m), "expected_false", 0.05) < 0.05).sum())
            for _ in range(4000)
        ]
        assert abs(np.mean(picks) - expected) < 4 * np.std(picks) / np.sqrt(4000)
        per_feature = [
            int((rng.random(m) < 0.05).sum()) for _ in range(400)
        ]  # the uncorrected rule keeps alpha · m
        assert np.mean(per_feature) == pytest.approx(0.05 * m, rel=0.15)


def test_missing_pvalues_count_as_tested_and_are_never_kept():
    p = np.array([0.001, np.nan, 0.02, 0.9])
    for control in CONTROLS:
        adjusted = adjusted_pvalues(p, control, 0.05)
        assert np.isnan(adjusted[1]) and np.isfinite(np.delete(adjusted, 1)).all()
    holm = adjusted_pvalues(p, "family_wise", 0.05)
    np.testing.assert_allclose(holm[[0, 2, 3]], [0.004, 0.06, 1.0])


def test_cli_prints_and_writes_the_adjusted_values(capsys, tmp_path):
    pd = pytest.importorskip("pandas")
    from skl_treeinner._cli._main import main

    X, y = _wide(n=200, m=30)
    frame = pd.DataFrame(X, columns=[f"c{j}" for j in range(X.shape[1])])
    frame["y"] = y
    data, out = tmp_path / "wide.csv", tmp_path / "scores.json"
    frame.to_csv(data, index=False)
    status = main(
        [
            "select", str(data), "-t", "y", "--n-estimators", "40", "--cv", "3",
            "--control", "family_wise", "--out", str(out), "-q",
        ]
    )  # fmt: skip
    stdout = capsys.readouterr().out
    assert status == 0
    assert "adj. p" in stdout
    # The adjusted column lines up: its header ends where its values end.
    lines = stdout.splitlines()
    header = next(line for line in lines if "adj. p" in line)
    end = header.index("adj. p") + len("adj. p")
    first = lines[lines.index(header) + 1]
    assert first[end - 1].isdigit() and first[end] == " "
    assert "(Holm-adjusted p < 0.05 and score > resampled score)" in stdout
    doc = json.loads(out.read_text())
    assert doc["control"] == "family_wise"
    p = np.array([f["pvalue"] for f in doc["features"]])
    adjusted = np.array([f["pvalue_adjusted"] for f in doc["features"]])
    expected = multitest.multipletests(p, method="holm")[1]
    np.testing.assert_allclose(adjusted, expected, rtol=1e-12)
    kept = [f["feature"] for f in doc["features"] if f["selected"]]
    assert kept == doc["selected"] and "c0" in kept


def test_plot_scores_names_the_rule():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from skl_treeinner.plotting import plot_scores

    X, y = _wide(m=40)
    selector = TreeInnerSelector(_small(), cv=2, control="expected_false").fit(X, y)
    rule = " ".join(plot_scores(selector).get_xlabel().split("\n", 1)[1].split())
    assert rule == (
        "Selected: p < 0.025 = min(0.05, 1/40): at most 1 false pick expected "
        "and score > resampled score."
    )
    # pvalues=True writes the adjusted p-value the selection used beside each bar
    from skl_treeinner._stats._report import format_pvalue

    ax = plot_scores(selector, pvalues=True, top=5)
    (column,) = [a for a in ax.child_axes if a.get_gid() == "pvalue"]
    texts = [t.get_text() for t in column.get_yticklabels()]
    best = np.argsort(selector.ranking_, kind="mergesort")[:5]  # the test's order
    assert texts == [
        f"adj. p {format_pvalue(selector.pvalues_adjusted_[j])}" for j in best
    ]
    assert selector.pvalues_adjusted_[best[-1]] == pytest.approx(
        min(1.0, 40 * 0.05 * selector.pvalues_[best[-1]])
    )
    # Where the rule changes nothing (40 features at 0.01), the legend says
    # the per-feature rule, and the values are plain p.
    selector.set_params(alpha=0.01)
    ax = plot_scores(selector, pvalues=True)
    assert ax.get_xlabel().endswith("\nSelected: p < 0.01 and score > resampled score.")
    (column,) = ax.child_axes
    assert all(t.get_text().startswith("p ") for t in column.get_yticklabels())
