"""Reader for scikit-learn's classic ``GradientBoostingRegressor/Classifier``.

What it relies on inside scikit-learn is listed in :mod:`._sklearn`'s
docstring ("GradientBoosting") and pinned by ``tests/unit/test_sklearn_readers.py``.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from .._model import _objectives as obj
from .._model._ensemble import SplitRule, TreeEnsemble, node_values_from_leaves
from ._base import ModelReader, n_rows
from ._sklearn import _check_fitted, _import_shap

__all__ = ["GradientBoostingReader"]


def _gb_objective(model) -> tuple[obj.Objective, list[str]]:
    loss = model.loss
    if loss == "squared_error":
        return obj.SquaredError(), []
    refit = (
        f"loss={loss!r} (leaf values were re-fitted by a Newton line search, so "
        "they are not the node means the splits were chosen for; inner nodes "
        "weigh their children by rows, since the hessian sums are not stored)"
    )
    if loss == "log_loss":
        k = int(model.n_trees_per_iteration_)
        return (obj.Logistic() if k == 1 else obj.Softmax(k)), [refit]
    if loss == "exponential":
        return obj.Exponential(), [refit]
    raise ValueError(
        f"GradientBoosting with loss={loss!r} is not supported: "
        + (
            "its residuals are clipped at a quantile of each stage's training "
            "residuals (huber's delta), which is not stored with the model"
            if loss == "huber"
            else "its leaf values are re-fitted to a median or quantile of the "
            "residuals, and its gradient is not smooth"
        )
        + ". Refit with loss='squared_error', or use HistGradientBoosting."
    )


class GradientBoostingReader(ModelReader):
    """Read a fitted ``GradientBoostingRegressor`` or ``...Classifier``.

    Each tree is a ``DecisionTreeRegressor`` fitted (with λ = 0 and unit
    hessians, weighted by ``sample_weight``) to the negative gradient
    -g = y - f for squared error, y_k - p_k for log-loss. Its ``value`` at
    every node is the weighted mean -G_t/N_t, so p̂ = α · value is Eq. 7
    with H_t = N_t, the weighted count (``weighted_n_node_samples``).

    Parameters
    ----------
    model : GradientBoostingRegressor or GradientBoostingClassifier
        A fitted model with a constant ``init`` (``None``, ``"zero"`` or a
        ``DummyRegressor``/``DummyClassifier``).

    Raises
    ------
    sklearn.exceptions.NotFittedError
        If the model is not fitted.
    ValueError
        If the loss is ``huber``, ``quantile`` or ``absolute_error``, or the
        init estimator is not constant.

    Notes
    -----
    For ``loss="squared_error"`` all identities hold. For ``log_loss`` and
    ``exponential`` scikit-learn replaces each leaf value by one Newton step
    on the rows of the leaf; PreDecomp with the stored values still adds up
    to the prediction (Prop. 1), but in-sample TreeInner no longer equals
    total gain (Prop. 3): ``lost_identities`` says so. With ``subsample < 1``
    each tree was fitted to a random subset of rows that is not stored, so
    Prop. 3 holds only on that subset. ``total_gain`` is
    Σ_trees ``tree_.compute_feature_importances(normalize=False)`` times the
    tree's root weight: the weighted impurity decrease of every split,
    N_t imp_t - N_l imp_l - N_r imp_r = G_l²/N_l + G_r²/N_r - G_t²/N_t;
    ``feature_importances_`` is the same, normalised to sum to 1.

    References
    ----------
    Y. Sun, "Individualized and Global Feature Attributions for Gradient
    Boosted Trees in the Presence of ℓ2 Regularization", AISTATS 2023.
    Eq. 7 with λ = 0, Prop. 1 and 3.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import GradientBoostingRegressor
    >>> from skl_treeinner import tree_inner
    >>> from skl_treeinner._readers._sklearn_gb import GradientBoostingReader
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 3)); y = X[:, 0] + rng.normal(size=300)
    >>> model = GradientBoostingRegressor(n_estimators=10).fit(X, y)
    >>> scores = tree_inner(model, X, y)
    >>> bool(np.allclose(scores / scores.sum(), model.feature_importances_))
    True
    """

    #: No thread parameter: it fits on one thread.
    thread_parameter = None

    def __init__(self, model):
        _check_fitted(model)
        self.model = model
        objective, lost = _gb_objective(model)
        self.lost_identities = lost
        classes = getattr(model, "classes_", None)
        self.classes_ = None if classes is None else np.asarray(classes)
        init = model.init_
        constant = (isinstance(init, str) and init == "zero") or (
            type(init).__name__ in ("DummyRegressor", "DummyClassifier")
            and getattr(init, "strategy", None) != "stratified"  # random draws
        )
        if not constant:
            raise ValueError(
                f"GradientBoosting with init={type(init).__name__} starts every "
                "row from its own prediction, but PreDecomp needs one intercept "
                "per output. Refit with init=None (or 'zero') and add the init "
                "model's prediction yourself."
            )
        self.ensemble = self._read(model, objective)
        self._tree_explainers = None

    def _read(self, model, objective) -> TreeEnsemble:
        estimators = model.estimators_  # (n_iterations, n_outputs)
        n_iter, n_outputs = estimators.shape
        trees = [e.tree_ for e in estimators.ravel()]  # iteration-major
        sizes = np.array([t.node_count for t in trees], dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        shift = np.repeat(offsets[:-1], sizes)

        def cat(attr):
            return np.concatenate([getattr(t, attr) for t in trees])

        left = cat("children_left").astype(np.int64)
        right = cat("children_right").astype(np.int64)
        is_leaf = left < 0
        left = np.where(is_leaf, -1, left + shift)
        right = np.where(is_leaf, -1, right + shift)
        feature = np.where(is_leaf, -1, cat("feature").astype(np.int64))
        lr = float(model.learning_rate)
        value = lr * np.concatenate([t.value[:, 0, 0] for t in trees])
        cover = cat("weighted_n_node_samples").astype(np.float64)
        if model.loss != "squared_error":
            # scikit-learn overwrote the leaves with one Newton step each
            # (Σr / Σh) but kept the mean residual at inner nodes: a path's
            # last split would take the whole gap (10-20x), and PreDecomp
            # would credit whichever feature splits last, noise included.
            # Inner values from the leaves, children weighted by rows (Eq.
            # 23 with H = N: the hessian sums are not stored).
            value = node_values_from_leaves(left, right, value, cover, 0.0)
        # TreeSHAP by leaf patterns: x (float32) <= threshold (float64); NaN by
        # missing_go_to_left where the trees store it (scikit-learn >= 1.3).
        missing = (
            cat("missing_go_to_left").astype(bool)
            if hasattr(trees[0], "missing_go_to_left")
            else np.zeros(len(left), dtype=bool)
        )
        rule = SplitRule(
            threshold=cat("threshold").astype(np.float64),
            missing_left=missing,
            strict=False,
        )
        p = int(model.n_features_in_)
        X0 = np.zeros((1, p), dtype=np.float32)
        intercept = np.asarray(model._raw_predict_init(X0), np.float64).ravel()
        names = getattr(model, "feature_names_in_", None)
        return TreeEnsemble(
            tree_offsets=offsets,
            children_left=left,
            children_right=right,
            feature=feature,
            value=value,
            cover=cover,
            tree_group=np.tile(np.arange(n_outputs), n_iter).astype(np.int64),
            iteration_indptr=np.arange(
                0, n_iter * n_outputs + 1, n_outputs, dtype=np.int64
            ),
            learning_rate=lr,
            reg_lambda=0.0,
            intercept=intercept,
            objective=objective,
            n_features=p,
            feature_names=None if names is None else tuple(map(str, names)),
            split_rule=rule,
        )

    def total_gain(self) -> np.ndarray:
        """Weighted impurity decrease of every split, summed per feature.

        Returns
        -------
        ndarray of shape (n_features,), float64
            Σ over trees of ``tree_.compute_feature_importances(normalize=False)``
            times ``tree_.weighted_n_node_samples[0]``: for every split,
            N_t imp_t - N_l imp_l - N_r imp_r = G_l²/N_l + G_r²/N_r - G_t²/N_t
            on the (weighted) negative gradient. ``feature_importances_``
            normalised to sum to 1 is the same vector, normalised.
        """
        total = np.zeros(self.ensemble.n_features)
        for est in self.model.estimators_.ravel():
            tree = est.tree_
            if tree.node_count > 1:
                total += tree.compute_feature_importances(normalize=False) * float(
                    tree.weighted_n_node_samples[0]
                )
        return total

    def _validate(self, X):
        from sklearn.utils.validation import validate_data

        return validate_data(
            self.model,
            X,
            dtype=np.float32,
            order="C",
            accept_sparse="csr",
            reset=False,
        )

    def apply(self, X) -> np.ndarray:  # noqa: D102
        leaves = self.model.apply(self._validate(X))  # (n, n_iter, n_outputs)
        leaves = leaves.reshape(leaves.shape[0], -1).astype(np.int64)
        leaves += self.ensemble.tree_offsets[:-1]
        return leaves

    def raw_margin(self, X) -> np.ndarray:  # noqa: D102
        return self.model._raw_predict(self._validate(X))

    def has_treeshap_rows(self, X) -> bool:
        """Dense rows (sparse ones go to shap)."""
        from scipy import sparse

        return not sparse.issparse(X)

    def treeshap_rows(self, X) -> np.ndarray | None:
        """X rounded to float32 as the trees compare it, held in float64."""
        if not self.has_treeshap_rows(X):
            return None
        return np.asarray(self._validate(X), dtype=np.float64, order="C")

    def iteration_shap(self, X, rounds=None) -> Iterator[tuple[int, np.ndarray]]:  # noqa: D102
        shap = _import_shap()
        estimators = self.model.estimators_
        if self._tree_explainers is None:
            self._tree_explainers = [
                [shap.TreeExplainer(e) for e in stage] for stage in estimators
            ]
        Xv = self._validate(X)
        if hasattr(Xv, "toarray"):
            Xv = Xv.toarray()
        n, k, p = n_rows(Xv), self.ensemble.n_outputs, self.ensemble.n_features
        lr = float(self.model.learning_rate)
        for r, stage in enumerate(self._tree_explainers):
            if rounds is not None and r not in rounds:
                continue
            out = np.empty((n, k, p))
            for j, explainer in enumerate(stage):
                phi = explainer.shap_values(Xv, check_additivity=False)
                out[:, j, :] = lr * np.asarray(phi).reshape(n, p)
            yield r, out
