"""Readers: turn a fitted model of some library into a :class:`TreeEnsemble`.

Each reader lives in its own module and is registered below by the types it
accepts: ``_xgboost`` (with ``_ubjson``, its binary format, and
``_xgboost_node_values``, its nodes' values and learning rates), ``_lightgbm``
(with ``_lightgbm_text``, its model text), ``_catboost``, ``_sklearn``
(scikit-learn's boosters, with ``_sklearn_gb`` for the classic
GradientBoosting). ``_base`` holds what every reader shares (``ModelReader``:
routing in chunks and its check, the read cache), ``_hooks`` what a reader
knows of its library's estimators before a model is fitted. Types are checked
through ``sys.modules`` (like shap's ``safe_isinstance``), so a library that
the user never imported is never imported just to test a type.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..exceptions import IdentityWarning
from ._base import BoosterSettings, ModelReader

__all__ = [
    "EngineEstimators",
    "LIBRARIES",
    "ModelReader",
    "SUPPORTED_MODELS",
    "DEFAULT_LIBRARY",
    "default_estimator",
    "default_library",
    "engine_estimator_names",
    "engine_estimators",
    "engine_twin",
    "engine_twin_name",
    "make_estimator",
    "read_model",
    "reader_class",
]


@dataclass(frozen=True)
class EngineEstimators:
    """A library's own estimators for an engine other than in memory (e.g. Dask).

    An engine (``skl_treeinner._engines``) fits the selector's boosters with
    these where the data live outside this process; what they are called and
    what they can do is library knowledge, so it is kept here.
    """

    #: Module that defines them (checked in ``sys.modules``, never imported).
    module: str
    #: The class they all derive from, in ``module``.
    base: str
    #: The in-memory estimator's class name and its twin's dotted name.
    twins: Mapping[str, str]
    #: Why they cannot stop early (refused), or ``""`` where they can.
    no_early_stopping: str = ""
    #: Fit parameters that hold other rows (evaluation sets), passed on
    #: untouched rather than split with the rows: names, or prefixes ending
    #: in ``_``.
    passed_on: tuple[str, ...] = ("eval_",)


@dataclass(frozen=True)
class Library:
    """One row of the registry: a library's model types and the reader for them."""

    #: Short name, as the command line's ``--estimator`` takes it.
    key: str
    #: Name shown to users.
    label: str
    #: Module that defines the model types.
    module: str
    #: Names of the model types (checked with ``isinstance``).
    types: tuple[str, ...]
    #: The reader, as ``"module:class"`` relative to this package.
    reader: str
    #: The supported models, as error messages and docs list them.
    models: str
    #: The distribution that installs it (``--version`` reports its version).
    distribution: str = ""
    #: Whether :func:`make_estimator` can build this library's booster.
    buildable: bool = True
    #: Its estimators for other engines, by engine name (``"dask"``).
    engines: Mapping[str, EngineEstimators] = field(default_factory=dict)


