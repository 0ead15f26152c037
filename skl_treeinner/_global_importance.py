"""Global feature importances (GFA) of every family the papers compare.

One entry point, :func:`global_importance`, computes TreeInner and ForestInner
(paper 000, Def. 4-5), the Abs family and permutation importance (paper 000,
Sec. 4 and Table 4), the booster's own total gain (Prop. 3) and the unbiased
gain of paper 002 (Sec. 5.1, Eq. 5), all from the library-neutral
:class:`~skl_treeinner.TreeEnsemble` and the reader's routing, so that every
backend with a reader gets every method.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.special import expit, softmax

from ._engines import refuse_others
from ._kernels._backend import backend_for
from ._readers import read_model
from ._scoring._sums import predecomp_scores, treeshap_terms
from ._scoring._unbiased_gain import unbiased_gain
from ._utils._validation import check_attribution, check_params

__all__ = ["global_importance", "METHODS"]


@dataclass(frozen=True)
class _Method:
    """How :func:`global_importance` computes one method (the table ``_METHODS``).

    ``compute(reader, X, y, w)`` returns the scores from rows already checked
    by the reader; methods with ``n_repeats`` also take ``random_state`` and
    ``n_repeats`` as keywords.
    """

    #: The method, or its PreDecomp form for methods built on an attribution.
    compute: Callable
    #: Its TreeSHAP form; ``None`` for methods that use no attribution.
    compute_treeshap: Callable | None = None
    #: Default repeats of a random method; ``None`` for a deterministic one.
    n_repeats: int | None = None
    #: The booster's own in-sample number: X and y are only checked, if given.
    in_sample: bool = False


def global_importance(
    model,
    X,
    y,
    *,
    method,
    attribution="predecomp",
    sample_weight=None,
    random_state=None,
    n_repeats=None,
):
    """Global importance of every feature by any method of the papers.

    Every method returns one score per feature, larger meaning more
    important. ``"tree_inner"``, ``"permutation"`` and ``"unbiased_gain"``
    are meant for held-out rows, where a feature the model only overfits to
    scores about zero or below; ``"total_gain"`` and ``"abs"`` are the
    in-sample baselines they are compared with (paper 000, Table 4).

    With g_{i,m} the loss gradient tree m was fitted against (at the margin
    f_[m-1](x_i) of the trees before it), α_m its learning rate, r_{m,k} the
    attribution of tree m to feature k and w_i the sample weights:

    ``"tree_inner"``
        TreeInner (paper 000, Def. 4, Eq. 20-21), the same numbers as
        :func:`tree_inner`: -Σ_m α_m⁻¹ Σ_i w_i r_{m,k}(x_i) g_{i,m}.
    ``"forest_inner"``
        ForestInner (paper 000, Def. 5, Eq. 22): the attribution is summed
        over trees before the inner product,
        Σ_i w_i [Σ_m α_m⁻¹ r_{m,k}(x_i)] · [Σ_m -g_{i,m}]. The second factor
        is the **sum over stages of the per-stage residual**, as in the
        paper's published code, not the final residual y - f(x) (the printed
        Eq. 22 is ambiguous between the two). α⁻¹ scales each tree's
        attribution, so with a constant learning rate this is exactly Eq. 22,
        and a one-tree model gives TreeInner; under a learning-rate schedule
        each tree's attribution is divided by its own α_m, as in TreeInner.
        For multi-class models the product is taken per class (the trees
        and gradients of class c) and summed over classes. Prop. 4 (stated
        for the population case): with PreDecomp it vanishes for noisy
        features as M grows; the paper found it worse than TreeInner on
        finite samples.
    ``"abs"``
        The Abs family (paper 000, Table 4): Σ_m Σ_i w_i |r_{m,k}(x_i)|, the
        total magnitude of each tree's attribution, summed over classes.
    ``"total_gain"``
        The booster's own total gain (paper 000, Def. 3, Eq. 16), as the
        library reports it (``reader.total_gain()``): always in-sample. X
        and y are not used; pass ``None``, or pass them to have them checked
        as for the other methods. ``sample_weight`` cannot apply and is
        refused. On its training rows ``"tree_inner"`` with PreDecomp equals
        it (Prop. 3).
    ``"permutation"``
        :func:`sklearn.inspection.permutation_importance` on the given rows,
        with the model's margin computed from the ensemble (so raw boosters
        work too) and the model's natural score: ROC AUC for binary
        classification (the paper's choice), negative log-loss of the
        softmax probabilities for multi-class, and negative mean squared
        error of the prediction on the response scale (the margin, or
        exp(margin) for log-link objectives) for regression (the paper's
        -MSE); a logistic objective fitted to probabilities rather than
        0/1 labels is scored by -MSE of sigmoid(margin). The score drop is
        averaged over ``n_repeats`` shuffles per feature (default 1, as in
        the paper's code), seeded by ``random_state``.
    ``"unbiased_gain"``
        Unbiased gain (paper 002, Sec. 5.1, Eq. 5), summed over the splits
        on each feature. For a split of node I into I_L, I_R, with G_I the
        training gradient sum (recovered exactly from the model,
        G_I = -p̂(I)(H_I + λ)/α, Eq. 7) and G'_I, H'_I the gradient and
        hessian sums of k = min(n'_L, n'_R) rows drawn at random without
        replacement from the n'_I given rows in I (likewise, independently,
        for I_L and I_R)::

            Gain_ub = G_L G'_L / H'_L + G_R G'_R / H'_R - G_I G'_I / H'_I

        This is Eq. 5 times 2n, so that with λ = 0 and squared error its
        expectation on the training rows is the booster's split gain. It is
        averaged over ``n_repeats`` draws (default 10), seeded by
        ``random_state``. Splits with k = 0 (a child no given row reaches)
        or a zero hessian sum score 0. The gradients and hessians of the
        given rows are those of the loss at the margin before each tree.
        Theorem 2 of paper 002: for a feature independent of y within I,
        the expectation over the given rows is zero.

    Parameters
    ----------
    model : fitted booster
        A fitted model of a supported library: ``SUPPORTED_MODELS`` lists
        them (XGBoost, LightGBM, scikit-learn's gradient boosting). Raw
        boosters work for every method, permutation included.
    X : array-like, sparse matrix or DataFrame of shape (n_samples, n_features)
        Rows to score on, usually held out. ``"permutation"`` needs a dense
        array or a pandas DataFrame. Unused by ``"total_gain"`` (may be
        ``None``).
    y : array-like of shape (n_samples,)
        Target of those rows, as for :func:`tree_inner`.
    method : {"tree_inner", "forest_inner", "abs", "total_gain", \
"permutation", "unbiased_gain"}
        Which importance to compute (see above).
    attribution : {"predecomp", "treeshap"}, default="predecomp"
        Per-tree attribution r_{m,k} of ``"tree_inner"``, ``"forest_inner"``
        and ``"abs"``: PreDecomp (paper 000, Def. 1) or each boosting
        round's path-dependent TreeSHAP (paper 004). The other methods use
        no attribution and refuse ``"treeshap"``. With ``"treeshap"``, the
        trees of one round (several only for boosted forests such as
        ``num_parallel_tree > 1``) count as one tree in ``"abs"``.
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the rows in every sum over rows (for ``"unbiased_gain"``
        they weight G' and H' of the drawn rows; rows are drawn uniformly).
        Not accepted by ``"total_gain"``.
    random_state : int, RandomState instance or None, default=None
        Seeds the shuffles of ``"permutation"`` and the draws of
        ``"unbiased_gain"``; the other methods are deterministic and ignore
        it.
    n_repeats : int, default=None
        Shuffles per feature (``"permutation"``, default 1) or draws per
        split (``"unbiased_gain"``, default 10). Refused by the other
        methods.

    Returns
    -------
    scores : ndarray of shape (n_features,)
        Importance of each feature, summed over classes for multi-class
        models.

    Raises
    ------
    TypeError
        If the model type is not supported.
    ValueError
        If ``method`` or ``attribution`` is unknown, an argument does not
        apply to ``method``, X or y are invalid, or the objective lacks what
        the method needs (a hessian, a natural score).

    See Also
    --------
    tree_inner : TreeInner alone.
    predecomp : The per-row PreDecomp attributions.
    sklearn.inspection.permutation_importance : What ``"permutation"`` calls.

    Notes
    -----
    TreeInner, ForestInner and Abs with PreDecomp cost about one routing of
    the rows through the trees: each tree's PreDecomp depends on a row only
    through its leaf, so rows are reduced per leaf (one bincount) and met
    with a (leaves x features) table. With TreeSHAP they cost one native
    TreeSHAP pass per boosting round. Permutation importance routes the rows
    once per feature and repeat.

    Unbiased gain lists every (row, node on its path) pair, about
    n_samples x n_trees x depth of them, in row chunks of the same size as
    the other methods use, and sorts them twice per repeat to draw the
    samples. It uses each objective's own hessian; growing trees, XGBoost
    doubles the softmax hessian p(1 - p) and LightGBM multiplies it by
    K / (K - 1), so for multi-class models unbiased gain is on the scale of
    total gain only up to that constant factor (rankings and signs are
    unaffected).

    References
    ----------
    Y. Sun, "Individualized and Global Feature Attributions for Gradient
    Boosted Trees in the Presence of ℓ2 Regularization", AISTATS 2023.
    Def. 3-5, Eq. 16, 20-22, Prop. 3-4, Table 4.

    Z. Zhang, Y. Zhang and Z. Li, "Unbiased Gradient Boosting Decision Tree
    with Unbiased Feature Importance", IJCAI 2023. Sec. 5.1, Eq. 5,
    Theorem 2.

    Examples
    --------
    >>> import numpy as np, xgboost as xgb
    >>> from skl_treeinner import global_importance
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 3)); y = X[:, 0] + rng.normal(size=400)
    >>> model = xgb.XGBRegressor(n_estimators=30, max_depth=3)
    >>> model = model.fit(X[:200], y[:200])
    >>> for method in ["tree_inner", "permutation", "unbiased_gain"]:
    ...     scores = global_importance(
    ...         model, X[200:], y[200:], method=method, random_state=0
    ...     )
    ...     print(method, int(np.argmax(scores)))
    tree_inner 0
    permutation 0
    unbiased_gain 0
    >>> gain = global_importance(model, None, None, method="total_gain")
    >>> in_sample = global_importance(model, X[:200], y[:200], method="tree_inner")
    >>> bool(np.allclose(in_sample, gain, rtol=1e-5))
    True
    """
    spec = _METHODS.get(method)
    if spec is None:
        raise ValueError(
            f"method={method!r} is not supported; choose one of {list(METHODS)}."
        )
    check_attribution(attribution)
    if attribution != "predecomp" and spec.compute_treeshap is None:
        with_attribution = [m for m, s in _METHODS.items() if s.compute_treeshap]
        raise ValueError(
            f"method={method!r} uses no per-tree attribution, so "
            f"attribution={attribution!r} would be ignored. Drop the attribution "
            f"argument, or use one of {with_attribution}."
        )
    if n_repeats is not None and spec.n_repeats is None:
        with_repeats = [m for m, s in _METHODS.items() if s.n_repeats]
        raise ValueError(
            f"n_repeats applies only to methods {with_repeats}, not to "
            f"method={method!r}, which is deterministic. Drop n_repeats."
        )
    if spec.n_repeats is not None:
        if n_repeats is None:
            n_repeats = spec.n_repeats
        if not isinstance(n_repeats, numbers.Integral) or n_repeats < 1:
            raise ValueError(
                f"n_repeats must be a positive integer, got {n_repeats!r}."
            )
    check_params(
        "global_importance",
        {"random_state": ["random_state"]},
        {"random_state": random_state},
    )
    reader = read_model(model)
    refuse_others(X, y, sample_weight, what="This function")
    if spec.in_sample:
        return spec.compute(reader, X, y, sample_weight)
    X, _, y, w = reader.rows(X, y, sample_weight)
    compute = spec.compute_treeshap if attribution == "treeshap" else spec.compute
    if spec.n_repeats is None:
        return compute(reader, X, y, w)
    return compute(reader, X, y, w, random_state=random_state, n_repeats=n_repeats)


# -- total gain --------------------------------------------------------------------
def _total_gain(reader, X, y, sample_weight):
    """Return the booster's own total gain; X and y, if given, are checked."""
    if sample_weight is not None:
        raise ValueError(
            "method='total_gain' is the booster's own in-sample gain, fixed at "
            "training time: sample_weight cannot apply. Drop sample_weight (the "
            "training weights are already in it)."
        )
    if X is not None:
        X, n, _, _ = reader.rows(X)
    if y is not None:
        reader.check_target(y, n if X is not None else np.asarray(y).shape[0])
    return reader.total_gain()


