"""GPU models' residual sums on the device (issue 42, item 4).

CI has no GPU: there these tests run the device kernel on numba's CUDA
simulator (``NUMBA_ENABLE_CUDASIM=1``, set by conftest.py where no NVIDIA
driver is installed), so they check its logic, not its speed. On a machine
with a GPU and ``numba-cuda`` they run on the GPU. The reference is the CPU
kernels, which tests/unit/test_kernels.py holds to the numpy path, and, through
them, XGBoost's own total gain.
"""

import warnings

import numpy as np
import pytest
import xgboost as xgb
from conftest import make_data

from skl_treeinner import TreeInnerSelector, tree_inner
from skl_treeinner._kernels import _compiled as _kernels
from skl_treeinner._kernels import _device as _device_kernels
from skl_treeinner._readers import _base, read_model
from skl_treeinner._readers._xgboost import XGBoostReader

pytest.importorskip("skl_treeinner._kernels.cpu._residuals")
if not _device_kernels.cuda_ready():
    pytest.skip("numba's CUDA target cannot run here", allow_module_level=True)

lgb = pytest.importorskip("lightgbm")

#: The GPU kernels, on numba's CUDA simulator where no GPU is visible (CI's
#: lowest-versions environment leaves them out: see .ci/run).
pytestmark = pytest.mark.device


def _models():
    X, y = make_data(n=300, p=5, seed=3, nan_frac=0.05)
    y3 = np.digitize(y, [0.0, 1.5])
    common = dict(n_estimators=8, max_depth=3, n_jobs=1)
    return {
        "xgb-reg": (xgb.XGBRegressor(**common).fit(X[:150], y[:150]), X, y),
        "xgb-softprob": (xgb.XGBClassifier(**common).fit(X[:150], y3[:150]), X, y3),
        "xgb-poisson": (
            xgb.XGBRegressor(objective="count:poisson", max_delta_step=0, **common).fit(
                X[:150], np.floor(np.exp(y[:150] / 3))
            ),
            X,
            np.floor(np.exp(y / 3)),
        ),
        # Two trees per iteration and output.
        "xgb-forest": (
            xgb.XGBRegressor(num_parallel_tree=2, subsample=0.8, **common).fit(
                X[:150], y[:150]
            ),
            X,
            y,
        ),
        # Pruned: XGBoost keeps the pruned nodes, which no path reaches.
        "xgb-pruned": (
            xgb.XGBRegressor(tree_method="exact", gamma=1.0, **common).fit(
                X[:150], y[:150]
            ),
            X,
            y,
        ),
        "lgb-ova": (
            lgb.LGBMClassifier(
                objective="multiclassova", n_estimators=5, num_leaves=6, verbose=-1
            ).fit(X[:150], y3[:150]),
            X,
            y3,
        ),
    }


MODELS = _models()


def _leaves(name):
    model, X, y = MODELS[name]
    reader = read_model(model)
    target = reader.encode_target(np.asarray(y)) if hasattr(model, "classes_") else y
    w = np.random.default_rng(1).uniform(0.2, 3.0, size=X.shape[0])
    host = _kernels.kernels_for(reader.ensemble, 1)
    return host, reader.apply(X), np.asarray(target, dtype=float), w


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("name", list(MODELS))
def test_device_residual_sums_equal_the_cpu_kernels(name, weighted):
    host, leaves, y, w = _leaves(name)
    w = w if weighted else None
    device = _device_kernels._OnDevice(host)
    got = device.run("leaf_sums", leaves, y, w)
    np.testing.assert_allclose(got, host.leaf_sums(leaves, y, w), rtol=1e-9, atol=1e-12)
    # Summed in a fixed order: the same call gives the same bits.
    np.testing.assert_array_equal(device.run("leaf_sums", leaves, y, w), got)
    got = device.run("row_terms", leaves, y, w)
    np.testing.assert_allclose(got, host.row_terms(leaves, y, w), rtol=1e-9, atol=1e-12)


def _on_gpu(monkeypatch, calls):
    """Make XGBoost models look GPU-trained, and count the device's launches."""
    monkeypatch.setattr(XGBoostReader, "on_gpu", lambda self: True)
    real = _device_kernels.DeviceKernels._on_device

    def counted(self, method, *args):
        calls.append(method)
        return real(self, method, *args)

    monkeypatch.setattr(_device_kernels.DeviceKernels, "_on_device", counted)


