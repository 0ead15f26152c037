"""Progress over long loops: silent by default, tqdm or plain lines when verbose."""

import builtins
import sys

import pytest

from skl_treeinner._progress import progress


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
    real_import = builtins.__import__

    def no_tqdm(name, *args, **kwargs):
        if name == "tqdm" or name.startswith("tqdm."):
            raise ImportError("no tqdm")
        return real_import(name, *args, **kwargs)

    monkeypatch.delitem(sys.modules, "tqdm", raising=False)
    monkeypatch.setattr(builtins, "__import__", no_tqdm)
    out = list(progress(range(100), desc="trees", verbose=1, unit="iteration"))
    assert out == list(range(100))
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 10  # about ten lines, not one per item
    assert lines[-1].startswith("trees: 100/100 iteration (")
