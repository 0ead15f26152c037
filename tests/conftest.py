import contextlib
import os
import shutil
import sys

# Without an NVIDIA driver, the GPU kernels' tests run on numba's CUDA
# simulator (tests/integration/test_device_kernels.py); set before numba is imported.
if shutil.which("nvidia-smi") is None:
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

from pathlib import Path

import numpy as np
import pytest
import xgboost as xgb
from threadpoolctl import ThreadpoolController

#: The tiers, one folder each (tests/README.md); every test gets its folder's
#: marker, so that ``-m`` picks tiers (the package's doctests are unit tests).
TIERS = ("unit", "integration", "statistical", "smoke")


def pytest_collection_modifyitems(config, items):
    for item in items:
        parts = Path(str(item.path)).parts
        tiers = [tier for tier in TIERS if tier in parts[-2:-1]] or ["unit"]
        item.add_marker(tiers[0])


#: Test files whose tests share one pytest-xdist worker (``-n``), by group:
#: the Dask cluster's (one cluster, closed after them), and files whose
#: module-scoped fixtures fit selections (built once, not once per worker).
XDIST_GROUPS = {
    "tests/integration/test_dask.py": "dask",
    "tests/integration/test_dask_refit_curve.py": "dask",
    "tests/integration/test_dask_selector.py": "dask",
    "tests/smoke/test_compare_selectors.py": "compare_selectors",
    "tests/unit/test_plot_layout.py": "plot_layout",
}


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadgroup`` (pyproject.toml's addopts) with :data:`XDIST_GROUPS`.

    Groups by file name in the scheduler itself: pytest-xdist's own
    ``xdist_group`` marks rename the tests' node ids, which pytest 9.2 no
    longer allows (pytest-xdist issue 1386), and a conftest's marks come
    after xdist has read them (pytest-xdist issue 1241).
    """
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class FileGroups(LoadGroupScheduling):
        def _split_scope(self, nodeid):
            group = XDIST_GROUPS.get(nodeid.split("::", 1)[0])
            return group or super()._split_scope(nodeid)

    return FileGroups(config, log)


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


#: (number of imported modules, a ThreadpoolController made then): finding the
#: loaded thread pools reads every loaded library (milliseconds per test, about
#: ten seconds of a suite's run), and only an import loads a new one.
_POOLS = [-1, None]


@pytest.fixture(autouse=True)
def _one_openmp_thread():
    """Run every test with one OpenMP thread.

    XGBoost's and HistGradientBoosting's OpenMP threads spin-wait; on a small,
    shared machine two of them on tiny data made fits 10-20x slower (0.05 s
    against 0.8 s for the CLI tests' 3-fold selection). Tests that exercise
    threading set their own limits inside.
    """
    if _POOLS[0] != len(sys.modules):
        _POOLS[:] = [len(sys.modules), ThreadpoolController()]
    with _POOLS[1].limit(limits=1, user_api="openmp"):
        yield


def make_data(n=400, p=6, seed=0, nan_frac=0.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = X[:, 0] + X[:, 1] ** 2 - 0.5 * X[:, 2] + rng.normal(size=n)
    if nan_frac:
        X[rng.random((n, p)) < nan_frac] = np.nan
    return X, y


def wide_data(n=300, m=150, seed=0, signal=True):
    """Many Gaussian columns; y from the first two (or independent of all)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, m))
    y = (X[:, 0] + 0.8 * X[:, 1] if signal else 0) + rng.normal(size=n)
    return X, y


def small_regressor():
    """A small, single-threaded XGBoost regressor for selectors on wide data."""
    return xgb.XGBRegressor(
        n_estimators=60, learning_rate=0.1, max_depth=3, colsample_bytree=0.5,
        n_jobs=1,
    )  # fmt: skip


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


class _Cluster:
    """The tests' real Dask cluster: 2 worker processes of 1 thread, started on
    first use and closed after the last test that needs it: an open cluster's
    heartbeats and checks (its scheduler in this process) slow every other
    test that shares the machine's cores with it."""

    def __init__(self):
        self._stack = None
        self.client = None

    def get(self):
        if self.client is None:
            distributed = pytest.importorskip("distributed")
            with contextlib.ExitStack() as stack:  # closed if the client fails
                cluster = stack.enter_context(
                    distributed.LocalCluster(
                        n_workers=2,
                        threads_per_worker=1,
                        processes=True,
                        dashboard_address=None,
                        worker_class=distributed.Nanny,
                    )
                )
                self.client = stack.enter_context(distributed.Client(cluster))
                self._stack = stack.pop_all()
        return self.client

    def close(self):
        stack, self._stack, self.client = self._stack, None, None
        if stack is not None:
            stack.close()


_CLUSTER = _Cluster()


@pytest.fixture
def client():
    """A client of the tests' one Dask cluster (:class:`_Cluster`)."""
    return _CLUSTER.get()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    # After the test's own fixtures are torn down, failing or not. The tests of
    # the cluster run one after another (their files' group, in collection
    # order): close it when the next test does not need it, or none comes (a
    # later test that does would start it again).
    try:
        return (yield)
    finally:
        if nextitem is None or "client" not in getattr(nextitem, "fixturenames", ()):
            _CLUSTER.close()


