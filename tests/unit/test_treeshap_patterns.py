"""TreeSHAP by leaf patterns (the compiled path) against the boosters' own TreeSHAP.

Every round's values must equal XGBoost's ``pred_contribs`` of the model sliced to
that round and shap's TreeExplainer of it; the residual-weighted sums must equal
the booster path's (``SKL_TREEINNER_KERNEL=numpy``); where the pattern path
cannot run it must hand over to the booster's own TreeSHAP, never guess.
"""

import contextlib
import os
import warnings

import numpy as np
import pandas as pd
import pytest
import xgboost as xgb
from conftest import OBJECTIVES, fit, make_data, patterns_only
from hypothesis import given
from scipy import sparse
from test_properties import SETTINGS, make_model, params

from skl_treeinner import tree_inner
from skl_treeinner._kernels import _compiled as _kernels
from skl_treeinner._kernels import _row_blocks
from skl_treeinner._readers import read_model
from skl_treeinner._readers._xgboost import XGBoostReader

pytest.importorskip("skl_treeinner._kernels.cpu._residuals")
shap = pytest.importorskip("shap")

CASES = {
    "reg-nan": ("reg:squarederror", {}, 0.1),
    "binary": ("binary:logistic", {}, 0.05),
    "multi": ("multi:softprob", {}, 0.05),
    "poisson": ("count:poisson", {}, 0.0),
    "forest": ("reg:squarederror", {"num_parallel_tree": 2, "subsample": 0.8}, 0.05),
    "deep": ("reg:squarederror", {"max_depth": 7}, 0.05),
}


