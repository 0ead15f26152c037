"""The demo, the example and the benchmark run, so that they cannot rot."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run(*args, timeout=300):
    out = subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_demo_module():
    stdout = run("-m", "skl_treeinner", "demo", "--rows", "600", "--seed", "3")
    assert "held-out TreeInner" in stdout
    assert stdout.count("yes") == 5  # the five relevant features are marked
    assert "ROC AUC against the truth" in stdout


def test_demo_returns_numbers():
    from skl_treeinner._demo import run_demo

    lines = []
    res = run_demo(n_samples=1000, seed=1, print_fn=lines.append)
    assert res["held_out"].shape == (30,)
    assert res["auc_tree_inner"] > 0.8
    assert any("rank" in line for line in lines)


def test_cli_help_and_bad_args():
    assert "demo" in run("-m", "skl_treeinner", "--help")
    out = subprocess.run(
        [sys.executable, "-m", "skl_treeinner", "demo", "--rows", "5"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2 and "--rows must be at least 100" in out.stderr


@pytest.mark.parametrize("script", sorted((ROOT / "examples").glob("*.py")))
def test_examples_run(script):
    run(str(script))


def test_benchmark_quick():
    stdout = run("benchmarks/bench_tree_inner.py", "--quick")
    assert "ratio tree_inner / leaf routine" in stdout
