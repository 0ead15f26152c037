"""The getting-started page runs, and prints what it shows (issue 41).

Its ``pycon`` blocks are one doctest, run in a temporary folder (the page
saves a plot there). ``python tests/test_getting_started.py`` runs them the
same way and copies the plot to ``docs/img/getting-started-scores.png``, the
picture the page shows.
"""

import doctest
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

#: Fits 21 selectors' boosters: slow (pytest -m 'not slow' skips it).
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "getting-started.md"
PICTURE = ROOT / "docs" / "img" / "getting-started-scores.png"
_BLOCK = re.compile(r"```pycon\n(.*?)```", re.S)


def run_page(folder) -> tuple[int, int, str]:
    """Run the page's snippets in ``folder``: (failures, examples, report)."""
    text = "\n".join(_BLOCK.findall(PAGE.read_text()))
    test = doctest.DocTestParser().get_doctest(
        text, {}, "getting-started", str(PAGE), 0
    )
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    report = []
    here = os.getcwd()
    os.chdir(folder)
    try:
        runner.run(test, out=report.append)
    finally:
        os.chdir(here)
    return runner.failures, len(test.examples), "".join(report)


def test_the_getting_started_page_runs_and_prints_what_it_shows(tmp_path):
    pytest.importorskip("pandas")
    pytest.importorskip("matplotlib")
    failures, examples, report = run_page(tmp_path)
    assert examples >= 25, "the page lost its snippets"
    assert failures == 0, report
    assert (tmp_path / "scores.png").stat().st_size > 10_000


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        failures, _, report = run_page(folder)
        if failures:
            sys.exit(report)
        shutil.copy(Path(folder) / "scores.png", PICTURE)
    print(f"wrote {PICTURE.relative_to(ROOT)}")
