"""Reader for LightGBM models (``Booster``, ``LGBMRegressor``, ``LGBMClassifier``).

What we rely on inside LightGBM (pinned by ``tests/unit/test_lightgbm.py``, which
fails loudly if a release changes it):

- ``model_to_string()``, per tree: ``num_leaves``, ``left_child`` /
  ``right_child`` (inner node index, or ``~leaf`` for leaf ``leaf``),
  ``split_feature``, ``leaf_value`` (shrunk, printed to full precision),
  ``internal_value`` (p̂ of inner nodes, already shrunk and ℓ2-regularised,
  printed to 6 significant digits), ``internal_weight`` / ``leaf_weight``
  (hessian sums H_t), ``shrinkage`` and ``is_linear``; per model
  ``num_tree_per_iteration``, ``objective`` (with its parameters, e.g.
  ``binary sigmoid:1``), ``average_output`` (random-forest mode) and the
  ``parameters:`` section with the training parameters (also kept by models
  loaded from a file).
- With ``boost_from_average`` the intercept is **added to every value of the
  trees of the first iteration**, whose ``shrinkage`` then reads 1. Their root
  value is the intercept: boosting from the average makes the root's gradient
  sum zero for every objective that supports it (without weights), so the
  root's own step is zero.
- ``predict(pred_leaf=True)``: leaf index reached in every tree;
  ``predict(pred_contrib=True, start_iteration=r, num_iteration=1)``: the
  TreeSHAP values of one iteration's trees.
- ``feature_importance("gain")``: total split gain per feature, the same
  formula as XGBoost's (Prop. 3's right-hand side).

Inner-node values are computed by the recurrence of Eq. 23 from the leaf
values (full precision) and the hessian sums, after removing the intercept
from the first iteration's trees: the stored ``internal_value`` has only 6
significant digits, which would leave an absolute error of about 1e-6 times
the intercept in every p̂ difference of the first trees. ``internal_value`` is
used to cross-check the recurrence.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator
from numbers import Integral

import numpy as np

from .._kernels._compiled import global_leaves
from .._model._ensemble import TreeEnsemble, node_values_from_leaves
from .._utils._optional import import_optional
from ._base import ModelReader, feature_names_of, n_rows, polars_as_pandas
from ._lightgbm_text import (
    check_model,
    lost_settings,
    parameters,
    parse_nodes,
    parse_trees,
    split_rule,
    zero_root_gradient,
)

__all__ = ["LightGBMReader"]


#: LightGBM's names of num_threads (its parameter aliases).
_THREAD_ALIASES = ("num_threads", "num_thread", "nthread", "nthreads", "n_jobs")


def _threads(booster) -> int | None:
    """Return the booster's thread setting as trained (wrappers pass theirs)."""
    params = getattr(booster, "params", None) or {}
    for key in _THREAD_ALIASES:
        value = params.get(key)
        if value is not None:
            return int(value)
    return None


def _learning_rate_from_gain(t, value, gain, *, left, right, cover, node_lam, lam):
    """α from the split gains of inner nodes ``t`` and their shrunk values p̂.

    With w = p̂ / α = -G / (H + λ_node), the gain G_l²/(H_l+λ_l) +
    G_r²/(H_r+λ_r) - G_t²/(H_t+λ) of a split (LightGBM always takes the
    parent's term with lambda_l2) is Σ_c w_c² (H_c+λ_c) - w_t² (H_t+λ_t)² /
    (H_t+λ), so α² is the ratio of the same sum over p̂ to the stored gain
    (least squares over t).
    """
    lc, rc = left[t], right[t]
    num = (
        value[lc] ** 2 * (cover[lc] + node_lam[lc])
        + value[rc] ** 2 * (cover[rc] + node_lam[rc])
        - value[t] ** 2 * (cover[t] + node_lam[t]) ** 2 / (cover[t] + lam)
    )
    return float(np.sqrt(num @ gain[t] / (gain[t] @ gain[t])))


