"""Prop. 3: TreeInner on the training rows equals XGBoost's total gain."""

import numpy as np
import pandas as pd
import pytest
import xgboost as xgb
from conftest import OBJECTIVES, assert_total_gain, fit, make_data

from skl_treeinner import predecomp, read_ensemble, tree_inner


@pytest.mark.slow
@pytest.mark.parametrize("tree_method", ["exact", "hist", "approx"])
@pytest.mark.parametrize("objective", sorted(OBJECTIVES))
def test_total_gain_every_objective(objective, tree_method, data):
    X, y = data
    model, target = fit(objective, X, y, tree_method=tree_method)
    assert_total_gain(tree_inner(model, X, target), model, X.shape[1])


@pytest.mark.parametrize("tree_method", ["exact", "hist"])
def test_total_gain_with_column_subsampling(tree_method, data):
    X, y = data
    model, target = fit(
        "binary:logistic",
        X,
        y,
        tree_method=tree_method,
        colsample_bytree=0.5,
        colsample_bylevel=0.8,
        # exact does not implement per-node column sampling
        colsample_bynode=0.8 if tree_method == "hist" else 1.0,
    )
    assert_total_gain(tree_inner(model, X, target), model, X.shape[1])


@pytest.mark.parametrize("tree_method", ["exact", "hist", "approx"])
@pytest.mark.parametrize("objective", ["reg:squarederror", "multi:softprob"])
def test_total_gain_with_missing_values(objective, tree_method):
    X, y = make_data(nan_frac=0.2, seed=1)
    y = np.nan_to_num(y)
    model, target = fit(objective, X, y, tree_method=tree_method)
    assert_total_gain(tree_inner(model, X, target), model, X.shape[1])


@pytest.mark.parametrize("objective", ["reg:squarederror", "binary:logistic"])
@pytest.mark.parametrize("max_cat_to_onehot", [1, 16])  # partition vs one-hot splits
def test_total_gain_with_categorical_column(objective, max_cat_to_onehot):
    rng = np.random.default_rng(2)
    n = 500
    cat = rng.integers(0, 8, size=n)
    X = pd.DataFrame(
        {
            "num": rng.normal(size=n),
            "cat": pd.Categorical.from_codes(cat, list("abcdefgh")),
            "noise": rng.normal(size=n),
        }
    )
    y = X["num"].to_numpy() + np.array([0, 2, -1, 0, 1, 3, -2, 0])[cat]
    y = y + rng.normal(size=n)
    model, target = fit(
        objective,
        X,
        y,
        tree_method="hist",
        enable_categorical=True,
        max_cat_to_onehot=max_cat_to_onehot,
    )
    scores = tree_inner(model, X, target)
    assert_total_gain(scores, model, 3)
    assert scores[1] > 0  # the categorical column is used


def test_total_gain_with_sample_weight(data):
    X, y = data
    w = np.random.default_rng(3).uniform(0.2, 3.0, size=len(y))
    model, target = fit("reg:squarederror", X, y, tree_method="hist")
    model.fit(X, target, sample_weight=w)
    assert_total_gain(tree_inner(model, X, target, sample_weight=w), model, 6)
    # Without the weights the identity must fail: the test can tell.
    unweighted = tree_inner(model, X, target)
    with pytest.raises(AssertionError):
        assert_total_gain(unweighted, model, 6)


def test_total_gain_with_scale_pos_weight(data):
    X, y = data
    model, target = fit("binary:logistic", X, y, scale_pos_weight=3.0)
    assert_total_gain(tree_inner(model, X, target), model, 6)


@pytest.mark.parametrize("objective", ["reg:squarederror", "multi:softprob"])
def test_total_gain_with_parallel_trees(objective, data):
    # Boosted random forests: several trees per round, same gradient.
    X, y = data
    model, target = fit(objective, X, y, num_parallel_tree=3, subsample=1.0)
    assert model.get_booster().num_boosted_rounds() * 3 * (
        3 if objective.startswith("multi") else 1
    ) == len(model.get_booster().get_dump())
    assert_total_gain(tree_inner(model, X, target), model, 6)


@pytest.mark.parametrize(
    "params",
    [
        {"gamma": 2.0},  # pruned splits
        {"grow_policy": "lossguide", "max_leaves": 6, "max_depth": 0},
        {"reg_lambda": 0.0, "min_child_weight": 0.5},
        {"reg_lambda": 25.0},
        {"max_delta_step": 100.0},  # never binds: identities hold
        {"interaction_constraints": "[[0, 1], [2, 3, 4, 5]]"},
    ],
    ids=["gamma", "lossguide", "lambda0", "lambda25", "mds-loose", "interaction"],
)
def test_total_gain_other_hyperparameters(params, data):
    X, y = data
    model, target = fit("reg:squarederror", X, y, tree_method="hist", **params)
    assert_total_gain(tree_inner(model, X, target), model, 6)