# -- ForestInner and Abs -----------------------------------------------------------
def _group_matrix(ens) -> sparse.csr_matrix:
    """One-hot (n_trees, n_outputs) of the output each tree contributes to."""
    return sparse.csr_matrix(
        (np.ones(ens.n_trees), (np.arange(ens.n_trees), ens.tree_group)),
        shape=(ens.n_trees, ens.n_outputs),
    )


def _summed_residual(ens, leaves, y, w, start, stop) -> np.ndarray:
    """Σ_m -g_{i,m} over the trees of each output, weighted: (rows, n_outputs)."""
    residual = ens.staged_gradients(leaves, y[start:stop]) @ _group_matrix(ens)
    residual = -np.asarray(residual)
    if w is not None:
        residual *= w[start:stop, None]
    return residual


def _forest_inner_predecomp(reader, X, y, w):
    """Σ_i [Σ_m f_{m,k}(x_i)/α_m] R_i with R_i = Σ_m -g_{i,m}, through leaf sums.

    The first factor sums the path-table rows of the leaves x_i reaches, so the
    score is the table (scaled by 1/α_m) against the per-leaf sums of R_i.
    """
    ens = reader.ensemble
    leaf_residual = np.zeros(ens.n_nodes)
    for start, stop, _, leaves in reader.iter_leaves(X):
        residual = _summed_residual(ens, leaves, y, w, start, stop)
        per_leaf = residual[:, ens.tree_group]  # R of each tree's own output
        leaf_residual += np.bincount(
            leaves.ravel(), weights=per_leaf.ravel(), minlength=ens.n_nodes
        )
    leaf_residual /= ens.learning_rate[ens.node_tree]
    scores = ens.path_table.T @ leaf_residual
    return scores.reshape(ens.n_outputs, ens.n_features).sum(axis=0)


