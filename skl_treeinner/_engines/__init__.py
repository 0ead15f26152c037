"""Engines and the one place that chooses between them.

Where the rows live decides how they are read: in this process (numpy,
pandas, polars, sparse) or in a Dask collection on a cluster. Each engine
(:class:`~skl_treeinner._engines._base.Engine`) runs the public entries,
:func:`~skl_treeinner.predecomp`, :func:`~skl_treeinner.tree_inner` and
:class:`~skl_treeinner.TreeInnerSelector`'s ``fit`` and ``transform``, for its
kind of input, with the same shared primitives. The public entries ask
:func:`engine_for` which engine runs; nothing else in the package imports an
engine, and the engines do not import each other.

The engines are ``memory`` and ``dask``. The selector's ``fit`` is written once
(:mod:`._flow`) from the plan the selector builds (:mod:`._plan`, the engines'
input); an engine supplies its hooks (:class:`~._base.Engine`). Adding an
engine means adding its module (or folder) here and one entry of
:data:`ENGINES`; the libraries' own estimators for it, if the selector fits
boosters there, are rows of the reader registry (``Library.engines``).
"""

from __future__ import annotations

from ._base import Engine
from ._flow import fit_selection as _fit_selection
from .dask import DASK
from .memory import IN_MEMORY

__all__ = [
    "ENGINES",
    "IN_MEMORY",
    "engine_for",
    "engine_for_any",
    "fit_selection",
    "refuse_others",
]

#: Engines for rows outside this process, asked in this order; rows that none
#: accepts are in memory (:data:`IN_MEMORY`).
ENGINES: tuple[Engine, ...] = (DASK,)


def engine_for(X, *companions, what: str = "This function") -> Engine:
    """Return the engine that runs a public entry on ``X``.

    ``companions`` (y, the weights) of rows in memory must be in memory too:
    another engine's collection among them is refused with its message
    (:func:`refuse_others`); with X in another engine, that engine checks them.
    """
    engine = engine_for_any(X)
    if engine is IN_MEMORY:
        refuse_others(*companions, what=what)
    return engine


def engine_for_any(*objs) -> Engine:
    """Return the first engine that accepts any of ``objs`` (the selector's fit)."""
    for engine in ENGINES:
        if any(engine.accepts(obj) for obj in objs):
            return engine
    return IN_MEMORY


def fit_selection(plan) -> dict:
    """Run the selector's one fit (:mod:`._flow`) with the engine of its data."""
    return _fit_selection(plan, engine_for_any(plan.X, plan.y, plan.sample_weight))


def refuse_others(*objs, what: str) -> None:
    """Raise a TypeError if any of ``objs`` belongs to an engine other than memory.

    For the functions that have only an in-memory path (``global_importance``):
    they would otherwise compute a whole collection into this process.
    """
    engine = engine_for_any(*objs)
    if engine is not IN_MEMORY:
        raise TypeError(engine.refusal(what))
