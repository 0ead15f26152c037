"""Readers for scikit-learn's gradient boosting estimators.

:class:`HistGradientBoostingReader` (here) reads ``HistGradientBoostingRegressor``
and ``HistGradientBoostingClassifier``; ``GradientBoostingReader``
(``_sklearn_gb.py``, which shares this module's helpers) reads the classic
``GradientBoostingRegressor`` and ``GradientBoostingClassifier``.

What we rely on inside scikit-learn (pinned by
``tests/unit/test_sklearn_readers.py``, which fails loudly if a release changes it):

HistGradientBoosting

- ``_predictors[m][k]`` (a ``TreePredictor``) for iteration m and output k,
  one list per kept iteration (``n_iter_`` of them, early stopping included).
  Its ``nodes`` structured array holds ``value``, ``count``, ``feature_idx``,
  ``left``, ``right`` (local node ids), ``gain``, ``depth``, ``is_leaf`` and
  ``is_categorical``. At leaves ``value`` is the leaf value, already
  multiplied by the learning rate; at inner nodes it is the unshrunk
  w_t = -G_t / (H_t + λ) (λ = ``l2_regularization``), except at the root,
  where it is 0. ``gain`` is G_l²/(H_l+λ) + G_r²/(H_r+λ) - G_t²/(H_t+λ),
  except at the root, where the last term is missing (scikit-learn scores
  the root split against the value 0). No hessian sums are stored.
- ``TreePredictor.predict(X, known_cat_bitsets, f_idx_map, n_threads)`` on
  ``_preprocess_X(X, reset=False)``, with the bitsets from
  ``_bin_mapper.make_known_categories_bitsets()``: exactly how
  ``_raw_predict`` routes rows, so NaN and categorical splits follow
  scikit-learn. We route with a copy of ``nodes`` whose ``value`` is the node
  id.
- ``_preprocessor`` and ``is_categorical_``: with categorical features, X is
  reordered to [categorical columns, other columns] and ``feature_idx``
  indexes the reordered columns.
- ``_baseline_prediction`` (the intercept, shape (1, n_outputs)), ``_loss``
  (a ``sklearn._loss.loss`` object; ``constant_hessian`` tells whether every
  hessian is 1), ``learning_rate``, ``l2_regularization``,
  ``monotonic_cst`` through ``sklearn.utils.validation._check_monotonic_cst``.

GradientBoosting

- ``estimators_[m, k].tree_``: ``children_left``/``children_right`` (-1 at
  leaves), ``feature``, ``value[:, 0, 0]`` (weighted mean of the negative
  gradient in each node, leaves re-fitted by a line search unless the loss is
  squared error), ``weighted_n_node_samples`` and
  ``compute_feature_importances(normalize=False)``.
- ``init_`` (a ``DummyRegressor``/``DummyClassifier`` or ``"zero"``) and
  ``_raw_predict_init(X)`` for the intercept; ``_loss`` for the gradient.
- ``apply(X)`` for routing, after ``validate_data`` as ``predict`` does it.

Hessian sums of HistGradientBoosting trees are recovered exactly from the
stored values and gains (see :func:`_hist_hessians`), which gives p̂ at the
root, the one node value scikit-learn does not store.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator

import numpy as np

from .._model import _objectives as obj
from .._model._ensemble import SplitRule, TreeEnsemble
from .._utils._optional import import_optional
from ._base import ModelReader

__all__ = ["HistGradientBoostingReader"]


def _import_shap():
    return import_optional(
        "shap", extra="shap", purpose="TreeSHAP of scikit-learn models"
    )


def _loss_name(loss) -> str:
    return type(loss).__name__


def _check_fitted(model) -> None:
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(model)  # raises NotFittedError naming the estimator


# -- HistGradientBoosting ----------------------------------------------------------


def _hist_objective(model) -> obj.Objective:
    loss = model._loss
    name = _loss_name(loss)
    if name == "HalfSquaredError":
        return obj.SquaredError()
    if name == "HalfPoissonLoss":
        return obj.Poisson()
    if name == "HalfGammaLoss":
        return obj.Gamma()
    if name == "HalfBinomialLoss":
        return obj.Logistic()
    if name == "HalfMultinomialLoss":
        return obj.Softmax(int(loss.n_classes))
    if name in ("AbsoluteError", "PinballLoss"):
        raise ValueError(
            f"HistGradientBoosting with loss={model.loss!r} is not supported: "
            "its leaf values are re-fitted to a median or quantile of the "
            "residuals after each tree is grown, so node values are not "
            "p̂ = -αG/(H+λ) and the gradient each tree was fitted to is not "
            "smooth. Refit with loss='squared_error' (or 'poisson', 'gamma')."
        )
    raise ValueError(
        f"HistGradientBoosting loss {name} is not supported. Supported losses: "
        "'squared_error', 'poisson', 'gamma' and 'log_loss'."
    )


def _hist_hessians(left, right, is_leaf, roots, *, w, gain, count, lam):
    """Hessian sums H_t of every node, from the stored values and gains.

    For an inner node t other than the root, with children l and r, both
    G_t = G_l + G_r and the gain formula hold; with a = H_l + λ, b = H_r + λ,
    d_l = w_l - w_t and d_r = w_r - w_t they read::

        d_l a + d_r b = -λ w_t
        d_l² a + d_r² b = gain_t + λ w_t²

    a linear system with determinant d_l d_r (d_r - d_l) ≠ 0 for a real split,
    solved for all such nodes at once. That gives H of every node below the
    root's children, and H of an inner root child as the sum over its
    children. At the root scikit-learn stores gain = w_l² a + w_r² b (its
    value there is 0), which is linear in a leaf child's unknown H once the
    sibling's is known. Only stumps (both root children leaves) stay
    underdetermined; they are returned in ``guessed`` with H of the two
    leaves from one mean hessian per row, fitted to the root gain.

    Returns
    -------
    H : ndarray of shape (n_nodes,)
    guessed : ndarray of bool, shape (n_trees,)
        Trees whose root children's H were estimated, not recovered.
    """
    n_nodes = w.shape[0]
    H = np.full(n_nodes, np.nan)
    inner = ~is_leaf
    is_root = np.zeros(n_nodes, dtype=bool)
    is_root[roots] = True
    t = np.flatnonzero(inner & ~is_root)
    lt, rt = left[t], right[t]
    d_l, d_r = w[lt] - w[t], w[rt] - w[t]
    with np.errstate(divide="ignore", invalid="ignore"):
        A = (gain[t] + lam * w[t] * w[rt]) / (w[lt] - w[rt])  # d_l * a
        B = -lam * w[t] - A  # d_r * b
        H[lt] = A / d_l - lam
        H[rt] = B / d_r - lam
    # Inner root children: H from their own children, solved above.
    split_roots = roots[inner[roots]]
    l0, r0 = left[split_roots], right[split_roots]
    for c in (l0, r0):
        c_in = c[inner[c]]
        H[c_in] = H[left[c_in]] + H[right[c_in]]
    # A leaf root child next to an inner one: from the root gain.
    g0 = gain[split_roots]
    for c, s in ((l0, r0), (r0, l0)):
        one = is_leaf[c] & ~is_leaf[s]
        with np.errstate(divide="ignore", invalid="ignore"):
            a = (g0[one] - w[s[one]] ** 2 * (H[s[one]] + lam)) / w[c[one]] ** 2
        H[c[one]] = a - lam
    # Stumps, or anything the equations could not give: one mean hessian per
    # row h in both leaves, w_l² (c_l h + λ) + w_r² (c_r h + λ) = gain.
    bad = ~(np.isfinite(H[l0]) & np.isfinite(H[r0]) & (H[l0] >= 0) & (H[r0] >= 0))
    if np.any(bad):
        lb, rb = l0[bad], r0[bad]
        wl2, wr2 = w[lb] ** 2, w[rb] ** 2
        den = wl2 * count[lb] + wr2 * count[rb]
        with np.errstate(divide="ignore", invalid="ignore"):
            h = (g0[bad] - lam * (wl2 + wr2)) / den
        h = np.where(np.isfinite(h) & (h > 0), h, 1.0)
        H[lb], H[rb] = count[lb] * h, count[rb] * h
    H[split_roots] = H[l0] + H[r0]
    guessed = np.zeros(roots.shape[0], dtype=bool)
    guessed[np.flatnonzero(inner[roots])[bad]] = True
    leaf_roots = roots[is_leaf[roots]]
    H[leaf_roots] = count[leaf_roots]  # no split: H is never used
    return H, guessed


def _clipped_nodes(left, right, is_leaf, *, feature, depth, w, monotonic) -> int:
    """Count the node values clipped by monotonic constraints.

    Re-runs scikit-learn's bounds (``TreeGrower.split_next``): the children
    of a split on a constrained feature are bounded by the mean of their
    values; a clipped value sits exactly on its bound.
    """
    n_nodes = w.shape[0]
    lower = np.full(n_nodes, -np.inf)  # bounds on each node's children values
    upper = np.full(n_nodes, np.inf)
    clipped = 0
    for d in range(int(depth.max(initial=0)) + 1):
        t = np.flatnonzero((depth == d) & ~is_leaf)
        lt, rt = left[t], right[t]
        for c in (lt, rt):
            on_bound = np.isclose(w[c], lower[t], rtol=1e-12, atol=0) | np.isclose(
                w[c], upper[t], rtol=1e-12, atol=0
            )
            clipped += int(np.count_nonzero(on_bound))
        cst = monotonic[feature[t]]
        mid = (w[lt] + w[rt]) / 2
        lo, hi = lower[t], upper[t]
        lower[lt] = np.where(cst < 0, mid, lo)
        upper[lt] = np.where(cst > 0, mid, hi)
        lower[rt] = np.where(cst > 0, mid, lo)
        upper[rt] = np.where(cst < 0, mid, hi)
    return clipped


class HistGradientBoostingReader(ModelReader):
    """Read a fitted ``HistGradientBoostingRegressor`` or ``...Classifier``.

    Node values are p̂ = α w_t with w_t = -G_t/(H_t + λ) as scikit-learn
    stores them (Eq. 7), except at the root, where scikit-learn stores 0:
    there p̂ is recomputed from the hessian sums of the root's children,
    which scikit-learn does not store either but which the stored values and
    gains determine (:func:`_hist_hessians`). Rows are routed by
    scikit-learn's own Cython routine, so NaN and categorical splits are
    handled exactly as in ``predict``.

    Parameters
    ----------
    model : HistGradientBoostingRegressor or HistGradientBoostingClassifier
        A fitted model. With early stopping, the kept iterations
        (``n_iter_``) are read. ``learning_rate`` and ``l2_regularization``
        must not have changed between ``warm_start`` fits.

    Raises
    ------
    sklearn.exceptions.NotFittedError
        If the model is not fitted.
    ValueError
        If the loss is ``absolute_error`` or ``quantile`` (leaves re-fitted).

    Notes
    -----
    ``total_gain`` is the sum over splits of the loss reduction
    G_l²/(H_l+λ) + G_r²/(H_r+λ) - G_t²/(H_t+λ), i.e. scikit-learn's node
    ``gain`` with the root's corrected by -G_root²/(H_root+λ). In-sample
    TreeInner equals it (Prop. 3) when called with the training rows and the
    training ``sample_weight`` (times the class weights of a classifier
    trained with ``class_weight``). With early stopping on a split that
    scikit-learn makes itself, the training rows are those of
    ``train_test_split(X, y, test_size=validation_fraction,
    stratify=y if classifier else None, random_state=model._random_seed)``.

    References
    ----------
    Y. Sun, "Individualized and Global Feature Attributions for Gradient
    Boosted Trees in the Presence of ℓ2 Regularization", AISTATS 2023.
    Eq. 7 (p̂), Eq. 23 (G and H add up over children), Prop. 1 and 3.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import HistGradientBoostingRegressor
    >>> from skl_treeinner import tree_inner
    >>> from skl_treeinner._readers._sklearn import HistGradientBoostingReader
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 3)); y = X[:, 0] + rng.normal(size=300)
    >>> model = HistGradientBoostingRegressor(max_iter=10, l2_regularization=1.0)
    >>> model = model.fit(X, y)
    >>> reader = HistGradientBoostingReader(model)
    >>> bool(np.allclose(tree_inner(model, X, y), reader.total_gain()))
    True
    """

    @classmethod
    def make_estimator(cls, settings):  # noqa: D102
        # Categorical columns are taken from the data frame's dtypes whatever
        # ``categorical`` says; threads follow OpenMP (threadpoolctl), as
        # HistGradientBoosting has no n_jobs.
        from sklearn.ensemble import (
            HistGradientBoostingClassifier,
            HistGradientBoostingRegressor,
        )

        cls_ = (
            HistGradientBoostingClassifier
            if settings.classifier
            else HistGradientBoostingRegressor
        )
        return cls_(
            max_iter=settings.n_estimators,
            learning_rate=settings.learning_rate,
            max_depth=settings.max_depth,
            # HistGradientBoosting subsamples features per split, not per tree.
            max_features=settings.colsample,
            l2_regularization=1.0,
            early_stopping=False,
            categorical_features="from_dtype",
            random_state=settings.random_state,
        )

    @classmethod
    def threads_change_results(cls, estimator):  # noqa: D102
        return False  # measured: the same model on 1 and 2 OpenMP threads

    #: No thread parameter: its OpenMP threads follow threadpoolctl's limit.
    thread_parameter = None
    positional_settings = ("monotonic_cst", "interaction_cst", "categorical_features")

    @classmethod
    def fit_params_for_columns(cls, fit_params, columns, *, feature_names, take):
        """Cut the validation rows ``X_val`` (scikit-learn 1.7 and later) too."""
        params = super().fit_params_for_columns(
            fit_params, columns, feature_names=feature_names, take=take
        )
        if params.get("X_val") is not None:
            params["X_val"] = take(params["X_val"], columns)
        return params

    def __init__(self, model):
        _check_fitted(model)
        self.model = model
        objective = _hist_objective(model)
        classes = getattr(model, "classes_", None)
        self.classes_ = None if classes is None else np.asarray(classes)
        predictors = [p for iteration in model._predictors for p in iteration]
        if not predictors:
            raise ValueError("The HistGradientBoosting model has no trees.")
        n_outputs = objective.n_outputs
        n_iter = len(model._predictors)
        if n_iter * n_outputs != len(predictors):
            raise ValueError(
                f"Expected {n_outputs} trees per iteration in {type(model).__name__}"
                f"._predictors; the scikit-learn layout has changed."
            )
        self._predictors = predictors
        self.ensemble = self._read(model, predictors, objective, n_iter)
        self._routers = None
        self._round_explainers = None

    def _read(self, model, predictors, objective, n_iter) -> TreeEnsemble:
        nodes = [p.nodes for p in predictors]
        sizes = np.array([len(n) for n in nodes], dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        shift = np.repeat(offsets[:-1], sizes)
        allnodes = np.concatenate(nodes)
        is_leaf = allnodes["is_leaf"].astype(bool)
        left = np.where(is_leaf, -1, allnodes["left"].astype(np.int64) + shift)
        right = np.where(is_leaf, -1, allnodes["right"].astype(np.int64) + shift)
        # Columns of the preprocessed X -> columns of the user's X.
        self._column_of = self._column_map(model)
        feature = np.where(
            is_leaf, -1, self._column_of[allnodes["feature_idx"].astype(np.int64)]
        )
        self._has_categorical_split = bool(np.any(allnodes["is_categorical"][~is_leaf]))
        lr = float(model.learning_rate)
        lam = float(model.l2_regularization)
        stored = allnodes["value"].astype(np.float64)
        w = np.where(is_leaf, stored / lr, stored)  # -G/(H+λ); 0 at roots
        gain = allnodes["gain"].astype(np.float64)
        count = allnodes["count"].astype(np.float64)
        roots = offsets[:-1]
        lost = []
        monotonic = self._monotonic(model)
        if monotonic is not None:
            n_clipped = _clipped_nodes(
                left,
                right,
                is_leaf,
                feature=feature,
                depth=allnodes["depth"].astype(np.int64),
                w=w,
                monotonic=monotonic,
            )
            if n_clipped:
                lost.append(
                    f"monotonic_cst ({n_clipped} node values were clipped to "
                    "keep the constraints)"
                )
        if model._loss.constant_hessian:
            # Squared error without sample_weight: every hessian is 1, and
            # scikit-learn sums counts for H.
            H, guessed = count, np.zeros(len(roots), dtype=bool)
        else:
            H, guessed = _hist_hessians(
                left, right, is_leaf, roots, w=w, gain=gain, count=count, lam=lam
            )
        if np.any(guessed):
            lost.append(
                f"non-constant hessians in {int(guessed.sum())} trees whose "
                "root split has two leaves (scikit-learn stores no hessian "
                "sums, so p̂ at those roots is estimated from the leaf counts)"
            )
        self.lost_identities = lost
        # p̂ at roots with a split: G_root = G_l + G_r.
        split_roots = roots[~is_leaf[roots]]
        l0, r0 = left[split_roots], right[split_roots]
        g_root = -(w[l0] * (H[l0] + lam) + w[r0] * (H[r0] + lam))
        w[split_roots] = -g_root / (H[split_roots] + lam)
        value = np.where(is_leaf, stored, lr * w)
        # scikit-learn scores the root split against the value 0; the loss
        # reduction subtracts G_root² / (H_root + λ) = -w_root G_root.
        gain = np.where(is_leaf, 0.0, gain)
        gain[split_roots] += w[split_roots] * g_root
        self._gain = gain

        n_trees = len(predictors)
        n_outputs = objective.n_outputs
        names = getattr(model, "feature_names_in_", None)
        # TreeSHAP by leaf patterns: x <= num_threshold (float64), NaN by
        # missing_go_to_left; shap weighs by training row counts. Not with
        # categorical splits (bitsets), where shap has no TreeSHAP either.
        rule = None
        if not self._has_categorical_split:
            rule = SplitRule(
                threshold=allnodes["num_threshold"].astype(np.float64),
                missing_left=allnodes["missing_go_to_left"].astype(bool),
                strict=False,
                cover=count,
            )
        return TreeEnsemble(
            tree_offsets=offsets,
            children_left=left,
            children_right=right,
            feature=feature,
            value=value,
            cover=H,
            tree_group=np.tile(np.arange(n_outputs), n_iter).astype(np.int64),
            iteration_indptr=np.arange(0, n_trees + 1, n_outputs, dtype=np.int64),
            learning_rate=lr,
            reg_lambda=lam,
            intercept=np.asarray(model._baseline_prediction, np.float64).ravel(),
            objective=objective,
            n_features=int(model.n_features_in_),
            feature_names=None if names is None else tuple(map(str, names)),
            split_rule=rule,
        )

    @staticmethod
    def _column_map(model) -> np.ndarray:
        p = int(model.n_features_in_)
        is_cat = getattr(model, "is_categorical_", None)
        if getattr(model, "_preprocessor", None) is None or is_cat is None:
            return np.arange(p)
        # The ColumnTransformer puts the categorical columns first.
        is_cat = np.asarray(is_cat, dtype=bool)
        return np.concatenate([np.flatnonzero(is_cat), np.flatnonzero(~is_cat)])

    @staticmethod
    def _monotonic(model) -> np.ndarray | None:
        if model.monotonic_cst is None:
            return None
        from sklearn.utils.validation import _check_monotonic_cst

        cst = np.asarray(_check_monotonic_cst(model, model.monotonic_cst))
        return cst if np.any(cst != 0) else None

    def total_gain(self) -> np.ndarray:
        """Loss reduction of every split, summed per feature.

        Returns
        -------
        ndarray of shape (n_features,), float64
            Σ over splits on each feature of G_l²/(H_l+λ) + G_r²/(H_r+λ)
            - G_t²/(H_t+λ): scikit-learn's node ``gain``, whose root entries
            lack the last term and are corrected here. The right-hand side of
            Prop. 3.
        """
        ens = self.ensemble
        inner = ~ens.is_leaf
        return np.bincount(
            ens.feature[inner], weights=self._gain[inner], minlength=ens.n_features
        )

    # -- routing ---------------------------------------------------------------------
    def _preprocess(self, X):
        return self.model._preprocess_X(X, reset=False)

    def apply(self, X) -> np.ndarray:  # noqa: D102
        from sklearn.ensemble._hist_gradient_boosting.predictor import TreePredictor
        from sklearn.utils._openmp_helpers import _openmp_effective_n_threads

        if self._routers is None:
            routers = []
            for p in self._predictors:
                nodes = p.nodes.copy()
                nodes["value"] = np.arange(len(nodes))  # route to the node id
                routers.append(
                    TreePredictor(
                        nodes, p.binned_left_cat_bitsets, p.raw_left_cat_bitsets
                    )
                )
            self._routers = routers
        Xp = self._preprocess(X)
        known_cat_bitsets, f_idx_map = (
            self.model._bin_mapper.make_known_categories_bitsets()
        )
        n_threads = _openmp_effective_n_threads()
        leaves = np.empty((Xp.shape[0], len(self._routers)), dtype=np.int64)
        for m, router in enumerate(self._routers):
            leaves[:, m] = router.predict(Xp, known_cat_bitsets, f_idx_map, n_threads)
        leaves += self.ensemble.tree_offsets[:-1]
        return leaves

    def raw_margin(self, X) -> np.ndarray:  # noqa: D102
        return self.model._raw_predict(X)

    def has_treeshap_rows(self, X) -> bool:
        """Dense rows of a model without categorical splits (any dtypes)."""
        from scipy import sparse

        return self.ensemble.split_rule is not None and not sparse.issparse(X)

    def treeshap_rows(self, X) -> np.ndarray | None:
        """X as the predictor sees it (float64), in the user's column order."""
        if not self.has_treeshap_rows(X):
            return None
        Xp = np.asarray(self._preprocess(X), dtype=np.float64)
        rows = np.empty_like(Xp, order="C")
        rows[:, self._column_of] = Xp
        return rows

    def iteration_shap(self, X, rounds=None) -> Iterator[tuple[int, np.ndarray]]:  # noqa: D102
        shap = _import_shap()
        if self._has_categorical_split:
            raise ValueError(
                "TreeSHAP is not available for this HistGradientBoosting model: "
                "it has categorical splits, which shap's TreeExplainer does not "
                "implement for scikit-learn models (it would treat category "
                "codes as numbers). Use attribution='predecomp', or refit with "
                "the categorical columns one-hot or ordinal encoded as numbers."
            )
        if self._round_explainers is None:
            explainers = []
            for predictors in self.model._predictors:
                one_round = copy.copy(self.model)  # shallow: shares the trees
                one_round._predictors = [predictors]
                explainers.append(shap.TreeExplainer(one_round))
            self._round_explainers = explainers
        Xp = np.asarray(self._preprocess(X), dtype=np.float64)
        n, k, p = Xp.shape[0], self.ensemble.n_outputs, self.ensemble.n_features
        out = np.empty((n, k, p))
        for r, explainer in enumerate(self._round_explainers):
            if rounds is not None and r not in rounds:
                continue
            phi = np.asarray(explainer.shap_values(Xp, check_additivity=False))
            phi = phi.reshape(n, p, k).transpose(0, 2, 1)
            out[:, :, self._column_of] = phi
            yield r, out.copy()
