"""TreeInner with per-tree TreeSHAP, against shap and XGBoost's own numbers."""

import numpy as np
import pytest
import xgboost as xgb
from conftest import fit, make_data

from skl_treeinner import tree_inner
from skl_treeinner._readers import read_model

shap = pytest.importorskip("shap")

CASES = [
    ("reg:squarederror", {}),
    ("binary:logistic", {}),
    ("multi:softprob", {}),
    ("count:poisson", {}),
    ("reg:squarederror", {"num_parallel_tree": 2, "colsample_bynode": 0.7}),
    ("multi:softprob", {"num_parallel_tree": 2}),
]
IDS = ["reg", "binary", "multi", "poisson", "forest", "multi-forest"]


def shap_values(model, X):
    """shap's TreeSHAP of the whole model, as (n, n_outputs, n_features)."""
    values = np.asarray(shap.TreeExplainer(model).shap_values(X))
    if values.ndim == 2:
        return values[:, None, :]
    return values.transpose(0, 2, 1)  # shap >= 0.45: (n, p, k)


@pytest.mark.parametrize(("objective", "params"), CASES, ids=IDS)
def test_per_iteration_treeshap_sums_to_shap(objective, params):
    X, y = make_data(n=300, nan_frac=0.1, seed=11)
    model, _ = fit(objective, X, np.nan_to_num(y), n_estimators=8, **params)
    reader = read_model(model)
    total = sum(phi for _, phi in reader.iteration_shap(X))
    np.testing.assert_allclose(total, shap_values(model, X), atol=1e-5)


def brute_force_tree_inner_shap(booster, X, y, eta, n_classes):
    """Eq. 21 with TreeSHAP, straight from the definition.

    Residuals from XGBoost's own staged margins (iteration_range) and each
    round's TreeSHAP from shap on the booster sliced to that round.
    """
    dmat = xgb.DMatrix(X)
    # XGBoost ignores base_score when rows carry a base_margin of 0.
    zero = xgb.DMatrix(X, base_margin=np.zeros((len(X), n_classes)).squeeze())
    one_round = (0, 1)
    intercept = booster.predict(
        dmat, output_margin=True, iteration_range=one_round
    ) - booster.predict(zero, output_margin=True, iteration_range=one_round)
    scores = np.zeros(X.shape[1])
    for r in range(booster.num_boosted_rounds()):
        if r == 0:
            margin = intercept
        else:
            margin = booster.predict(dmat, output_margin=True, iteration_range=(0, r))
        margin = np.asarray(margin, dtype=np.float64).reshape(len(X), n_classes)
        if n_classes == 1:
            grad = 1 / (1 + np.exp(-margin[:, 0])) - y
            grad = grad[:, None]
        else:
            p = np.exp(margin - margin.max(1, keepdims=True))
            p /= p.sum(1, keepdims=True)
            grad = p - (np.arange(n_classes) == y[:, None])
        phi = shap_values(booster[r : r + 1], X)
        scores += np.einsum("ik,ikj->j", -grad, phi)
    return scores / eta


@pytest.mark.parametrize("objective", ["binary:logistic", "multi:softprob"])
def test_tree_inner_treeshap_matches_definition(objective):
    X, y = make_data(n=300, seed=12)
    X_val, y_val = make_data(n=200, seed=13)
    model, target = fit(objective, X, y, n_estimators=6, learning_rate=0.4)
    val_target = (
        (y_val > 0.5).astype(int)
        if objective == "binary:logistic"
        else np.digitize(y_val, [0.0, 1.5])
    )
    k = 1 if objective == "binary:logistic" else 3
    expected = brute_force_tree_inner_shap(
        model.get_booster(), X_val, val_target, 0.4, k
    )
    got = tree_inner(model, X_val, val_target, attribution="treeshap")
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-6)


def test_treeshap_weights_and_chunks(monkeypatch):
    from skl_treeinner._readers import _base

    X, y = make_data(n=400, seed=14)
    model, _ = fit("reg:squarederror", X, y, n_estimators=5)
    w = np.random.default_rng(0).uniform(0, 2, size=400)
    whole = tree_inner(model, X, y, attribution="treeshap", sample_weight=w)
    # TreeSHAP chunks are 4x larger: 4 * 64 * 5 / 5 trees = 256-row chunks.
    monkeypatch.setattr(_base, "_CHUNK_ELEMENTS", 64 * 5)
    chunked = tree_inner(model, X, y, attribution="treeshap", sample_weight=w)
    np.testing.assert_allclose(chunked, whole, rtol=1e-10)
    # Weights enter the inner product linearly.
    doubled = tree_inner(model, X, y, attribution="treeshap", sample_weight=2 * w)
    np.testing.assert_allclose(doubled, 2 * whole, rtol=1e-10)


def test_treeshap_and_predecomp_agree_on_stumps():
    # For depth-1 trees PreDecomp and TreeSHAP coincide up to the λ
    # regularisation of p̂ (λ = 0 here, so exactly).
    X, y = make_data(n=300, seed=15)
    model, _ = fit(
        "reg:squarederror", X, y, max_depth=1, reg_lambda=0.0, n_estimators=10
    )
    np.testing.assert_allclose(
        tree_inner(model, X, y, attribution="treeshap"),
        tree_inner(model, X, y),
        rtol=1e-4,
        atol=1e-6,
    )
