"""tree_inner(per_iteration=True) and verbose, against the boosters' own numbers.

In-sample, each boosting iteration's TreeInner is the gain of that iteration's
splits (Prop. 3 tree by tree), which XGBoost and LightGBM report per split in
``trees_to_dataframe``. The TreeSHAP path is checked against shap on the
booster sliced to one round, with residuals from XGBoost's staged margins.
"""

import numpy as np
import pytest
import xgboost as xgb
from conftest import fit, make_data

from skl_treeinner import tree_inner
from skl_treeinner._readers import _base
from skl_treeinner._utils._optional import optional_module

pd = pytest.importorskip("pandas")


def xgb_gain_per_iteration(booster, n_features, trees_per_iteration):
    """Split gains from XGBoost's model dump, summed per iteration and feature."""
    df = booster.trees_to_dataframe()
    splits = df[df["Feature"] != "Leaf"]
    iteration = splits["Tree"].to_numpy() // trees_per_iteration
    feature = splits["Feature"].str.slice(1).astype(int).to_numpy()  # "f3" -> 3
    n_iter = booster.num_boosted_rounds()
    out = np.zeros((n_iter, n_features))
    np.add.at(out, (iteration, feature), splits["Gain"].to_numpy())
    return out


def assert_rows_close(got, expected, rtol):
    """Each iteration's row equal to ``rtol`` of that row's largest entry."""
    assert got.shape == expected.shape
    assert np.all(expected.sum(axis=1) > 0), "an iteration made no split"
    scale = np.abs(expected).max(axis=1, keepdims=True)
    worst = (np.abs(got - expected) / scale).max()
    assert worst < rtol, f"largest error {worst:.2e} of the row's largest gain"


XGB_CASES = [
    ("reg:squarederror", {}, 1),
    ("binary:logistic", {}, 1),
    ("multi:softprob", {}, 3),
    ("reg:squarederror", {"num_parallel_tree": 2, "colsample_bynode": 0.7}, 2),
]


@pytest.mark.parametrize(
    ("objective", "params", "trees_per_iteration"),
    XGB_CASES,
    ids=["squared", "logistic", "softprob", "forest"],
)
def test_xgboost_per_iteration_equals_split_gains(
    objective, params, trees_per_iteration
):
    X, y = make_data(n=300, seed=21)
    model, target = fit(objective, X, y, n_estimators=12, **params)
    booster = model.get_booster()
    got = tree_inner(model, X, target, per_iteration=True)
    expected = xgb_gain_per_iteration(booster, X.shape[1], trees_per_iteration)
    # Measured: at most 4.8e-7 of the row's largest gain (XGBoost's gains
    # are float32).
    assert_rows_close(got, expected, rtol=1e-6)
    # The iterations add up to the default output.
    np.testing.assert_allclose(
        got.sum(axis=0), tree_inner(model, X, target), rtol=1e-12, atol=1e-9
    )


