"""Bad input gets a clear error naming the problem and the fix."""

import numpy as np
import pandas as pd
import pytest
import xgboost as xgb
from conftest import assert_total_gain, fit, margin
from sklearn.ensemble import RandomForestRegressor
from sklearn.exceptions import NotFittedError

from skl_treeinner import global_importance, predecomp, read_ensemble, tree_inner
from skl_treeinner.exceptions import IdentityWarning


def test_unsupported_model_type(data):
    X, y = data
    rf = RandomForestRegressor(n_estimators=2).fit(X, y)
    with pytest.raises(TypeError, match=r"RandomForestRegressor.*Supported.*XGB"):
        tree_inner(rf, X, y)
    with pytest.raises(TypeError, match="Supported"):
        predecomp("not a model", X)


@pytest.mark.parametrize(
    "objective",
    ["reg:absoluteerror", "reg:quantileerror", "rank:pairwise", "binary:hinge"],
)
def test_unsupported_objective(objective, data):
    X, y = data
    params = {"objective": objective}
    label = (y > 0).astype(float) if objective != "reg:absoluteerror" else y
    if objective == "reg:quantileerror":
        params["quantile_alpha"] = 0.5
        label = y
    dtrain = xgb.DMatrix(X, label=label)
    if objective.startswith("rank"):
        dtrain.set_group([len(y)])
    booster = xgb.train(params, dtrain, num_boost_round=2)
    with pytest.raises(ValueError, match=rf"{objective}.*Supported objectives.*"):
        tree_inner(booster, X, label)


def test_dart_and_gblinear_are_refused(data):
    X, y = data
    for booster, msg in [("dart", "dropout"), ("gblinear", "no trees")]:
        model = xgb.XGBRegressor(booster=booster, n_estimators=3).fit(X, y)
        with pytest.raises(ValueError, match=msg):
            predecomp(model, X)


def test_unfitted_model(data):
    X, y = data
    with pytest.raises(NotFittedError):
        tree_inner(xgb.XGBRegressor(), X, y)


def test_l1_regularisation_warns_and_keeps_local_accuracy(data):
    X, y = data
    model, target = fit("reg:squarederror", X, y, reg_alpha=5.0)
    with pytest.warns(IdentityWarning, match=r"reg_alpha=5.*Prop\. 3") as record:
        values, bias = predecomp(model, X, return_bias=True)
    assert record[0].filename == __file__  # points at the caller's line
    np.testing.assert_allclose(values.sum(1) + bias, margin(model, X), atol=1e-5)
    with pytest.warns(IdentityWarning):
        scores = tree_inner(model, X, target)
    # The warning is honest: total gain is no longer reproduced.
    with pytest.raises(AssertionError):
        assert_total_gain(scores, model, 6)


def test_binding_max_delta_step_warns(data):
    X, y = data
    model, _ = fit("reg:squarederror", X, 10 * y, max_delta_step=0.5)
    with pytest.warns(IdentityWarning, match="max_delta_step=0.5.*clipped"):
        values, bias = predecomp(model, X, return_bias=True)
    np.testing.assert_allclose(values.sum(1) + bias, margin(model, X), atol=1e-4)


def test_monotone_constraints_warn(data):
    X, y = data
    model, _ = fit("reg:squarederror", X, y, monotone_constraints=(1, 0, 0, 0, 0, 0))
    with pytest.warns(IdentityWarning, match="monotone_constraints"):
        read_ensemble(model)


def test_lambda_changed_between_fits_is_refused(data):
    X, y = data
    first = xgb.train(
        {"eta": 0.3, "lambda": 1.0, "max_depth": 3}, xgb.DMatrix(X, label=y), 5
    )
    both = xgb.train(
        {"eta": 0.3, "lambda": 20.0, "max_depth": 3},
        xgb.DMatrix(X, label=y),
        5,
        xgb_model=first,
    )
    with pytest.raises(ValueError, match="reg_lambda changed between training"):
        tree_inner(both, X, y)


def test_loaded_l1_model_is_refused_not_misread(data, tmp_path):
    # A loaded model keeps no reg_alpha, so no warning can be given: the
    # statistics must be recognised as not ℓ2 and refused.
    X, y = data
    model, _ = fit("reg:squarederror", X, 5 * y, reg_alpha=20.0, max_depth=4)
    model.save_model(tmp_path / "m.json")
    loaded = xgb.Booster(model_file=str(tmp_path / "m.json"))
    with pytest.raises(ValueError, match="loaded from a file"):
        tree_inner(loaded, X, 5 * y)


def test_multi_output_trees_are_refused(data):
    X, y = data
    Y = np.column_stack([y, -y])
    model = xgb.XGBRegressor(
        n_estimators=2, tree_method="hist", multi_strategy="multi_output_tree"
    ).fit(X, Y)
    with pytest.raises(ValueError, match="[Mm]ulti"):
        predecomp(model, X)


@pytest.mark.parametrize(
    ("bad_y", "match"),
    [
        (lambda y: np.where(np.arange(len(y)) == 3, np.nan, y), r"NaN.*rows \[3\]"),
        (lambda y: np.where(np.arange(len(y)) == 0, np.inf, y), "infinite"),
        (lambda y: y[:-1], "y has 399 rows but X has 400"),
        (lambda y: np.column_stack([y, y]), r"1-D.*\(400, 2\)"),
        (lambda y: y.astype(str), "numeric"),
        (lambda y: None, "y is required"),
    ],
    ids=["nan", "inf", "length", "shape", "strings", "none"],
)
def test_bad_regression_target(bad_y, match, data):
    X, y = data
    model, _ = fit("reg:squarederror", X, y)
    with pytest.raises(ValueError, match=match):
        tree_inner(model, X, bad_y(y))


