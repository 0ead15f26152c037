"""The fused numba kernels against the numpy reference path.

Every public number that the kernels compute (tree_inner's scores, per
iteration and per row, PreDecomp, the routing check's margins) must equal the
numpy path's to float rounding, for every objective, for models with several
trees per iteration and output, with weights, chunks and threads.
"""

import inspect
import sys

import numpy as np
import pytest
import xgboost as xgb
from conftest import make_data
from threadpoolctl import threadpool_limits

from skl_treeinner import predecomp, tree_inner
from skl_treeinner._kernels import _compiled as _kernels
from skl_treeinner._kernels import _row_blocks
from skl_treeinner._model import _objectives as obj
from skl_treeinner._readers import _base, read_model

nk = pytest.importorskip("skl_treeinner._kernels.cpu._residuals")
lgb = pytest.importorskip("lightgbm")
from sklearn.ensemble import (  # noqa: E402
    GradientBoostingClassifier,
    HistGradientBoostingClassifier,
)

OBJECTIVES = [
    (obj.SquaredError(), "real"),
    (obj.PseudoHuber(slope=0.7), "real"),
    (obj.SquaredLogError(), "positive"),
    (obj.Logistic(), "binary"),
    (obj.Logistic(scale_pos_weight=3.0), "binary"),
    (obj.Poisson(), "count"),
    (obj.Gamma(), "positive"),
    (obj.Tweedie(power=1.3), "count"),
    (obj.Softmax(n_classes=4), "class"),
    (obj.Huber(delta=0.4), "real"),
    (obj.Fair(c=0.8), "real"),
    (obj.OneVsRestLogistic(n_classes=3, sigmoid=1.7), "class"),
    (obj.Exponential(), "binary"),
]


def _target(kind, n, n_classes, rng):
    return {
        "real": rng.normal(scale=3, size=n),
        "positive": rng.exponential(size=n) + 0.01,
        "binary": rng.integers(0, 2, size=n).astype(float),
        "count": rng.poisson(2.0, size=n).astype(float),
        "class": rng.integers(0, n_classes, size=n).astype(float),
    }[kind]


def _numpy(monkeypatch):
    monkeypatch.setenv(_kernels.ENV_VAR, "numpy")


def test_every_objective_has_a_compiled_gradient():
    classes = [
        c
        for _, c in inspect.getmembers(obj, inspect.isclass)
        if issubclass(c, obj.Objective) and c.__module__ == obj.__name__
    ]
    concrete = [c for c in classes if not c.__name__.startswith("_")]
    concrete.remove(obj.Objective)
    assert {type(o) for o, _ in OBJECTIVES} == set(concrete)
    for o, _ in OBJECTIVES:
        assert _kernels._objective_spec(o) is not None


@pytest.mark.parametrize(("objective", "kind"), OBJECTIVES, ids=repr)
def test_compiled_gradients_equal_the_objectives(objective, kind):
    rng = np.random.default_rng(0)
    n, k = 2000, objective.n_outputs
    # Margins from tiny to large, both signs: exp, expit and softmax at their
    # edges.
    margin = rng.normal(size=(n, k)) * np.exp(rng.uniform(-6, 3, size=(n, 1)))
    if kind == "positive":
        margin = np.abs(margin)
    y = objective.validate_target(_target(kind, n, k, rng))
    expected = objective.gradient(margin, y)
    code, prm = _kernels._objective_spec(objective)
    got = np.empty((n, k))
    for i in range(n):
        nk.gradient(code, prm, margin[i], float(y[i]), got[i])
    # Relative to the terms a difference such as exp(f) - y cancels.
    terms = np.abs(expected) + np.abs(y)[:, None] + 1.0
    np.testing.assert_array_less(np.abs(got - expected), 1e-14 * terms)


