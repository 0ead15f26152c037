"""TreeSHAP by leaf patterns for LightGBM against LightGBM's own ``pred_contrib``.

LightGBM's split rule (``x <= threshold`` in double, NaN by the split's
missing type) and its TreeSHAP's covers (training row counts, not hessians)
are read into ``TreeEnsemble.split_rule``; every round's values must equal
``pred_contrib`` of that round, and the residual-weighted sums the booster
path's (``SKL_TREEINNER_KERNEL=numpy``), with the booster's TreeSHAP refused.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import patterns_only

from skl_treeinner import tree_inner
from skl_treeinner._kernels import _compiled as _kernels
from skl_treeinner._readers import read_model

lgb = pytest.importorskip("lightgbm")
pytest.importorskip("skl_treeinner._kernels.cpu._residuals")
from skl_treeinner._readers._lightgbm import LightGBMReader  # noqa: E402


def _data(n=600, p=6, seed=0, nan=0.1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    X[rng.random(X.shape) < nan] = np.nan
    y = np.nan_to_num(X[:, 0]) + 0.5 * np.nan_to_num(X[:, 1]) ** 2
    return X, y + rng.normal(size=n)


def _models():
    X, y = _data()
    half = len(y) // 2
    params = dict(n_estimators=15, num_leaves=8, min_child_samples=5, verbose=-1)
    yield "regression", lgb.LGBMRegressor(**params).fit(X[:half], y[:half]), X, y
    labels = (y > np.median(y)).astype(int)
    model = lgb.LGBMClassifier(**params).fit(X[:half], labels[:half])
    yield "binary", model, X, labels
    classes = np.digitize(y, np.quantile(y, [0.33, 0.66]))
    model = lgb.LGBMClassifier(**params).fit(X[:half], classes[:half])
    yield "multiclass", model, X, classes
    # Trained without missing values (missing type None: NaN is read as 0),
    # scored on rows with them.
    clean, y_clean = _data(nan=0.0, seed=1)
    model = lgb.LGBMRegressor(**params).fit(clean[:half], y_clean[:half])
    yield "nan-as-zero", model, X, y


@pytest.mark.slow
@pytest.mark.parametrize("case", range(4))
def test_every_round_equals_lightgbm_pred_contrib(case):
    name, model, X, _ = list(_models())[case]
    rows = X[len(X) // 2 :]
    reader = read_model(model)
    ens = reader.ensemble
    assert ens.split_rule is not None, name
    kernels = _kernels.kernels_for(ens, 1)
    leaves, dense = reader.apply(rows), reader.treeshap_rows(rows)
    for r in range(ens.n_iterations):
        own = model.booster_.predict(
            rows, pred_contrib=True, start_iteration=r, num_iteration=1
        )
        own = np.asarray(own).reshape(len(rows), ens.n_outputs, -1)[:, :, :-1]
        for k in range(ens.n_outputs):
            indicator = (ens.tree_iteration == r) & (ens.tree_group == k)
            residual = np.tile(indicator.astype(float), (len(rows), 1))
            phi = kernels.treeshap_terms(dense, leaves, residual, per_row=True)
            np.testing.assert_allclose(phi, own[:, k], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", range(4))
def test_scores_equal_the_booster_path(case, monkeypatch):
    name, model, X, y = list(_models())[case]
    rows, target = X[len(X) // 2 :], y[len(y) // 2 :]
    frame = pd.DataFrame(rows, columns=[f"Column_{i}" for i in range(X.shape[1])])
    w = np.random.default_rng(0).uniform(0.2, 2.0, size=len(target))

    def run(data):
        return (
            tree_inner(model, data, target, attribution="treeshap", per_iteration=True),
            tree_inner(model, data, target, attribution="treeshap", sample_weight=w),
            tree_inner(model, data, target, attribution="treeshap", per_sample=True),
        )

    with warnings.catch_warnings(), patterns_only(LightGBMReader):
        warnings.simplefilter("error")  # no hand-over warning: the rule routed right
        fast = run(rows)
        fast_frame = run(frame)
    with monkeypatch.context() as m:
        m.setenv(_kernels.ENV_VAR, "numpy")
        reference = run(rows)
    for got, got_frame, expected in zip(fast, fast_frame, reference, strict=True):
        scale = np.abs(expected).max()
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12 * scale)
        np.testing.assert_array_equal(got, got_frame)


def test_categorical_and_zero_as_missing_splits_use_lightgbms_own(monkeypatch):
    X, y = _data(nan=0.0)
    params = dict(n_estimators=5, num_leaves=6, min_child_samples=5, verbose=-1)
    zeros = np.round(X, 0)
    zero_model = lgb.LGBMRegressor(zero_as_missing=True, **params).fit(zeros, y)
    frame = pd.DataFrame({"a": X[:, 0], "b": pd.Categorical(X[:, 1] > 0)})
    cat_model = lgb.LGBMRegressor(min_data_per_group=5, cat_smooth=1, **params)
    cat_model.fit(frame, 3.0 * (X[:, 1] > 0) + X[:, 0])
    for model, data in ((zero_model, zeros), (cat_model, frame)):
        reader = read_model(model)
        assert reader.ensemble.split_rule is None
        assert not reader.has_treeshap_rows(data)
        fast = tree_inner(model, data, y, attribution="treeshap")
        with monkeypatch.context() as m:
            m.setenv(_kernels.ENV_VAR, "numpy")
            ref = tree_inner(model, data, y, attribution="treeshap")
        np.testing.assert_allclose(fast, ref, rtol=1e-9)


def test_deep_leaf_wise_trees_equal_lightgbm_without_its_treeshap():
    # Leaf-wise trees on 16 columns: some paths split on more than
    # MAX_DENSE_FEATURES of them, evaluated pattern by pattern as they occur
    # (and smaller leaves too, where sorting the rows costs less).
    rng = np.random.default_rng(5)
    X = rng.normal(size=(3000, 16))
    X[rng.random(X.shape) < 0.05] = np.nan
    y = np.nan_to_num(X) @ np.linspace(1, 2, 16) + rng.normal(size=3000)
    model = lgb.LGBMRegressor(
        n_estimators=12, num_leaves=64, min_child_samples=2, verbose=-1
    ).fit(X[:2000], y[:2000])
    rows, target = X[2000:], y[2000:]
    reader = read_model(model)
    ens = reader.ensemble
    depth = []
    for leaf in np.flatnonzero(ens.is_leaf):
        path, node = set(), ens.parent[leaf]
        while node >= 0:
            path.add(ens.feature[node])
            node = ens.parent[node]
        depth.append(len(path))
    assert max(depth) > 10
    kernels = _kernels.kernels_for(ens, 1)
    leaves = reader.apply(rows)
    with patterns_only(LightGBMReader):
        for r in (0, 5, 11):
            own = model.booster_.predict(
                rows, start_iteration=r, num_iteration=1, pred_contrib=True
            )[:, :-1]
            residual = np.zeros((len(rows), ens.n_trees))
            residual[:, r] = 1.0
            phi = kernels.treeshap_terms(
                reader.treeshap_rows(rows), leaves, residual, per_row=True
            )
            np.testing.assert_allclose(phi, own, rtol=1e-6, atol=1e-9)
        fast = tree_inner(
            model, rows, target, attribution="treeshap", per_iteration=True
        )
    with pytest.MonkeyPatch.context() as m:
        m.setenv(_kernels.ENV_VAR, "numpy")
        ref = tree_inner(
            model, rows, target, attribution="treeshap", per_iteration=True
        )
    np.testing.assert_allclose(fast, ref, rtol=1e-7, atol=1e-10 * np.abs(ref).max())