@pytest.mark.parametrize("name", ["xgb-reg", "xgb-softprob"])
def test_a_gpu_model_is_scored_on_the_device(name, monkeypatch):
    model, X, y = MODELS[name]
    expected = tree_inner(model, X, y)
    rows = tree_inner(model, X, y, per_sample=True)
    calls = []
    _on_gpu(monkeypatch, calls)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a distrusted device warns
        for _ in range(2):  # the first call checks, the second is the device's
            np.testing.assert_allclose(tree_inner(model, X, y), expected, rtol=1e-9)
            got = tree_inner(model, X, y, per_sample=True)
            np.testing.assert_allclose(got, rows, rtol=1e-9, atol=1e-12)
    assert calls == ["leaf_sums", "row_terms"] * 2


def test_chunks_weights_and_a_late_check(monkeypatch):
    # Several chunks, strided weights, and no nonzero term in the first chunk
    # (zero weights): the device is checked on the first chunk that has one.
    model, _, _ = MODELS["xgb-reg"]
    X, y = make_data(n=1500, p=5, seed=9)
    w = np.random.default_rng(2).uniform(0.5, 2.0, size=(1500, 2))[:, 0]
    w[:600] = 0.0
    monkeypatch.setattr(_base, "_CHUNK_ELEMENTS", 2048)  # 256 rows of 8 trees
    expected = tree_inner(model, X, y, sample_weight=w)
    rows = tree_inner(model, X, y, sample_weight=w, per_sample=True)
    calls = []
    _on_gpu(monkeypatch, calls)
    # A device not yet checked for this model (another test may have checked
    # it in this process: the model is shared).
    monkeypatch.setattr(_device_kernels, "_CACHE", type(_device_kernels._CACHE)())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(2):  # checked on the second chunk, then the device's
            got = tree_inner(model, X, y, sample_weight=w)
            np.testing.assert_allclose(got, expected, rtol=1e-9)
            got = tree_inner(model, X, y, sample_weight=w, per_sample=True)
            np.testing.assert_allclose(got, rows, rtol=1e-9, atol=1e-12)
    # Chunks of 1024 rows (4 x 256): the first's checked rows (the first 513)
    # have only zero weights, so the second chunk is the first checked (one
    # launch each); once trusted, the device scores both chunks.
    assert calls == ["leaf_sums", "row_terms"] + ["leaf_sums"] * 2 + ["row_terms"] * 2


def test_numba_cudas_small_grid_warning_neither_reaches_users_nor_fails(monkeypatch):
    # numba-cuda warns of every launch of fewer than 128 blocks. On an H200,
    # under warnings as errors, that failed the launch and the device was
    # distrusted; without them users saw the warning on every small model.
    from numba.core.errors import NumbaPerformanceWarning

    model, X, y = MODELS["xgb-reg"]
    expected = tree_inner(model, X, y)
    real = _device_kernels._OnDevice.run

    def noisy(self, *args):
        warnings.warn(
            "\x1b[1mGrid size 1 will likely result in GPU under-utilization due "
            "to low occupancy.\x1b[0m",
            NumbaPerformanceWarning,
            stacklevel=2,
        )
        return real(self, *args)

    calls = []
    _on_gpu(monkeypatch, calls)
    monkeypatch.setattr(_device_kernels._OnDevice, "run", noisy)
    monkeypatch.setattr(_device_kernels, "_CACHE", type(_device_kernels._CACHE)())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(2):  # the check, then the device alone
            np.testing.assert_allclose(tree_inner(model, X, y), expected, rtol=1e-9)
    assert calls == ["leaf_sums"] * 2


def test_a_failing_device_leaves_the_model_on_the_cpu(monkeypatch):
    model, X, y = MODELS["xgb-reg"]
    expected = tree_inner(model, X, y)
    monkeypatch.setattr(XGBoostReader, "on_gpu", lambda self: True)

    def fail(self, *args):
        raise MemoryError("out of device memory")

    monkeypatch.setattr(_device_kernels._OnDevice, "run", fail)
    monkeypatch.setattr(_device_kernels, "_CACHE", type(_device_kernels._CACHE)())
    with pytest.warns(RuntimeWarning, match="failed.*out of device memory"):
        got = tree_inner(model, X, y)
    np.testing.assert_array_equal(got, expected)


