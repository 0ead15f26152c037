"""Reading LightGBM's model text: its sections, objectives and split rule.

Helpers of :mod:`skl_treeinner._readers._lightgbm`, apart so that the reader
stays within the size the architecture tests allow.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import numpy as np

from .._model import _objectives as obj
from .._model._ensemble import SplitRule, subtree_sums

__all__ = [
    "Nodes",
    "SUPPORTED_OBJECTIVES",
    "check_model",
    "lost_settings",
    "parse_nodes",
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


def check_model(header: dict, params: dict, trees: list) -> tuple[obj.Objective, int]:
    """Refuse what TreeInner cannot read; return the objective and trees per round."""
    boosting = params.get("boosting", "gbdt")
    if "average_output" in header or boosting == "rf":
        raise ValueError(
            "LightGBM boosting='rf' is not supported: a random forest's trees "
            "are averaged, not boosted, so they do not fit the residual of the "
            "trees before them (TreeInner, Def. 4). Refit with "
            "boosting='gbdt'."
        )
    if boosting == "dart":
        raise ValueError(
            "LightGBM boosting='dart' is not supported: dropout rescales trees "
            "at random while training, so the residual each tree was fitted "
            "to cannot be reconstructed. Refit with boosting='gbdt'."
        )
    objective = model_objective(header.get("objective", "regression"), params)
    k = int(header.get("num_tree_per_iteration", 1))
    if k != objective.n_outputs:
        raise ValueError(  # pragma: no cover - LightGBM keeps them equal
            f"LightGBM model has {k} trees per iteration for an objective "
            f"with {objective.n_outputs} outputs."
        )
    if not trees or not trees[0]:
        raise ValueError("The LightGBM model has no trees; fit it first.")
    if any(t.get("is_linear", "0") != "0" for t in trees):
        raise ValueError(
            "LightGBM linear_tree=True is not supported: leaves hold linear "
            "models, so a row's prediction is not the value of the leaf it "
            "reaches and PreDecomp (Def. 1) does not add up to it. Refit "
            "with linear_tree=False."
        )
    return objective, k


def lost_settings(params: dict) -> list[str]:
    """Training settings (each a short phrase) under which Prop. 3 does not hold."""
    lost = []
    l1 = float(params.get("lambda_l1", 0))
    if l1 > 0:
        lost.append(f"lambda_l1={l1:g} (L1 shrinks leaf values)")
    mds = float(params.get("max_delta_step", 0))
    if mds > 0:
        lost.append(f"max_delta_step={mds:g} (leaf values may be clipped)")
    smooth = float(params.get("path_smooth", 0))
    if smooth > 0:
        lost.append(
            f"path_smooth={smooth:g} (leaf values are pulled toward their parent)"
        )
    if params.get("monotone_constraints", "").strip(" 0,"):
        lost.append("monotone_constraints (leaf values were bounded)")
    if params.get("is_unbalance", "0") in ("1", "true"):
        lost.append(
            "is_unbalance (class weights from training counts that the model "
            "does not keep; pass scale_pos_weight instead)"
        )
    return lost


class Nodes(NamedTuple):
    """The trees' nodes as flat arrays (inner nodes of a tree first, then leaves)."""

    offsets: np.ndarray
    sizes: np.ndarray
    left: np.ndarray
    right: np.ndarray
    feature: np.ndarray
    leaf_value: np.ndarray
    #: H_t, rebuilt from the leaves' full-precision weights.
    cover: np.ndarray
    #: ``internal_value`` (6 digits), for the cross-check of the node values.
    stored: np.ndarray
    gain: np.ndarray
    categorical: np.ndarray
    #: The split rule, for TreeSHAP by leaf patterns: LightGBM's threshold,
    #: decision_type bits and row counts (its TreeSHAP weighs by them).
    threshold: np.ndarray
    decision: np.ndarray
    count: np.ndarray


def parse_nodes(trees: list) -> Nodes:
    """Read the sections of ``trees`` (:func:`parse_trees`) into flat arrays."""
    n_leaves = np.array([int(t["num_leaves"]) for t in trees], dtype=np.int64)
    sizes = 2 * n_leaves - 1
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    n_nodes = int(offsets[-1])
    left = np.full(n_nodes, -1, dtype=np.int64)
    right = np.full(n_nodes, -1, dtype=np.int64)
    feature = np.full(n_nodes, -1, dtype=np.int64)
    leaf_value, cover, gain = np.zeros(n_nodes), np.zeros(n_nodes), np.zeros(n_nodes)
    stored = np.full(n_nodes, np.nan)
    categorical = np.zeros(n_nodes, dtype=bool)
    threshold, count = np.zeros(n_nodes), np.zeros(n_nodes)
    decision = np.zeros(n_nodes, dtype=np.int64)
    for m, t in enumerate(trees):
        off, n_inner = offsets[m], n_leaves[m] - 1
        leaves = slice(off + n_inner, offsets[m + 1])
        leaf_value[leaves] = floats(t["leaf_value"])
        count[leaves] = floats(t.get("leaf_count", "0"))
        if n_inner == 0:
            cover[leaves] = floats(t.get("leaf_count", "0"))
            continue
        threshold[inner := slice(off, off + n_inner)] = floats(t["threshold"])
        decision[inner] = ints(t["decision_type"])
        count[inner] = floats(t["internal_count"])
        for key, out in (("left_child", left), ("right_child", right)):
            child = ints(t[key])
            # child >= 0: inner node; child < 0: leaf ~child.
            out[inner] = off + np.where(child >= 0, child, n_inner + ~child)
        feature[inner] = ints(t["split_feature"])
        categorical[inner] = (ints(t["decision_type"]) & 1).astype(bool)
        cover[inner] = floats(t["internal_weight"])
        cover[leaves] = floats(t["leaf_weight"])
        stored[inner] = floats(t["internal_value"])
        gain[inner] = floats(t["split_gain"])
    # internal_weight has 6 digits, leaf_weight full precision: rebuild
    # H_t = H_l + H_r from the leaves (checked against the stored value).
    stored_cover = cover.copy()
    cover = subtree_sums(left, right, np.where(left < 0, cover, 0.0))
    inner_nodes = left >= 0
    if not np.allclose(
        cover[inner_nodes], stored_cover[inner_nodes], rtol=1e-5, atol=1e-9
    ):  # pragma: no cover - a LightGBM change would trip this
        raise ValueError(
            "LightGBM's internal_weight does not equal the sum of its leaf "
            "weights; the model format changed. Please report this."
        )
    return Nodes(
        offsets,
        sizes,
        left,
        right,
        feature,
        leaf_value,
        cover,
        stored,
        gain,
        categorical,
        threshold,
        decision,
        count,
    )
