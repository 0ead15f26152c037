"""Progress over long loops: silent by default, tqdm or plain lines when verbose."""

import sys

import pytest

from skl_treeinner._utils._progress import progress


def test_silent_returns_the_iterable_itself():
    items = [1, 2, 3]
    assert progress(items, desc="x", verbose=0) is items


def test_tqdm_bar_on_stderr(capsys):
    pytest.importorskip("tqdm")
    assert list(progress(range(5), desc="splits", verbose=1, unit="split")) == [
        0,
        1,
        2,
        3,
        4,
    ]
    err = capsys.readouterr().err
    assert "splits" in err and "5/5" in err


def test_plain_lines_without_tqdm(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm fails
    out = list(progress(range(100), desc="trees", verbose=1, unit="iteration"))
    assert out == list(range(100))
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 10  # about ten lines, not one per item
    assert lines[-1].startswith("trees: 100/100 iteration (")