def _models():
    X, y = make_data(n=700, p=6, seed=5, nan_frac=0.05)
    y3 = np.digitize(y, [0.0, 1.5])
    yb = (y > 0.7).astype(int)
    Xg, _ = make_data(n=700, p=6, seed=5)
    common = dict(n_estimators=12, max_depth=3, n_jobs=1)
    return {
        "xgb-reg": (xgb.XGBRegressor(**common).fit(X[:350], y[:350]), X, y),
        "xgb-softprob": (xgb.XGBClassifier(**common).fit(X[:350], y3[:350]), X, y3),
        # Two trees per iteration: a boosted random forest.
        "xgb-forest": (
            xgb.XGBRegressor(num_parallel_tree=2, subsample=0.8, **common).fit(
                X[:350], y[:350]
            ),
            X,
            y,
        ),
        "xgb-spw": (
            xgb.XGBClassifier(scale_pos_weight=2.5, **common).fit(X[:350], yb[:350]),
            X,
            yb,
        ),
        "lgb-ova": (
            lgb.LGBMClassifier(
                objective="multiclassova", n_estimators=8, num_leaves=6, verbose=-1
            ).fit(X[:350], y3[:350]),
            X,
            y3,
        ),
        "lgb-fair": (
            lgb.LGBMRegressor(
                objective="fair", n_estimators=8, num_leaves=6, verbose=-1
            ).fit(X[:350], y[:350]),
            X,
            y,
        ),
        "hgb-multi": (
            HistGradientBoostingClassifier(max_iter=6).fit(X[:350], y3[:350]),
            X,
            y3,
        ),
        "gb-exponential": (
            GradientBoostingClassifier(loss="exponential", n_estimators=8).fit(
                Xg[:350], yb[:350]
            ),
            Xg,
            yb,
        ),
    }


MODELS = _models()


@pytest.mark.filterwarnings("ignore::skl_treeinner.exceptions.IdentityWarning")
@pytest.mark.parametrize("name", list(MODELS))
def test_fused_kernels_equal_the_numpy_reference(name, monkeypatch):
    assert _kernels.backend() == "numba"
    model, X, y = MODELS[name]
    X, y = X[350:], y[350:]
    w = np.random.default_rng(2).uniform(0.1, 3.0, size=len(y))

    def everything():
        return {
            "score": tree_inner(model, X, y),
            "weighted": tree_inner(model, X, y, sample_weight=w),
            "per_iteration": tree_inner(model, X, y, per_iteration=True),
            "per_sample": tree_inner(model, X, y, sample_weight=w, per_sample=True),
            "predecomp": predecomp(model, X),
        }

    fused = everything()
    # Small chunks: several per call, on both paths.
    monkeypatch.setattr(_base, "_CHUNK_ELEMENTS", 64 * 8)
    chunked = everything()
    _numpy(monkeypatch)
    reference = everything()
    for key, expected in reference.items():
        scale = np.abs(expected).max()
        for got in (fused[key], chunked[key]):
            np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12 * scale)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["xgb-softprob", "lgb-ova", "hgb-multi"])
def test_treeshap_residuals_use_the_kernels_too(name, monkeypatch):
    model, X, y = MODELS[name]
    X, y = X[350:], y[350:]
    fused = tree_inner(model, X, y, attribution="treeshap", per_iteration=True)
    _numpy(monkeypatch)
    reference = tree_inner(model, X, y, attribution="treeshap", per_iteration=True)
    # XGBoost's TreeSHAP by leaf patterns is computed in float64 from float32
    # covers, the booster's own in float32 (tests/unit/test_treeshap_patterns.py).
    rtol = 1e-5 if name.startswith("xgb") else 1e-9
    scale = np.abs(reference).max()
    np.testing.assert_allclose(fused, reference, rtol=rtol, atol=rtol * 0.1 * scale)


