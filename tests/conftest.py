import contextlib
import os
import shutil

# Without an NVIDIA driver, the GPU kernels' tests run on numba's CUDA
# simulator (tests/test_device_kernels.py); set before numba is imported.
if shutil.which("nvidia-smi") is None:
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

import numpy as np
import pytest
import xgboost as xgb
from threadpoolctl import threadpool_limits

# name -> (estimator class, target maker, extra params)
OBJECTIVES = {
    "reg:squarederror": ("reg", lambda y: y, {}),
    "reg:pseudohubererror": ("reg", lambda y: y, {"huber_slope": 0.7}),
    "reg:squaredlogerror": ("reg", lambda y: np.exp(y / 3), {}),
    "reg:logistic": ("reg", lambda y: 1 / (1 + np.exp(-y)), {}),
    "binary:logistic": ("clf", lambda y: (y > 0.5).astype(int), {}),
    "binary:logitraw": ("clf", lambda y: (y > 0.5).astype(int), {}),
    "count:poisson": ("reg", lambda y: np.floor(np.exp(y / 3)), {"max_delta_step": 0}),
    "reg:gamma": ("reg", lambda y: np.exp(y / 3), {}),
    "reg:tweedie": ("reg", lambda y: np.floor(np.exp(y / 3)), {}),
    "multi:softprob": ("clf", lambda y: np.digitize(y, [0.0, 1.5]), {}),
    "multi:softmax": ("clf", lambda y: np.digitize(y, [-0.5, 0.5, 1.5]), {}),
}


@pytest.fixture(autouse=True)
def _one_openmp_thread():
    """Run every test with one OpenMP thread.

    XGBoost's and HistGradientBoosting's OpenMP threads spin-wait; on a small,
    shared machine two of them on tiny data made fits 10-20x slower (0.05 s
    against 0.8 s for the CLI tests' 3-fold selection). Tests that exercise
    threading set their own limits inside.
    """
    with threadpool_limits(limits=1, user_api="openmp"):
        yield


def make_data(n=400, p=6, seed=0, nan_frac=0.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = X[:, 0] + X[:, 1] ** 2 - 0.5 * X[:, 2] + rng.normal(size=n)
    if nan_frac:
        X[rng.random((n, p)) < nan_frac] = np.nan
    return X, y


def fit(objective, X, y, **params):
    kind, make_y, extra = OBJECTIVES[objective]
    cls = xgb.XGBClassifier if kind == "clf" else xgb.XGBRegressor
    defaults = dict(
        n_estimators=20, max_depth=3, learning_rate=0.3, random_state=0, n_jobs=1
    )
    model = cls(objective=objective, **{**defaults, **extra, **params})
    target = make_y(y)
    return model.fit(X, target), target


def total_gain(model, n_features):
    """The booster's own total gain, as a dense vector over features."""
    booster = model.get_booster() if hasattr(model, "get_booster") else model
    names = booster.feature_names or [f"f{i}" for i in range(n_features)]
    gain = booster.get_score(importance_type="total_gain")
    return np.array([gain.get(name, 0.0) for name in names])


def l1(v):
    s = np.abs(v).sum()
    return v / s if s > 0 else v


def assert_total_gain(scores, model, n_features, tol=1e-6):
    """Prop. 3: in-sample TreeInner equals total gain (l1-normalised)."""
    gain = total_gain(model, n_features)
    assert gain.sum() > 0, "the model made no split; the test would prove nothing"
    np.testing.assert_array_less(np.abs(l1(scores) - l1(gain)), tol)
    # Also unnormalised: same scale, not just the same shape.
    np.testing.assert_allclose(scores, gain, rtol=1e-4, atol=1e-6 * gain.max())


def margin(model, X):
    if isinstance(model, xgb.Booster):
        return model.predict(xgb.DMatrix(X), output_margin=True)
    return model.predict(X, output_margin=True)


@pytest.fixture
def data():
    return make_data()


@pytest.fixture(scope="session")
def client():
    """A real Dask cluster: 2 worker processes of 1 thread, closed after the tests."""
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            worker_class=distributed.Nanny,
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c


@contextlib.contextmanager
def patterns_only(reader_type):
    """Fail if the library's per-round TreeSHAP runs: the patterns must do it all.

    A silent hand-over to ``reader_type.iteration_shap`` would give the same
    numbers, so the tests of TreeSHAP by leaf patterns refuse it.
    """

    def refuse(self, X, rounds=None):
        raise AssertionError("the library's TreeSHAP ran instead of the patterns")

    with pytest.MonkeyPatch.context() as m:
        m.setattr(reader_type, "iteration_shap", refuse)
        yield
