"""Reading LightGBM's model text: its sections, objectives and split rule.

Helpers of :mod:`skl_treeinner._readers._lightgbm`, apart so that the reader
stays within the size the architecture tests allow.
"""

from __future__ import annotations

import re

import numpy as np

from .. import _objectives as obj
from .._ensemble import SplitRule

__all__ = [
    "SUPPORTED_OBJECTIVES",
    "floats",
    "ints",
    "model_objective",
    "parameters",
    "parse_trees",
    "split_rule",
    "zero_root_gradient",
]

SUPPORTED_OBJECTIVES = (
    "regression",
    "huber",
    "fair",
    "poisson",
    "gamma",
    "tweedie",
    "binary",
    "cross_entropy",
    "multiclass",
    "multiclassova",
)


def parameters(text: str) -> dict[str, str]:
    """Read the ``parameters:`` section of a LightGBM model string."""
    section = text.partition("\nparameters:\n")[2]
    return dict(re.findall(r"^\[(\w+): ?(.*)\]$", section, flags=re.MULTILINE))


def model_objective(spec: str, params: dict[str, str]) -> obj.Objective:
    name, *args = spec.split()
    opts = dict(a.split(":", 1) for a in args if ":" in a)

    def param(key, default):
        return float(opts.get(key, params.get(key, default)))

    if name == "regression":
        return obj.SquaredError()
    if name == "huber":
        return obj.Huber(param("alpha", 0.9))
    if name == "fair":
        return obj.Fair(param("fair_c", 1.0))
    if name == "poisson":
        return obj.Poisson()
    if name == "gamma":
        return obj.Gamma()
    if name == "tweedie":
        return obj.Tweedie(param("tweedie_variance_power", 1.5))
    if name == "cross_entropy":
        return obj.Logistic()
    if name == "binary":
        sigmoid = param("sigmoid", 1.0)
        if sigmoid != 1.0:
            raise ValueError(
                f"LightGBM binary objective with sigmoid={sigmoid:g} is not "
                "supported; refit with sigmoid=1 (the default)."
            )
        return obj.Logistic(scale_pos_weight=float(params.get("scale_pos_weight", 1)))
    if name == "multiclass":
        return obj.Softmax(int(opts["num_class"]))
    if name == "multiclassova":
        return obj.OneVsRestLogistic(int(opts["num_class"]), param("sigmoid", 1.0))
    reason = {
        "regression_l1": "its leaves are re-fitted to residual medians",
        "quantile": "its leaves are re-fitted to residual quantiles",
        "mape": "its leaves are re-fitted to weighted medians",
        "cross_entropy_lambda": "its gradient is not implemented",
        "lambdarank": "ranking gradients depend on query groups",
        "rank_xendcg": "ranking gradients depend on query groups",
        "custom": "a custom objective's gradient is unknown",
    }.get(name, "its gradient is not implemented")
    raise ValueError(
        f"LightGBM objective {name!r} is not supported: TreeInner needs the "
        f"gradient each tree was fitted to, and {reason}. Supported objectives: "
        f"{', '.join(SUPPORTED_OBJECTIVES)}. predecomp() needs no gradient, but "
        "the model must still be readable; refit with a supported objective."
    )


def zero_root_gradient(objective: obj.Objective, params: dict[str, str]) -> bool:
    """Whether boosting from the average zeroes the first trees' root gradient.

    LightGBM starts from the (weighted) label mean on the link scale. For these
    objectives the loss gradient summed over the training rows vanishes there,
    so the first trees' root value is exactly the intercept.
    """
    if isinstance(objective, obj.Logistic):
        return objective.scale_pos_weight == 1.0 and params.get(
            "is_unbalance", "0"
        ) not in ("1", "true")
    return isinstance(
        objective,
        obj.SquaredError
        | obj.Poisson
        | obj.Gamma
        | obj.Tweedie
        | obj.Softmax
        | obj.OneVsRestLogistic,
    )


def floats(line: str) -> np.ndarray:
    return np.array(line.split(), dtype=np.float64)


def ints(line: str) -> np.ndarray:
    return np.array(line.split(), dtype=np.int64)


def split_rule(left, threshold, decision, count) -> SplitRule | None:
    """LightGBM's rule for the side of every split, where one rule covers them.

    LightGBM's ``NumericalDecision``: ``x <= threshold`` goes left, compared
    in double; a NaN goes the ``default_left`` side where the split's
    missing type is NaN, and is read as 0 where it is None (so it goes where
    0 goes). None (the booster's own TreeSHAP) with categorical splits or a
    missing type of Zero (``zero_as_missing``: zeros go the default side).
    """
    inner = left >= 0
    missing_type = (decision >> 2) & 3
    if np.any(inner & ((decision & 1) == 1)) or np.any(inner & (missing_type == 1)):
        return None
    default_left = ((decision >> 1) & 1).astype(bool)
    return SplitRule(
        threshold=np.where(inner, threshold, 0.0),
        missing_left=np.where(missing_type == 2, default_left, 0.0 <= threshold),
        strict=False,
        cover=count,
    )


def parse_trees(text: str) -> list[dict[str, str]]:
    body = text.partition("\nTree=")[2].partition("\nend of trees")[0]
    blocks = ("Tree=" + body).split("\nTree=")
    return [
        dict(line.split("=", 1) for line in block.splitlines()[1:] if "=" in line)
        for block in blocks
    ]