def _node_lambda(nodes, header, params, lam) -> tuple[np.ndarray, list[str]]:
    """Return each node's λ, and the identity lost where categorical splits add one.

    Children of a many-vs-many categorical split are regularised by
    lambda_l2 + cat_l2 (LightGBM's FindBestThresholdCategorical); a feature
    is split one-vs-rest, with lambda_l2, when its bins (the entries of
    feature_infos, "other" included) are <= max_cat_to_onehot.
    """
    left, right = nodes.left, nodes.right
    node_lam = np.full(left.size, lam)
    cat_l2 = float(params.get("cat_l2", 10))
    many = nodes.categorical & (left >= 0)
    if not (np.any(many) and cat_l2 > 0):
        return node_lam, []
    infos = header.get("feature_infos", "").split()
    n_bins = np.array([len(i.split(":")) for i in infos])
    onehot_max = int(params.get("max_cat_to_onehot", 4))
    many &= n_bins[np.maximum(nodes.feature, 0)] > onehot_max
    node_lam[left[many]] = node_lam[right[many]] = lam + cat_l2
    if not np.any((node_lam != lam) & (left >= 0)):
        return node_lam, []
    return node_lam, [
        f"categorical splits and cat_l2={cat_l2:g} (LightGBM's default; "
        "cat_l2=0 makes them exact)"
    ]


def _intercepts(nodes, added, node_lam, *, exact):
    """Return the first trees' intercepts and the leaf values without them.

    ``added[m]``: whether LightGBM added the intercept to tree m (of the
    first iteration). Where the root's gradient sum is zero (``exact``),
    G = Σ_leaves (v - b)(H + λ) = 0 gives b to full precision, unlike the
    6-digit stored root value. Inner nodes' values are zeroed (they follow
    from the leaves).
    """
    offsets, left = nodes.offsets, nodes.left
    leaf_value = nodes.leaf_value.copy()
    intercept = np.zeros(added.size)
    for m in np.flatnonzero(added):
        tree = np.arange(offsets[m], offsets[m + 1])
        leaves = tree[left[tree] < 0]
        if leaves.size == 1:
            intercept[m] = leaf_value[leaves[0]]
        elif exact:
            weight = nodes.cover[leaves] + node_lam[leaves]
            intercept[m] = leaf_value[leaves] @ weight / weight.sum()
        else:
            intercept[m] = nodes.stored[offsets[m]]
        leaf_value[tree] -= intercept[m]
    leaf_value[left >= 0] = 0.0
    return intercept, leaf_value


