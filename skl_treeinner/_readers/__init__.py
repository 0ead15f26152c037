"""Readers: turn a fitted model of some library into a :class:`TreeEnsemble`.

Each reader lives in its own module and is registered below by the types it
accepts. Types are checked through ``sys.modules`` (like shap's
``safe_isinstance``), so a library that the user never imported is never
imported just to test a type.
"""

from __future__ import annotations

import importlib
import sys
import warnings

from ..exceptions import IdentityWarning
from ._base import ModelReader

__all__ = ["ModelReader", "read_model", "SUPPORTED_MODELS"]

# (module that defines the types, type names, reader "module:class")
_REGISTRY: list[tuple[str, tuple[str, ...], str]] = [
    ("xgboost", ("Booster", "XGBModel"), "._xgboost:XGBoostReader"),
    ("lightgbm", ("Booster", "LGBMModel"), "._lightgbm:LightGBMReader"),
    (
        "sklearn.ensemble",
        ("HistGradientBoostingRegressor", "HistGradientBoostingClassifier"),
        "._sklearn:HistGradientBoostingReader",
    ),
    (
        "sklearn.ensemble",
        ("GradientBoostingRegressor", "GradientBoostingClassifier"),
        "._sklearn:GradientBoostingReader",
    ),
]

SUPPORTED_MODELS = (
    "xgboost.Booster, xgboost.XGBRegressor, xgboost.XGBClassifier (any "
    "xgboost.XGBModel with a tree booster); lightgbm.Booster, "
    "lightgbm.LGBMRegressor, lightgbm.LGBMClassifier; scikit-learn's "
    "HistGradientBoostingRegressor/Classifier and "
    "GradientBoostingRegressor/Classifier"
)


def _reader_class(model) -> type[ModelReader] | None:
    for module_name, type_names, target in _REGISTRY:
        module = sys.modules.get(module_name)
        if module is None:
            continue
        types = tuple(getattr(module, name) for name in type_names)
        if isinstance(model, types):
            module_path, class_name = target.split(":")
            reader_module = importlib.import_module(module_path, __name__)
            return getattr(reader_module, class_name)
    return None


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
    cls = _reader_class(model)
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
            + ". PreDecomp still adds up to the prediction (Prop. 1), but "
            "TreeInner on the training rows equals the booster's total gain "
            "(Prop. 3) only approximately, and held-out scores carry the same "
            "approximation. Refit without these settings for the exact "
            "identities.",
            IdentityWarning,
            stacklevel=3,
        )
    return reader
