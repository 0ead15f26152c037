"""Command line of skl-treeinner: ``python -m skl_treeinner demo``."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="skl-treeinner",
        description=(
            "Out-of-sample feature attributions for gradient boosted trees "
            "(PreDecomp and TreeInner)."
        ),
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = sub.add_parser(
        "demo",
        help="fit XGBoost on generated data and compare held-out TreeInner "
        "with in-sample gain",
    )
    demo.add_argument("--rows", type=int, default=2000, help="rows (default 2000)")
    demo.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    args = parser.parse_args(argv)
    if args.command == "demo":
        from ._demo import run_demo

        if args.rows < 100:
            parser.error("--rows must be at least 100")
        run_demo(n_samples=args.rows, seed=args.seed)
        return 0
    parser.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