def test_the_selector_on_a_gpu_model_chooses_as_on_the_cpu(monkeypatch):
    # The folds run in threads (the default n_jobs, on 2 cores or more): the
    # device takes one call at a time.
    X, y = make_data(n=500, p=6, seed=4)

    def fit():
        est = xgb.XGBRegressor(n_estimators=20, max_depth=3)
        return TreeInnerSelector(est, cv=3, random_state=0).fit(X, y)

    cpu = fit()
    calls = []
    _on_gpu(monkeypatch, calls)
    gpu = fit()
    assert "row_terms" in calls
    np.testing.assert_allclose(gpu.scores_, cpu.scores_, rtol=1e-9)
    np.testing.assert_allclose(gpu.pvalues_, cpu.pvalues_, rtol=1e-9, atol=1e-15)
    np.testing.assert_array_equal(gpu.get_support(), cpu.get_support())


def test_on_the_training_rows_the_device_gives_xgboosts_total_gain(monkeypatch):
    # Prop. 3 through the device: TreeInner on the training rows is XGBoost's
    # own total gain (its get_score), a number we did not compute.
    X, y = make_data(n=400, p=5, seed=8)
    booster = xgb.train(
        {"max_depth": 3, "eta": 0.3, "lambda": 1.0, "base_score": 0.5},
        xgb.DMatrix(X, label=y),
        10,
    )
    calls = []
    _on_gpu(monkeypatch, calls)
    scores = tree_inner(booster, X, y)
    gain = booster.get_score(importance_type="total_gain")
    own = np.array([gain.get(f"f{j}", 0.0) for j in range(X.shape[1])])
    np.testing.assert_allclose(scores, own, rtol=1e-5)
    assert calls


@pytest.mark.parametrize(
    "wrong", ["leaf_sums", "row_terms", "treeshap", "treeshap_rows"]
)
def test_a_device_that_disagrees_is_not_trusted(wrong, monkeypatch):
    # Each sum is checked on its own first rows: a device wrong in one only
    # is caught there, even after the other was trusted.
    model, X, y = MODELS["xgb-reg"]
    kwargs = {}
    if wrong.startswith("treeshap"):
        X, y, kwargs = X[:SHAP_ROWS], y[:SHAP_ROWS], dict(attribution="treeshap")
    expected = (
        tree_inner(model, X, y, **kwargs),
        tree_inner(model, X, y, per_sample=True, **kwargs),
    )
    monkeypatch.setattr(XGBoostReader, "on_gpu", lambda self: True)
    real = _device_kernels.DeviceKernels._on_device

    def off(self, method, *args):
        got = real(self, method, *args)
        return got * (1 + 1e-7) if method == wrong else got

    monkeypatch.setattr(_device_kernels.DeviceKernels, "_on_device", off)
    monkeypatch.setattr(_device_kernels, "_CACHE", type(_device_kernels._CACHE)())
    name = _device_kernels._NAMES[wrong]
    with pytest.warns(RuntimeWarning, match=f"{name} .*scored on the CPU") as record:
        got = (
            tree_inner(model, X, y, **kwargs),
            tree_inner(model, X, y, per_sample=True, **kwargs),
        )
    assert len(record) == 1
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-12, atol=1e-15)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once per model
        np.testing.assert_allclose(
            tree_inner(model, X, y, **kwargs), got[0], rtol=1e-12
        )


def test_models_the_device_cannot_take_stay_on_the_cpu(monkeypatch):
    host, _, _, _ = _leaves("xgb-reg")
    monkeypatch.setattr(_device_kernels, "cuda_ready", lambda: False)
    assert _device_kernels.device_kernels_for(host) is None
    monkeypatch.undo()
    monkeypatch.setattr("skl_treeinner._kernels.cuda._residuals.MAX_OUTPUTS", 2)
    softprob, _, _, _ = _leaves("xgb-softprob")
    assert _device_kernels.device_kernels_for(softprob) is None
    assert _device_kernels.device_kernels_for(host) is not None