def _forest_inner_treeshap(reader, X, y, w):
    """Σ_i [Σ_r φ_{r,k}(x_i)/α_r] R_i with each round's TreeSHAP φ_r.

    By leaf patterns where :func:`tree_inner` uses them (the same kernel, so
    that with one round the two agree to float rounding), else the booster's
    own TreeSHAP per round.
    """
    ens = reader.ensemble
    rate = ens.iteration_learning_rate
    scores = np.zeros(ens.n_features)
    kernels = backend_for(reader).cpu
    patterns = kernels is not None and reader.has_treeshap_rows(X)
    for start, stop, X_chunk, leaves in reader.iter_leaves(X):
        residual = _summed_residual(ens, leaves, y, w, start, stop)
        booster_rounds = None  # all
        if patterns:
            per_tree = residual[:, ens.tree_group] / ens.learning_rate
            got, booster_rounds = kernels.treeshap_split(
                reader.treeshap_rows(X_chunk), leaves, per_tree, per_row=False
            )
            if got is None:
                patterns = False  # the booster's own TreeSHAP from here on
            else:
                scores += got.sum(axis=0)
                if not booster_rounds.size:
                    continue
        for r, phi in reader.iteration_shap(X_chunk, rounds=booster_rounds):
            scores += np.einsum("ik,ikj->j", residual, phi) / rate[r]
    return scores


