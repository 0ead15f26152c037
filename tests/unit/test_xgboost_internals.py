"""Pins on the XGBoost internals the reader relies on.

If a release changes one of these, these tests fail with a message naming it.
"""

import json

import numpy as np
import pytest
import xgboost as xgb
from conftest import fit

from skl_treeinner import read_ensemble
from skl_treeinner._readers import _ubjson

TREE_KEYS = {
    "left_children",
    "right_children",
    "split_indices",
    "split_conditions",
    "sum_hessian",
    "base_weights",
    "tree_param",
}


@pytest.mark.parametrize("tree_method", ["exact", "hist", "approx"])
def test_model_layout(tree_method, data):
    X, y = data
    model, _ = fit("multi:softprob", X, y, tree_method=tree_method, n_estimators=3)
    raw = json.loads(model.get_booster().save_raw("json"))
    learner = raw["learner"]
    assert "base_score" in learner["learner_model_param"]
    gbm = learner["gradient_booster"]["model"]
    for key in ("trees", "tree_info", "iteration_indptr", "gbtree_model_param"):
        assert key in gbm, f"XGBoost model JSON lost {key!r}"
    assert gbm["iteration_indptr"] == [0, 3, 6, 9]
    assert gbm["tree_info"] == [0, 1, 2] * 3
    missing = TREE_KEYS - set(gbm["trees"][0])
    assert not missing, f"XGBoost tree JSON lost {missing}"
    config = json.loads(model.get_booster().save_config())
    tparam = config["learner"]["gradient_booster"]["tree_train_param"]
    for key in ("eta", "lambda", "alpha", "max_delta_step", "monotone_constraints"):
        assert key in tparam, f"XGBoost config lost tree_train_param.{key}"


@pytest.mark.parametrize("tree_method", ["exact", "hist", "approx"])
def test_inner_base_weights_are_unshrunk_regularised_values(tree_method, data):
    """eta * base_weights at inner nodes equals p̂ from the Eq. 23 recurrence."""
    X, y = data
    model, _ = fit("binary:logistic", X, y, tree_method=tree_method)
    ens = read_ensemble(model)
    raw = _ubjson.loads(bytes(model.get_booster().save_raw("ubj")))
    trees = raw["learner"]["gradient_booster"]["model"]["trees"]
    bw = np.concatenate([t["base_weights"] for t in trees]).astype(np.float64)
    inner = ~ens.is_leaf
    np.testing.assert_allclose(ens.value[inner], 0.3 * bw[inner], rtol=1e-4, atol=1e-7)


def test_pred_leaf_gives_node_ids(data):
    X, y = data
    model, _ = fit("reg:squarederror", X, y, n_estimators=4)
    leaves = model.get_booster().predict(xgb.DMatrix(X), pred_leaf=True)
    assert leaves.shape == (len(X), 4)
    ens = read_ensemble(model)
    glob = leaves.astype(np.int64) + ens.tree_offsets[:-1]
    assert ens.is_leaf[glob].all()
    # The leaf values sum to the margin: routing and values agree.
    np.testing.assert_allclose(
        ens.value[glob].sum(axis=1) + ens.intercept[0],
        model.predict(X, output_margin=True),
        atol=1e-5,
    )


def test_parallel_trees_are_shrunk_by_eta_over_count(data):
    X, y = data
    model, _ = fit("reg:squarederror", X, y, num_parallel_tree=4, learning_rate=0.4)
    assert read_ensemble(model).learning_rate == pytest.approx(0.1)