def test_a_model_on_the_device_is_freed_with_it(monkeypatch):
    import gc
    import weakref

    monkeypatch.setattr(_base, "_READ_CACHE", type(_base._READ_CACHE)())
    monkeypatch.setattr(XGBoostReader, "on_gpu", lambda self: True)
    X, y = make_data(n=200, p=4, seed=1)
    model = xgb.XGBRegressor(n_estimators=3, max_depth=2).fit(X, y)
    tree_inner(model, X, y)
    ens = read_model(model).ensemble
    assert ens in _device_kernels._CACHE
    gone = weakref.ref(ens)
    del model, ens
    _base._READ_CACHE.clear()
    gc.collect()
    assert gone() is None


def test_without_numba_cuda_a_gpu_is_not_used(monkeypatch):
    # numba's own CUDA target (deprecated, and needing a CUDA toolkit of its
    # own) is not used: without the gpu extra, a GPU model is scored on the CPU.
    import sys

    from numba import config

    monkeypatch.setattr(config, "ENABLE_CUDASIM", 0)
    monkeypatch.setitem(sys.modules, "numba_cuda", None)  # not installed
    _device_kernels.cuda_ready.cache_clear()
    try:
        assert not _device_kernels.cuda_ready()
    finally:
        _device_kernels.cuda_ready.cache_clear()


def test_a_numba_cuda_that_cannot_compile_leaves_gpu_models_on_the_cpu(monkeypatch):
    # numba-cuda 0.30.4 with numpy 2.5 (seen on an H200): its first compilation
    # imports its overload of np.row_stack, which numpy 2.5 removed, so every
    # kernel fails. One warning names the versions and the fix; GPU models get
    # the CPU's numbers.
    from numba import cuda

    model, X, y = MODELS["xgb-reg"]
    expected = tree_inner(model, X, y)

    def broken(*args, **kwargs):
        raise AttributeError("module 'numpy' has no attribute 'row_stack'")

    calls = []
    _on_gpu(monkeypatch, calls)
    monkeypatch.setattr(cuda, "jit", broken)
    monkeypatch.setattr(_device_kernels, "_CACHE", type(_device_kernels._CACHE)())
    _device_kernels.cuda_ready.cache_clear()
    try:
        with pytest.warns(RuntimeWarning) as caught:
            got = tree_inner(model, X, y)
            np.testing.assert_array_equal(tree_inner(model, X, y), got)
        assert len(caught) == 1, [str(w.message) for w in caught]
        message = str(caught[0].message)
        assert f"with numpy {np.__version__}" in message
        assert "row_stack" in message and "skl-treeinner[gpu]" in message
    finally:
        _device_kernels.cuda_ready.cache_clear()
    np.testing.assert_array_equal(got, expected)
    assert calls == []


# TreeSHAP by leaf patterns on the device. The simulator runs every thread in
# Python, so these use the first 96 rows.
SHAP_ROWS = 64


def _shap_inputs(name):
    model, X, _ = MODELS[name]
    host, leaves, y, w = _leaves(name)
    X = read_model(model).treeshap_rows(X[:SHAP_ROWS])
    return host, X, leaves[:SHAP_ROWS], [y[:SHAP_ROWS], y[:SHAP_ROWS] + 1.0], w


# Only XGBoost models are read as GPU models (reader.on_gpu).
@pytest.mark.parametrize("name", [name for name in MODELS if name.startswith("xgb")])
def test_device_treeshap_equals_the_cpu_kernels(name):
    host, X, leaves, ys, w = _shap_inputs(name)
    device = _device_kernels._OnDevice(host)
    assert device.takes_shap(host, per_row=False)
    assert device.takes_shap(host, per_row=True)
    for weights in (w[:SHAP_ROWS], None) if name == "xgb-reg" else (w[:SHAP_ROWS],):
        for per_row in (False, True):
            got = device.run_treeshap(X, leaves, ys, weights, per_row)
            expected, rounds = host.treeshap_of_targets(X, leaves, ys, weights, per_row)
            assert rounds.size == 0
            np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)
            if not per_row:  # one owner per sum, rows in order: the same bits
                np.testing.assert_array_equal(
                    device.run_treeshap(X, leaves, ys, weights, per_row), got
                )


