"""Progress over long loops: a tqdm bar when tqdm is installed, plain lines if not.

tqdm is an optional extra (``python -m pip install ".[progress]"``). Without
it, progress still shows, as a few plain lines on stderr, so ``verbose=1``
never needs an extra package to do what it says.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from typing import TypeVar

from ._optional import optional_module

T = TypeVar("T")

__all__ = ["progress", "write_line"]

# Plain lines: at most this many per loop (plus the last), so a loop over 1000
# iterations does not flood a log file.
_PLAIN_LINES = 10


def progress(
    iterable: Iterable[T],
    *,
    total: int | None = None,
    desc: str = "",
    verbose: int = 0,
    unit: str = "it",
) -> Iterable[T]:
    """Wrap ``iterable`` so that its progress shows on stderr when ``verbose > 0``.

    Parameters
    ----------
    iterable : iterable
        The loop to follow.
    total : int, optional
        Number of items; taken from ``len(iterable)`` when it has one.
    desc : str, default=""
        What is being done, shown before the count.
    verbose : int, default=0
        0 shows nothing and returns ``iterable`` itself (no overhead).
    unit : str, default="it"
        What one item is ("split", "iteration", ...).

    Returns
    -------
    iterable
        ``iterable`` itself when ``verbose <= 0``; a ``tqdm`` bar writing to
        stderr when tqdm is installed; otherwise a generator printing about
        ten lines ``desc: i/total unit (elapsed s)`` to stderr.
    """
    if not verbose or verbose <= 0:
        return iterable
    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)
    tqdm = optional_module("tqdm")
    if tqdm is None:
        return _plain(iterable, total, desc, unit)
    return tqdm.tqdm(
        iterable, total=total, desc=desc, unit=unit, file=sys.stderr, leave=True
    )


def _plain(iterable: Iterable[T], total, desc, unit) -> Iterator[T]:
    start = time.perf_counter()
    every = max(1, (total or 0) // _PLAIN_LINES) if total else 1
    prefix = f"{desc}: " if desc else ""
    for done, item in enumerate(iterable, 1):
        yield item
        if done % every == 0 or done == total:
            count = f"{done}/{total}" if total else f"{done}"
            print(
                f"{prefix}{count} {unit} ({time.perf_counter() - start:.1f}s)",
                file=sys.stderr,
                flush=True,
            )


def write_line(bar, line: str) -> None:
    """Print ``line`` to stderr without breaking a tqdm bar in progress."""
    write = getattr(bar, "write", None)
    if write is not None:
        write(line, file=sys.stderr)
    else:
        print(line, file=sys.stderr, flush=True)
