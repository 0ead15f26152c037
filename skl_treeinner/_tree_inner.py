"""Global feature attributions (GFA): TreeInner."""

from __future__ import annotations

from ._engines import engine_for
from ._readers import read_model
from ._utils._validation import check_attribution, check_params

__all__ = ["tree_inner"]


def tree_inner(
    model,
    X,
    y,
    *,
    attribution="predecomp",
    sample_weight=None,
    per_iteration=False,
    per_sample=False,
    verbose=0,
):
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
        A fitted model of a supported library: ``SUPPORTED_MODELS`` lists
        them (XGBoost, LightGBM, scikit-learn's gradient boosting).
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
    per_iteration : bool, default=False
        Return each boosting iteration's term of the sum over m in Eq. 21
        instead of the sum: row r holds the contribution of the trees of
        iteration r (all of its trees and outputs together). Its cumulative
        sum over rows is the score of the model truncated after each
        iteration, the curve of the paper's Figure 3: on held-out rows the
        score of a noisy feature drifts negative as trees are added, while
        on the training rows (``subsample=1``) each row is the total gain of
        that iteration's splits (Prop. 3), so the score only grows. Summed
        over axis 0 it equals the default output to float rounding. See
        :func:`skl_treeinner.plotting.plot_score_path`.
    per_sample : bool, default=False
        Return each row's term of the sum over i in Eq. 21 instead of the
        sum: entry ``[i, k]`` is
        ``z_ik = -Σ_m α_m⁻¹ w_i · r_{m,k}(x_i) · g_{i,m}``, summed over
        classes for multi-class models. Summed over axis 0 it equals the
        default output to float rounding. On held-out rows, given the model,
        the rows are independent draws, so the ``z_·k`` are too: their
        spread gives the standard error of the score,
        ``sqrt(n) · std(z_·k)``, and a test of whether feature k helps on new
        rows (what :class:`~skl_treeinner.TreeInnerSelector` reports as
        ``scores_se_`` and ``pvalues_``). Cannot be combined with
        ``per_iteration``.
    verbose : int, default=0
        Above 0, show progress on stderr (a tqdm bar when tqdm is installed,
        else a few plain lines): over row chunks for ``"predecomp"``, over
        boosting iterations for ``"treeshap"``. 0 adds no overhead. Not
        used on Dask collections, whose tasks the cluster's dashboard shows.

    Returns
    -------
    scores : ndarray of shape (n_features,), (n_iterations, n_features) \
or (n_samples, n_features)
        TreeInner of each feature, summed over classes for multi-class models;
        per boosting iteration when ``per_iteration=True``, per row when
        ``per_sample=True``.

    Raises
    ------
    TypeError
        If the model type is not supported.
    ValueError
        If the objective's gradient is not implemented, the model cannot be
        attributed exactly, y is invalid (NaN, wrong length or shape,
        unknown labels), or both ``per_iteration`` and ``per_sample`` are set.

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

    With ``per_iteration=True`` and PreDecomp the per-leaf residual sums are
    grouped by iteration in a sparse (n_iterations x n_nodes) matrix before
    the product with the path table, so the extra memory is
    O(n_iterations x n_features + n_nodes), never one array per tree and row.

    With ``per_sample=True`` and PreDecomp, each chunk of rows becomes one
    sparse (rows x n_nodes) matrix holding, at the leaf each row reaches in
    each tree, that row's weighted residual over the learning rate; its
    product with the path table is the chunk's rows of z. The work is that of
    :func:`predecomp` and the memory O(n_samples x n_features). With TreeSHAP,
    each round's values are multiplied by the round's residuals row by row
    and accumulated.

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
    >>> path = tree_inner(model, X[200:], y[200:], per_iteration=True)
    >>> path.shape                                      # (iterations, features)
    (50, 3)
    >>> bool(np.allclose(path.sum(axis=0), scores))
    True
    >>> z = tree_inner(model, X[200:], y[200:], per_sample=True)
    >>> z.shape                                         # (rows, features)
    (200, 3)
    >>> bool(np.allclose(z.sum(axis=0), scores))
    True
    """
    check_attribution(attribution)
    check_params(
        "tree_inner",
        {
            "per_iteration": ["boolean"],
            "per_sample": ["boolean"],
            "verbose": ["verbose"],
        },
        {"per_iteration": per_iteration, "per_sample": per_sample, "verbose": verbose},
    )
    if per_iteration and per_sample:
        raise ValueError(
            "per_iteration=True and per_sample=True cannot be combined: the "
            "result would be one (n_samples x n_features) array per iteration. "
            "Ask for one of them; per_sample's rows sum to the score, "
            "per_iteration's rows to the same score iteration by iteration."
        )
    reader = read_model(model)
    return engine_for(X, y, sample_weight).tree_inner(
        reader,
        X,
        y,
        attribution=attribution,
        sample_weight=sample_weight,
        per_iteration=per_iteration,
        per_sample=per_sample,
        verbose=verbose,
    )
