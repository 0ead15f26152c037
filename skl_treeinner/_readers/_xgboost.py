"""Reader for XGBoost models (``Booster`` and the scikit-learn wrappers).

What we rely on inside XGBoost (pinned by ``tests/test_xgboost_internals.py``,
which fails loudly if a release changes it):

- ``save_raw("ubj")`` (the binary form of the JSON model), per tree:
  ``left_children``/``right_children`` (-1 at leaves), ``split_indices``,
  ``split_conditions`` (at leaves the leaf value, already multiplied by eta),
  ``sum_hessian`` (H_t) and ``base_weights`` (-G/(H+λ) at inner nodes, not
  multiplied by eta); per model ``tree_info`` (output of each tree) and
  ``iteration_indptr`` (trees of each round).
- ``gbtree_model_param.num_parallel_tree``: each tree of a boosted forest is
  shrunk by eta / num_parallel_tree, the learning rate α of Eq. 7 for it.
- ``save_config()``: eta, lambda, alpha, max_delta_step, monotone
  constraints and the objective with its parameters.
- ``learner_model_param.base_score``: the intercept, on the probability scale
  for logistic objectives and the response scale for log-link objectives.
- ``predict(pred_leaf=True)``: the node id of the leaf reached in every tree.

Inner-node values are computed by the recurrence of Eq. 23 from the leaf
values and ``sum_hessian`` rather than read from ``base_weights``, whose
meaning at leaves differs between tree methods; ``eta * base_weights`` is used
to cross-check them, which also catches learning-rate schedules and leaf
refreshes that would make p̂ wrong.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Iterator

import numpy as np

from .. import _objectives as obj
from .._ensemble import TreeEnsemble, node_values_from_leaves
from ..exceptions import IdentityWarning
from . import _ubjson as ubjson
from ._base import ModelReader, feature_names_of, n_rows

__all__ = ["XGBoostReader"]

SUPPORTED_OBJECTIVES = (
    "reg:squarederror",
    "reg:pseudohubererror",
    "reg:squaredlogerror",
    "reg:logistic",
    "binary:logistic",
    "binary:logitraw",
    "count:poisson",
    "reg:gamma",
    "reg:tweedie",
    "multi:softprob",
    "multi:softmax",
)

# Scale on which learner_model_param.base_score is stored, per objective.
_LOGIT = ("reg:logistic", "binary:logistic")
_LOG = ("count:poisson", "reg:gamma", "reg:tweedie")


def _objective(config: dict) -> obj.Objective:
    spec = config["learner"]["objective"]
    name = spec["name"]
    if name == "reg:squarederror":
        return obj.SquaredError()
    if name == "reg:pseudohubererror":
        return obj.PseudoHuber(float(spec["pseudo_huber_param"]["huber_slope"]))
    if name == "reg:squaredlogerror":
        return obj.SquaredLogError()
    if name in ("reg:logistic", "binary:logistic", "binary:logitraw"):
        spw = float(spec.get("reg_loss_param", {}).get("scale_pos_weight", 1.0))
        return obj.Logistic(scale_pos_weight=spw)
    if name == "count:poisson":
        return obj.Poisson()
    if name == "reg:gamma":
        return obj.Gamma()
    if name == "reg:tweedie":
        power = spec["tweedie_regression_param"]["tweedie_variance_power"]
        return obj.Tweedie(float(power))
    if name in ("multi:softprob", "multi:softmax"):
        return obj.Softmax(int(spec["softmax_multiclass_param"]["num_class"]))
    raise ValueError(
        f"XGBoost objective {name!r} is not supported: TreeInner needs the "
        "gradient the booster fitted each tree to, and this objective's is not "
        f"implemented (or, as for absolute and quantile error, its leaves are "
        f"re-fitted after growing). Supported objectives: "
        f"{', '.join(SUPPORTED_OBJECTIVES)}."
    )


def _intercept(base_score: str, objective_name: str, n_outputs: int) -> np.ndarray:
    values = np.array(
        [float(v) for v in base_score.strip("[]").split(",")], dtype=np.float64
    )
    if values.size == 1 and n_outputs > 1:
        values = np.repeat(values, n_outputs)
    if values.size != n_outputs:
        raise ValueError(
            f"Cannot read the intercept {base_score!r} for {n_outputs} outputs."
        )
    if objective_name in _LOGIT:
        values = np.log(values) - np.log1p(-values)
    elif objective_name in _LOG:
        values = np.log(values)
    return values


def _flag(value: str) -> float:
    return float(value) if value not in ("", None) else 0.0


class XGBoostReader(ModelReader):
    """Read an ``xgboost.Booster`` or ``xgboost.XGBModel``.

    For the scikit-learn wrappers, a model trained with early stopping is
    read up to ``best_iteration``, the trees its ``predict`` uses.
    """

    def __init__(self, model):
        import xgboost as xgb

        if isinstance(model, xgb.XGBModel):
            booster = model.get_booster()  # raises NotFittedError if unfitted
            try:
                best = model.best_iteration
            except AttributeError:
                best = None
            if best is not None and best + 1 < booster.num_boosted_rounds():
                booster = booster[: best + 1]
            self._dmatrix_kwargs = {
                "missing": model.missing,
                "feature_types": model.feature_types,
                "nthread": model.n_jobs,
                "enable_categorical": model.enable_categorical,
            }
            self._from_booster = False
            classes = getattr(model, "classes_", None)
            self.classes_ = None if classes is None else np.asarray(classes)
        elif isinstance(model, xgb.Booster):
            self._dmatrix_kwargs = {
                "missing": np.nan,
                "feature_types": model.feature_types,
                "enable_categorical": True,
            }
            self._from_booster = True
            booster = model
        else:  # pragma: no cover - the registry only dispatches these types
            raise TypeError(f"not an XGBoost model: {type(model)!r}")
        self.booster = booster
        self.ensemble = self._read(booster)
        self._round_boosters = None

    # -- reading ---------------------------------------------------------------
    def _read(self, booster) -> TreeEnsemble:
        config = json.loads(booster.save_config())
        gbm = config["learner"]["gradient_booster"]
        kind = gbm["name"]
        if kind == "dart":
            raise ValueError(
                "XGBoost booster='dart' is not supported: dropout rescales trees "
                "at random while training, so the residual each tree was fitted "
                "to cannot be reconstructed. Refit with booster='gbtree'."
            )
        if kind != "gbtree":
            raise ValueError(
                f"XGBoost booster={kind!r} has no trees to attribute. Refit with "
                "booster='gbtree'."
            )
        objective = _objective(config)
        learner = ubjson.loads(bytes(booster.save_raw("ubj")))["learner"]
        lmp = learner["learner_model_param"]
        if int(lmp.get("num_target", 1)) > 1:
            raise ValueError(
                "Multi-target XGBoost models are not supported yet; fit one model "
                "per target."
            )
        model = learner["gradient_booster"]["model"]
        trees = model["trees"]
        if not trees:
            raise ValueError("The XGBoost model has no trees; fit it first.")
        if any(int(t["tree_param"].get("size_leaf_vector", 1)) > 1 for t in trees):
            raise ValueError(
                "XGBoost vector-leaf trees (multi_strategy='multi_output_tree') "
                "are not supported; use multi_strategy='one_output_per_tree'."
            )
        tparam = gbm["tree_train_param"]
        # Each tree of a boosted forest is shrunk by eta / num_parallel_tree.
        n_parallel = int(model["gbtree_model_param"].get("num_parallel_tree", 1))
        eta = float(tparam["eta"]) / n_parallel
        lam = float(tparam["lambda"])
        alpha = float(tparam["alpha"])
        max_delta_step = float(tparam["max_delta_step"])
        monotone = re.sub(r"[^0-9-]", " ", tparam.get("monotone_constraints", ""))
        has_monotone = any(int(v) != 0 for v in monotone.split())

        sizes = np.array([len(t["left_children"]) for t in trees], dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(sizes)])

        def cat(key, dtype):
            return np.concatenate([np.asarray(t[key], dtype=dtype) for t in trees])

        shift = np.repeat(offsets[:-1], sizes)
        left = cat("left_children", np.int64)
        right = cat("right_children", np.int64)
        is_leaf = left < 0
        left = np.where(is_leaf, -1, left + shift)
        right = np.where(is_leaf, -1, right + shift)
        feature = np.where(is_leaf, -1, cat("split_indices", np.int64))
        cover = cat("sum_hessian", np.float64)
        leaf_value = np.where(is_leaf, cat("split_conditions", np.float64), 0.0)
        value = node_values_from_leaves(left, right, leaf_value, cover, lam)

        base_weights = cat("base_weights", np.float64)
        weights = np.where(is_leaf, value / eta, base_weights)
        clipped = max_delta_step > 0 and bool(
            np.any(np.abs(weights) >= max_delta_step * (1 - 1e-6))
        )
        lost = []
        if alpha > 0:
            lost.append(f"reg_alpha={alpha:g} (L1 shrinks leaf values)")
        if clipped:
            lost.append(
                f"max_delta_step={max_delta_step:g} (some leaf values were clipped)"
            )
        if has_monotone:
            lost.append("monotone_constraints (leaf values were bounded)")
        if lost:
            warnings.warn(
                "The XGBoost model was trained with "
                + ", ".join(lost)
                + ". Node values are no longer p̂ = -αG/(H+λ) (Eq. 7): PreDecomp "
                "still adds up to the prediction (Prop. 1), but TreeInner on the "
                "training rows no longer equals total gain (Prop. 3). For the "
                "exact identities refit with reg_alpha=0, max_delta_step=0 and "
                "no monotone constraints.",
                IdentityWarning,
                stacklevel=4,
            )
        else:
            self._check_inner_values(value, base_weights * eta, is_leaf, offsets)

        n_outputs = objective.n_outputs
        tree_group = np.asarray(model["tree_info"], dtype=np.int64)
        indptr = model.get("iteration_indptr")
        if indptr is None:  # XGBoost < 2.0 wrote no iteration_indptr
            per_round = len(trees) // booster.num_boosted_rounds()
            indptr = np.arange(0, len(trees) + 1, per_round)
        intercept = _intercept(lmp["base_score"], objective_name(config), n_outputs)
        names = booster.feature_names
        return TreeEnsemble(
            tree_offsets=offsets,
            children_left=left,
            children_right=right,
            feature=feature,
            value=value,
            cover=cover,
            tree_group=tree_group,
            iteration_indptr=np.asarray(indptr, dtype=np.int64),
            learning_rate=eta,
            reg_lambda=lam,
            intercept=intercept,
            objective=objective,
            n_features=int(lmp["num_feature"]),
            feature_names=None if names is None else tuple(names),
            source=f"xgboost {objective_name(config)}",
        )

    @staticmethod
    def _check_inner_values(value, stored, is_leaf, offsets) -> None:
        """Cross-check p̂ from Eq. 23 against XGBoost's eta * base_weights."""
        inner = ~is_leaf
        if not inner.any():
            return
        tree = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
        scale = np.zeros(offsets.size - 1)
        np.maximum.at(scale, tree, np.abs(value))
        err = np.abs(value - stored)[inner]
        tol = 1e-4 * scale[tree[inner]] + 1e-12
        if np.any(err > tol):
            worst = tree[inner][np.argmax(err / tol)]
            raise ValueError(
                f"Tree {worst} of the XGBoost model has leaf values inconsistent "
                "with its node statistics (p̂ ≠ eta·base_weight): it was not grown "
                "with one fixed learning rate and ℓ2 leaves. Learning-rate "
                "schedules and leaf-refreshing updaters (process_type='update') "
                "are not supported."
            )

    # -- routing -----------------------------------------------------------------
    def prepare_X(self, X):  # noqa: D102
        import xgboost as xgb

        if isinstance(X, xgb.DMatrix):
            names = X.feature_names
            model_names = self.ensemble.feature_names
            if names is not None and model_names is not None:
                if list(names) != list(model_names):
                    raise ValueError(
                        "The DMatrix's feature names differ from those the "
                        f"model was trained on: {list(model_names)}."
                    )
        return super().prepare_X(X)

    def apply(self, X) -> np.ndarray:  # noqa: D102
        leaves = self.booster.predict(self._dmatrix(X), pred_leaf=True)
        leaves = leaves.reshape(leaves.shape[0], -1).astype(np.int64)
        leaves += self.ensemble.tree_offsets[:-1]
        return leaves

    def iteration_shap(self, X) -> Iterator[tuple[int, np.ndarray]]:  # noqa: D102
        # XGBoost computes contributions only for iteration ranges starting at
        # 0, but a booster sliced to one round is a model of its own.
        if self._round_boosters is None:
            n_rounds = self.ensemble.n_iterations
            self._round_boosters = [self.booster[r : r + 1] for r in range(n_rounds)]
        dmat = self._dmatrix(X)
        n, k, p = n_rows(X), self.ensemble.n_outputs, self.ensemble.n_features
        for r, booster in enumerate(self._round_boosters):
            contribs = booster.predict(dmat, pred_contribs=True)
            yield r, contribs.reshape(n, k, p + 1)[:, :, :p]

    def _dmatrix(self, X):
        import xgboost as xgb

        if isinstance(X, xgb.DMatrix):
            dmat = X
        else:
            kwargs = dict(self._dmatrix_kwargs)
            names = self.ensemble.feature_names
            if feature_names_of(X) is None:
                if names is not None:
                    kwargs["feature_names"] = list(names)
            elif self._from_booster:
                # A Booster has no feature_types setting of its own: infer
                # them from the data frame's dtypes, as DMatrix does.
                kwargs["feature_types"] = None
            dmat = xgb.DMatrix(X, **kwargs)
        return dmat


def objective_name(config: dict) -> str:
    """XGBoost's name of the objective in a ``save_config()`` dict."""
    return config["learner"]["objective"]["name"]
