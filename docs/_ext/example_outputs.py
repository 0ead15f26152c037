"""Run the examples docs/examples.md shows and write each one's output under it.

docs/examples.md includes every example with ``--8<-- "examples/NAME.py"``
and quotes its output in the next ````` ```text ````` block after "Output:";
another page (docs/plots.md) quotes an example's output in the
````` ```text ````` block after ``<!-- output of examples/NAME.py -->``. This
script runs each example (from the repository root, as the pages say to) and
puts its standard output in that block, so that the quoted outputs are
generated, never typed.

Usage::

    python docs/_ext/example_outputs.py [NAME ...]

With names (``rare_levels``), only those examples run. An example that fails
stops the script with its error, and the page is left as it was.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "docs" / "examples.md", ROOT / "docs" / "plots.md"]
BLOCK = re.compile(
    r'((?:--8<-- "examples/(?P<name>\w+)\.py"\n```\n\nOutput:\n\n'
    r"|<!-- output of examples/(?P<other>\w+)\.py -->\n)```text\n)"
    # The fence that closes the block starts a line (lookbehind): an empty
    # block has no newline of its own before it.
    r"(?P<output>.*?)(?<=\n)(```)",
    re.S,
)


def main(argv=None):
    """Run the examples (those named in ``argv``, or all) and rewrite the page."""
    only = set(sys.argv[1:] if argv is None else argv)
    outputs = {}

    def run(match):
        name = match["name"] or match["other"]
        if only and name not in only:
            return match[0]
        if name in outputs:
            return match[1] + outputs[name] + "\n" + match[5]
        print(f"running examples/{name}.py", flush=True)
        out = subprocess.run(
            [sys.executable, f"examples/{name}.py"],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        if out.returncode:
            sys.exit(f"examples/{name}.py failed:\n{out.stderr}")
        outputs[name] = out.stdout.rstrip("\n")
        return match[1] + outputs[name] + "\n" + match[5]

    for page in PAGES:
        page.write_text(BLOCK.sub(run, page.read_text()))
        print(f"wrote {page.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
