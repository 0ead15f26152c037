"""What the selector's first fit in a process pays beyond the later ones (issue 42).

The first fit imports numba and starts its code generator (the kernels come
from numba's on-disk cache), and allocates what later fits reuse. Each of
``--processes`` fresh Python processes fits the default selector ``--fits``
times on the same data and reports its first fit, its fastest later fit and
the difference::

    python benchmarks/first_fit.py --rows 20000 --cols 50 --processes 6

The import of skl_treeinner itself (scipy, scikit-learn, xgboost) is timed
apart, before the first fit.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

CHILD = """
import json, sys, time
start = time.perf_counter()
import numpy as np
from skl_treeinner import TreeInnerSelector
imported = time.perf_counter() - start
rows, cols, fits, cv = {rows}, {cols}, {fits}, {cv}
rng = np.random.default_rng(0)
X = rng.normal(size=(rows, cols))
y = X[:, :5].sum(axis=1) + rng.normal(size=rows)
seconds = []
for _ in range(fits):
    start = time.perf_counter()
    TreeInnerSelector(cv=cv, random_state=0).fit(X, y)
    seconds.append(time.perf_counter() - start)
print(json.dumps({{"import": imported, "fits": seconds}}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--cols", type=int, default=50)
    parser.add_argument("--fits", type=int, default=3)
    parser.add_argument("--processes", type=int, default=6)
    parser.add_argument("--cv", default="None", help="None (one split) or an int")
    args = parser.parse_args()
    code = CHILD.format(rows=args.rows, cols=args.cols, fits=args.fits, cv=args.cv)
    extra, imports = [], []
    print(f"{args.rows} x {args.cols}, cv={args.cv}, {args.fits} fits per process\n")
    print("| process | import | first fit | fastest later fit | first − later |")
    print("|---|---|---|---|---|")
    for p in range(args.processes):
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        got = json.loads(out.stdout.strip().splitlines()[-1])
        first, later = got["fits"][0], min(got["fits"][1:])
        extra.append(first - later)
        imports.append(got["import"])
        print(
            f"| {p + 1} | {got['import']:.2f} s | {first:.2f} s | {later:.2f} s | "
            f"{first - later:+.2f} s |"
        )
    print(
        f"\nmedian: import {statistics.median(imports):.2f} s, first fit's extra "
        f"{statistics.median(extra):+.2f} s (range {min(extra):+.2f} to "
        f"{max(extra):+.2f})"
    )


if __name__ == "__main__":
    main()