def _model(name, n=400, p=6):
    objective, params, nan = CASES[name]
    X, y = make_data(n=n, p=p, seed=31, nan_frac=nan)
    y = np.nan_to_num(y)
    model, _ = fit(objective, X[: n // 2], y[: n // 2], **params)
    target = OBJECTIVES[objective][1](y[n // 2 :])
    return model, X[n // 2 :], target


def _reference(monkeypatch, fn):
    with monkeypatch.context() as m:
        m.setenv(_kernels.ENV_VAR, "numpy")
        return fn()


@pytest.mark.parametrize("name", list(CASES))
def test_scores_equal_the_booster_path(name, monkeypatch):
    model, X, y = _model(name)
    w = np.random.default_rng(0).uniform(0.2, 2.0, size=len(y))

    def run():
        return (
            tree_inner(model, X, y, attribution="treeshap", per_iteration=True),
            tree_inner(model, X, y, attribution="treeshap", sample_weight=w),
            tree_inner(model, X, y, attribution="treeshap", per_sample=True),
        )

    with warnings.catch_warnings(), patterns_only(XGBoostReader):
        warnings.simplefilter("error")  # no fallback warning: the rule routed right
        fast = run()
    reference = _reference(monkeypatch, run)
    for got, expected in zip(fast, reference, strict=True):
        np.testing.assert_allclose(
            got, expected, rtol=1e-5, atol=1e-6 * np.abs(expected).max()
        )


@pytest.mark.parametrize("name", ["reg-nan", "multi", "forest"])
def test_every_round_equals_xgboost_and_shap(name):
    model, X, _ = _model(name)
    reader = read_model(model)
    ens = reader.ensemble
    kernels = _kernels.kernels_for(ens, 1)
    leaves = reader.apply(X)
    booster = model.get_booster()
    dense = reader.treeshap_rows(X)
    for r in range(ens.n_iterations):
        sliced = booster[r : r + 1]
        own = sliced.predict(xgb.DMatrix(X), pred_contribs=True)
        own = own.reshape(len(X), ens.n_outputs, -1)[:, :, :-1]
        by_shap = np.asarray(shap.TreeExplainer(sliced).shap_values(X))
        by_shap = by_shap.reshape(own.shape) if by_shap.ndim == 2 else by_shap
        if by_shap.shape != own.shape:
            by_shap = by_shap.transpose(0, 2, 1)
        for k in range(ens.n_outputs):
            # A residual of 1 on the trees of round r and output k, 0 elsewhere:
            # the per-row sums are that round's TreeSHAP values for output k.
            indicator = (ens.tree_iteration == r) & (ens.tree_group == k)
            residual = np.tile(indicator.astype(float), (len(X), 1))
            phi = kernels.treeshap_terms(dense, leaves, residual, per_row=True)
            np.testing.assert_allclose(phi, own[:, k], atol=2e-6)
            np.testing.assert_allclose(phi, by_shap[:, k], atol=2e-6)


def test_missing_value_other_than_nan_and_pandas_input(monkeypatch):
    X, y = make_data(n=400, p=5, seed=32)
    X = np.round(X, 1)  # many exact zeros
    model = xgb.XGBRegressor(n_estimators=10, max_depth=3, missing=0.0, n_jobs=1)
    model.fit(X[:200], y[:200])
    frame = pd.DataFrame(X[200:], columns=[f"c{i}" for i in range(5)])
    frame["c1"] = frame["c1"].astype("float32")
    frame["c2"] = (frame["c2"] > 0).astype(int)  # an int column
    model2 = xgb.XGBRegressor(n_estimators=10, max_depth=3, n_jobs=1)
    model2.fit(frame, y[200:])
    for m, data in ((model, X[200:]), (model2, frame)):
        with patterns_only(XGBoostReader):
            fast = tree_inner(m, data, y[200:], attribution="treeshap", per_sample=True)
        ref = _reference(
            monkeypatch,
            lambda m=m, data=data: tree_inner(
                m, data, y[200:], attribution="treeshap", per_sample=True
            ),
        )
        np.testing.assert_allclose(fast, ref, rtol=1e-5, atol=1e-6)


def test_inputs_and_models_the_rule_does_not_cover_use_the_booster(monkeypatch):
    X, y = make_data(n=300, p=4, seed=33)
    model = xgb.XGBRegressor(n_estimators=5, max_depth=3, n_jobs=1).fit(X, y)
    reader = read_model(model)
    assert reader.has_treeshap_rows(X)
    assert not reader.has_treeshap_rows(sparse.csr_matrix(X))
    assert not reader.has_treeshap_rows(xgb.DMatrix(X))
    side = pd.Categorical(np.where(X[:, 1] > 0, "pos", "neg"))
    frame = pd.DataFrame({"a": X[:, 0], "b": side})
    cat_model = xgb.XGBRegressor(
        n_estimators=5, max_depth=3, enable_categorical=True, tree_method="hist"
    ).fit(frame, 3.0 * (X[:, 1] > 0) + 0.1 * X[:, 0])
    assert read_model(cat_model).ensemble.split_rule is None
    # Sparse input: the booster's own TreeSHAP, the same numbers.
    fast = tree_inner(model, sparse.csr_matrix(X), y, attribution="treeshap")
    ref = _reference(
        monkeypatch, lambda: tree_inner(model, X, y, attribution="treeshap")
    )
    np.testing.assert_allclose(fast, ref, rtol=1e-5)


@pytest.mark.slow
def test_paths_over_many_features_equal_xgboost_per_round():
    # Depth-14 trees on 14 columns: paths split on up to 14 distinct features,
    # beyond what the tables take (_kernels.cpu._treeshap._dense): their rows are sorted
    # by pattern and each pattern evaluated once. XGBoost's TreeSHAP refused.
    X, y = make_data(n=600, p=14, seed=34)
    y = y + X @ np.linspace(1, 2, 14)
    model = xgb.XGBRegressor(
        n_estimators=4, max_depth=14, min_child_weight=0, reg_lambda=0.01, n_jobs=1
    ).fit(X, y)
    reader = read_model(model)
    ens = reader.ensemble
    kernels = _kernels.kernels_for(ens, 1)
    leaves = reader.apply(X)
    sizes = []
    for t in range(ens.n_trees):
        lo, hi = ens.tree_offsets[t], ens.tree_offsets[t + 1]
        for leaf in np.flatnonzero(ens.children_left[lo:hi] < 0) + lo:
            path, node = set(), ens.parent[leaf]
            while node >= 0:
                path.add(ens.feature[node])
                node = ens.parent[node]
            sizes.append(len(path))
    assert max(sizes) > 10  # leaves of the sorted route are there
    booster = model.get_booster()
    with patterns_only(XGBoostReader):
        for r in range(ens.n_iterations):
            own = booster[r : r + 1].predict(xgb.DMatrix(X), pred_contribs=True)
            residual = np.zeros((len(X), ens.n_trees))
            residual[:, r] = 1.0
            phi = kernels.treeshap_terms(
                reader.treeshap_rows(X), leaves, residual, per_row=True
            )
            np.testing.assert_allclose(phi, own[:, :-1], atol=2e-5, rtol=1e-5)
            sums = kernels.treeshap_terms(
                reader.treeshap_rows(X), leaves, residual * y[:, None], per_row=False
            )
            np.testing.assert_allclose(sums[r], y @ own[:, :-1], rtol=1e-5, atol=1e-4)


def test_a_rule_that_misroutes_is_caught_and_the_booster_takes_over(monkeypatch):
    model, X, y = _model("reg-nan")
    expected = _reference(
        monkeypatch, lambda: tree_inner(model, X, y, attribution="treeshap")
    )
    ens = read_model(model).ensemble
    rule = ens.split_rule
    broken = type(rule)(
        threshold=rule.threshold,
        missing_left=~rule.missing_left,  # NaN to the other side everywhere
        strict=rule.strict,
    )
    object.__setattr__(ens, "split_rule", broken)  # the cached ensemble
    try:
        with pytest.warns(UserWarning, match="another leaf than the booster"):
            got = tree_inner(model, X, y, attribution="treeshap")
    finally:
        object.__setattr__(ens, "split_rule", rule)
    np.testing.assert_allclose(got, expected, rtol=1e-5)


@SETTINGS
@given(params)
def test_patterns_equal_the_booster_path_property(prm):
    booster, X, y = make_model(prm)

    def run():
        return tree_inner(booster, X, y, attribution="treeshap", per_iteration=True)

    with patterns_only(XGBoostReader):
        fast = run()
    with _numpy_kernel():
        reference = run()
    scale = max(1.0, float(np.abs(reference).max()))
    np.testing.assert_allclose(fast, reference, rtol=1e-4, atol=1e-5 * scale)


@contextlib.contextmanager
def _numpy_kernel():
    before = os.environ.get(_kernels.ENV_VAR)
    os.environ[_kernels.ENV_VAR] = "numpy"
    try:
        yield
    finally:
        if before is None:
            del os.environ[_kernels.ENV_VAR]
        else:
            os.environ[_kernels.ENV_VAR] = before


@pytest.mark.slow
@pytest.mark.parametrize("per_row", [False, True])
def test_threads_split_the_trees_without_changing_the_numbers(per_row):
    X, y = make_data(n=4000, p=6, seed=35, nan_frac=0.05)
    model, _ = fit("multi:softprob", X[:2000], y[:2000], n_estimators=12)
    reader = read_model(model)
    ens = reader.ensemble
    leaves = reader.apply(X)
    residual = np.random.default_rng(0).normal(size=(len(X), ens.n_trees))
    dense = reader.treeshap_rows(X)
    one = _kernels.Kernels(ens, 1).treeshap_terms(dense, leaves, residual, per_row)
    three = _kernels.Kernels(ens, 3)
    if per_row:  # threads split the rows: each row's sum made in tree order
        assert len(_row_blocks.blocks(len(X), 3, 64)) == 3  # 3 row blocks
    else:
        per_thread = -(-_kernels.TREESHAP_PAIRS_PER_THREAD // len(X))
        assert len(_row_blocks.blocks(ens.n_trees, 3, per_thread)) == 3  # 3 tree blocks
    got = three.treeshap_terms(dense, leaves, residual, per_row)
    if per_row:  # the same numbers for any thread count (selector p-values)
        np.testing.assert_array_equal(got, one)
    np.testing.assert_allclose(got, one, rtol=1e-12, atol=1e-12)


def test_row_blocks_do_not_change_the_numbers(monkeypatch):
    # Rows go to the kernels in blocks (scratch memory); a block size that
    # splits the rows unevenly gives the same per-row values and sums.
    X, y = make_data(n=900, p=6, seed=36)
    model, _ = fit("reg:squarederror", X, y, n_estimators=8)
    reader = read_model(model)
    ens = reader.ensemble
    kernels = _kernels.kernels_for(ens, 1)
    leaves = reader.apply(X)
    residual = np.random.default_rng(1).normal(size=(len(X), ens.n_trees))
    dense = reader.treeshap_rows(X)

    def both():
        return [kernels.treeshap_terms(dense, leaves, residual, r) for r in (1, 0)]

    whole = both()
    monkeypatch.setattr(_kernels, "TREESHAP_ROW_BLOCK", 250)
    blocked = both()
    np.testing.assert_array_equal(blocked[0], whole[0])
    np.testing.assert_allclose(blocked[1], whole[1], rtol=1e-12, atol=1e-12)
