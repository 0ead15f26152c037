"""Property tests: Prop. 1 and Prop. 3 over random data and hyper-parameters."""

import os

import numpy as np
import xgboost as xgb
from conftest import l1, total_gain
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skl_treeinner import predecomp, tree_inner

OBJECTIVES = ["reg:squarederror", "binary:logistic", "multi:softprob", "count:poisson"]

params = st.fixed_dictionaries(
    {
        "objective": st.sampled_from(OBJECTIVES),
        "tree_method": st.sampled_from(["exact", "hist", "approx"]),
        "max_depth": st.integers(1, 6),
        "eta": st.floats(0.01, 1.0),
        "reg_lambda": st.sampled_from([0.0, 0.1, 1.0, 10.0]),
        "min_child_weight": st.sampled_from([0.0, 0.5, 1.0, 5.0]),
        "gamma": st.sampled_from([0.0, 0.0, 0.5]),
        "colsample_bytree": st.sampled_from([1.0, 0.6]),
        "num_boost_round": st.integers(1, 12),
        "nan_frac": st.sampled_from([0.0, 0.0, 0.2]),
        "n": st.integers(30, 300),
        "p": st.integers(1, 6),
        "seed": st.integers(0, 2**16),
    }
)


def random_data(prm, target):
    """X (with ties, scale and NaN as ``prm`` asks) and a ``target`` kind of y."""
    rng = np.random.default_rng(prm["seed"])
    n, p = prm["n"], prm["p"]
    X = rng.normal(size=(n, p)) * rng.choice([1.0, 100.0])
    X[:, 0] = np.round(X[:, 0], 1)  # ties: exercise equal split values
    signal = np.tanh(X[:, 0] / X[:, 0].std()) + rng.normal(size=n)
    if target == "binary":
        y = (signal > 0).astype(float)
    elif target == "multiclass":
        y = np.digitize(signal, [-0.5, 0.5]).astype(float)
    elif target == "count":
        y = rng.poisson(np.exp(signal / 2)).astype(float)
    elif target == "positive":
        y = np.exp(signal)
    else:
        y = signal * rng.choice([1.0, 1000.0])
    if prm["nan_frac"]:
        X[rng.random((n, p)) < prm["nan_frac"]] = np.nan
    return X, y


def make_model(prm):
    obj = prm["objective"]
    target = {
        "binary:logistic": "binary",
        "multi:softprob": "multiclass",
        "count:poisson": "count",
    }.get(obj, "regression")
    X, y = random_data(prm, target)
    extra = {}
    if obj == "multi:softprob":
        extra["num_class"] = 3
    elif obj == "count:poisson":
        extra["max_delta_step"] = 0.0
    booster = xgb.train(
        {
            "objective": obj,
            "tree_method": prm["tree_method"],
            "max_depth": prm["max_depth"],
            "eta": prm["eta"],
            "reg_lambda": prm["reg_lambda"],
            "min_child_weight": prm["min_child_weight"],
            "gamma": prm["gamma"],
            "colsample_bytree": prm["colsample_bytree"],
            "seed": prm["seed"],
            **extra,
        },
        xgb.DMatrix(X, label=y),
        num_boost_round=prm["num_boost_round"],
    )
    return booster, X, y


SETTINGS = settings(
    max_examples=int(os.environ.get("HYPOTHESIS_EXAMPLES", 40)),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@SETTINGS
@given(params)
def test_local_accuracy_property(prm):
    booster, X, _ = make_model(prm)
    values, bias = predecomp(booster, X, return_bias=True)
    expected = booster.predict(xgb.DMatrix(X), output_margin=True)
    scale = max(1.0, float(np.abs(expected).max()))
    np.testing.assert_allclose(values.sum(axis=1) + bias, expected, atol=1e-5 * scale)


@SETTINGS
@given(params)
def test_total_gain_property(prm):
    booster, X, y = make_model(prm)
    gain = total_gain(booster, X.shape[1])
    scores = tree_inner(booster, X, y)
    if gain.sum() == 0:  # no split at all: nothing to attribute
        np.testing.assert_allclose(scores, 0.0, atol=1e-12)
        return
    assert np.abs(l1(scores) - l1(gain)).max() <= 1e-6


lgb_params = st.fixed_dictionaries(
    {
        "objective": st.sampled_from(["regression", "binary", "multiclass", "gamma"]),
        "num_leaves": st.integers(2, 31),
        "learning_rate": st.floats(0.01, 1.0),
        "lambda_l2": st.sampled_from([0.0, 0.1, 1.0, 10.0]),
        "min_data_in_leaf": st.sampled_from([1, 5, 20]),
        "min_sum_hessian_in_leaf": st.sampled_from([1e-3, 1.0]),
        "feature_fraction": st.sampled_from([1.0, 0.6]),
        "boost_from_average": st.booleans(),
        "num_boost_round": st.integers(1, 12),
        "nan_frac": st.sampled_from([0.0, 0.0, 0.2]),
        "n": st.integers(30, 300),
        "p": st.integers(1, 6),
        "seed": st.integers(0, 2**16),
    }
)


def make_lightgbm(prm):
    import lightgbm as lgb

    obj = prm["objective"]
    target = {"gamma": "positive"}.get(obj, obj)
    X, y = random_data(prm, target)
    extra = {"num_class": 3} if obj == "multiclass" else {}
    keys = ("num_leaves", "learning_rate", "lambda_l2", "min_data_in_leaf")
    keys += ("min_sum_hessian_in_leaf", "feature_fraction", "boost_from_average")
    booster = lgb.train(
        {
            "objective": obj,
            "verbose": -1,
            "seed": prm["seed"],
            "min_data_in_bin": 1,
            **{k: prm[k] for k in keys},
            **extra,
        },
        lgb.Dataset(X, label=y),
        num_boost_round=prm["num_boost_round"],
    )
    return booster, X, y


@SETTINGS
@given(lgb_params)
def test_lightgbm_identities_property(prm):
    booster, X, y = make_lightgbm(prm)
    values, bias = predecomp(booster, X, return_bias=True)
    expected = booster.predict(X, raw_score=True).reshape(values.sum(axis=1).shape)
    scale = max(1.0, float(np.abs(expected).max()))
    np.testing.assert_allclose(values.sum(axis=1) + bias, expected, atol=1e-9 * scale)
    gain = booster.feature_importance("gain")
    scores = tree_inner(booster, X, y)
    if gain.sum() == 0:
        np.testing.assert_allclose(scores, 0.0, atol=1e-12)
        return
    # LightGBM sums gradients and hessians in float32 (its score_t), so its
    # gains carry float32 rounding: 1e-6 was exceeded (1.1e-6, a 2-leaf binary
    # model), 1e-5 is still 100x below any real disagreement seen.
    assert np.abs(l1(scores) - l1(gain)).max() <= 1e-5
