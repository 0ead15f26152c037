"""The getting-started page and the README run, and print what they show (issue 41).

The ``pycon`` blocks of each page are one doctest, run in a temporary folder
(the getting-started page saves a plot there).
``python tests/smoke/test_getting_started.py`` runs the getting-started page the
same way and copies its plot to ``docs/img/getting-started-scores.png``, the
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

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "getting-started.md"
README = ROOT / "README.md"
PICTURE = ROOT / "docs" / "img" / "getting-started-scores.png"
_BLOCK = re.compile(r"```pycon\n(.*?)```", re.S)


def run_page(folder, page=PAGE) -> tuple[int, int, str]:
    """Run the page's snippets in ``folder``: (failures, examples, report)."""
    text = "\n".join(_BLOCK.findall(page.read_text()))
    test = doctest.DocTestParser().get_doctest(text, {}, page.stem, str(page), 0)
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


def test_the_readmes_quick_start_runs_and_prints_what_it_shows(tmp_path):
    failures, examples, report = run_page(tmp_path, README)
    assert examples >= 15, "the README lost its snippets"
    assert failures == 0, report


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        failures, _, report = run_page(folder)
        if failures:
            sys.exit(report)
        shutil.copy(Path(folder) / "scores.png", PICTURE)
    print(f"wrote {PICTURE.relative_to(ROOT)}")
