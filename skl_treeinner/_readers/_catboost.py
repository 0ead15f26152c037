"""Reader for CatBoost models (``CatBoost``, ``CatBoostRegressor``/``Classifier``).

What we rely on inside CatBoost (pinned by ``tests/unit/test_catboost.py``):

- ``save_model(format="json")``: ``oblivious_trees``, each with ``splits``
  (one per depth level; ``splits[0]`` is the root, the split chosen first),
  ``leaf_values`` (already shrunk; ``2**depth * K`` values, leaf-major for
  ``K`` outputs), ``leaf_weights`` (the weighted number of training rows in
  each leaf); ``scale_and_bias`` (margin = scale · Σ leaves + bias); and
  ``features_info``, whose float-feature borders, one-hot values and CTR
  borders, enumerated in that order, are the ``split_index`` of every split.
- ``_serialize_model()``: the model's binary (``cbm``) bytes, as CatBoost
  pickles them, about a hundredth of the JSON's cost; the key of the read
  cache, so a model changed in place is read again.
- Leaf index ``Σ_i b_i 2**i``, where ``b_i`` is the side of ``splits[i]``, as
  ``calc_leaf_indexes`` returns it: rows are always routed by CatBoost.
- Leaf values (measured, for the plain and ordered boosting types and
  ``leaf_estimation_iterations=1``): ``α G / (H + λ')`` with ``G`` the sum of
  the negative gradient over the leaf's training rows at the model's margin
  before the tree, ``H`` the sum of hessians (Newton, the default) or of
  weights (``leaf_estimation_method="Gradient"``), and ``λ' = l2_leaf_reg ·
  Σw / n`` (λ itself without sample weights). For RMSE the hessian is the
  weight, so ``leaf_weights`` are the covers H of Eq. 7 and every identity
  holds. For Logloss, CrossEntropy and MultiClass with Newton leaves the
  hessian sums are not stored: inner-node values then weigh children by
  rows, which keeps Prop. 1 but not Prop. 3 (``lost_identities``).

Splits on a CTR of one categorical feature, and one-hot splits, are
attributed to that feature. While training, a row's CTR comes from the rows
before it (ordered target statistics), so the training rows reached other
leaves than ``calc_leaf_indexes`` gives them afterwards: on the training rows,
TreeInner then differs from the gain of the splits as they were fitted (by
about 3 % in ``tests/unit/test_catboost.py``). Held-out rows are routed as
``predict`` routes them, and the node values are those the splits were fitted
with, so held-out scores are exact; no warning is given.

A split on a *combination* of features (CTRs of several columns,
``max_ctr_complexity > 1``) cannot be attributed to one feature: such models
are refused. Only symmetric (oblivious) trees are read.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator

import numpy as np

from .._kernels._compiled import global_leaves
from .._model import _objectives as obj
from .._model._ensemble import (
    SplitRule,
    TreeEnsemble,
    node_values_from_leaves,
    subtree_sums,
)
from .._utils._optional import import_optional
from .._utils._validation import FLOAT32_MAX
from ._base import ModelReader, feature_names_of, n_rows, polars_as_pandas

__all__ = ["CatBoostReader"]

#: CatBoost losses read, and the objective each one is.
SUPPORTED_LOSSES = ("RMSE", "Logloss", "CrossEntropy", "MultiClass")


def _loss_name(params: dict) -> str:
    return str(params.get("loss_function", "RMSE")).split(":")[0]


def _objective(params: dict, n_outputs: int) -> obj.Objective:
    loss = _loss_name(params)
    if loss == "RMSE":
        return obj.SquaredError()
    if loss in ("Logloss", "CrossEntropy"):
        return obj.Logistic()
    if loss == "MultiClass":
        return obj.Softmax(n_outputs)
    raise ValueError(
        f"CatBoost loss_function={loss!r} is not supported: TreeInner needs the "
        f"gradient of the loss. Supported: {', '.join(SUPPORTED_LOSSES)}."
    )


def _split_features(info: dict) -> list:
    """Return the input columns behind each ``split_index`` (CatBoost's order)."""
    table: list = []
    for ff in info.get("float_features", []):
        table += [[ff["flat_feature_index"]]] * len(ff.get("borders", []))
    cats = info.get("categorical_features", [])
    for cf in cats:
        table += [[cf["flat_feature_index"]]] * len(cf.get("values", []))
    for ctr in info.get("ctrs", []):
        columns = [
            cats[e["cat_feature_index"]]["flat_feature_index"]
            if "cat_feature_index" in e
            else None
            for e in ctr.get("elements", [])
        ]
        table += [columns] * len(ctr.get("borders", []))
    return table


def _symmetric_tree(d: int, columns):
    """Return the children and split features of a symmetric tree of depth d.

    The node reached after the sides b_0..b_{l-1} of the first l levels is
    ``2**l - 1 + Σ_i b_i 2**i``, so leaf ``L = Σ_i b_i 2**i`` (the number
    ``calc_leaf_indexes`` reports) is node ``2**d - 1 + L``. Local indices.
    """
    size = 2 ** (d + 1) - 1
    left = np.full(size, -1, dtype=np.int64)
    right = np.full(size, -1, dtype=np.int64)
    feature = np.full(size, -1, dtype=np.int64)
    for level in range(d):
        prefix = np.arange(2**level)
        node = 2**level - 1 + prefix
        left[node] = 2 ** (level + 1) - 1 + prefix  # b_level = 0
        right[node] = 2 ** (level + 1) - 1 + prefix + 2**level  # b_level = 1
        feature[node] = columns[level]
    return left, right, feature


def _tree_arrays(trees, owners, scale, k):
    """Return (offsets, left, right, feature, leaf value, cover) of all trees.

    One tree per output of each symmetric tree, of the same shape; covers
    are the leaves' weights summed up the tree (:func:`subtree_sums`).
    """
    lefts, rights, feats, leaf_vals, covers, sizes = [], [], [], [], [], []
    offset = 0
    for m, tree in enumerate(trees):
        splits = tree.get("splits") or []  # null: a tree of one leaf
        d = len(splits)
        columns = []
        for split in splits:
            owner = owners[split["split_index"]]
            if len(owner) != 1 or owner[0] is None:
                raise ValueError(
                    f"Tree {m} of the CatBoost model splits on a combination of "
                    "features (a CTR of several columns), which TreeInner "
                    "cannot attribute to one feature. Refit with "
                    "max_ctr_complexity=1."
                )
            columns.append(owner[0])
        n_inner, n_leaves = 2**d - 1, 2**d
        size = n_inner + n_leaves
        values = np.asarray(tree["leaf_values"], dtype=np.float64) * scale
        values = values.reshape(n_leaves, k)
        left, right, feature = _symmetric_tree(d, columns)
        cover = np.zeros(size)
        cover[n_inner:] = np.asarray(tree["leaf_weights"], dtype=np.float64)
        for c in range(k):  # one tree per output, same shape
            value = np.zeros(size)
            value[n_inner:] = values[:, c]
            lefts.append(np.where(left >= 0, left + offset, -1))
            rights.append(np.where(right >= 0, right + offset, -1))
            feats.append(feature)
            leaf_vals.append(value)
            covers.append(cover)
            sizes.append(size)
            offset += size
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    if not sizes:
        empty = np.zeros(0, dtype=np.int64)
        return offsets, empty, empty, empty, np.zeros(0), np.zeros(0)
    left, right = np.concatenate(lefts), np.concatenate(rights)
    cover = subtree_sums(left, right, np.concatenate(covers))
    return offsets, left, right, np.concatenate(feats), np.concatenate(leaf_vals), cover


def _lost_settings(params: dict, cover) -> list[str]:
    """Training settings (each a short phrase) under which Prop. 3 does not hold."""
    lost = []
    weighted = bool(np.any(np.abs(cover - np.round(cover)) > 1e-6))
    class_weighted = (
        params.get("class_weights")
        or params.get("auto_class_weights") not in (None, "None")
        or float(params.get("scale_pos_weight", 1) or 1) != 1
    )
    if weighted or class_weighted:
        lost.append(
            "sample or class weights (CatBoost scales l2_leaf_reg by the mean "
            "training weight, which the model does not store)"
        )
    loss = _loss_name(params)
    method = params.get("leaf_estimation_method", "Newton")
    if loss != "RMSE" and method == "Newton":
        lost.append(
            f"{loss} with Newton leaf values (CatBoost stores row counts, not "
            "the hessian sums, so inner nodes weigh children by rows; "
            "leaf_estimation_method='Gradient' makes the identity exact)"
        )
    if int(params.get("leaf_estimation_iterations", 1)) > 1:
        lost.append(
            f"leaf_estimation_iterations={params['leaf_estimation_iterations']} "
            "(several steps per leaf: leaf values are not -αG/(H+λ))"
        )
    if float(params.get("model_shrink_rate", 0) or 0) > 0:
        lost.append("model_shrink_rate > 0 (earlier trees shrink as trees are added)")
    for flag in ("langevin", "posterior_sampling"):
        if params.get(flag):
            lost.append(f"{flag}=True (noise added to the leaf values)")
    return lost


def _feature_names(info: dict) -> tuple[int, tuple[str, ...] | None]:
    """Return the number of input features and their names (None if unnamed)."""
    features = [
        f
        for kind in ("float_features", "categorical_features")
        for f in info.get(kind, [])
    ]
    flat = [f["flat_feature_index"] for f in features]
    n_features = max(flat) + 1 if flat else 0
    by_index = {f["flat_feature_index"]: f.get("feature_id", "") for f in features}
    names = [by_index.get(i, "") for i in range(n_features)]
    # Trained on arrays, CatBoost names nothing (or "0", "1", ...).
    named = all(names) and names != [str(i) for i in range(n_features)]
    return n_features, tuple(names) if named else None


class CatBoostReader(ModelReader):
    """Read a fitted ``catboost.CatBoost`` model (regressor, classifier or loaded).

    Each symmetric tree of depth d becomes a full binary tree whose level l
    splits on ``splits[l]``; rows are routed by ``calc_leaf_indexes``. A
    multi-class model's trees hold one value per class in every leaf: each is
    read as K trees of the same shape, one per class, fitted at the same
    margins (one boosting iteration).
    """

    accepts_infinity = True
    #: CatBoost keeps gradients in float32 somewhere: y x 1e30 (spread 1.1e33
    #: on 1,000 rows) fitted as y did, y x 1e40 failed inside fit ("Too few
    #: sampling units"), a residual past float32's largest value.
    max_target_spread = FLOAT32_MAX
    accepts_text_columns = True  # string columns named in cat_features

    def __init__(self, model):
        from sklearn.exceptions import NotFittedError

        if not model.is_fitted():
            raise NotFittedError(
                f"This {type(model).__name__} is not fitted yet; call fit first."
            )
        self.model = model
        params = model.get_all_params()
        self._params = params
        threads = params.get("thread_count")
        self.thread_setting = int(threads) if threads and threads > 0 else None
        classes = getattr(model, "classes_", None)
        # CrossEntropy fits probabilities: its classes_ ([0, 1]) are not labels.
        if (
            classes is not None
            and len(classes)
            and _loss_name(params)
            in (
                "Logloss",
                "MultiClass",
            )
        ):
            self.classes_ = np.asarray(classes)
        # The key is the model's binary bytes (trees, borders, leaf values,
        # scale and bias: all the JSON holds, at a hundredth of its cost);
        # the JSON is written only to read a model not in the cache.
        self.ensemble, self.lost_identities = self.cached_read(
            (model._serialize_model(), json.dumps(params, sort_keys=True, default=str)),
            lambda: self._read(json.loads(self._json()), params),
        )
        # Leaf L of tree m is node first_leaf[m] + L (see _symmetric_tree).
        ens = self.ensemble
        sizes = np.diff(ens.tree_offsets)
        self._first_leaf = ens.tree_offsets[:-1] + (sizes - 1) // 2

    def _json(self) -> str:
        fd, path = tempfile.mkstemp(suffix=".json")
        os.close(fd)
        try:
            self.model.save_model(path, format="json")
            with open(path, encoding="utf-8") as f:
                return f.read()
        finally:
            os.unlink(path)

    # -- estimators --------------------------------------------------------------
    @classmethod
    def make_estimator(cls, settings):  # noqa: D102
        cb = import_optional(
            "catboost",
            extra="catboost",
            purpose="a CatBoost booster (--estimator catboost)",
        )
        params = {
            "iterations": settings.n_estimators,
            "learning_rate": settings.learning_rate,
            "depth": settings.max_depth,
            "rsm": settings.colsample,
            "random_seed": settings.random_state,
            # One feature per split, so that every split has one owner.
            "max_ctr_complexity": 1,
            "verbose": 0,
            "allow_writing_files": False,
        }
        if settings.n_jobs is not None:
            params["thread_count"] = settings.n_jobs
        if settings.classifier:
            return cb.CatBoostClassifier(**params)
        return cb.CatBoostRegressor(**params)

    @classmethod
    def prepare_estimator(cls, estimator, X) -> None:
        """Declare a frame's categorical and text columns as ``cat_features``.

        CatBoost refuses such columns unless told; a ``cat_features`` the user
        set is kept. A missing value in one of them is refused with its name
        (CatBoost takes categories as strings or integers only).
        ``max_ctr_complexity`` is set to 1 where unset (a CTR of several
        columns has no single owner to score; without categorical columns it
        changes nothing), also in a Pipeline (``X=None``), and where
        ``cat_features`` reach ``fit``; a value over 1 is refused. Settings
        the reader would refuse after fitting (the loss, the growth policy),
        and class settings keyed by labels, are refused here, before any fit.
        """
        params = estimator.get_params()
        loss = _loss_name(params)
        if loss not in SUPPORTED_LOSSES:
            _objective(params, 2)  # raises, naming the supported losses
        policy = params.get("grow_policy", "SymmetricTree")
        if policy != "SymmetricTree":
            raise ValueError(
                f"CatBoost grow_policy={policy!r} is not supported: only symmetric "
                "trees are read. Use grow_policy='SymmetricTree' (the default)."
            )
        for kind in ("text_features", "embedding_features"):
            if params.get(kind):
                raise ValueError(
                    f"CatBoost {kind}={params[kind]!r} cannot be read: CatBoost "
                    "exports models with text or embedding features only in its "
                    "binary format, not the JSON the reader reads trees from. "
                    f"Leave {kind} out and declare such a column in cat_features "
                    "(CatBoost then splits on it as a category), or drop it."
                )
        weights = params.get("class_weights")
        if params.get("class_names") is not None or isinstance(weights, dict):
            raise ValueError(
                "TreeInnerSelector fits classifiers on labels encoded 0..K-1 in "
                "sorted order, so CatBoost's class_names and class_weights keyed "
                "by label do not apply. Leave class_names out, and give "
                "class_weights as a list in the sorted order of the labels (or "
                "use sample_weight)."
            )
        _one_feature_per_ctr(estimator, params.get("max_ctr_complexity"))
        if X is None or params.get("cat_features") is not None:
            return
        positions = _categorical_positions(X)
        if positions:
            estimator.set_params(cat_features=positions)

    @classmethod
    def fit_input(cls, X):
        """CatBoost crashes on polars categorical columns: fit on pandas."""
        return polars_as_pandas(X)

    @classmethod
    def threads_change_results(cls, estimator):  # noqa: D102
        return False  # measured: the same model on 1 and 2 threads (CatBoost)

    #: CatBoost's name of the thread setting (left out of get_params if unset).
    thread_parameter = "thread_count"
    positional_settings = (
        "monotone_constraints",
        "feature_weights",
        "cat_features",
        "text_features",
        "embedding_features",
    )

    @classmethod
    def check_refit_settings(cls, estimator) -> None:  # noqa: D102
        cats = estimator.get_params(deep=False).get("cat_features")
        if cats is not None and len(cats):
            raise ValueError(
                f"max_features='best'/'1se' refits {type(estimator).__name__} on "
                "subsets of X's columns, which its cat_features cannot follow. "
                "Leave cat_features out: the selector declares a frame's "
                "categorical and text columns to CatBoost itself, on every subset."
            )
        super().check_refit_settings(estimator)

    @classmethod
    def early_stopping_rows_needed(cls, estimator, fit_params):  # noqa: D102
        if "eval_set" in fit_params:
            return False
        params = estimator.get_params()
        rounds = params.get("early_stopping_rounds", params.get("od_wait"))
        return rounds is not None or params.get("od_type") is not None

    @classmethod
    def early_stopping_fit_params(  # noqa: D102
        cls, estimator, X_es, y_es, *, sample_weight, fit_params
    ):
        import catboost as cb

        cat = fit_params.get("cat_features", estimator.get_params().get("cat_features"))
        return {"eval_set": cb.Pool(X_es, y_es, weight=sample_weight, cat_features=cat)}

    # -- reading -----------------------------------------------------------------
    def _read(self, model_json: dict, params: dict) -> tuple[TreeEnsemble, list]:
        """Read the model's JSON; return the ensemble and the identities lost."""
        trees = model_json.get("oblivious_trees")
        if trees is None or "trees" in model_json:
            raise ValueError(
                "Only CatBoost models of symmetric trees are supported "
                "(grow_policy='SymmetricTree', the default); refit with it."
            )
        scale, bias = model_json.get("scale_and_bias", [1.0, [0.0]])
        bias = np.atleast_1d(np.asarray(bias, dtype=np.float64))
        info = model_json["features_info"]
        n_leaves0 = max(len(trees[0]["leaf_weights"]), 1) if trees else 1
        k = max(1, len(trees[0]["leaf_values"]) // n_leaves0) if trees else 1
        if bias.size == 1 and k > 1:
            bias = np.repeat(bias, k)
        offsets, left, right, feature, leaf_value, cover = _tree_arrays(
            trees, _split_features(info), scale, k
        )
        n_trees = offsets.size - 1
        lam = float(params.get("l2_leaf_reg", 3.0))
        lost = _lost_settings(params, cover)
        value = node_values_from_leaves(left, right, leaf_value, cover, lam)
        n_features, feature_names = _feature_names(info)
        ensemble = TreeEnsemble(
            tree_offsets=offsets,
            children_left=left,
            children_right=right,
            feature=feature,
            value=value,
            cover=cover,
            tree_group=np.arange(n_trees, dtype=np.int64) % k,
            iteration_indptr=np.arange(0, n_trees + 1, k, dtype=np.int64),
            learning_rate=float(params.get("learning_rate", 1.0)),
            reg_lambda=lam,
            intercept=bias,
            objective=_objective(params, k),
            n_features=n_features,
            feature_names=feature_names,
            # TreeSHAP by leaf patterns reads every split's side off the leaf.
            split_rule=SplitRule(
                threshold=np.zeros(0),
                missing_left=np.zeros(0, dtype=bool),
                strict=False,
                oblivious=True,
            ),
        )
        return ensemble, lost

    def total_gain(self) -> np.ndarray:
        """CatBoost stores no split gains: refused, with what to use instead."""
        raise NotImplementedError(
            "CatBoost models store no split gains (PredictionValuesChange and "
            "LossFunctionChange measure other things), so there is no total gain "
            "to report. On the training rows, global_importance(model, X, y, "
            "method='tree_inner') equals total gain (Prop. 3; exactly for RMSE "
            "and for Gradient leaves, see the supported boosters page)."
        )

    # -- classes -----------------------------------------------------------------
    def encode_target(self, y: np.ndarray) -> np.ndarray:
        """Map class labels to CatBoost's output order (``classes_``, any order)."""
        classes = self.classes_
        order = np.argsort(classes, kind="stable")
        ranked = classes[order]
        y = np.asarray(y)
        try:
            at = np.clip(np.searchsorted(ranked, y), 0, ranked.size - 1)
            bad = ranked[at] != y
        except TypeError:  # labels of another type than the classes
            at, bad = np.zeros(y.shape, np.int64), np.ones(y.shape, bool)
        if np.any(bad):
            unknown = sorted({str(v) for v in y[bad].tolist()})
            raise ValueError(
                f"y holds labels {unknown[:5]} that the classifier was not trained "
                f"on; its classes are {classes.tolist()}."
            )
        return order[at].astype(np.float64)

    # -- routing -----------------------------------------------------------------
    def _data(self, X):
        return polars_as_pandas(X)

    def _column_names(self, X) -> list[str] | None:
        return feature_names_of(X)

    def _threads(self) -> int:
        return self.n_threads()

    def apply(self, X) -> np.ndarray:  # noqa: D102
        leaves = np.asarray(
            self.model.calc_leaf_indexes(self._data(X), thread_count=self._threads())
        ).reshape(n_rows(X), -1)
        k = self.ensemble.n_outputs
        if k > 1:  # each class's copy of a tree has the same leaves
            leaves = np.repeat(leaves, k, axis=1)
        return global_leaves(leaves, self._first_leaf, self.n_threads())

    def raw_margin(self, X) -> np.ndarray:  # noqa: D102
        return np.asarray(
            self.model.predict(
                self._data(X),
                prediction_type="RawFormulaVal",
                thread_count=self._threads(),
            ),
            dtype=np.float64,
        )

    def has_treeshap_rows(self, X) -> bool:
        """Say yes: symmetric trees need no rows for TreeSHAP, only their leaves."""
        return True

    def treeshap_rows(self, X) -> np.ndarray:
        """Nothing (the leaves' numbers hold every split's side; see SplitRule)."""
        return np.zeros((0, 0))

    def iteration_shap(self, X, rounds=None) -> Iterator[tuple[int, np.ndarray]]:  # noqa: D102
        import catboost as cb

        data = self._data(X)
        n, k, p = n_rows(X), self.ensemble.n_outputs, self.ensemble.n_features
        pool = cb.Pool(data, cat_features=self.model.get_cat_feature_indices())
        for r in range(self.ensemble.n_iterations) if rounds is None else rounds:
            one = self.model.copy()
            one.shrink(ntree_start=r, ntree_end=r + 1)
            phi = one.get_feature_importance(
                pool, type="ShapValues", thread_count=self._threads()
            )
            yield r, np.asarray(phi, dtype=np.float64).reshape(n, k, p + 1)[:, :, :p]


def _categorical_positions(X) -> list[int]:
    """Positions of a frame's categorical and text columns (none for arrays).

    A missing value in one of them is refused with its name.
    """
    columns = feature_names_of(X)
    if columns is None:
        return []
    X = polars_as_pandas(X)
    positions = []
    for j, (name, column) in enumerate(zip(columns, X.columns, strict=True)):
        dtype = X[column].dtype
        if dtype.kind not in "OSU" and str(dtype) != "category":
            continue
        if X[column].isna().any():
            raise ValueError(
                f"Column {name!r} is categorical and holds missing values, "
                "which CatBoost refuses in categorical columns; fill them "
                f"with a category of their own, e.g. X[{name!r}] = "
                f"X[{name!r}].astype(str)."
            )
        positions.append(j)
    return positions


def _one_feature_per_ctr(estimator, complexity) -> None:
    """Keep every CTR to one column: set ``max_ctr_complexity=1``, or refuse more.

    CatBoost combines categorical columns (with each other and with split
    float columns) into CTRs of several columns by default (up to 4 on the
    CPU); a split on one has no single owner, and the reader would refuse
    the model only after every fit.
    """
    if complexity is None:
        estimator.set_params(max_ctr_complexity=1)
    elif complexity > 1:
        raise ValueError(
            f"CatBoost max_ctr_complexity={complexity} combines categorical "
            "columns into CTRs of several columns, whose splits TreeInner "
            "cannot attribute to one feature. Set max_ctr_complexity=1, or "
            "leave it out and the selector sets it."
        )
