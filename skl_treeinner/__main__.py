"""Entry point of ``python -m skl_treeinner`` and the ``skl-treeinner`` script.

The command line itself is in :mod:`skl_treeinner._cli._main`.
"""

from __future__ import annotations

import sys

from ._cli._main import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