def test_column_vector_target_is_accepted(data):
    X, y = data
    model, _ = fit("reg:squarederror", X, y)
    np.testing.assert_allclose(
        tree_inner(model, X, y[:, None]), tree_inner(model, X, y)
    )


def test_bad_classification_target(data):
    X, y = data
    model, target = fit("multi:softprob", X, y)
    with pytest.raises(ValueError, match="NaN"):
        tree_inner(model, X, np.where(target == 2, np.nan, target))
    with pytest.raises(ValueError, match=r"labels \[7\].*classes are \[0, 1, 2\]"):
        tree_inner(model, X, np.where(target == 2, 7, target))
    booster = model.get_booster()
    with pytest.raises(ValueError, match=r"integers in \[0, 3\)"):
        tree_inner(booster, X, target + 0.5)
    bin_model, bin_target = fit("binary:logistic", X, y)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        tree_inner(bin_model.get_booster(), X, bin_target * 2.0)
    gamma, g_target = fit("reg:gamma", X, y)
    with pytest.raises(ValueError, match="positive"):
        tree_inner(gamma, X, -g_target)


def test_wrong_features(data):
    X, y = data
    model, _ = fit("reg:squarederror", X, y)
    with pytest.raises(ValueError, match="X has 5 features.*trained on 6"):
        predecomp(model, X[:, :5])
    with pytest.raises(ValueError, match="2-D"):
        predecomp(model, X[0])
    df = pd.DataFrame(X, columns=list("abcdef"))
    named, _ = fit("reg:squarederror", df, y)
    with pytest.raises(ValueError, match=r"missing \['f'\], unexpected \['z'\]"):
        tree_inner(named, df.rename(columns={"f": "z"}), y)
    with pytest.raises(ValueError, match="different order"):
        tree_inner(named, df[list("bacdef")], y)
    # A plain array for a named model is fine: columns are taken in order.
    np.testing.assert_allclose(predecomp(named, X), predecomp(named, df))


def test_bad_sample_weight_and_attribution(data):
    X, y = data
    model, _ = fit("reg:squarederror", X, y)
    with pytest.raises(ValueError, match=r"sample_weight must have shape \(400,\)"):
        tree_inner(model, X, y, sample_weight=np.ones(3))
    with pytest.raises(ValueError, match="non-negative"):
        tree_inner(model, X, y, sample_weight=-np.ones(400))
    with pytest.raises(ValueError, match=r"attribution='gain'.*\['predecomp'"):
        tree_inner(model, X, y, attribution="gain")


def test_zero_rows(data):
    # Explaining no rows is an empty answer; scoring on no rows used to return
    # zeros, which read as "no feature helps" (issue 13): now an error.
    X, y = data
    model, target = fit("multi:softprob", X, y)
    assert predecomp(model, X[:0]).shape == (0, 6, 3)
    with pytest.raises(ValueError, match="X has no rows"):
        tree_inner(model, X[:0], target[:0])


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda m, X, y: tree_inner(m, X, y, per_iteration="yes"), "per_iteration"),
        (lambda m, X, y: tree_inner(m, X, y, verbose=-1), "verbose"),
        (lambda m, X, y: predecomp(m, X, return_bias=1.5), "return_bias"),
        (
            lambda m, X, y: global_importance(
                m, X, y, method="permutation", random_state="seed"
            ),
            "random_state",
        ),
    ],
)
def test_public_functions_refuse_bad_scalar_parameters(data, call, name):
    # validate_params-style checks, up front, naming the parameter.
    from sklearn.utils._param_validation import InvalidParameterError

    X, y = data
    model = xgb.XGBRegressor(n_estimators=3, max_depth=2).fit(X, y)
    with pytest.raises(InvalidParameterError, match=f"'{name}' parameter of"):
        call(model, X, y)


def test_identity_warning_points_at_the_callers_line(data):
    # The parameter checks do not wrap the public functions, so the warning
    # of a model that breaks Prop. 3 still names the user's file.
    X, y = data
    model = xgb.XGBRegressor(n_estimators=3, reg_alpha=1.0).fit(X, y)
    for call in (
        lambda: tree_inner(model, X, y),
        lambda: predecomp(model, X),
        lambda: global_importance(model, X, y, method="tree_inner"),
    ):
        with pytest.warns(IdentityWarning) as record:
            call()
        assert record[0].filename == __file__


def test_metadata_routing_errors_come_after_the_input_checks():
    # The selector routes fit's metadata once X and y are checked: a missing
    # y is named as such, not as metadata the booster did not request.
    import sklearn

    from skl_treeinner import TreeInnerSelector

    X = np.random.default_rng(0).normal(size=(60, 3))
    with sklearn.config_context(enable_metadata_routing=True):
        sel = TreeInnerSelector(xgb.XGBRegressor(n_estimators=2))
        with pytest.raises(ValueError, match="requires y"):
            sel.fit(X, None, sample_weight=np.ones(60))
