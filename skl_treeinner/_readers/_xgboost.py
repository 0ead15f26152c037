"""Reader for XGBoost models (``Booster`` and the scikit-learn wrappers).

What we rely on inside XGBoost (pinned by ``tests/unit/test_xgboost_internals.py``,
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
refreshes that would make p̂ wrong (all in ``_xgboost_node_values``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import numpy as np

from .._model import _objectives as obj
from .._model._ensemble import TreeEnsemble
from .._utils._validation import FLOAT32_MAX
from . import _ubjson as ubjson
from ._base import ModelReader, feature_names_of, n_rows
from ._xgboost_node_values import NodeStats, leaf_settings, node_values, tree_nodes

__all__ = ["XGBoostReader", "bins_for_rows"]

#: The default booster keeps one histogram bin per ``ROWS_PER_BIN`` rows of
#: the data, at least ``MIN_BINS`` and at most XGBoost's own 256
#: (:func:`bins_for_rows`).
ROWS_PER_BIN, MIN_BINS, MAX_BINS = 16, 16, 256


def bins_for_rows(n_rows: int) -> int:
    """Return the default booster's ``max_bin`` for data of ``n_rows`` rows.

    XGBoost's ``hist`` method evaluates every bin of every sampled column at
    every node, whatever the rows, so on few rows and many columns the bins
    are almost all of a fit, and 256 bins on a few hundred rows are one bin
    per value. So below 4,096 rows of the whole data the bins shrink to one
    per 16 of its rows (18 at 300 rows), never under 16 (docs/performance.md,
    "Wide tables", has the times and the selections with each).
    """
    return int(min(MAX_BINS, max(MIN_BINS, n_rows // ROWS_PER_BIN)))


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
        # As XGBoost turns it into a margin, -log(1/p - 1) in float32: near
        # p = 0 or 1 the float64 logit differs by more than the routing
        # check's tolerance (7e-5 at p = 1 - 1/1500, found in review).
        p32 = values.astype(np.float32)
        values = (-np.log(np.float32(1) / p32 - np.float32(1))).astype(np.float64)
    elif objective_name in _LOG:
        values = np.log(values)
    return values


def _check_kind(kind: str) -> None:
    """Refuse a booster without trees to attribute (``dart``, ``gblinear``)."""
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


def _check_trees(lmp: dict, trees: list) -> None:
    """Refuse a model of several targets, of no trees or of vector leaves."""
    if int(lmp.get("num_target", 1)) > 1:
        raise ValueError(
            "Multi-target XGBoost models are not supported yet; fit one model "
            "per target."
        )
    if not trees:
        raise ValueError("The XGBoost model has no trees; fit it first.")
    if any(int(t["tree_param"].get("size_leaf_vector", 1)) > 1 for t in trees):
        raise ValueError(
            "XGBoost vector-leaf trees (multi_strategy='multi_output_tree') "
            "are not supported; use multi_strategy='one_output_per_tree'."
        )


class XGBoostReader(ModelReader):
    """Read an ``xgboost.Booster`` or ``xgboost.XGBModel``.

    For the scikit-learn wrappers, a model trained with early stopping is
    read up to ``best_iteration``, the trees its ``predict`` uses.
    """

    positional_settings = (
        "monotone_constraints",
        "interaction_constraints",
        "feature_weights",
    )
    #: XGBoost refuses ±inf in its input (with a C++ stack trace).
    accepts_infinity = False
    #: XGBoost sums gradients into float32 gains G²/(H + λ): past a spread of
    #: sqrt(float32 max) ≈ 1.8e19 a node's G² overflows and the booster fits
    #: noise (docs/how-it-works.md, "Inputs that are refused, and why").
    max_target_spread = float(np.sqrt(FLOAT32_MAX))

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
            # XGBoost fits labels 0..K-1 as they are: label k is output k.
            # DaskXGBClassifier stores its classes_ in the order a DataFrame's
            # drop_duplicates met them (e.g. [1, 0]), so they are sorted here.
            classes = getattr(model, "classes_", None)
            self.classes_ = None if classes is None else np.sort(np.asarray(classes))
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
        self.ensemble, self.lost_identities = self._read(booster)
        self.thread_setting = self._nthread(model)
        self._round_boosters = None
        self._cpu_routing = False

    # -- estimators --------------------------------------------------------------
    @classmethod
    def make_estimator(cls, settings):  # noqa: D102
        import xgboost as xgb

        params = {
            "n_estimators": settings.n_estimators,
            "learning_rate": settings.learning_rate,
            "max_depth": settings.max_depth,
            "colsample_bytree": settings.colsample,
            "min_child_weight": 1,
            "reg_lambda": 1.0,
            "tree_method": "hist",
            "random_state": settings.random_state,
        }
        if settings.categorical:
            params["enable_categorical"] = True
        if settings.n_jobs is not None:
            params["n_jobs"] = settings.n_jobs
        if settings.n_rows is not None:
            params["max_bin"] = bins_for_rows(settings.n_rows)
        return (xgb.XGBClassifier if settings.classifier else xgb.XGBRegressor)(
            **params
        )

    @classmethod
    def target_offset_limit(cls, estimator):
        """2,000 times the learning rate over 0.01, for squared-error regressors.

        XGBoost adds leaves to float32 margins: far from 0 their rounding
        swallows the small ones, which scale with the learning rate, and
        TreeInner no longer matches total gain (docs/how-it-works.md, "Inputs
        that are refused, and why", has the offsets where it broke).
        """
        params = estimator.get_params()  # classifiers: a logistic objective
        if params.get("objective") not in (None, "reg:squarederror"):
            return None
        rate = params.get("learning_rate") or 0.3
        return 2000.0 * rate / 0.01

    @classmethod
    def prepare_estimator(cls, estimator, X) -> None:
        """Refuse the categorical columns XGBoost would refuse inside ``fit``.

        XGBoost's own refusals come from inside ``fit``; these come first, with
        the fix: a categorical column when the booster was not told
        ``enable_categorical=True``, and a pandas category whose categories are
        floats (XGBoost takes integer or text categories; ``astype('category')``
        of a float column, one with NaN say, makes float ones).
        """
        dtypes = getattr(X, "dtypes", None)
        if dtypes is None:
            return
        names = getattr(X, "columns", range(len(dtypes)))
        enabled = estimator.get_params().get("enable_categorical")
        for name, dtype in zip(names, dtypes, strict=False):
            pandas = str(dtype) == "category"  # polars': Categorical, Enum (text)
            if not (pandas or str(dtype).startswith(("Categorical", "Enum"))):
                continue
            if not enabled:
                raise ValueError(
                    f"Column {str(name)!r} of X is categorical, but the "
                    f"{type(estimator).__name__} was built without "
                    "enable_categorical=True, so XGBoost refuses it. Pass "
                    "enable_categorical=True (and tree_method='hist'), or encode "
                    "the column as numbers."
                )
            if pandas and dtype.categories.dtype.kind == "f":
                raise ValueError(_float_categories_message(str(name), dtype.categories))

    @classmethod
    def threads_change_results(cls, estimator):  # noqa: D102
        return False  # measured: the same model on 1 and 2 threads (XGBoost)

    @classmethod
    def early_stopping_rows_needed(cls, estimator, fit_params):  # noqa: D102
        import xgboost as xgb

        if "eval_set" in fit_params or not isinstance(estimator, xgb.XGBModel):
            return False
        params = estimator.get_params()
        callbacks = params.get("callbacks") or []
        return params.get("early_stopping_rounds") is not None or any(
            isinstance(c, xgb.callback.EarlyStopping) for c in callbacks
        )

    @classmethod
    def early_stopping_fit_params(  # noqa: D102
        cls, estimator, X_es, y_es, *, sample_weight, fit_params
    ):
        params = {"eval_set": [(X_es, y_es)]}
        if sample_weight is not None:
            params["sample_weight_eval_set"] = [sample_weight]
        if "verbose" not in fit_params:
            params["verbose"] = False  # XGBoost prints every round by default
        return params

    # -- reading ---------------------------------------------------------------
    def _read(self, booster) -> tuple[TreeEnsemble, list[str]]:
        text = booster.save_config()
        raw = bytes(booster.save_raw("ubj"))
        names = booster.feature_names
        self._config = config = json.loads(text)
        return self.cached_read(
            (text, raw, repr(names)), lambda: self._parse(booster, config, raw)
        )

    def _parse(
        self, booster, config: dict, raw: bytes
    ) -> tuple[TreeEnsemble, list[str]]:
        """Read the model's bytes; return the ensemble and the identities lost."""
        gbm = config["learner"]["gradient_booster"]
        _check_kind(gbm["name"])
        objective = _objective(config)
        learner = ubjson.loads(raw)["learner"]
        lmp = learner["learner_model_param"]
        model = learner["gradient_booster"]["model"]
        trees = model["trees"]
        _check_trees(lmp, trees)
        tparam = gbm["tree_train_param"]
        n_parallel = int(model["gbtree_model_param"].get("num_parallel_tree", 1))
        settings = leaf_settings(tparam, n_parallel)
        nodes = tree_nodes(trees)
        offsets, sizes = nodes.offsets, nodes.sizes
        left, right, is_leaf = nodes.left, nodes.right, nodes.is_leaf
        feature, cover, leaf_value = nodes.feature, nodes.cover, nodes.leaf_value
        base_weights, split_rule = nodes.base_weights, nodes.split_rule
        tree = np.repeat(np.arange(len(trees)), sizes)
        indptr = model.get("iteration_indptr")
        if indptr is None:  # XGBoost < 2.0 wrote no iteration_indptr
            per_round = len(trees) // booster.num_boosted_rounds()
            indptr = np.arange(0, len(trees) + 1, per_round)
        indptr = np.asarray(indptr, dtype=np.int64)
        stats = NodeStats(
            left,
            right,
            is_leaf,
            leaf_value=leaf_value,
            cover=cover,
            weight=base_weights,
            tree=tree,
        )
        value, learning_rate, lam, lost = node_values(
            stats, settings, indptr, len(trees)
        )

        n_outputs = objective.n_outputs
        tree_group = np.asarray(model["tree_info"], dtype=np.int64)
        intercept = _intercept(lmp["base_score"], objective_name(config), n_outputs)
        names = booster.feature_names
        ensemble = TreeEnsemble(
            tree_offsets=offsets,
            children_left=left,
            children_right=right,
            feature=feature,
            value=value,
            cover=cover,
            tree_group=tree_group,
            iteration_indptr=indptr,
            learning_rate=learning_rate,
            reg_lambda=lam,
            intercept=intercept,
            objective=objective,
            n_features=int(lmp["num_feature"]),
            feature_names=None if names is None else tuple(names),
            split_rule=split_rule,
        )
        return ensemble, lost

    def total_gain(self) -> np.ndarray:  # noqa: D102
        gain = self.booster.get_score(importance_type="total_gain")
        n = self.ensemble.n_features
        names = self.booster.feature_names or [f"f{i}" for i in range(n)]
        return np.array([gain.get(name, 0.0) for name in names], dtype=np.float64)

    def _nthread(self, model) -> int | None:
        if not self._from_booster:
            return model.n_jobs
        # The configuration _read parsed: no second save_config.
        nthread = self._config["learner"]["generic_param"].get("nthread", "0")
        return int(nthread) or None

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
            if np.asarray(X.get_base_margin()).size:
                raise ValueError(
                    "The DMatrix carries a base_margin (a per-row offset), which "
                    "the trees never see: the residuals and the margin would "
                    "include an offset no attribution can credit. Pass a DMatrix "
                    "without base_margin."
                )
        return super().prepare_X(X)

    def apply(self, X) -> np.ndarray:  # noqa: D102
        return self._leaves(self.booster.predict(self._dmatrix(X), pred_leaf=True))

    def apply_with_margin(self, X, rows):  # noqa: D102
        # One DMatrix for both; the margin of the checked rows on a slice of
        # it (slicing is cheap; a second DMatrix built from X per chunk cost
        # more than predicting all its rows).
        # Leaves first, so that a GPU booster's first-call misrouting is what
        # gets checked.
        dmat = self._dmatrix(X)
        leaves = self._leaves(self.booster.predict(dmat, pred_leaf=True))
        k = self.ensemble.n_outputs
        if rows.size == 0:
            return leaves, np.empty((0, k))
        if rows.size < leaves.shape[0]:  # a sample of the rows: predict those
            import xgboost as xgb

            try:
                part = dmat.slice(rows)
            except xgb.core.XGBoostError:  # QuantileDMatrix and external memory
                part = None
            if part is not None:
                return leaves, self._own_margin(part)
        return leaves, self._own_margin(dmat)[rows]

    def _leaves(self, leaves) -> np.ndarray:
        from .._kernels._compiled import global_leaves

        leaves = leaves.reshape(leaves.shape[0], self.ensemble.n_trees)
        return global_leaves(leaves, self.ensemble.tree_offsets[:-1], self.n_threads())

    def raw_margin(self, X) -> np.ndarray:  # noqa: D102
        return self.booster.predict(self._dmatrix(X), output_margin=True)

    def _disagreeing(self, leaves, own) -> np.ndarray:
        # XGBoost adds the leaves one tree at a time in float32: small leaves
        # beside a large margin are partly lost, always in the same direction,
        # so over many trees the float64 sum drifts beyond any rounding bound.
        # A row also passes when XGBoost's own float32 sum of the reported
        # leaves gives its margin.
        off = super()._disagreeing(leaves, own)
        rows = np.flatnonzero(off)
        if rows.size == 0:
            return off
        ens = self.ensemble
        _, scale = ens.margins(leaves[rows])
        per_tree = ens.value.astype(np.float32)[leaves[rows]]
        still = np.zeros(rows.size, dtype=bool)
        for k in range(ens.n_outputs):
            trees = per_tree[:, ens.tree_group == k]
            start = np.full((rows.size, 1), ens.intercept[k], dtype=np.float32)
            # cumsum adds sequentially, in the booster's order of the trees.
            total = np.cumsum(np.hstack([start, trees]), axis=1, dtype=np.float32)
            total = total[:, -1].astype(np.float64)
            ulp = np.spacing(np.abs(own[rows, k]).astype(np.float32)).astype(float)
            still |= np.abs(total - own[rows, k]) > 4 * ulp + 1e-6 * scale[:, k]
        off[rows] = still
        return off

    fallback_name = "XGBoost's CPU predictor, on a copy of the booster"

    def on_gpu(self) -> bool:
        """Whether the booster predicts on a GPU (its ``device`` setting)."""
        config = json.loads(self.booster.save_config())
        device = str(config["learner"]["generic_param"].get("device", "cpu"))
        return device.startswith(("cuda", "gpu"))

    def use_fallback_routing(self) -> bool:
        """Route with the CPU predictor on a copy of a GPU booster.

        A freshly trained GPU booster's first ``pred_leaf`` call can send rows
        with missing values down the wrong branch (xgboost 3.4.1 on an H100);
        the CPU predictor routes them as the model's predictions do. The
        user's booster is left as it is.
        """
        if self._cpu_routing or not self.on_gpu():
            return False
        cpu = self.booster.copy()
        cpu.set_param({"device": "cpu"})
        self.booster = cpu
        self._round_boosters = None
        self._cpu_routing = True
        return True

    def routing_advice(self) -> str:  # noqa: D102
        if self._cpu_routing:
            return (
                "The CPU predictor on a copy of the booster disagreed too. Save "
                "the model and load it again (xgb.Booster(model_file=...)), and "
                "report it to skl-treeinner with your xgboost version."
            )
        return super().routing_advice()

    def has_treeshap_rows(self, X) -> bool:  # noqa: D102
        import xgboost as xgb

        return not isinstance(X, xgb.DMatrix) and super().has_treeshap_rows(X)

    def treeshap_rows(self, X) -> np.ndarray | None:
        """X as the dense float32 array XGBoost compares, missing values as NaN.

        For TreeSHAP by leaf patterns, which needs x's side at every split
        (:class:`~skl_treeinner._model._ensemble.SplitRule`). None where that rule
        does not cover the input: a DMatrix or sparse matrix (absent entries
        are missing), non-numeric columns, a model with categorical splits.
        """
        X = super().treeshap_rows(X)
        if X is None:
            return None
        missing = self._dmatrix_kwargs.get("missing")
        if missing is not None and not np.isnan(missing):
            X[X == np.float32(missing)] = np.nan
        return X

    def iteration_shap(self, X, rounds=None) -> Iterator[tuple[int, np.ndarray]]:  # noqa: D102
        # XGBoost computes contributions only for iteration ranges starting at
        # 0, but a booster sliced to one round is a model of its own.
        if self._round_boosters is None:
            n_rounds = self.ensemble.n_iterations
            self._round_boosters = [self.booster[r : r + 1] for r in range(n_rounds)]
        dmat = self._dmatrix(X)
        n, k, p = n_rows(X), self.ensemble.n_outputs, self.ensemble.n_features
        for r in range(len(self._round_boosters)) if rounds is None else rounds:
            contribs = self._round_boosters[r].predict(dmat, pred_contribs=True)
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


def _float_categories_message(name: str, categories) -> str:
    """Say what to do with a pandas category of floats, which XGBoost refuses.

    Text categories, not integer ones: on Dask collections XGBoost can refuse
    integer categories too ("Input pointer misalignment", a partition's
    category index moved between workers), where text ones fit.
    """
    values = np.asarray(categories, dtype=np.float64)
    shown = ", ".join(f"{v:g}" for v in values[:3])
    return (
        f"Column {name!r} of X is a category whose categories are floats "
        f"({shown}{', ...' if values.size > 3 else ''}), which XGBoost refuses "
        "inside its fit. Name them by text: "
        f"X[{name!r}] = X[{name!r}].cat.rename_categories(str); or, where the "
        f"values' order means something, keep the column as numbers: "
        f"X[{name!r}] = X[{name!r}].astype(float)."
    )


def objective_name(config: dict) -> str:
    """XGBoost's name of the objective in a ``save_config()`` dict."""
    return config["learner"]["objective"]["name"]