#: The registry. Adding a library means adding a reader module and a row here.
LIBRARIES: tuple[Library, ...] = (
    Library(
        "xgboost",
        "XGBoost",
        "xgboost",
        ("Booster", "XGBModel"),
        "._xgboost:XGBoostReader",
        "xgboost.Booster, xgboost.XGBRegressor, xgboost.XGBClassifier (any "
        "xgboost.XGBModel with a tree booster)",
        distribution="xgboost",
        engines={
            "dask": EngineEstimators(
                "xgboost.dask",
                "DaskScikitLearnBase",
                {
                    "XGBRegressor": "xgboost.dask.DaskXGBRegressor",
                    "XGBClassifier": "xgboost.dask.DaskXGBClassifier",
                },
                passed_on=("eval_", "sample_weight_eval_set", "base_margin_eval_set"),
            )
        },
    ),
    Library(
        "lightgbm",
        "LightGBM",
        "lightgbm",
        ("Booster", "LGBMModel"),
        "._lightgbm:LightGBMReader",
        "lightgbm.Booster, lightgbm.LGBMRegressor, lightgbm.LGBMClassifier",
        distribution="lightgbm",
        engines={
            "dask": EngineEstimators(
                "lightgbm.dask",
                "_DaskLGBMModel",
                {
                    "LGBMRegressor": "lightgbm.DaskLGBMRegressor",
                    "LGBMClassifier": "lightgbm.DaskLGBMClassifier",
                },
                no_early_stopping=(
                    "LightGBM's Dask estimators cannot stop early (LightGBM "
                    "issues #4189 and #6351: training hangs when workers stop "
                    "at different rounds)"
                ),
            )
        },
    ),
    Library(
        "catboost",
        "CatBoost",
        "catboost",
        ("CatBoost",),
        "._catboost:CatBoostReader",
        "catboost.CatBoostRegressor, catboost.CatBoostClassifier, catboost.CatBoost "
        "(symmetric trees)",
        distribution="catboost",
    ),
    Library(
        "hgb",
        "scikit-learn HistGradientBoosting",
        "sklearn.ensemble",
        ("HistGradientBoostingRegressor", "HistGradientBoostingClassifier"),
        "._sklearn:HistGradientBoostingReader",
        "scikit-learn's HistGradientBoostingRegressor/Classifier",
        distribution="scikit-learn",
    ),
    Library(
        "gb",
        "scikit-learn GradientBoosting",
        "sklearn.ensemble",
        ("GradientBoostingRegressor", "GradientBoostingClassifier"),
        "._sklearn_gb:GradientBoostingReader",
        "scikit-learn's GradientBoostingRegressor/Classifier",
        distribution="scikit-learn",
        # Its log-loss leaves are line-searched: Prop. 3 only approximately.
        buildable=False,
    ),
)

SUPPORTED_MODELS = "; ".join(library.models for library in LIBRARIES)
"""The models every public function reads, one registry row each (a string)."""

#: The default booster of the selector, the command line and the benchmarks:
#: the paper's standard hyper-parameters (paper 000, Sec. 4.1) and each tree
#: drawing half of the features (``colsample``), which the selector comparison
#: measured to keep more real columns and fewer noise ones than all features
#: per tree (docs/selector-comparison.md, "Choosing the defaults"). The
#: selector and the command line also pass the rows (XGBoost's bins follow
#: them below 4,096: :func:`~._xgboost.bins_for_rows`); built as
#: ``default_estimator(classifier, seed)``, without the rows, it keeps 256
#: bins.
DEFAULT_BOOSTER_PARAMS = {
    "n_estimators": 400,
    "learning_rate": 0.01,
    "max_depth": 4,
    "colsample": 0.5,
}


def _load(library: Library) -> type[ModelReader]:
    module_path, class_name = library.reader.split(":")
    return getattr(importlib.import_module(module_path, __name__), class_name)


def reader_class(model) -> type[ModelReader] | None:
    """Return the reader class for ``model`` (fitted or not), or ``None``.

    Only libraries already imported are checked, so nothing is imported just
    to test a type.
    """
    for library in LIBRARIES:
        module = sys.modules.get(library.module)
        if module is None:
            continue
        types = tuple(getattr(module, name) for name in library.types)
        if isinstance(model, types):
            return _load(library)
    return None


def engine_estimators(engine: str, estimator) -> EngineEstimators | None:
    """Return the registry's entry for ``estimator`` if it is one of ``engine``'s.

    Only libraries already imported are checked, as :func:`reader_class` does.
    """
    for library in LIBRARIES:
        entry = library.engines.get(engine)
        module = None if entry is None else sys.modules.get(entry.module)
        if module is not None and isinstance(estimator, getattr(module, entry.base)):
            return entry
    return None


def engine_twin_name(engine: str, estimator) -> str | None:
    """Dotted name of ``engine``'s twin of an in-memory ``estimator``, or None."""
    name = type(estimator).__name__
    for library in LIBRARIES:
        entry = library.engines.get(engine)
        if entry is not None and name in entry.twins:
            return entry.twins[name]
    return None


def engine_twin(engine: str, estimator):
    """Build ``engine``'s twin of the unfitted ``estimator``, with its parameters."""
    dotted = engine_twin_name(engine, estimator)
    if dotted is None:
        raise TypeError(
            f"{type(estimator).__name__} has no {engine} version; pass one of "
            f"{engine_estimator_names(engine)}."
        )
    module, _, name = dotted.rpartition(".")
    cls = getattr(importlib.import_module(module), name)
    return cls(**estimator.get_params())


