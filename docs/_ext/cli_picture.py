"""Draw the command line's ``--plot`` figure for docs/cli.md, on real names.

Writes scikit-learn's breast cancer data (shuffled: the file is sorted by
diagnosis) to a CSV with its diagnosis, and the measurement families as a
``--groups`` file, in a temporary folder, then runs::

    skl-treeinner select cancer.csv -t diagnosis --max-features 1se
        --groups groups.json --plot docs/img/cli-plot.png

Usage: python docs/_ext/cli_picture.py
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from sklearn.datasets import load_breast_cancer
from sklearn.utils import shuffle

ROOT = Path(__file__).resolve().parents[2]
PICTURE = ROOT / "docs" / "img" / "cli-plot.png"


def main():
    """Write the data and the groups, run the command line, keep its picture."""
    data = load_breast_cancer(as_frame=True)
    frame = data.frame.rename(columns={"target": "diagnosis"})
    frame["diagnosis"] = frame["diagnosis"].map({0: "malignant", 1: "benign"})
    frame = shuffle(frame, random_state=0)
    groups = {
        "mean values": [c for c in data.feature_names if c.startswith("mean ")],
        "standard errors": [c for c in data.feature_names if c.endswith(" error")],
    }
    with tempfile.TemporaryDirectory() as folder:
        csv, spec = Path(folder) / "cancer.csv", Path(folder) / "groups.json"
        frame.to_csv(csv, index=False)
        spec.write_text(json.dumps(groups))
        command = [
            sys.executable, "-m", "skl_treeinner", "select", str(csv),
            "-t", "diagnosis", "--max-features", "1se", "--groups", str(spec),
            "--random-state", "0", "--plot", str(PICTURE), "-q",
        ]  # fmt: skip
        subprocess.run(command, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    print(f"wrote {PICTURE.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