class LightGBMReader(ModelReader):
    """Read a ``lightgbm.Booster`` or ``lightgbm.LGBMModel``.

    A model trained with early stopping is read up to its best iteration,
    the trees its ``predict`` uses by default.
    """

    def __init__(self, model):
        import lightgbm as lgb

        if isinstance(model, lgb.LGBMModel):
            booster = model.booster_  # raises NotFittedError if unfitted
            best = getattr(model, "best_iteration_", None)
            classes = getattr(model, "classes_", None)
            self.classes_ = None if classes is None else np.asarray(classes)
        elif isinstance(model, lgb.Booster):
            booster = model
            best = model.best_iteration
        else:  # pragma: no cover - the registry only dispatches these types
            raise TypeError(f"not a LightGBM model: {type(model)!r}")
        self.thread_setting = _threads(booster)
        n_rounds = booster.current_iteration()
        self._num_iteration = best if best and 0 < best < n_rounds else n_rounds
        self.booster = booster
        text = booster.model_to_string(num_iteration=self._num_iteration)
        self.ensemble, self.lost_identities = self.cached_read(
            (text,), lambda: self._read(text)
        )

    # -- estimators --------------------------------------------------------------
    @classmethod
    def make_estimator(cls, settings):  # noqa: D102
        lgb = import_optional(
            "lightgbm",
            extra="lightgbm",
            purpose="a LightGBM booster (--estimator lightgbm)",
        )
        # LightGBM takes pandas category columns natively: categorical needs
        # no setting.
        params = {
            "n_estimators": settings.n_estimators,
            "learning_rate": settings.learning_rate,
            "max_depth": settings.max_depth,
            "num_leaves": min(2**settings.max_depth, 131072),
            "colsample_bytree": settings.colsample,
            "reg_lambda": 1.0,
            "random_state": settings.random_state,
            "verbose": -1,
        }
        if settings.n_jobs is not None:
            params["n_jobs"] = settings.n_jobs
        return (lgb.LGBMClassifier if settings.classifier else lgb.LGBMRegressor)(
            **params
        )

    #: LightGBM's names of the early-stopping parameter.
    _EARLY_STOPPING_ALIASES = (
        "early_stopping_round",
        "early_stopping_rounds",
        "early_stopping",
        "n_iter_no_change",
    )

    @classmethod
    def fit_input(cls, X):
        """Fit on pandas: LightGBM aborts on polars categorical (Arrow) columns."""
        dtypes = (
            getattr(X, "dtypes", None)
            if type(X).__module__.startswith("polars")
            else None
        )
        if dtypes and any(str(d).startswith(("Categorical", "Enum")) for d in dtypes):
            return polars_as_pandas(X)
        return X

    @classmethod
    def target_offset_limit(cls, estimator):
        """100,000 times the learning rate over 0.05, for L2-type regressors.

        LightGBM loses the trees' small steps far from 0 less than XGBoost:
        in-sample TreeInner against total gain (2,000 rows, learning rate
        0.05) was off by 1.5e-4 at a mean 91,000 times the mean absolute
        deviation, 2 % at 9,100,000.
        """
        from sklearn.base import ClassifierMixin

        if isinstance(estimator, ClassifierMixin):
            return None
        params = estimator.get_params()
        if params.get("objective") not in (None, "regression", "regression_l2", "l2"):
            return None
        rate = params.get("learning_rate") or 0.1
        return 1e5 * rate / 0.05

    #: With the aliases LightGBM takes for them as estimator parameters.
    positional_settings = (
        "monotone_constraints",
        "monotone_constraint",
        "monotonic_cst",
        "mc",
        "interaction_constraints",
        "categorical_feature",
        "categorical_features",
        "cat_feature",
        "categorical_column",
        "cat_column",
    )

    @classmethod
    def fit_params_for_columns(cls, fit_params, columns, *, feature_names, take):
        """Cut the evaluation sets, and keep ``categorical_feature``'s columns.

        ``categorical_feature`` keeps the kept columns, by name or by their
        new positions (``"auto"`` follows the dtypes); ``eval_X`` (LightGBM
        4.7 and later) is cut as ``eval_set`` is.
        """
        params = super().fit_params_for_columns(
            fit_params, columns, feature_names=feature_names, take=take
        )
        cats = params.get("categorical_feature")
        if cats is not None and not isinstance(cats, str):
            names = feature_names
            kept = (
                set() if names is None else {str(n) for n in np.asarray(names)[columns]}
            )
            position = {int(c): i for i, c in enumerate(columns)}
            cut = []
            for c in cats:
                if isinstance(c, str):
                    if c in kept:
                        cut.append(c)
                elif int(c) in position:
                    cut.append(position[int(c)])
            params["categorical_feature"] = cut
        if params.get("eval_X") is not None:
            eval_X = params["eval_X"]
            many = isinstance(eval_X, list | tuple)
            cut = [take(X_e, columns) for X_e in (eval_X if many else [eval_X])]
            params["eval_X"] = type(eval_X)(cut) if many else cut[0]
        return params

    @classmethod
    def threads_change_results(cls, estimator):  # noqa: D102
        # LightGBM promises the same model on other thread counts only with
        # deterministic=True.
        return not bool(estimator.get_params().get("deterministic", False))

    @classmethod
    def early_stopping_rows_needed(cls, estimator, fit_params):  # noqa: D102
        import lightgbm as lgb

        if (
            "eval_set" in fit_params
            or "eval_X" in fit_params
            or not isinstance(estimator, lgb.LGBMModel)
        ):
            return False
        callback_type = type(lgb.early_stopping(1, verbose=False))
        callbacks = fit_params.get("callbacks") or []
        params = estimator.get_params()
        return any(isinstance(c, callback_type) for c in callbacks) or any(
            isinstance(params.get(a), Integral) and params.get(a) > 0
            for a in cls._EARLY_STOPPING_ALIASES
        )

    @classmethod
    def early_stopping_fit_params(  # noqa: D102
        cls, estimator, X_es, y_es, *, sample_weight, fit_params
    ):
        # LightGBM 4.7 deprecates eval_set for eval_X and eval_y.
        if "eval_X" in inspect.signature(estimator.fit).parameters:
            params = {"eval_X": (X_es,), "eval_y": (y_es,)}
        else:
            params = {"eval_set": [(X_es, y_es)]}
        if sample_weight is not None:
            params["eval_sample_weight"] = [sample_weight]
        return params

    # -- reading ---------------------------------------------------------------
    def _read(self, text: str) -> tuple[TreeEnsemble, list[str]]:
        """Parse the model text; return the ensemble and the identities lost."""
        header = dict(
            re.findall(r"^(\w+)=(.*)$", text.partition("\nTree=")[0], re.MULTILINE)
        )
        params = parameters(text)
        trees = parse_trees(text)
        objective, k = check_model(header, params, trees)
        lost = lost_settings(params)
        nodes = parse_nodes(trees)
        left, right, offsets, sizes = (
            nodes.left,
            nodes.right,
            nodes.offsets,
            nodes.sizes,
        )
        shrinkage = np.array([float(t.get("shrinkage", 1)) for t in trees])
        learning_rate = float(params.get("learning_rate", shrinkage[-1]))
        lam = float(params.get("lambda_l2", 0))
        node_lam, cat_lost = _node_lambda(nodes, header, params, lam)
        lost.extend(cat_lost)

        # The first iteration's trees carry the intercept in every value (and
        # then read shrinkage 1): take it out, as the margin before them.
        n_trees = len(trees)
        first = min(k, n_trees)
        indptr = np.arange(0, n_trees + 1, k, dtype=np.int64)
        tree_lr = np.where(shrinkage == 1.0, learning_rate, shrinkage)
        exact = zero_root_gradient(objective, params)
        from_average = params.get("boost_from_average", "1") not in ("0", "false")
        # Adding the intercept sets shrinkage to 1: with learning_rate=1 only
        # the parameter tells whether it happened.
        added = (shrinkage[:first] == 1.0) & (learning_rate != 1.0 or from_average)
        intercept, leaf_value = _intercepts(nodes, added, node_lam, exact=exact)
        value = node_values_from_leaves(left, right, leaf_value, nodes.cover, node_lam)
        if np.any(intercept != 0):
            # Adding the intercept resets shrinkage to 1, and under a schedule
            # the saved learning_rate is the last one: read α off the gains.
            t = np.flatnonzero(left[: offsets[first]] >= 0)
            if t.size and nodes.gain[t].sum() > 0:
                first_lr = _learning_rate_from_gain(
                    t,
                    value,
                    nodes.gain,
                    left=left,
                    right=right,
                    cover=nodes.cover,
                    node_lam=node_lam,
                    lam=lam,
                )
                if abs(first_lr / learning_rate - 1) > 1e-4:
                    tree_lr[:first] = first_lr
        check_from = 0
        if np.any(intercept != 0) and not exact:
            # The intercept is only known as the first trees' root value,
            # which here includes that root's own (nonzero) step.
            lost.append(
                f"boost_from_average with the {objective.name!r} objective (the "
                "intercept is not stored apart from the first trees, so their "
                "residuals are approximate; refit with boost_from_average=False "
                "for the exact identity)"
            )
            check_from = k
        if not lost or check_from:
            shift = np.zeros(offsets[-1])
            shift[: offsets[first]] = np.repeat(intercept[:first], sizes[:k])
            self._check_values(value + shift, nodes.stored, offsets, check_from)

        names = header.get("feature_names", "").split()
        auto = [f"Column_{i}" for i in range(len(names))]
        ensemble = TreeEnsemble(
            split_rule=split_rule(left, nodes.threshold, nodes.decision, nodes.count),
            tree_offsets=offsets,
            children_left=left,
            children_right=right,
            feature=nodes.feature,
            value=value,
            cover=nodes.cover,
            tree_group=np.arange(n_trees, dtype=np.int64) % k,
            iteration_indptr=indptr,
            learning_rate=np.repeat(tree_lr[indptr[:-1]], k)[:n_trees],
            reg_lambda=lam,
            intercept=np.concatenate([intercept, np.zeros(k - first)]),
            objective=objective,
            n_features=int(header["max_feature_idx"]) + 1,
            feature_names=None if names == auto else tuple(names),
        )
        return ensemble, lost

    @staticmethod
    def _check_values(value, stored, offsets, first_tree=0) -> None:
        """Eq. 23's p̂ must match LightGBM's own (6-digit) internal values."""
        inner = np.flatnonzero(~np.isnan(stored[offsets[first_tree] :]))
        inner += offsets[first_tree]
        if inner.size == 0:
            return
        tree = np.searchsorted(offsets, inner, side="right") - 1
        scale = np.zeros(offsets.size - 1)
        np.maximum.at(scale, tree, np.abs(stored[inner]))
        err = np.abs(value[inner] - stored[inner])
        bad = err > 1e-5 * np.abs(stored[inner]) + 1e-6 * scale[tree] + 1e-12
        if np.any(bad):
            raise ValueError(
                f"Tree {int(tree[np.argmax(bad)])} of the LightGBM model does not "
                "have ℓ2-regularised node values p̂ = -αG/(H+λ), so PreDecomp and "
                "TreeInner cannot be computed exactly (a refit or custom leaf "
                "output?). Refit the model with LightGBM's own training."
            )

    # -- the booster's own numbers ---------------------------------------------
    def total_gain(self) -> np.ndarray:  # noqa: D102
        return np.asarray(
            self.booster.feature_importance("gain", iteration=self._num_iteration),
            dtype=np.float64,
        )

    # -- routing -----------------------------------------------------------------
    def _column_names(self, X) -> list[str] | None:
        names = feature_names_of(X)
        # LightGBM stores column names with spaces replaced by underscores.
        return None if names is None else [n.replace(" ", "_") for n in names]

    def _data(self, X):
        return polars_as_pandas(X)

    def training_row_counts(self) -> np.ndarray:  # noqa: D102
        # Parsed again when asked (a prefit check whose row count matches).
        text = self.booster.model_to_string(num_iteration=self._num_iteration)
        return parse_nodes(parse_trees(text)).count

    def apply(self, X) -> np.ndarray:  # noqa: D102
        leaves = self.booster.predict(
            self._data(X), pred_leaf=True, num_iteration=self._num_iteration
        )
        leaves = np.asarray(leaves).reshape(n_rows(X), -1)
        ens = self.ensemble
        # Leaf j of tree m is node offsets[m] + (num_leaves - 1) + j.
        sizes = np.diff(ens.tree_offsets)
        offsets = ens.tree_offsets[:-1] + (sizes - 1) // 2
        return global_leaves(leaves, offsets, self.n_threads())

    def raw_margin(self, X) -> np.ndarray:  # noqa: D102
        return self.booster.predict(
            self._data(X), raw_score=True, num_iteration=self._num_iteration
        )

    def iteration_shap(self, X, rounds=None) -> Iterator[tuple[int, np.ndarray]]:  # noqa: D102
        data = self._data(X)
        n, k, p = n_rows(X), self.ensemble.n_outputs, self.ensemble.n_features
        for r in range(self.ensemble.n_iterations) if rounds is None else rounds:
            contribs = self.booster.predict(
                data, pred_contrib=True, start_iteration=r, num_iteration=1
            )
            yield r, np.asarray(contribs).reshape(n, k, p + 1)[:, :, :p]