def test_total_gain_native_booster_and_dmatrix(data):
    X, y = data
    dtrain = xgb.DMatrix(X, label=y, feature_names=[f"x{i}" for i in range(6)])
    booster = xgb.train(
        {"objective": "reg:squarederror", "eta": 0.2, "max_depth": 3},
        dtrain,
        num_boost_round=15,
    )
    assert_total_gain(tree_inner(booster, X, y), booster, 6)
    assert_total_gain(tree_inner(booster, dtrain, y), booster, 6)


def test_total_gain_with_feature_names(data):
    X, y = data
    df = pd.DataFrame(X, columns=[f"col_{i}" for i in range(6)])
    model, target = fit("reg:squarederror", df, y)
    assert_total_gain(tree_inner(model, df, target), model, 6)


def test_early_stopping_reads_up_to_best_iteration(data):
    X, y = data
    X_val, y_val = make_data(seed=9)
    model = xgb.XGBRegressor(
        n_estimators=300, learning_rate=0.5, max_depth=4, early_stopping_rounds=5
    ).fit(X, y, eval_set=[(X_val, y_val)], verbose=False)
    best = model.best_iteration
    assert best + 1 < model.get_booster().num_boosted_rounds()
    sliced = model.get_booster()[: best + 1]
    assert_total_gain(tree_inner(model, X, y), sliced, 6)


def test_held_out_scores_separate_noise():
    # Not an identity, but the point of TreeInner: on held-out rows a pure
    # noise feature scores at most slightly above zero, the signal clearly.
    rng = np.random.default_rng(4)
    n = 2000
    X = np.column_stack([rng.normal(size=n), rng.integers(0, 200, size=n)])
    y = X[:, 0] + rng.normal(size=n)
    model = xgb.XGBRegressor(n_estimators=200, max_depth=6, learning_rate=0.1)
    model.fit(X[:1000], y[:1000])
    in_sample = tree_inner(model, X[:1000], y[:1000])
    held_out = tree_inner(model, X[1000:], y[1000:])
    assert in_sample[1] > 0.1 * in_sample[0]  # gain rewards the noise...
    assert held_out[1] < 0.01 * held_out[0]  # ...held-out TreeInner does not
    assert held_out[0] > 0


def test_total_gain_with_learning_rate_schedule(data):
    # α_m varies by round; each tree's own rate is recovered from its nodes.
    X, y = data
    sched = xgb.callback.LearningRateScheduler(lambda r: 0.3 if r < 5 else 0.05)
    model = xgb.XGBRegressor(n_estimators=10, max_depth=3, callbacks=[sched])
    model.fit(X, y)
    ens = read_ensemble(model)
    # XGBoost's callback sets the rate of round r + 1 from f(r).
    np.testing.assert_allclose(ens.learning_rate, [0.3] * 6 + [0.05] * 4, rtol=1e-5)
    assert_total_gain(tree_inner(model, X, y), model, 6)


@pytest.mark.parametrize("fmt", ["json", "ubj"])
@pytest.mark.parametrize("objective", ["reg:squarederror", "multi:softprob"])
def test_loaded_model_with_non_default_parameters(objective, fmt, data, tmp_path):
    """XGBoost saves no training parameters: eta and λ are read off the trees."""
    X, y = data
    model, target = fit(
        objective, X, y, learning_rate=0.07, reg_lambda=6.0, max_depth=4
    )
    path = tmp_path / f"model.{fmt}"
    model.save_model(path)
    booster = xgb.Booster(model_file=str(path))
    wrapper = type(model)()
    wrapper.load_model(path)
    expected = tree_inner(model, X, target)
    for loaded in (booster, wrapper):
        ens = read_ensemble(loaded)
        np.testing.assert_allclose(ens.learning_rate, 0.07, rtol=1e-5)
        assert ens.reg_lambda == pytest.approx(6.0, rel=1e-4)
        scores = tree_inner(loaded, X, target)
        assert_total_gain(scores, loaded, 6)
        np.testing.assert_allclose(scores, expected, rtol=1e-4)
        np.testing.assert_allclose(predecomp(loaded, X), predecomp(model, X), atol=1e-6)


def test_training_continued_with_another_learning_rate(data):
    X, y = data
    dtrain = xgb.DMatrix(X, label=y)
    first = xgb.train({"eta": 0.3, "max_depth": 3}, dtrain, 5)
    both = xgb.train({"eta": 0.05, "max_depth": 3}, dtrain, 5, xgb_model=first)
    np.testing.assert_allclose(
        read_ensemble(both).learning_rate, [0.3] * 5 + [0.05] * 5, rtol=1e-5
    )
    assert_total_gain(tree_inner(both, X, y), both, 6)
    assert_total_gain(tree_inner(both, X, y, attribution="predecomp"), both, 6)