def engine_estimator_names(engine: str, *, early_stopping: bool = False) -> str:
    """Name ``engine``'s estimators for messages (those that stop early, if asked).

    For example ``"xgboost.dask.DaskXGBRegressor/DaskXGBClassifier or
    lightgbm.DaskLGBMRegressor/DaskLGBMClassifier"``.
    """
    names = []
    for library in LIBRARIES:
        entry = library.engines.get(engine)
        if entry is None or (early_stopping and entry.no_early_stopping):
            continue
        twins = list(entry.twins.values())
        names.append("/".join([twins[0], *(t.rpartition(".")[2] for t in twins[1:])]))
    return " or ".join(names)


def make_estimator(library: str, classifier: bool, *, random_state=None, **params):
    """Build an unfitted booster of ``library`` with the paper's defaults.

    Parameters
    ----------
    library : str
        A buildable registry key: ``"xgboost"``, ``"lightgbm"`` or ``"hgb"``.
    classifier : bool
        A classifier rather than a regressor.
    random_state : int or None, default=None
        The booster's seed.
    **params
        ``n_estimators``, ``learning_rate``, ``max_depth``, ``colsample``
        (the fraction of features each tree, or for HistGradientBoosting each
        split, may use; defaults :data:`DEFAULT_BOOSTER_PARAMS`),
        ``categorical`` (turn on the booster's categorical support),
        ``n_jobs`` (threads) and ``n_rows`` (the rows of the data, when
        known: XGBoost sets its bins from them, see
        :func:`~._xgboost.bins_for_rows`; the other libraries keep theirs).

    Returns
    -------
    estimator
        The unfitted booster.

    Raises
    ------
    ImportError
        If the library is not installed (naming the extra that installs it).
    """
    rows = {row.key: row for row in LIBRARIES if row.buildable}
    if library not in rows:
        raise ValueError(
            f"Cannot build a {library!r} booster; choose one of {list(rows)}."
        )
    settings = BoosterSettings(
        classifier, **{**DEFAULT_BOOSTER_PARAMS, **params}, random_state=random_state
    )
    return _load(rows[library]).make_estimator(settings)


#: The registry key of the selector's default booster.
DEFAULT_LIBRARY = "xgboost"


def default_library() -> Library:
    """Return the registry row of the selector's default booster."""
    return next(row for row in LIBRARIES if row.key == DEFAULT_LIBRARY)


def default_estimator(classifier: bool, random_state=None, n_rows=None):
    """Build the selector's default booster: XGBoost with the paper's settings.

    Categorical support is on, so pandas ``category`` and polars
    ``Categorical`` columns reach the booster as categories. ``n_rows``, the
    rows of the data when known, sets the histogram bins below 4,096 rows
    (:func:`~._xgboost.bins_for_rows`).
    """
    return make_estimator(
        DEFAULT_LIBRARY,
        classifier,
        random_state=random_state,
        categorical=True,
        n_rows=n_rows,
    )


def read_model(model) -> ModelReader:
    """Return a reader for ``model``.

    Raises
    ------
    TypeError
        If no reader supports the model's type.

    Warns
    -----
    IdentityWarning
        If the model was trained with settings that break Prop. 3. Call this
        directly from a public function, so that the warning points at the
        user's line.
    """
    if isinstance(model, ModelReader):
        return model
    cls = reader_class(model)
    if cls is None:
        raise TypeError(
            f"Cannot read a model of type {type(model).__module__}."
            f"{type(model).__qualname__}. Supported models: {SUPPORTED_MODELS}."
        )
    reader = cls(model)
    if reader.lost_identities:
        warnings.warn(
            "The model was trained with "
            + ", ".join(reader.lost_identities)
            + ": TreeInner equals the booster's total gain on its training rows "
            "(Prop. 3) only approximately, and held-out scores share the "
            "approximation; PreDecomp still adds up to the prediction (Prop. 1).",
            IdentityWarning,
            stacklevel=3,
        )
    return reader