@pytest.mark.parametrize("name", ["xgb-reg", "xgb-softprob"])
def test_threads_split_rows_without_changing_the_numbers(name):
    model, X, y = MODELS[name]
    reader = read_model(model)
    leaves = reader.apply(X)
    one = _kernels.Kernels(reader.ensemble, 1)
    three = _kernels.Kernels(reader.ensemble, 3)
    per_thread = _row_blocks.rows_per_thread(leaves.shape[1])
    assert len(_row_blocks.blocks(len(y), 3, per_thread)) == 1  # not worth a thread
    many = np.repeat(leaves, 100, axis=0)  # 70,000 rows of 12 trees: three blocks
    yy = np.repeat(y, 100).astype(float)
    assert len(_row_blocks.blocks(len(yy), 3, per_thread)) == 3
    np.testing.assert_allclose(  # sums of 70,000 terms in another order
        three.leaf_sums(many, yy), one.leaf_sums(many, yy), rtol=1e-10, atol=1e-10
    )
    np.testing.assert_array_equal(three.row_terms(many, yy), one.row_terms(many, yy))
    np.testing.assert_array_equal(three.leaf_paths(many), one.leaf_paths(many))
    np.testing.assert_array_equal(three.margins(many)[0], one.margins(many)[0])
    np.testing.assert_array_equal(
        three.iteration_gradients(many, yy), one.iteration_gradients(many, yy)
    )


def test_global_leaves_equal_numpys(monkeypatch):
    rng = np.random.default_rng(0)
    offsets = np.arange(40, dtype=np.int64) * 31
    for dtype in (np.float32, np.int32, np.int64, np.float64):
        # 5,000 rows: two blocks on two threads.
        local = rng.integers(0, 31, size=(5000, 40)).astype(dtype)
        expected = local.astype(np.int64) + offsets
        for threads in (1, 2):
            got = _kernels.global_leaves(local, offsets, threads)
            assert got.dtype == np.int64
            np.testing.assert_array_equal(got, expected)
    _numpy(monkeypatch)
    np.testing.assert_array_equal(_kernels.global_leaves(local, offsets), expected)


def test_threads_follow_the_booster_and_the_callers_limits():
    with threadpool_limits(limits=3, user_api="openmp"):
        assert _kernels.effective_threads() == min(3, _cpu_limit())
        assert _kernels.effective_threads(1) == 1
        assert _kernels.effective_threads(64) == min(3, _cpu_limit())
        assert _kernels.effective_threads(-1) == min(3, _cpu_limit())
    with threadpool_limits(limits=1, user_api="openmp"):
        # An explicit setting is never raised above the caller's limit.
        assert _kernels.effective_threads(4) == 1
        assert _kernels.effective_threads(-3) == 1
    model, X, y = MODELS["xgb-reg"]
    assert read_model(model).thread_setting == 1
    booster = xgb.train({"nthread": 3, "max_depth": 2}, xgb.DMatrix(X, y), 2)
    assert read_model(booster).thread_setting == 3
    lgb_booster = lgb.train(
        {"num_threads": 2, "verbose": -1, "num_leaves": 4}, lgb.Dataset(X, y), 2
    )
    assert read_model(lgb_booster).thread_setting == 2
    alias = lgb.train({"nthreads": 1, "verbose": -1}, lgb.Dataset(X, y), 2)
    assert read_model(alias).thread_setting == 1
    wrapper = lgb.LGBMRegressor(n_estimators=2, num_threads=1, verbose=-1).fit(X, y)
    assert read_model(wrapper).thread_setting == 1


def _cpu_limit():
    with threadpool_limits(limits=None):
        from sklearn.utils._openmp_helpers import _openmp_effective_n_threads

        return _openmp_effective_n_threads(only_physical_cores=False)


def test_kernel_choice_by_environment(monkeypatch):
    model, X, y = MODELS["xgb-reg"]
    monkeypatch.setenv(_kernels.ENV_VAR, "fortran")
    with pytest.raises(ValueError, match="SKL_TREEINNER_KERNEL='fortran'"):
        tree_inner(model, X, y)
    monkeypatch.setenv(_kernels.ENV_VAR, "NumPy")
    assert _kernels.backend() == "numpy"
    assert _kernels.kernels_for(read_model(model).ensemble) is None
    monkeypatch.setenv(_kernels.ENV_VAR, "numba")
    assert _kernels.backend() == "numba"


