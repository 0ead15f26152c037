"""benchmarks/compare_selectors.py runs in smoke mode, so that it cannot rot.

The smoke run skips selectors whose package is missing (boruta is in the
``bench`` extra, not in ``test``) and says so; the helpers that compute the
measures are checked against scikit-learn.
"""

import importlib.util
import json
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import run_python
from sklearn.metrics import f1_score, precision_score, recall_score

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "compare_selectors.py"


def _load_module():
    # As when run as a script: its folder is on the path (compare_families).
    if str(SCRIPT.parent) not in sys.path:
        sys.path.insert(0, str(SCRIPT.parent))
    spec = importlib.util.spec_from_file_location("compare_selectors", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    out = tmp_path_factory.mktemp("compare")
    csv = out / "rows.csv"
    proc = run_python(
        str(SCRIPT), "--smoke", "--out-dir", str(out), "--csv", str(csv), cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr
    return out, pd.read_csv(csv), proc.stdout


@pytest.mark.slow
def test_smoke_writes_page_and_plots(smoke):
    out, _, stdout = smoke
    page = (out / "selector-comparison.md").read_text()
    assert "<!-- results:start -->" in page and "<!-- results:end -->" in page
    for selector in ("treeinner", "gain-sfm", "permutation"):
        assert f"| {selector} |" in page
    assert "### paper-regression" in page
    for name in ("f1", "refit", "auc", "time-ratio"):
        png = out / "img" / f"compare-{name}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "wrote" in stdout


def test_smoke_rows_are_sane(smoke):
    _, rows, stdout = smoke
    ok = rows[rows["status"] == "ok"]
    assert {"treeinner", "gain-sfm", "permutation"} <= set(ok["selector"])
    for col in ("auc", "precision", "recall", "f1"):
        values = ok[col].dropna()
        assert ((values >= 0) & (values <= 1)).all(), col
    assert np.isfinite(ok["refit"]).all() and (ok["time"] > 0).all()
    # Anything skipped is said so, with the reason.
    for selector in rows.loc[rows["status"] != "ok", "selector"].unique():
        assert f"skipped {selector}" in stdout


def test_time_ratio_of_treeinner_to_itself_is_one(smoke):
    out, rows, _ = smoke
    page = (out / "selector-comparison.md").read_text()
    ratios = re.findall(r"^\| treeinner \|.* \| ([0-9.]+) \|$", page, flags=re.M)
    assert ratios and all(float(r) == 1.0 for r in ratios)
    summary = _load_module().summarize(rows)
    ti = summary[summary["selector"] == "treeinner"]
    np.testing.assert_array_equal(ti["time_ratio"], 1.0)


@pytest.mark.slow
def test_smoke_refuses_docs(tmp_path):
    proc = run_python(str(SCRIPT), "--smoke", "--out-dir", str(ROOT / "docs"), cwd=ROOT)
    assert proc.returncode == 2 and "never writes into docs" in proc.stderr


@pytest.mark.parametrize("seed", range(6))
def test_selection_metrics_match_sklearn(seed):
    cs = _load_module()
    rng = np.random.default_rng(seed)
    relevant = rng.random(20) < 0.3
    relevant[0] = True
    support = rng.random(20) < [0.0, 0.1, 0.5, 0.9, 1.0, 0.5][seed]
    got = cs.selection_metrics(relevant, support)
    kw = {"zero_division": 0}
    assert got["precision"] == pytest.approx(precision_score(relevant, support, **kw))
    assert got["recall"] == pytest.approx(recall_score(relevant, support, **kw))
    assert got["f1"] == pytest.approx(f1_score(relevant, support, **kw))
    assert got["n_sel"] == support.sum()
    assert got["n_false"] == np.sum(support & ~relevant)


def test_selection_metrics_null_case():
    cs = _load_module()
    got = cs.selection_metrics(np.zeros(5, bool), [True, False, True, False, False])
    assert got["n_false"] == 2 and got["precision"] == 0.0
    assert np.isnan(got["recall"]) and np.isnan(got["f1"])
    assert np.isnan(cs.score_auc(np.zeros(5, bool), np.arange(5.0)))
    assert cs.score_auc([True, False, False], [3.0, 1.0, 2.0]) == 1.0


@pytest.mark.slow
def test_from_csv_redraws_the_same_page(smoke, tmp_path):
    out, _, _ = smoke
    proc = run_python(
        str(SCRIPT),
        "--from-csv",
        str(out / "rows.csv"),
        "--out-dir",
        str(tmp_path),
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    page = (tmp_path / "selector-comparison.md").read_text()
    assert page == (out / "selector-comparison.md").read_text()
    assert (tmp_path / "img" / "compare-time-ratio.png").exists()


def _split_run(out, tmp_path):
    """The smoke run's rows saved as two runs, one per data set."""
    rows = pd.read_csv(out / "rows.csv")
    meta = json.loads((out / "rows.csv.meta.json").read_text())
    paths = []
    for i, (_, part) in enumerate(rows.groupby("dataset", sort=False)):
        path = tmp_path / f"part{i}.csv"
        part.to_csv(path, index=False)
        run = {**meta, "command": f"{meta['command']} # part {i}"}
        (tmp_path / f"part{i}.csv.meta.json").write_text(json.dumps(run))
        paths.append(path)
    return paths


@pytest.mark.slow
def test_from_csv_merges_several_runs(smoke, tmp_path):
    out, rows, _ = smoke
    paths = _split_run(out, tmp_path)
    assert len(paths) == 2  # the smoke run covers two data sets
    proc = run_python(
        *(
            [str(SCRIPT), "--from-csv", *map(str, paths)]
            + ["--out-dir", str(tmp_path / "merged")]
        ),
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    merged = (tmp_path / "merged" / "selector-comparison.md").read_text()
    single = (out / "selector-comparison.md").read_text()
    # Every run's command is named; the tables are those of the single run.
    assert "rows of 2 runs" in merged
    assert "# part 0`" in merged and "# part 1`" in merged
    tables = [p.split("### Overview", 1)[1] for p in (merged, single)]
    assert tables[0] == tables[1]


@pytest.mark.slow
def test_from_csv_refuses_the_same_rows_twice(smoke, tmp_path):
    out, _, _ = smoke
    proc = run_python(
        *(
            [str(SCRIPT), "--from-csv"]
            + [str(out / "rows.csv")] * 2
            + ["--out-dir", str(tmp_path)]
        ),
        cwd=ROOT,
    )
    assert proc.returncode == 2 and "more than one run" in proc.stderr