@pytest.mark.parametrize(
    ("objective", "n_classes"), [("regression", 1), ("binary", 1), ("multiclass", 3)]
)
def test_lightgbm_per_iteration_equals_split_gains(objective, n_classes):
    lgb = pytest.importorskip("lightgbm")
    X, y = make_data(n=300, seed=22)
    target = {
        "regression": y,
        "binary": (y > 0.5).astype(int),
        "multiclass": np.digitize(y, [0.0, 1.5]),
    }[objective]
    params = {
        "objective": objective,
        "verbose": -1,
        "num_leaves": 8,
        "learning_rate": 0.3,
        "min_data_in_leaf": 5,
        "min_sum_hessian_in_leaf": 0,
        "lambda_l2": 1.0,
        "seed": 0,
    }
    if n_classes > 1:
        params["num_class"] = n_classes
    model = lgb.train(params, lgb.Dataset(X, target), num_boost_round=10)
    df = model.trees_to_dataframe()
    splits = df[df["split_feature"].notna()]
    names = model.feature_name()
    feature = splits["split_feature"].map({n: j for j, n in enumerate(names)})
    expected = np.zeros((model.num_trees() // n_classes, X.shape[1]))
    np.add.at(
        expected,
        (splits["tree_index"].to_numpy() // n_classes, feature.to_numpy()),
        splits["split_gain"].to_numpy(),
    )
    got = tree_inner(model, X, target, per_iteration=True)
    # Measured: at most 2.8e-6 of the row's largest gain. LightGBM keeps split
    # gains to about 6 significant digits (266.907 is stored as float32
    # 266.9070129...), so 1e-6 is out of reach; 1e-5 still fails at once for
    # a wrong iteration, feature or scale.
    assert_rows_close(got, expected, rtol=1e-5)
    # LightGBM's own cumulative gain over the first r iterations agrees.
    cumulative = [model.feature_importance("gain", iteration=r) for r in range(1, 11)]
    np.testing.assert_allclose(
        np.cumsum(got, axis=0), cumulative, rtol=1e-5, atol=1e-5 * expected.max()
    )
    np.testing.assert_allclose(
        got.sum(axis=0), tree_inner(model, X, target), rtol=1e-12, atol=1e-9
    )


def test_held_out_path_sums_to_default_and_has_negative_steps():
    X, y = make_data(n=600, seed=23)
    model, _ = fit("reg:squarederror", X[:300], y[:300], n_estimators=30)
    for attribution in ("predecomp", "treeshap"):
        path = tree_inner(
            model, X[300:], y[300:], attribution=attribution, per_iteration=True
        )
        assert path.shape == (30, X.shape[1])
        np.testing.assert_allclose(
            path.sum(axis=0),
            tree_inner(model, X[300:], y[300:], attribution=attribution),
            rtol=1e-12,
            atol=1e-9,
        )
        # Out of sample an iteration can hurt a feature: some steps are < 0,
        # which no in-sample gain can be.
        assert np.any(path < 0)


def test_predecomp_per_iteration_with_weights_and_chunks(monkeypatch, capsys):
    X, y = make_data(n=500, seed=24)
    model, target = fit("binary:logistic", X, y, n_estimators=8)
    w = np.random.default_rng(1).uniform(0.2, 2.0, size=500)
    whole = tree_inner(model, X, target, sample_weight=w, per_iteration=True)
    # 256-row chunks (the smallest, also for the fused kernels' 4x larger
    # chunks): 2 of them, and progress counts them.
    monkeypatch.setattr(_base, "_CHUNK_ELEMENTS", 64 * 8)
    chunked = tree_inner(
        model, X, target, sample_weight=w, per_iteration=True, verbose=1
    )
    np.testing.assert_allclose(chunked, whole, rtol=1e-10, atol=1e-12)
    err = capsys.readouterr().err
    assert "tree_inner (predecomp)" in err and "2/2" in err


@pytest.mark.parametrize("kernel", ["numpy", "auto"])
def test_verbose_zero_prints_nothing_and_treeshap_counts_progress(
    capsys, monkeypatch, kernel
):
    monkeypatch.setenv("SKL_TREEINNER_KERNEL", kernel)
    X, y = make_data(n=200, seed=25)
    model, _ = fit("reg:squarederror", X, y, n_estimators=5)
    quiet = tree_inner(model, X, y, attribution="treeshap")
    assert capsys.readouterr().err == ""
    loud = tree_inner(model, X, y, attribution="treeshap", verbose=1)
    np.testing.assert_array_equal(loud, quiet)
    err = capsys.readouterr().err
    assert "tree_inner (treeshap)" in err
    if kernel == "numpy" or optional_module("numba") is None:
        assert "5/5" in err  # the booster's TreeSHAP, iteration by iteration
    else:
        assert "by leaf patterns" in err and "1/1" in err  # chunks of rows


def _staged_margin(booster, X, r):
    """XGBoost's margin before iteration r (the base score alone at r = 0)."""
    dmat = xgb.DMatrix(X)
    if r > 0:
        return booster.predict(dmat, output_margin=True, iteration_range=(0, r))
    # iteration_range=(0, 0) means every tree; the intercept is what a base
    # margin of 0 removes from the first round's prediction.
    zero = xgb.DMatrix(X, base_margin=np.zeros(len(X)))
    first = (0, 1)
    return booster.predict(dmat, output_margin=True, iteration_range=first) - (
        booster.predict(zero, output_margin=True, iteration_range=first)
    )


@pytest.mark.parametrize("objective", ["reg:squarederror", "binary:logistic"])
def test_treeshap_per_iteration_is_shap_of_each_round(objective):
    shap = pytest.importorskip("shap")
    X, y = make_data(n=300, seed=26)
    X_val, y_val = make_data(n=200, seed=27)
    model, _ = fit(objective, X, y, n_estimators=6, learning_rate=0.4)
    if objective == "binary:logistic":
        y_val = (y_val > 0.5).astype(int)
    booster = model.get_booster()
    got = tree_inner(model, X_val, y_val, attribution="treeshap", per_iteration=True)
    assert got.shape == (6, X.shape[1])
    for r in range(6):
        margin = np.asarray(_staged_margin(booster, X_val, r), dtype=np.float64)
        if objective == "binary:logistic":
            residual = y_val - 1 / (1 + np.exp(-margin))
        else:
            residual = y_val - margin
        phi = np.asarray(shap.TreeExplainer(booster[r : r + 1]).shap_values(X_val))
        expected = phi.T @ residual / 0.4
        # Measured: at most 1.4e-7 of the largest entry (float32 margins and
        # SHAP values).
        np.testing.assert_allclose(got[r], expected, rtol=1e-5, atol=1e-7)


def test_per_iteration_shape_for_multiclass_sums_outputs():
    X, y = make_data(n=300, seed=28)
    model, target = fit("multi:softprob", X, y, n_estimators=4)
    for attribution in ("predecomp", "treeshap"):
        path = tree_inner(model, X, target, attribution=attribution, per_iteration=True)
        assert path.shape == (4, X.shape[1])
        np.testing.assert_allclose(
            path.sum(axis=0),
            tree_inner(model, X, target, attribution=attribution),
            rtol=1e-12,
            atol=1e-9,
        )