def test_without_numba_auto_falls_back_and_numba_names_the_extra(monkeypatch):
    model, X, y = MODELS["xgb-softprob"]
    expected = tree_inner(model, X, y)
    monkeypatch.setitem(sys.modules, "numba", None)  # import numba fails
    assert _kernels.backend() == "numpy"
    np.testing.assert_allclose(tree_inner(model, X, y), expected, rtol=1e-9)
    monkeypatch.setenv(_kernels.ENV_VAR, "numba")
    with pytest.raises(ImportError, match=r'pip install numba \(or the "numba" extra'):
        tree_inner(model, X, y)


def test_a_model_changed_in_place_is_read_again():
    X, y = make_data(n=300, seed=3)
    dtrain = xgb.DMatrix(X, y)
    booster = xgb.train({"max_depth": 2, "nthread": 1}, dtrain, 3)
    first = read_model(booster).ensemble
    assert read_model(booster).ensemble is first  # same bytes: parsed once
    booster.update(dtrain, 3)  # a fourth round, in place
    again = read_model(booster).ensemble
    assert again is not first and again.n_trees == 4
    np.testing.assert_allclose(
        tree_inner(booster, X, y),
        tree_inner(xgb.Booster(model_file=booster.save_raw("ubj")), X, y),
        rtol=1e-12,
    )


def test_cached_read_keeps_the_lost_identities():
    X, y = make_data(n=300, seed=4)
    model = xgb.XGBRegressor(n_estimators=3, max_depth=2, reg_alpha=1.0, n_jobs=1)
    model.fit(X, y)
    with pytest.warns(Warning, match="reg_alpha"):
        first = read_model(model)
    with pytest.warns(Warning, match="reg_alpha"):
        again = read_model(model)  # from the cache, still warned about
    assert again.ensemble is first.ensemble


def test_callers_sharing_a_model_keep_their_own_thread_counts():
    model, X, y = MODELS["xgb-reg"]
    ens = read_model(model).ensemble
    one, eight = _kernels.kernels_for(ens, 1), _kernels.kernels_for(ens, 8)
    assert (one.n_threads, eight.n_threads) == (1, 8)
    assert one.arrays.walk is eight.arrays.walk  # the prepared arrays are shared


def test_a_model_no_one_holds_is_freed_with_its_kernels(monkeypatch):
    # The kernels' cache is keyed weakly by the ensemble; its entry must not
    # hold the ensemble itself (40 models scored in a loop kept 40 entries).
    import gc
    import weakref

    monkeypatch.setattr(_base, "_READ_CACHE", type(_base._READ_CACHE)())
    X, y = make_data(n=200, p=4, seed=1)
    model = xgb.XGBRegressor(n_estimators=3, max_depth=2).fit(X, y)
    tree_inner(model, X, y)
    ens = read_model(model).ensemble
    kernels = _kernels.kernels_for(ens)
    assert kernels.ensemble is ens  # the caller's copy holds it
    gone = weakref.ref(ens)
    del model, ens, kernels
    _base._READ_CACHE.clear()
    gc.collect()
    assert gone() is None


def test_models_of_many_trees_get_every_thread():
    # A chunk holds a bounded number of (row, tree) pairs, so its rows are few
    # when the trees are many: blocks are sized in pairs, not rows (issue 42).
    chunk_rows = 4 * 2**20 // 2000  # FUSED_CHUNK_SCALE chunks of 2,000 trees
    per_thread = _row_blocks.rows_per_thread(2000)
    # 2,097 rows: 15 blocks of 16 threads (one block of 2,048 rows or more, before)
    assert len(_row_blocks.blocks(chunk_rows, 16, per_thread)) >= 15
    assert len(_row_blocks.blocks(chunk_rows, 2, per_thread)) == 2
    # Few trees: fewer, larger blocks (a thread is worth 2**18 pairs).
    assert len(_row_blocks.blocks(10_000, 16, _row_blocks.rows_per_thread(10))) == 1
