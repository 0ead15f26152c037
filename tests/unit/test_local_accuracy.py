"""Prop. 1: PreDecomp plus bias equals XGBoost's own raw margin."""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import xgboost as xgb
from conftest import OBJECTIVES, fit, make_data, margin

from skl_treeinner import predecomp, read_ensemble

ATOL = 1e-5  # XGBoost returns float32 margins of a few units


def assert_local_accuracy(model, X, n_features, n_classes=1):
    values, bias = predecomp(model, X, return_bias=True)
    expected = margin(model, X)
    if n_classes == 1:
        assert values.shape == (expected.shape[0], n_features)
        assert np.ndim(bias) == 0
    else:
        assert values.shape == (expected.shape[0], n_features, n_classes)
        assert np.shape(bias) == (n_classes,)
    np.testing.assert_allclose(values.sum(axis=1) + bias, expected, atol=ATOL)
    return values


@pytest.mark.parametrize("tree_method", ["exact", "hist", "approx"])
@pytest.mark.parametrize("objective", sorted(OBJECTIVES))
def test_local_accuracy_every_objective(objective, tree_method, data):
    X, y = data
    model, target = fit(objective, X, y, tree_method=tree_method)
    k = len(np.unique(target)) if objective.startswith("multi") else 1
    assert_local_accuracy(model, X, 6, k)
    # also on rows the model never saw
    X_new, _ = make_data(n=100, seed=5)
    assert_local_accuracy(model, X_new, 6, k)


@pytest.mark.parametrize(
    ("objective", "base_score"),
    [
        ("reg:squarederror", 5.0),
        ("binary:logistic", 0.2),
        ("count:poisson", 3.0),
        ("reg:gamma", 0.5),
    ],
)
def test_local_accuracy_non_default_base_score(objective, base_score, data):
    X, y = data
    model, _ = fit(objective, X, y, base_score=base_score)
    assert_local_accuracy(model, X, 6)


def test_local_accuracy_multiclass_non_default_base_score(data):
    X, y = data
    target = np.digitize(y, [0.0, 1.5])
    booster = xgb.train(
        {"objective": "multi:softprob", "num_class": 3, "base_score": 0.7},
        xgb.DMatrix(X, label=target),
        num_boost_round=10,
    )
    assert_local_accuracy(booster, X, 6, 3)


def test_bias_is_intercept_plus_root_values(data):
    X, y = data
    model, _ = fit("reg:squarederror", X, y, base_score=2.0)
    ens = read_ensemble(model)
    _, bias = predecomp(model, X, return_bias=True)
    assert ens.intercept[0] == pytest.approx(2.0)
    assert bias == pytest.approx(2.0 + ens.root_value.sum())


def test_local_accuracy_missing_values_and_sparse_input():
    X, y = make_data(nan_frac=0.3, seed=6)
    model, _ = fit("reg:squarederror", X, np.nan_to_num(y), tree_method="hist")
    assert_local_accuracy(model, X, 6)
    # Sparse input: absent entries are missing, as in XGBoost.
    Xs = sp.random(300, 6, density=0.4, format="csr", random_state=7)
    Xs.data = np.random.default_rng(7).normal(size=Xs.nnz)
    dense = Xs.toarray()
    dense[dense == 0] = np.nan
    np.testing.assert_allclose(
        predecomp(model, Xs), predecomp(model, dense), atol=1e-12
    )
    np.testing.assert_allclose(
        predecomp(model, Xs.tocoo()), predecomp(model, dense), atol=1e-12
    )


def test_local_accuracy_categorical_and_dmatrix():
    rng = np.random.default_rng(8)
    n = 400
    df = pd.DataFrame(
        {
            "a": rng.normal(size=n),
            "c": pd.Categorical(rng.choice(list("pqrstu"), size=n)),
        }
    )
    y = df["a"].to_numpy() + (df["c"] == "q").to_numpy() * 2.0 + rng.normal(size=n)
    model = xgb.XGBRegressor(
        n_estimators=20, tree_method="hist", enable_categorical=True, max_depth=3
    ).fit(df, y)
    values = assert_local_accuracy(model, df, 2)
    assert np.abs(values[:, 1]).sum() > 0
    dm = xgb.DMatrix(df, enable_categorical=True)
    np.testing.assert_allclose(predecomp(model, dm), values)


def test_chunked_routing_matches_single_pass(data, monkeypatch):
    from skl_treeinner import tree_inner
    from skl_treeinner._readers import _base

    X, y = data
    model, target = fit("multi:softprob", X, y, n_estimators=10)
    whole = predecomp(model, X), tree_inner(model, X, target)
    monkeypatch.setattr(_base, "_CHUNK_ELEMENTS", 256 * 30)  # 256-row chunks
    for Xc in (X, pd.DataFrame(X), xgb.DMatrix(X)):
        np.testing.assert_allclose(predecomp(model, Xc), whole[0], atol=1e-12)
        np.testing.assert_allclose(tree_inner(model, Xc, target), whole[1])


def test_paper_example_1_table_3():
    """Example 1 / Table 3: p̂ = 0 at the root, 1/3 and -1/2 (or -1/3, 1/2)."""
    X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    y = np.array([0.0, 1.0, -1.0])
    booster = xgb.train(
        {
            "eta": 1.0,
            "reg_lambda": 1.0,
            "max_depth": 1,
            "min_child_weight": 0,
            "base_score": 0.0,
            "tree_method": "exact",
        },
        xgb.DMatrix(X, label=y),
        num_boost_round=1,
    )
    ens = read_ensemble(booster)
    root, left, right = (
        ens.value[0],
        ens.value[ens.children_left[0]],
        ens.value[ens.children_right[0]],
    )
    assert root == pytest.approx(0.0, abs=1e-7)
    split = ens.feature[0]
    expected = {0: (1 / 3, -1 / 2), 1: (-1 / 3, 1 / 2)}[split]  # Structure I / II
    assert (left, right) == pytest.approx(expected, rel=1e-6)
    # Root H = 3 rows, λ = 1: G_root = 0 so p̂(root) = 0 (the robust bias);
    # the cover-weighted mean p̃ of the leaves would be ±1/18 instead.
    assert ens.cover[0] == pytest.approx(3.0)
    p_tilde = (2 * left + 1 * right) / 3
    assert abs(p_tilde) == pytest.approx(1 / 18, rel=1e-6)


def test_polars_input_matches_numpy(data):
    pl = pytest.importorskip("polars")
    X, y = data
    df = pd.DataFrame(X, columns=[f"c{i}" for i in range(6)])
    model = xgb.XGBRegressor(n_estimators=10, max_depth=3).fit(pl.from_pandas(df), y)
    assert model.get_booster().feature_names == list(df.columns)
    frame = pl.from_pandas(df)
    np.testing.assert_allclose(predecomp(model, frame), predecomp(model, X))
    from skl_treeinner import tree_inner

    np.testing.assert_allclose(
        tree_inner(model, frame, pl.Series(y)), tree_inner(model, X, y)
    )
    with pytest.raises(ValueError, match="different order"):
        predecomp(model, frame.select(reversed(frame.columns)))


def test_multiindex_columns(data):
    X, y = data
    cols = pd.MultiIndex.from_tuples([("a", i) for i in range(6)])
    df = pd.DataFrame(X, columns=cols)
    model = xgb.XGBRegressor(n_estimators=5).fit(df, y)
    np.testing.assert_allclose(predecomp(model, df), predecomp(model, X))