def _abs_predecomp(reader, X, y, w):  # y: checked, unused
    """Σ_m Σ_i w_i |f_{m,k}(x_i)|: |path table| against per-leaf weight sums."""
    ens = reader.ensemble
    leaf_weight = np.zeros(ens.n_nodes)
    for start, stop, _, leaves in reader.iter_leaves(X):
        weights = None if w is None else np.repeat(w[start:stop], ens.n_trees)
        leaf_weight += np.bincount(
            leaves.ravel(), weights=weights, minlength=ens.n_nodes
        )
    scores = abs(ens.path_table).T @ leaf_weight
    return scores.reshape(ens.n_outputs, ens.n_features).sum(axis=0)


def _abs_treeshap(reader, X, y, w):  # y: checked, unused
    """Σ_r Σ_i w_i |φ_{r,k}(x_i)| over rounds r, summed over outputs."""
    ens = reader.ensemble
    scores = np.zeros(ens.n_features)
    for start, stop, X_chunk, _ in reader.iter_leaves(X):
        for _, phi in reader.iteration_shap(X_chunk):
            magnitude = np.abs(phi).sum(axis=1, dtype=np.float64)  # (rows, p)
            if w is None:
                scores += magnitude.sum(axis=0)
            else:
                scores += w[start:stop] @ magnitude
    return scores


