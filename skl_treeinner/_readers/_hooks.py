"""What a reader knows of its library's estimators, before any model is fitted.

Class methods only: the selector and the command line build, prepare, fit
and refit a library's unfitted booster through them, so that no module
outside ``_readers/`` names a library's parameters (``tests/unit/test_architecture.py``
holds the list it checks).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["BoosterSettings", "EstimatorHooks"]


@dataclass(frozen=True)
class BoosterSettings:
    """What :func:`~skl_treeinner._readers.make_estimator` asks a reader to build."""

    #: A classifier rather than a regressor.
    classifier: bool
    #: Boosting rounds, learning rate and tree depth.
    n_estimators: int
    learning_rate: float
    max_depth: int
    #: Fraction of the features each tree (HistGradientBoosting: each split)
    #: may use.
    colsample: float = 1.0
    #: The booster's seed.
    random_state: int | None = None
    #: Turn on the booster's own categorical support where it needs turning on.
    categorical: bool = False
    #: Threads, where the booster has a setting for them.
    n_jobs: int | None = None
    #: Rows of the whole data the selector was given, when known: a library
    #: whose cost grows with its bins whatever the rows sets them from it
    #: (XGBoost, :func:`~._xgboost.bins_for_rows`).
    n_rows: int | None = None


class EstimatorHooks:
    """The library's estimators, as :class:`~._base.ModelReader` knows them."""

    #: The estimator's parameter for its thread count (None: it has none).
    thread_parameter: str | None = "n_jobs"
    #: The booster's settings that name X's columns by position (one entry
    #: per column, or lists of positions): a refit on a subset of the
    #: columns would apply them to other columns, so the refit curve refuses
    #: them (:meth:`check_refit_settings`).
    positional_settings: tuple[str, ...] = ()

    @classmethod
    def make_estimator(cls, settings: BoosterSettings):
        """Build an unfitted booster of this library from ``settings``."""
        raise NotImplementedError(f"{cls.__name__} cannot build an estimator.")

    @classmethod
    def target_offset_limit(cls, estimator) -> float | None:
        """Largest |mean(y)| / mean |y - mean(y)| ``estimator``'s margins hold.

        For regressors on the identity link whose margins are float32, where
        rounding far from 0 swallows the trees' small steps; None (no limit)
        by default and for other objectives.
        """
        return None

    @classmethod
    def fit_input(cls, X):
        """Return X as the booster's ``fit`` should get it (unchanged by default)."""
        return X

    @classmethod
    def threads_change_results(cls, estimator) -> bool:
        """Whether the booster's model may depend on its thread count.

        If not, the selector may give a single booster fewer threads while
        other programs keep the cores busy (``_threads``, rule 3). True
        unless a reader has measured otherwise.
        """
        return True

    @classmethod
    def prepare_estimator(cls, estimator, X) -> None:
        """Set what the booster must be told about X before it is fitted on it.

        Called on the selector's unfitted copy of the booster, with the X that
        reaches it, or ``X=None`` when it ends a Pipeline (whose steps change
        X first): settings that do not depend on X are still set or refused.
        Nothing by default; CatBoost is told which columns are categorical
        and kept to CTRs of one column.
        """

    @classmethod
    def early_stopping_rows_needed(cls, estimator, fit_params: dict) -> bool:
        """Whether ``estimator.fit`` will stop early on rows the caller sets aside.

        False unless the library is told to stop early and the user passed no
        rows for it (an ``eval_set``) in ``fit_params``. Libraries that set
        their own validation rows aside (scikit-learn's) never need them.
        """
        return False

    @classmethod
    def early_stopping_fit_params(
        cls, estimator, X_es, y_es, *, sample_weight, fit_params: dict
    ) -> dict:
        """Fit parameters that hand the early-stopping rows to the library."""
        raise NotImplementedError(f"{cls.__name__} needs no early-stopping rows.")

    @classmethod
    def check_refit_settings(cls, estimator) -> None:
        """Refuse, before any fit, settings that index X's columns by position.

        A refit of the curve drops columns, so a list of column positions
        (or one entry per column) would silently apply to other columns.
        Names (a pandas ``category`` dtype, a dict of names) follow the
        columns and are kept; a refit whose kept columns lack a named one
        fails with the booster's message.
        """
        params = estimator.get_params(deep=False)
        for key in cls.positional_settings:
            value = params.get(key)
            if value is None or isinstance(value, dict | str):
                continue
            flat = np.asarray(value, dtype=object).ravel()
            if flat.size and not all(isinstance(v, str) for v in flat):
                raise ValueError(
                    f"max_features='best'/'1se' refits {type(estimator).__name__} "
                    f"on subsets of X's columns, and its {key}={value!r} names "
                    "columns by position, which would then point at other "
                    "columns. Name the columns instead (by their names, or "
                    "categorical columns by a pandas 'category' dtype), or choose "
                    "k yourself (max_features=int)."
                )

    @classmethod
    def fit_params_for_columns(
        cls, fit_params: dict, columns, *, feature_names, take: Callable
    ) -> dict:
        """Return ``fit_params`` for a refit on ``columns`` (positions) of X only.

        ``take(X, columns)`` cuts a data set to those columns (rows in memory
        or a Dask collection); ``feature_names`` are X's column names, or
        None. By default the user's evaluation sets (``eval_set=[(X, y),
        ...]``, as XGBoost, LightGBM and CatBoost take them) are cut alike.
        """
        params = dict(fit_params)
        if params.get("eval_set"):
            params["eval_set"] = [
                (take(X_e, columns), *rest) for X_e, *rest in params["eval_set"]
            ]
        return params
