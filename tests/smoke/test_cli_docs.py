"""docs/cli.md quotes what the command line prints (issue 41: generate, never type).

The page's ``houses.csv`` snippet is run, then the ``select`` command it
shows, and the table is compared with the page's; the ``demo``'s output is
compared too, its timing aside. If a change to the numbers is right, paste
the new output into the page (the failure message holds it).
"""

import re
from pathlib import Path

import pytest
from conftest import run_python

pytest.importorskip("pandas")

#: Fits the command line's selectors: slow (pytest -m 'not slow' skips).
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "cli.md"
#: A fit's wall time, the one thing the page cannot quote.
_TIMING = re.compile(r"\d+\.\ds\)")


def _blocks(fence):
    return re.findall(rf"```{fence}\n(.*?)```", PAGE.read_text(), re.S)


def _run_cli(*args, cwd):
    return run_python("-m", "skl_treeinner", *args, cwd=cwd)


def _cli(*args, cwd):
    out = _run_cli(*args, cwd=cwd)
    assert out.returncode == 0, out.stderr
    return out.stdout


def _compare(quoted, printed, command):
    if quoted.strip() != printed.strip():
        pytest.fail(
            f"docs/cli.md no longer quotes what `{command}` prints; if the change "
            f"is right, paste it there:\n--- quoted\n{quoted}\n--- printed\n{printed}"
        )


def test_the_select_table_on_houses_csv_is_what_the_command_prints(tmp_path):
    (snippet,) = [b for b in _blocks("python") if 'to_csv("houses.csv"' in b]
    assert run_python("-c", snippet, cwd=tmp_path).returncode == 0
    console = next(b for b in _blocks("console") if "%|" in b)  # the one with a bar
    command, *shown = console.splitlines()
    args = command.removeprefix("$ skl-treeinner ").split()
    quoted = "\n".join(line for line in shown if "%|" not in line)  # the bar: stderr
    _compare(quoted, _cli(*args, cwd=tmp_path), command)


def test_the_demo_prints_what_the_page_quotes(tmp_path):
    (quoted,) = [b for b in _blocks("") if b.startswith("skl-treeinner demo: ")]
    printed = _cli("demo", cwd=tmp_path)
    _compare(_TIMING.sub("…s)", quoted), _TIMING.sub("…s)", printed), "demo")


def test_the_errors_are_what_the_command_prints(tmp_path):
    (snippet,) = [b for b in _blocks("python") if 'to_csv("houses.csv"' in b]
    assert run_python("-c", snippet, cwd=tmp_path).returncode == 0
    (console,) = [b for b in _blocks("console") if "skl-treeinner: error:" in b]
    lines = console.splitlines()
    pairs = list(zip(lines[::2], lines[1::2], strict=True))
    assert len(pairs) >= 3
    for command, quoted in pairs:
        args = command.removeprefix("$ skl-treeinner ").split()
        out = _run_cli(*args, cwd=tmp_path)
        assert out.returncode == 1
        _compare(quoted, out.stderr, command)
