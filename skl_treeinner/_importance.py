"""Global feature attributions (GFA): TreeInner."""

from __future__ import annotations

import numpy as np

from ._readers import read_model
from ._readers._base import n_rows
from ._validation import check_sample_weight, check_target, iter_leaf_chunks

__all__ = ["tree_inner"]

_ATTRIBUTIONS = ("predecomp", "treeshap")


def tree_inner(model, X, y, *, attribution="predecomp", sample_weight=None):
    """TreeInner score of every feature on the given rows.

    TreeInner (paper 000, Def. 4, Eq. 20-21) is the inner product, summed
    over trees, of each tree's attribution with the negative gradient that
    tree was fitted against::

        GFA(k) = -Σ_m α_m⁻¹ Σ_i w_i · r_{m,k}(x_i) · g_{i,m}

    where g_{i,m} is the loss gradient at the margin f_[m-1](x_i) of the
    trees before m (for squared error, -g = y - f_[m-1](x)), r_{m,k} is the
    PreDecomp of tree m (Def. 1) and α_m its learning rate (the same for
    every tree unless a schedule changed it).

    On the training rows (with ``subsample=1``) this equals the booster's
    total gain of each feature (Prop. 3). On held-out rows a feature the
    model overfits to scores negative in expectation, which makes zero a
    natural selection threshold.

    Parameters
    ----------
    model : fitted booster
        XGBoost (``Booster``, ``XGBRegressor``, ``XGBClassifier``), LightGBM
        (``Booster``, ``LGBMRegressor``, ``LGBMClassifier``) or scikit-learn
        (``HistGradientBoostingRegressor/Classifier``,
        ``GradientBoostingRegressor/Classifier``).
    X : array-like, sparse matrix or DataFrame of shape (n_samples, n_features)
        Rows to score on; held-out rows give the out-of-sample score.
    y : array-like of shape (n_samples,)
        Target of those rows, as the model was trained on it: class labels
        for scikit-learn-style classifiers (those in ``classes_``), class
        indices 0..K-1 for raw XGBoost and LightGBM boosters.
    attribution : {"predecomp", "treeshap"}, default="predecomp"
        Per-tree attribution r_{m,k}. ``"predecomp"`` is PreDecomp (Def. 1);
        only it makes in-sample TreeInner equal total gain. ``"treeshap"`` is
        each tree's own path-dependent TreeSHAP (paper 004), as the paper's
        code uses it, one boosting round at a time: by the booster's native
        routine where it has one (XGBoost ``pred_contribs`` on the model
        sliced to the round, LightGBM ``pred_contrib`` with
        ``start_iteration``), by shap's TreeExplainer for scikit-learn
        models (needs the ``shap`` extra). It costs about one TreeSHAP pass
        over the whole ensemble, far more than ``"predecomp"``.
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the inner product. Using the training weights on the
        training rows reproduces a weighted model's total gain.

    Returns
    -------
    scores : ndarray of shape (n_features,)
        TreeInner of each feature, summed over classes for multi-class models.

    Raises
    ------
    TypeError
        If the model type is not supported.
    ValueError
        If the objective's gradient is not implemented, the model cannot be
        attributed exactly, or y is invalid (NaN, wrong length or shape,
        unknown labels).

    See Also
    --------
    predecomp : The per-row attributions.

    Notes
    -----
    With PreDecomp, each tree's attribution depends on a row only through
    the leaf it reaches, so per tree the weighted residuals are summed per
    leaf (one bincount) and multiplied by a (leaves x features) table of path
    contributions. The cost is close to routing the rows through the trees,
    and memory stays O(n_samples x n_features) by processing rows in chunks.
    TreeSHAP depends on more than the leaf, so it is computed per boosting
    round and reduced with the residuals at once, never stored for all trees.

    References
    ----------
    Y. Sun, "Individualized and Global Feature Attributions for Gradient
    Boosted Trees in the Presence of ℓ2 Regularization", AISTATS 2023.
    Def. 4, Eq. 20-21 and Prop. 3.

    Examples
    --------
    >>> import numpy as np, xgboost as xgb
    >>> from skl_treeinner import tree_inner
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 3)); y = X[:, 0] + rng.normal(size=400)
    >>> model = xgb.XGBRegressor(n_estimators=50, max_depth=3, reg_lambda=1.0)
    >>> model = model.fit(X[:200], y[:200])
    >>> scores = tree_inner(model, X[200:], y[200:])   # held-out rows
    >>> int(np.argmax(scores))
    0
    >>> gain = model.get_booster().get_score(importance_type="total_gain")
    >>> in_sample = tree_inner(model, X[:200], y[:200])
    >>> bool(np.isclose(in_sample[0], gain["f0"], rtol=1e-5))
    True
    """
    if attribution not in _ATTRIBUTIONS:
        raise ValueError(
            f"attribution={attribution!r} is not supported; choose one of "
            f"{list(_ATTRIBUTIONS)}."
        )
    reader = read_model(model)
    X = reader.prepare_X(X)
    n = n_rows(X)
    y = check_target(y, n, reader)
    w = check_sample_weight(sample_weight, n)
    if attribution == "treeshap":
        return _tree_inner_treeshap(reader, X, y, w)
    return _tree_inner_predecomp(reader, X, y, w)


def _tree_inner_predecomp(reader, X, y, w):
    """Σ_m α_m⁻¹ Σ_i f_{m,k}(x_i)(-g_{i,m}) w_i through per-leaf residual sums."""
    ens = reader.ensemble
    leaf_residual = np.zeros(ens.n_nodes)
    for start, stop, _, leaves in iter_leaf_chunks(reader, X):
        residual = ens.staged_gradients(leaves, y[start:stop])
        np.negative(residual, out=residual)
        if w is not None:
            residual *= w[start:stop, None]
        leaf_residual += np.bincount(
            leaves.ravel(), weights=residual.ravel(), minlength=ens.n_nodes
        )
    leaf_residual /= ens.learning_rate[ens.node_tree]
    scores = ens.path_table.T @ leaf_residual  # (n_outputs * n_features,)
    return scores.reshape(ens.n_outputs, ens.n_features).sum(axis=0)


def _tree_inner_treeshap(reader, X, y, w):
    """Σ_r α_r⁻¹ Σ_i φ_{r,k}(x_i)(-g_{i,r}) w_i with each iteration's TreeSHAP.

    All trees of one iteration and output were fitted to the same gradient and
    TreeSHAP is additive over trees, so one TreeSHAP pass per iteration gives
    the same sum as one per tree.
    """
    ens = reader.ensemble
    scores = np.zeros(ens.n_features)
    # Larger chunks than PreDecomp's: every chunk costs one TreeSHAP call per
    # iteration, and the boosters' per-call overhead adds up over hundreds.
    for start, stop, X_chunk, leaves in iter_leaf_chunks(reader, X, scale=4):
        residual = ens.iteration_gradients(leaves, y[start:stop])  # (n, R, K)
        residual *= -1.0 / ens.iteration_learning_rate[:, None]
        if w is not None:
            residual *= w[start:stop, None, None]
        for r, phi in reader.iteration_shap(X_chunk):
            scores += np.einsum("ik,ikj->j", residual[:, r, :], phi)
    return scores
