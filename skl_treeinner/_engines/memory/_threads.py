"""The thread policy: how many splits run at once, and threads per booster.

One place decides, for every booster the selector fits (docs/performance.md,
"On a busy machine", has the measurements behind each rule):

1. **The cores we may use** are OpenMP's effective limit in this process: the
   cores of the machine or of its cgroup quota, ``OMP_NUM_THREADS``, limits set
   with threadpoolctl, and the limits joblib sets in its workers (inside
   ``GridSearchCV(n_jobs=2)`` on 2 cores: one).
2. **Several splits** (``cv=k``): with ``n_jobs=None`` the splits run in
   threads, as many at once as there are splits and cores, and each booster
   gets its share of the cores (one thread each on a machine with fewer cores
   than splits). A booster's OpenMP threads spin while they wait at the end of
   every parallel region; beside another program that computes, a descheduled
   thread makes the others spin for a whole time slice. Single-threaded
   boosters in parallel share the machine fairly, and are also faster idle
   (the splits are small pieces of work). An explicit ``n_jobs`` is taken as
   it is, with joblib's default backend.
3. **One split** (``cv=None``, or ``n_jobs=1``): the booster gets every core
   we may use, less the cores other programs are using right now (Linux:
   the runnable threads in ``/proc/loadavg``), so that it does not spin
   against them. This is done only for boosters whose models do not depend on
   their thread count (XGBoost, scikit-learn's, CatBoost: their readers'
   ``threads_change_results``); a LightGBM model may (its ``deterministic``
   setting), so it keeps its share.
4. **The user's booster** keeps a thread count it was given explicitly when
   that is lower; it is never raised.

Threads speed boosters up even on small data, so small data gets no rule
of its own.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from joblib import effective_n_jobs

from ..._kernels._compiled import effective_threads

__all__ = [
    "ThreadPlan",
    "available_cores",
    "busy_cores",
    "machine_cores",
    "own_running_threads",
    "plan_threads",
    "threads_of_setting",
]

#: /proc/loadavg is read this many times, this far apart; the least count wins,
#: so that a program that only blinks does not take our threads.
_LOAD_SAMPLES, _LOAD_INTERVAL = 3, 0.003


@dataclass(frozen=True)
class ThreadPlan:
    """How the selector's splits run."""

    #: Splits fitted at once.
    workers: int
    #: Threads each booster is given (an explicit lower setting is kept).
    booster_threads: int
    #: joblib's ``prefer`` (``"threads"`` under the automatic rule), or None.
    prefer: str | None


def available_cores() -> int:
    """Cores this process may use: OpenMP's effective limit (rule 1)."""
    return effective_threads(None)


def machine_cores() -> int:
    """Cores of the whole machine, busy or not (``os.cpu_count``)."""
    return os.cpu_count() or 1


def threads_of_setting(setting: int) -> int:
    """Return the threads a booster's thread setting asks for, as joblib counts.

    A negative setting counts from the machine's cores (-1 every core, -2 all
    but one, at least one), so ``n_jobs=-2`` on 2 cores is one thread.
    """
    return max(1, machine_cores() + 1 + setting) if setting < 0 else setting


def busy_cores() -> int:
    """Threads of other programs running now (Linux ``/proc/loadavg``), else 0.

    The fourth field of ``/proc/loadavg`` counts the runnable threads of the
    whole machine, this process's included: its own running threads are
    taken off (``/proc/self/task``), so that the OpenMP threads of a booster
    it has just fitted, which spin for a while after their work, are not
    mistaken for another program (they made every later one-split fit in a
    process single-threaded). The least of a few readings is taken.
    """
    try:
        counts = []
        for i in range(_LOAD_SAMPLES):
            if i:
                time.sleep(_LOAD_INTERVAL)
            with open("/proc/loadavg", encoding="ascii") as f:
                running = int(f.read().split()[3].split("/")[0])
            counts.append(running - own_running_threads())
    except (OSError, ValueError, IndexError):
        return 0
    return max(0, min(counts))


def own_running_threads() -> int:
    """Count the threads of this process running or runnable now (Linux), at least 1.

    Counted from the state field of ``/proc/self/task/*/stat``; 1 (the thread
    asking) where that cannot be read.
    """
    running = 0
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return 1
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/stat", encoding="ascii") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        running += state == "R"
    return max(1, running)


def plan_threads(n_splits: int, n_jobs, *, threads_change_results: bool) -> ThreadPlan:
    """Decide workers and booster threads for ``n_splits`` splits (see module notes).

    Parameters
    ----------
    n_splits : int
        Splits to fit.
    n_jobs : int or None
        The selector's ``n_jobs``: None for the automatic rule.
    threads_change_results : bool
        Whether the booster's model may depend on its thread count; if so,
        the number of cores busy elsewhere is not looked at.

    Returns
    -------
    ThreadPlan
    """
    cores = available_cores()
    if n_jobs is None:
        workers, prefer = max(1, min(n_splits, cores)), "threads"
    else:
        workers, prefer = max(1, min(effective_n_jobs(n_jobs), n_splits)), None
    if workers > 1:
        return ThreadPlan(workers, max(1, cores // workers), prefer)
    threads = cores
    if not threads_change_results:
        free = machine_cores() - busy_cores()
        threads = max(1, min(cores, free))
    return ThreadPlan(1, threads, None)