def pytest_sessionfinish(session):
    _CLUSTER.close()  # also where the last test's teardown never ran


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


# -- scripts run in this process ------------------------------------------------------
#: Python's own warning filters in a fresh interpreter: a script run here sees
#: what it would see on its own, not the suite's warnings-as-errors.
_FRESH_FILTERS = [
    ("default", None, DeprecationWarning, "__main__", 0),
    ("ignore", None, DeprecationWarning, None, 0),
    ("ignore", None, PendingDeprecationWarning, None, 0),
    ("ignore", None, ImportWarning, None, 0),
    ("ignore", None, ResourceWarning, None, 0),
]


def _package_state():
    import sys

    return {
        name: dict(vars(module))
        for name, module in list(sys.modules.items())
        if name.startswith("skl_treeinner") and module is not None
    }


def _restore_package_state(saved):
    import sys
    import types

    for name, names in saved.items():
        module = sys.modules.get(name)
        if module is None:
            continue
        now = vars(module)
        # A subpackage imported for the first time stays linked to its parent.
        added = [k for k in now if k not in names]
        for key in added:
            if not isinstance(now[key], types.ModuleType):
                del now[key]
        for key, value in names.items():
            if now.get(key, _MISSING) is not value:
                now[key] = value


def _script_modules():
    """Pop the loaded modules of the checkout's script folders; return them.

    A script must find its own helpers (a benchmark's sibling, the tests'
    conftest) on its own ``sys.path``, as in a process of its own, not
    because the suite has loaded them already; installed libraries (a
    virtual environment may sit in the checkout) and the package stay.
    """
    import os
    import sys

    root = Path(__file__).resolve().parents[1]
    folders = tuple(str(root / name) + os.sep for name in SCRIPT_FOLDERS)
    return {
        name: sys.modules.pop(name)
        for name, module in list(sys.modules.items())
        if (getattr(module, "__file__", None) or "").startswith(folders)
    }


#: Where the scripts run_python runs, and the helpers they import, live.
SCRIPT_FOLDERS = ("benchmarks", "examples", "tests", "docs")


_MISSING = object()


def _print_warning(message, category, filename, lineno, file=None, line=None):
    import sys
    import warnings

    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


def run_python(*args, cwd=None):
    """Run ``python ARGS`` (a script, ``-m module`` or ``-c code``) in this process.

    What a subprocess proves for a script, at a fraction of its cost (no new
    interpreter, imports or compiled kernels to load): its exit code, stdout
    and stderr come back as :class:`subprocess.CompletedProcess`. The working
    folder, ``sys.argv``, ``sys.path``, the environment, the warning filters
    and the package's module globals (which a benchmark may patch) are
    restored after it; it imports its helpers from the checkout's folders
    anew, as a process of its own would. An exception ends it with status 1
    and its traceback on stderr.
    """
    import contextlib
    import io
    import os
    import runpy
    import subprocess
    import sys
    import traceback
    import warnings

    saved = (os.getcwd(), sys.argv[:], sys.path[:], dict(os.environ))
    package, helpers = _package_state(), _script_modules()
    # Nor on the folders pytest put on sys.path for the tests.
    root = Path(__file__).resolve().parents[1]
    sys.path[:] = [
        entry
        for entry in sys.path
        if not any(
            Path(entry or ".").resolve().is_relative_to(root / name)
            for name in SCRIPT_FOLDERS
        )
    ]
    out, err = io.StringIO(), io.StringIO()
    code = 0
    try:
        if cwd is not None:
            os.chdir(cwd)
        os.environ["MPLBACKEND"] = "Agg"
        with (
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
            warnings.catch_warnings(),
        ):
            warnings.filters[:] = list(_FRESH_FILTERS)
            warnings.showwarning = _print_warning  # to its stderr, as on its own
            try:
                if args[0] == "-m":
                    sys.argv = [args[1], *args[2:]]
                    runpy.run_module(args[1], run_name="__main__", alter_sys=True)
                elif args[0] == "-c":
                    sys.argv = ["-c", *args[2:]]
                    exec(compile(args[1], "<string>", "exec"), {"__name__": "__main__"})
                else:
                    script = Path(args[0]).resolve()
                    sys.argv = [str(script), *map(str, args[1:])]
                    sys.path.insert(0, str(script.parent))
                    runpy.run_path(str(script), run_name="__main__")
            except SystemExit as exit_:
                if exit_.code is None or isinstance(exit_.code, int):
                    code = exit_.code or 0
                else:  # sys.exit("message"): printed, status 1
                    print(exit_.code, file=sys.stderr)
                    code = 1
            except Exception:  # noqa: BLE001 (as Python ends a script that raises)
                traceback.print_exc(file=sys.stderr)
                code = 1
    finally:
        os.chdir(saved[0])
        sys.argv[:], sys.path[:] = saved[1], saved[2]
        os.environ.clear()
        os.environ.update(saved[3])
        _restore_package_state(package)
        _script_modules()  # the script's own, forgotten
        sys.modules.update(helpers)
    return subprocess.CompletedProcess(list(args), code, out.getvalue(), err.getvalue())
