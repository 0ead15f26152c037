"""Fitting on the cluster: one split's rows with the booster's own Dask ``fit``.

Each split (and, for the refit curve, each inner split and refit on a subset
of the columns) is fitted by a fresh clone of the booster on lazily taken
rows (:func:`~skl_treeinner._engines.dask._codes.rows_of`), one after the
other; a fit that fails because a worker of the training left the cluster
is tried again (:data:`FIT_RETRIES`).
"""

from __future__ import annotations

import time
import warnings

from sklearn.base import clone

from ..._readers import read_model, reader_class
from ..._utils._progress import progress, write_line
from ..._utils._validation import user_stacklevel
from ._codes import rows_of

__all__ = ["FIT_RETRIES", "fit_all", "fit_with_retries", "take_columns"]


def take_columns(X, columns):
    """Return the lazy ``columns`` (positions) of a Dask array or DataFrame."""
    columns = [int(c) for c in columns]
    if hasattr(X, "iloc"):
        return X.iloc[:, columns]
    return X[:, columns]


def _fit_split(
    dask,
    est,
    rows,
    j,
    *,
    plan_params,
    es_reader,
    weighted,
    feature_names=None,
    inner=False,
    columns=None,
):
    """Fit ``est`` with its own Dask ``fit`` on split j's rows (all lazy).

    For the refit curve: ``inner``, on the inner fitting rows of split j;
    ``columns``, on those columns of X only (``feature_names``: X's, for
    the fit parameters that name columns).
    """
    prefix = "inner-" if inner else ""
    X, y, w = rows_of(dask, rows, j, prefix + "fit")
    if columns is not None:
        X = take_columns(X, columns)
    params = dict(plan_params)
    if columns is not None:  # the user's evaluation sets and the like, cut alike
        params = reader_class(est).fit_params_for_columns(
            params, columns, feature_names=feature_names, take=take_columns
        )
    if weighted:
        params["sample_weight"] = w
    if es_reader is not None:
        X_es, y_es, w_es = rows_of(dask, rows, j, prefix + "stop")
        if columns is not None:
            X_es = take_columns(X_es, columns)
        params.update(
            es_reader.early_stopping_fit_params(
                est,
                X_es,
                y_es,
                sample_weight=w_es if weighted else None,
                fit_params=params,
            )
        )
    est.fit(X, y, **params)
    return est


#: Times a split's training is tried again after a Dask worker was lost under it.
FIT_RETRIES = 2
#: Seconds to wait for the cluster to have its workers back before trying again.
RECOVERY_TIMEOUT = 120
#: What the boosters' collective communication says when a peer died.
_LOST_PEER = (
    "allgather failed",
    "allreduce failed",
    "broadcast failed",
    "poll error",
    "connection closed",
    "connection reset",
    "broken pipe",
    # xgboost.dask before 3, when a worker's task landed on its replacement
    "invalid worker address",
)


def _lost_worker(error) -> bool:
    """Whether ``error`` says that a peer of the training went away.

    Not ``KilledWorker``: Dask raises it after the task already killed
    ``allowed-failures`` workers (memory, a crash), which a retry repeats.
    """
    from distributed.comm.core import CommClosedError

    if isinstance(error, CommClosedError):
        return True
    text = f"{type(error).__name__}: {error}".lower()
    return "error" in type(error).__name__.lower() and any(
        sign in text for sign in _LOST_PEER
    )


def _lost_peer_line(error) -> str:
    """Return the line of ``error``'s message that says what failed."""
    lines = [line.strip(" -") for line in str(error).splitlines()]
    for line in lines:
        if any(sign in line.lower() for sign in _LOST_PEER):
            return line.split("]: ", 1)[-1][:160]
    return (lines[0] if lines else type(error).__name__)[:160]


def _a_worker_left(client, workers, wait=5.0) -> bool:
    """Whether one of ``workers`` (addresses) left, waiting ``wait`` s for the news."""
    deadline = time.monotonic() + wait
    while True:
        if not workers <= set(client.scheduler_info().get("workers", {})):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.1)


def _client_of(est):
    from distributed import default_client

    return getattr(est, "client", None) or default_client()


def fit_with_retries(dask, base, rows, j, name, **split_kwargs):
    """Fit split j, again (same seeds, a fresh clone) where a worker was lost.

    A booster trained by several workers fails as a whole when one dies
    (XGBoost: "Ring allgather failed"); the cluster's nannies restart it.
    The split is fitted again on a fresh clone, once the cluster has as many
    workers as before, at most :data:`FIT_RETRIES` times; each retry warns.
    Everything else a fit raises is raised at once.
    """
    client = _client_of(base)
    for attempt in range(FIT_RETRIES + 1):
        workers = set(client.scheduler_info().get("workers", {}))
        try:
            return _fit_split(dask, clone(base), rows, j, **split_kwargs)
        except Exception as e:
            # A peer's error on bad data reads like a lost one: retry only
            # where a worker of the training really left the cluster.
            if not _lost_worker(e) or not _a_worker_left(client, workers):
                raise
            reason = _lost_peer_line(e)
            if attempt == FIT_RETRIES:
                raise RuntimeError(
                    f"{name}: the training of split {j + 1} failed "
                    f"{FIT_RETRIES + 1} times because a Dask worker was lost "
                    f"({type(e).__name__}: {reason}). Check the workers' memory "
                    "and logs, then fit again."
                ) from e
            warnings.warn(
                f"{name}: a Dask worker was lost while split {j + 1} trained "
                f"({type(e).__name__}: {reason}); fitting it again with the same "
                f"seeds (retry {attempt + 1} of {FIT_RETRIES}).",
                RuntimeWarning,
                stacklevel=user_stacklevel(),
            )
            client.wait_for_workers(max(len(workers), 1), timeout=RECOVERY_TIMEOUT)
    raise AssertionError("unreachable")  # pragma: no cover


def fit_all(fit, n_splits, *, name, verbose):
    """Fit every split with ``fit(j)``, one after the other, on the cluster.

    ``name`` (the selector's class name) prefixes the progress bar and lines.
    """
    estimators = []
    bar = progress(
        range(n_splits),
        total=n_splits,
        desc=f"{name}: fitting on the cluster",
        verbose=verbose,
        unit="split",
    )
    for j in bar:
        start = time.perf_counter()
        estimators.append(fit(j))
        if j == 0:
            # A model the readers refuse (an objective, dart) fails here,
            # before the other splits are fitted.
            read_model(estimators[0])
        if verbose > 1:
            write_line(
                bar,
                f"[{name}] split {j + 1}/{n_splits}: fitted on the cluster in "
                f"{time.perf_counter() - start:.1f}s",
            )
    return estimators