# -- permutation importance --------------------------------------------------------
class _MarginModel:
    """The model seen by scikit-learn's permutation_importance: margins only.

    Margins are intercept + Σ_m p̂_m(leaf reached), from the ensemble, so any
    model with a reader (raw boosters included) can be scored.
    """

    def __init__(self, reader):
        self.reader = reader

    def fit(self, X, y=None):
        """Do nothing: the model is already fitted (scikit-learn asks for fit)."""
        return self

    def margin(self, X) -> np.ndarray:
        """Raw margins of shape (n_samples, n_outputs)."""
        ens = self.reader.ensemble
        X, n, _, _ = self.reader.rows(X)
        out = np.empty((n, ens.n_outputs))
        groups = _group_matrix(ens)
        for start, stop, _, leaves in self.reader.iter_leaves(X):
            out[start:stop] = np.asarray(ens.value[leaves] @ groups)
        return out + ens.intercept


def _natural_score(objective, y):
    """Scorer ``(margin, y, sample_weight) -> float`` for the objective."""
    from sklearn.metrics import log_loss, mean_squared_error, roc_auc_score

    link = objective.link
    if link == "logit" and np.all((y == 0) | (y == 1)):
        return lambda m, y, w: roc_auc_score(y, m[:, 0], sample_weight=w)
    if link == "logit":
        return lambda m, y, w: -mean_squared_error(y, expit(m[:, 0]), sample_weight=w)
    if link == "softmax":
        labels = np.arange(objective.n_outputs)
        return lambda m, y, w: (
            -log_loss(y, softmax(m, axis=1), sample_weight=w, labels=labels)
        )
    if link == "identity":
        return lambda m, y, w: -mean_squared_error(y, m[:, 0], sample_weight=w)
    if link == "log":
        return lambda m, y, w: -mean_squared_error(y, np.exp(m[:, 0]), sample_weight=w)
    raise ValueError(
        f"method='permutation' has no natural score for the {objective.name!r} "
        "objective "
        "(it knows ROC AUC for binary logistic, log-loss for softmax and "
        "-MSE for regression objectives). Use method='tree_inner' or call "
        "sklearn.inspection.permutation_importance with your own scoring."
    )


def _permutation(reader, X, y, w, *, random_state, n_repeats):
    from sklearn.inspection import permutation_importance

    if sparse.issparse(X) or callable(getattr(X, "num_row", None)):
        raise ValueError(
            "method='permutation' shuffles columns of a dense array or a pandas "
            f"DataFrame; got {type(X).__qualname__}. Pass X.toarray() (or the "
            "data the DMatrix was built from)."
        )
    score = _natural_score(reader.ensemble.objective, y)

    def scorer(estimator, X, y, sample_weight=None):
        return score(estimator.margin(X), y, sample_weight)

    result = permutation_importance(
        _MarginModel(reader),
        X,
        y,
        scoring=scorer,
        n_repeats=n_repeats,
        random_state=random_state,
        sample_weight=w,
    )
    return result.importances_mean


#: Every method of :func:`global_importance`, in the order its docstring lists them.
_METHODS: dict[str, _Method] = {
    "tree_inner": _Method(predecomp_scores, treeshap_terms),
    "forest_inner": _Method(_forest_inner_predecomp, _forest_inner_treeshap),
    "abs": _Method(_abs_predecomp, _abs_treeshap),
    "total_gain": _Method(_total_gain, in_sample=True),
    "permutation": _Method(_permutation, n_repeats=1),
    "unbiased_gain": _Method(unbiased_gain, n_repeats=10),
}
#: The names of the methods.
METHODS = tuple(_METHODS)