def test_device_treeshap_is_xgboosts_own(monkeypatch):
    # One round of squared error from base_score b: each row's term is
    # (y_i - b) / α times its TreeSHAP, which must be XGBoost's pred_contribs
    # (a number we did not compute), through the device's table of patterns.
    X, y = make_data(n=200, p=5, seed=5, nan_frac=0.05)
    model = xgb.XGBRegressor(
        n_estimators=1, max_depth=4, learning_rate=0.5, base_score=0.25
    ).fit(X, y)
    X, y = X[:SHAP_ROWS], y[:SHAP_ROWS]
    calls = []
    _on_gpu(monkeypatch, calls)
    tree_inner(model, X, y, attribution="treeshap", per_sample=True)  # the check
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        terms = tree_inner(model, X, y, attribution="treeshap", per_sample=True)
    assert calls == ["treeshap_rows", "treeshap_rows"]
    contribs = model.get_booster().predict(xgb.DMatrix(X), pred_contribs=True)
    expected = contribs[:, :-1] * ((y - 0.25) / 0.5)[:, None]
    np.testing.assert_allclose(terms, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["xgb-reg", "xgb-softprob"])
def test_treeshap_of_a_gpu_model_is_scored_on_the_device(name, monkeypatch):
    model, X, y = MODELS[name]
    X, y = X[:SHAP_ROWS], y[:SHAP_ROWS]
    expected = tree_inner(model, X, y, attribution="treeshap")
    rows = tree_inner(model, X, y, attribution="treeshap", per_sample=True)
    calls = []
    _on_gpu(monkeypatch, calls)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(2):  # the first call checks, the second is the device's
            got = tree_inner(model, X, y, attribution="treeshap")
            np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)
            got = tree_inner(model, X, y, attribution="treeshap", per_sample=True)
            np.testing.assert_allclose(got, rows, rtol=1e-9, atol=1e-12)
    assert calls == ["treeshap", "treeshap_rows"] * 2


def test_device_treeshap_in_groups_of_leaves(monkeypatch):
    # A model whose sums per (leaf, pattern) exceed what the device holds at
    # once goes in groups of leaves, with the same numbers.
    host, X, leaves, ys, w = _shap_inputs("xgb-reg")
    device = _device_kernels._OnDevice(host)
    assert device.takes_shap(host, per_row=False)
    whole = device.run_treeshap(X, leaves, ys, w[:SHAP_ROWS], False)
    launched = []
    real = device.cuda.device_array

    def counted(shape, *args, **kwargs):
        launched.append(shape)
        return real(shape, *args, **kwargs)

    monkeypatch.setattr(device.cuda, "device_array", counted)
    monkeypatch.setattr(_device_kernels, "MAX_PATTERN_SUMS", 20)
    got = device.run_treeshap(X, leaves, ys, w[:SHAP_ROWS], False)
    assert sum(len(s) == 2 and s[0] == 2 for s in launched) > 10  # groups
    np.testing.assert_allclose(got, whole, rtol=1e-12, atol=1e-14)


def test_models_the_device_treeshap_cannot_take(monkeypatch):
    # Too many distinct features on a path (the table of 2^m patterns), or a
    # per-row table over MAX_TABLE: the CPU kernels, with the same numbers.
    host, X, leaves, ys, w = _shap_inputs("xgb-reg")
    monkeypatch.setattr(_device_kernels, "MAX_TABLE", 10)
    device = _device_kernels._OnDevice(host)
    assert device.takes_shap(host, per_row=False)
    assert not device.takes_shap(host, per_row=True)
    monkeypatch.setattr("skl_treeinner._kernels.cpu._treeshap.MAX_DENSE_FEATURES", 2)
    device = _device_kernels._OnDevice(host)
    assert not device.takes_shap(host, per_row=False)
    kernels = _device_kernels.DeviceKernels(device, host)
    got, rounds = kernels.treeshap_of_targets(X, leaves, ys, None, False)
    expected, _ = host.treeshap_of_targets(X, leaves, ys, None, False)
    np.testing.assert_array_equal(got, expected)


