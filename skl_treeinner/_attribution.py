"""Individualized feature attributions (IFA): PreDecomp."""

from __future__ import annotations

from ._engines import engine_for
from ._readers import read_model
from ._utils._validation import check_params

__all__ = ["predecomp"]


def predecomp(model, X, *, return_bias=False):
    """PreDecomp attributions of every row, summed over trees.

    For each tree m, the PreDecomp f_{m,k}(x) credits feature k with the
    change of node value p̂_m along x's path at every split on k (paper 000,
    Def. 1, Eq. 9), where p̂_m(t) = -α G_t / (H_t + λ) is the shrunk,
    ℓ2-regularised value every node would take as a leaf (Eq. 7). The result
    is the sum over trees, f_{[M],k}(x) (Eq. 10).

    Rows are routed to leaves by the booster itself (``pred_leaf``), so missing
    values, default directions and categorical splits are handled exactly as
    in the model's own predictions.

    Parameters
    ----------
    model : fitted booster
        A fitted model of a supported library: ``SUPPORTED_MODELS`` lists
        them (XGBoost, LightGBM, scikit-learn's gradient boosting).
        A model trained with early stopping is read up to its best
        iteration, as its ``predict`` does.
    X : array-like, sparse matrix or DataFrame of shape (n_samples, n_features)
        Rows to explain; anything the booster accepts (numpy, scipy sparse,
        pandas with categorical columns, ``xgboost.DMatrix``). NaN is routed
        as the booster routes missing values.
    return_bias : bool, default=False
        Also return the bias, intercept + Σ_m p̂_m(root).

    Returns
    -------
    values : ndarray of shape (n_samples, n_features) or \
(n_samples, n_features, n_classes)
        PreDecomp attribution of each feature on the margin (log-odds for
        classifiers). Multi-class models get one slice per class.
    bias : float or ndarray of shape (n_classes,)
        Only with ``return_bias=True``. Local accuracy (Prop. 1) holds:
        ``values.sum(axis=1) + bias`` equals the model's raw margin
        (``predict(output_margin=True)``), up to the booster's float32
        rounding.

    Raises
    ------
    TypeError
        If the model type is not supported.
    ValueError
        If the model cannot be attributed exactly (e.g. ``booster='dart'``),
        or X has different features than the model.

    See Also
    --------
    tree_inner : Global scores from these attributions and the residuals.

    References
    ----------
    Y. Sun, "Individualized and Global Feature Attributions for Gradient
    Boosted Trees in the Presence of ℓ2 Regularization", AISTATS 2023.
    Def. 1, Eq. 7, 9, 10 and Prop. 1.

    Examples
    --------
    >>> import numpy as np, xgboost as xgb
    >>> from skl_treeinner import predecomp
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3)); y = X[:, 0] + 0.1 * rng.normal(size=200)
    >>> model = xgb.XGBRegressor(n_estimators=20, max_depth=2).fit(X, y)
    >>> values, bias = predecomp(model, X, return_bias=True)
    >>> values.shape
    (200, 3)
    >>> margin = model.predict(X, output_margin=True)
    >>> bool(np.allclose(values.sum(axis=1) + bias, margin, atol=1e-5))
    True
    """
    check_params(
        "predecomp", {"return_bias": ["boolean"]}, {"return_bias": return_bias}
    )
    reader = read_model(model)
    return engine_for(X).predecomp(reader, X, return_bias=return_bias)
