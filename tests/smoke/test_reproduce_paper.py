"""benchmarks/reproduce_paper.py runs in its smoke mode, so that it cannot rot."""

import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import run_python

from skl_treeinner import global_importance
from skl_treeinner._readers import read_model
from skl_treeinner.datasets import make_paper_simulation

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "reproduce_paper.py"


def load_script():
    spec = importlib.util.spec_from_file_location("reproduce_paper", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_smoke_run_writes_table_and_plot(tmp_path):
    out = run_python(str(SCRIPT), "--smoke", "--out-dir", str(tmp_path), cwd=ROOT)
    assert out.returncode == 0, out.stderr
    page = (tmp_path / "paper-reproduction.md").read_text()
    family = r"\| (Abs|ForestInner|Permutation|TreeInner) \| "
    rows = [line for line in page.splitlines() if re.match(family, line)]
    labels = [" | ".join(cell.strip() for cell in r.split("|")[1:4]) for r in rows]
    script = load_script()
    assert labels == [script.row_label(row) for row in script.TABLE_ROWS]
    assert len(labels) == 14 + 2  # Table 4's simulated rows, then cross-fitting
    for row in rows:
        cells = [c.strip() for c in row.split("|")[1:-1]]
        # GFA, rows, IFA, then per task: paper mean ± sd, ours mean ± sd, se.
        assert len(cells) == 9
        for paper, ours, se in (cells[3:6], cells[6:9]):
            assert (paper == "-") == ("cross-fit" in row)
            mean, sd = (float(v) for v in ours.split("±"))
            assert 0.0 <= mean <= 1.0 and sd >= 0.0 and float(se) >= 0.0
    assert "regression | mean squared error" in page
    assert page.count("<!-- reproduce_paper:") == 4  # table and sweep blocks
    assert "| regression | TreeInner | out-of-sample | PreDecomp |" in page
    png = tmp_path / "img" / "paper-depth-sweep.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "TreeInner | out-of-sample | PreDecomp" in out.stdout


def test_paper_values_cover_the_simulated_rows():
    script = load_script()
    for task in script.TASKS:
        paper_rows = [r for r in script.TABLE_ROWS if (task, *r) in script.PAPER]
        assert len(paper_rows) == 14
    # Table 4, out-of-sample TreeInner with PreDecomp (DESIGN-NOTES).
    key = ("classification", "tree_inner", "valid", "predecomp")
    assert script.PAPER[key] == (0.7856, 0.1277)


def test_summarise_and_replace_block():
    script = load_script()
    mean, sd, se = script.summarise([0.5, 0.7, 0.9])
    assert np.isclose(mean, 0.7) and np.isclose(sd, 0.2)
    assert np.isclose(se, 0.2 / np.sqrt(3))
    page = "# Title\n\nprose\n\n" + script.replace_block("", "table", "old")
    page += "\nmore prose\n"
    new = script.replace_block(page, "table", "new table")
    assert new == page.replace("\nold\n", "\nnew table\n")
    assert script.replace_block(new, "table", "new table") == new  # idempotent
    both = script.replace_block(new, "sweep", "curves")
    assert both.startswith(new) and both.count("reproduce_paper: sweep") == 2
    assert script.replace_block(both, "table", "t2").count("curves") == 1


def test_shared_treeshap_pass_matches_global_importance():
    """The table's one-pass TreeSHAP GFAs are the library's, method by method."""
    script = load_script()
    X, y, _ = make_paper_simulation("classification", 300, random_state=0)
    for task, target in (("classification", y), ("regression", X[:, 0] + X[:, 1])):
        model = script.make_booster(task, 0, n_estimators=15).fit(X[:150], target[:150])
        shared = script.treeshap_gfas(read_model(model), X[150:], target[150:])
        for method, scores in shared.items():
            expected = global_importance(
                model, X[150:], target[150:], method=method, attribution="treeshap"
            )
            np.testing.assert_allclose(scores, expected, rtol=1e-6, atol=1e-9)