def test_device_treeshap_finds_a_misrouted_row():
    # The booster's leaf must be the one the split rule leads to: a row sent
    # elsewhere makes the device's answer None (the CPU kernels then warn and
    # hand the call to the booster's own TreeSHAP).
    host, X, leaves, ys, w = _shap_inputs("xgb-reg")
    device = _device_kernels._OnDevice(host)
    offsets = host.ensemble.tree_offsets
    left = host.ensemble.children_left
    wrong = leaves.copy()
    tree = 3
    others = [
        node
        for node in range(offsets[tree], offsets[tree + 1])
        if left[node] < 0 and node != leaves[7, tree]
    ]
    wrong[7, tree] = others[0]
    assert device.takes_shap(host, per_row=True)
    for per_row in (False, True):
        assert device.run_treeshap(X, leaves, ys, None, per_row) is not None
        assert device.run_treeshap(X, wrong, ys, None, per_row) is None


def test_the_treeshap_selector_on_a_gpu_model_chooses_as_on_the_cpu(monkeypatch):
    X, y = make_data(n=160, p=5, seed=6)

    def fit():
        est = xgb.XGBRegressor(n_estimators=6, max_depth=3)
        selector = TreeInnerSelector(est, cv=2, attribution="treeshap", random_state=0)
        return selector.fit(X, y)

    cpu = fit()
    calls = []
    _on_gpu(monkeypatch, calls)
    gpu = fit()
    assert "treeshap_rows" in calls
    np.testing.assert_allclose(gpu.scores_, cpu.scores_, rtol=1e-9)
    np.testing.assert_allclose(gpu.pvalues_, cpu.pvalues_, rtol=1e-9, atol=1e-15)
    np.testing.assert_array_equal(gpu.get_support(), cpu.get_support())


@pytest.mark.parametrize("where", ["layout", "run"])
def test_a_failing_device_treeshap_leaves_the_model_on_the_cpu(where, monkeypatch):
    model, X, y = MODELS["xgb-reg"]
    X, y = X[:SHAP_ROWS], y[:SHAP_ROWS]
    expected = tree_inner(model, X, y, attribution="treeshap")
    monkeypatch.setattr(XGBoostReader, "on_gpu", lambda self: True)

    def fail(*args):
        raise MemoryError("out of device memory")

    if where == "layout":
        monkeypatch.setattr(_device_kernels._ShapLayout, "of", fail)
    else:
        monkeypatch.setattr(_device_kernels._OnDevice, "run_treeshap", fail)
    monkeypatch.setattr(_device_kernels, "_CACHE", type(_device_kernels._CACHE)())
    with pytest.warns(RuntimeWarning, match="TreeSHAP sums failed.*out of device"):
        got = tree_inner(model, X, y, attribution="treeshap")
    np.testing.assert_array_equal(got, expected)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per model
        np.testing.assert_array_equal(
            tree_inner(model, X, y, attribution="treeshap"), expected
        )


def test_device_treeshap_over_chunks_after_a_late_check(monkeypatch):
    # Chunks of 256 rows; the first has only zero weights (nothing to compare),
    # the second is checked, the last runs on the device unchecked.
    model, _, _ = MODELS["xgb-reg"]
    X, y = make_data(n=600, p=5, seed=11, nan_frac=0.05)
    w = np.random.default_rng(4).uniform(0.5, 2.0, size=600)
    w[:256] = 0.0
    monkeypatch.setattr(_base, "_CHUNK_ELEMENTS", 8)  # the floor: 256 rows
    # A model of its own: not checked (trusted) by an earlier test.
    monkeypatch.setattr(_device_kernels, "_CACHE", type(_device_kernels._CACHE)())
    kwargs = dict(attribution="treeshap", sample_weight=w)
    expected = tree_inner(model, X, y, **kwargs)
    rows = tree_inner(model, X, y, per_sample=True, **kwargs)
    calls = []
    _on_gpu(monkeypatch, calls)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = tree_inner(model, X, y, **kwargs)
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)
        got = tree_inner(model, X, y, per_sample=True, **kwargs)
        np.testing.assert_allclose(got, rows, rtol=1e-9, atol=1e-12)
    assert calls == ["treeshap"] * 2 + ["treeshap_rows"] * 2
