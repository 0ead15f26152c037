"""GPU-trained XGBoost models (issue 15): run only where a GPU is visible.

CI has no GPU, so every test here skips there; on a machine with one they
check what the issue found wrong: the leaves of a freshly trained GPU booster
with missing values, local accuracy (Prop. 1) to float32 precision, and the
selector choosing on a GPU booster what it chooses on the CPU one; and
TreeSHAP TreeInner of a GPU booster (on the GPU with the gpu extra).
"""

import json
import warnings

import numpy as np
import pytest
import xgboost as xgb

from skl_treeinner import TreeInnerSelector, predecomp, tree_inner
from skl_treeinner._kernels import _device as _device_kernels
from skl_treeinner._readers import read_model


def _gpu_available() -> bool:
    if not xgb.build_info().get("USE_CUDA"):
        return False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "No visible GPU is found"
        booster = xgb.train(
            {"device": "cuda", "tree_method": "hist"},
            xgb.DMatrix(np.arange(8.0).reshape(4, 2), label=[0, 1, 0, 1]),
            1,
        )
    device = json.loads(booster.save_config())["learner"]["generic_param"]["device"]
    return device.startswith("cuda")


pytestmark = pytest.mark.skipif(not _gpu_available(), reason="no GPU visible")


def _data(n=3000, seed=0):
    # The reproduction: 12 normal columns, a 40-level integer one, 5 % NaN.
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 12))
    X[:, 11] = rng.integers(0, 40, size=n)
    y = X[:, 0] + 0.5 * X[:, 1] * X[:, 2] + rng.normal(size=n)
    X[rng.random(X.shape) < 0.05] = np.nan
    return X, y


@pytest.mark.parametrize(
    "objective", ["reg:squarederror", "binary:logistic", "multi:softprob"]
)
def test_local_accuracy_on_a_fresh_gpu_booster(objective):
    X, y = _data()
    if objective == "binary:logistic":
        y = (y > 0).astype(float)
    elif objective == "multi:softprob":
        y = np.digitize(y, [-0.5, 0.5]).astype(float)
    params = dict(
        objective=objective, tree_method="hist", device="cuda", max_depth=5,
        eta=0.2, reg_lambda=2.0, seed=1,
    )  # fmt: skip
    if objective == "multi:softprob":
        params["num_class"] = 3
    booster = xgb.train(params, xgb.DMatrix(X, label=y), 60)
    # No predict before: the case where pred_leaf misrouted (xgboost 3.4.1).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # a repaired routing warns
        values, bias = predecomp(booster, X, return_bias=True)
    margin = booster.predict(xgb.DMatrix(X), output_margin=True)
    total = values.sum(axis=1) + bias
    scale = max(1.0, float(np.abs(margin).max()))
    np.testing.assert_allclose(total, margin, atol=1e-5 * scale)


def test_selector_on_a_gpu_booster_selects_as_on_the_cpu():
    X, y = _data(n=2000, seed=1)
    chosen = {}
    for device in ("cpu", "cuda"):
        est = xgb.XGBRegressor(
            n_estimators=200, learning_rate=0.05, max_depth=4, device=device,
            random_state=0,
        )  # fmt: skip
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            sel = TreeInnerSelector(est, random_state=0).fit(X, y)
        chosen[device] = sel.get_support(indices=True).tolist()
    assert chosen["cuda"] == chosen["cpu"]
    assert 0 in chosen["cuda"]


def test_tree_inner_on_a_gpu_booster_is_checked():
    X, y = _data()
    est = xgb.XGBRegressor(n_estimators=60, max_depth=5, device="cuda")
    est.fit(X[:1500], y[:1500])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        z = tree_inner(est, X[1500:], y[1500:], per_sample=True)
    np.testing.assert_allclose(
        z.sum(axis=0), tree_inner(est, X[1500:], y[1500:]), rtol=1e-9
    )


def test_treeshap_tree_inner_on_a_gpu_booster():
    # Where numba-cuda is installed (the gpu extra) the sums run on the GPU,
    # checked against the CPU kernels first: a disagreement would warn.
    X, y = _data()
    est = xgb.XGBRegressor(n_estimators=60, max_depth=5, device="cuda")
    est.fit(X[:1500], y[:1500])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("error", RuntimeWarning)
        for _ in range(2):  # the first call checks, the second is the device's
            z = tree_inner(
                est, X[1500:], y[1500:], attribution="treeshap", per_sample=True
            )
            total = tree_inner(est, X[1500:], y[1500:], attribution="treeshap")
    np.testing.assert_allclose(z.sum(axis=0), total, rtol=1e-9)
    if _device_kernels.cuda_ready():  # the gpu extra: the device ran, and agreed
        device = _device_kernels._CACHE[read_model(est).ensemble]
        # The PreDecomp sums may be there too: the test before fits the same
        # model, and models are read (and put on the device) by their bytes.
        trusted = {k: device.trusted.get(k) for k in ("treeshap", "treeshap_rows")}
        assert trusted == {"treeshap": True, "treeshap_rows": True}


def test_treeshap_terms_of_a_gpu_booster_are_gputreeshaps_values():
    # One round of squared error from base_score b: each row's term is
    # (y_i - b) / α times the row's TreeSHAP, XGBoost's GPUTreeShap's own.
    X, y = _data(n=2000, seed=2)
    est = xgb.XGBRegressor(
        n_estimators=1, max_depth=6, learning_rate=0.5, base_score=0.25,
        device="cuda",
    ).fit(X, y)  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("error", RuntimeWarning)
        for _ in range(2):
            terms = tree_inner(est, X, y, attribution="treeshap", per_sample=True)
    contribs = est.get_booster().predict(xgb.DMatrix(X), pred_contribs=True)
    expected = contribs[:, :-1] * ((y - 0.25) / 0.5)[:, None]
    np.testing.assert_allclose(terms, expected, rtol=1e-4, atol=1e-5)
