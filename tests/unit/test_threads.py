"""The thread policy (``_threads``): splits and booster threads, and what it keeps."""

import numpy as np
import pytest
import xgboost as xgb
from conftest import make_data
from threadpoolctl import threadpool_limits

from skl_treeinner import TreeInnerSelector
from skl_treeinner._engines.memory import _threads
from skl_treeinner._engines.memory._threads import ThreadPlan, plan_threads


@pytest.fixture
def cores(monkeypatch):
    """Pretend this process may use ``n`` cores, ``busy`` of them taken."""

    def set_cores(n, busy=0, total=None):
        monkeypatch.setattr(_threads, "available_cores", lambda: n)
        monkeypatch.setattr(_threads, "busy_cores", lambda: busy)
        monkeypatch.setattr(_threads, "machine_cores", lambda: total or n)

    return set_cores


def test_plan(cores):
    cores(8)
    # Several splits: threads, each booster its share of the cores.
    assert plan_threads(5, None, threads_change_results=False) == ThreadPlan(
        5, 1, "threads"
    )
    assert plan_threads(2, None, threads_change_results=True) == ThreadPlan(
        2, 4, "threads"
    )
    # An explicit n_jobs: joblib's default backend, as many workers as asked.
    assert plan_threads(5, 2, threads_change_results=False) == ThreadPlan(2, 4, None)
    # One split: every core, less those busy elsewhere when that cannot change
    # the model.
    assert plan_threads(1, None, threads_change_results=False).booster_threads == 8
    cores(8, busy=6)
    assert plan_threads(1, None, threads_change_results=False).booster_threads == 2
    assert plan_threads(1, None, threads_change_results=True).booster_threads == 8
    cores(2, busy=5, total=2)
    assert plan_threads(1, 1, threads_change_results=False).booster_threads == 1
    # A quota of 4 cores on a 64-core machine with 30 busy: all 4.
    cores(4, busy=30, total=64)
    assert plan_threads(1, None, threads_change_results=False).booster_threads == 4


def test_caller_limits_are_cores():
    with threadpool_limits(limits=1, user_api="openmp"):
        assert _threads.available_cores() == 1
        assert plan_threads(5, None, threads_change_results=False) == ThreadPlan(
            1, 1, None
        )
    assert _threads.busy_cores() >= 0


def test_results_do_not_depend_on_the_plan(cores):
    X, y = make_data(n=400, p=5, seed=3)
    fits = []
    for n, n_jobs in ((1, None), (2, None), (2, 1), (2, 2)):
        cores(n)
        with threadpool_limits(limits=n, user_api="openmp"):
            est = xgb.XGBRegressor(n_estimators=20, max_depth=3)
            sel = TreeInnerSelector(est, cv=3, random_state=0, n_jobs=n_jobs).fit(X, y)
        fits.append(sel)
        threads = {e.get_params()["n_jobs"] for e in sel.estimators_}
        assert threads == ({2} if (n, n_jobs) == (2, 1) else {1})
    for other in fits[1:]:
        np.testing.assert_array_equal(other.scores_, fits[0].scores_)
        np.testing.assert_array_equal(other.pvalues_, fits[0].pvalues_)


def test_an_explicit_lower_thread_count_is_kept(cores):
    cores(4)
    X, y = make_data(n=300, p=4, seed=4)
    with threadpool_limits(limits=4, user_api="openmp"):
        est = xgb.XGBRegressor(n_estimators=5, max_depth=2, n_jobs=1)
        sel = TreeInnerSelector(est, cv=None, random_state=0).fit(X, y)
        assert sel.estimator_.get_params()["n_jobs"] == 1  # not raised to 4
        est = xgb.XGBRegressor(n_estimators=5, max_depth=2, n_jobs=8)
        sel = TreeInnerSelector(est, cv=None, random_state=0).fit(X, y)
        assert sel.estimator_.get_params()["n_jobs"] == 4  # lowered to the cores
    assert est.get_params()["n_jobs"] == 8  # the user's estimator is untouched


def test_blas_limit_restored_and_catboost_and_negative_settings(cores):
    from threadpoolctl import threadpool_info

    cores(2)
    X, y = make_data(n=300, p=4, seed=5)

    def blas():
        return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]

    before = blas()
    with threadpool_limits(limits=2, user_api="openmp"):
        for _ in range(3):
            est = xgb.XGBRegressor(n_estimators=5, max_depth=2)
            TreeInnerSelector(est, cv=3, random_state=0).fit(X, y)
        assert blas() == before  # splits in threads left BLAS as it was
        cb = pytest.importorskip("catboost")
        est = cb.CatBoostRegressor(iterations=5, verbose=0, allow_writing_files=False)
        sel = TreeInnerSelector(est, cv=3, random_state=0).fit(X, y)  # 2 splits
        assert {e.get_params()["thread_count"] for e in sel.estimators_} == {1}
        lgb = pytest.importorskip("lightgbm")
        est = lgb.LGBMRegressor(n_estimators=5, n_jobs=-2, verbose=-1)  # 1 of 2
        sel = TreeInnerSelector(est, cv=None, random_state=0).fit(X, y)
        assert sel.estimator_.get_params()["n_jobs"] == -2  # kept: not raised


def test_this_processs_own_spinning_threads_are_not_other_programs(monkeypatch):
    # Issue 42: the OpenMP threads of a booster this process had just fitted
    # spin for a while and count in /proc/loadavg; they were taken for another
    # program, and every later one-split fit in the process ran on one thread.
    import builtins
    import io

    real_open = builtins.open

    def fake_open(path, *args, **kwargs):
        if path == "/proc/loadavg":
            return io.StringIO("0.50 0.40 0.30 3/78 12345\n")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", fake_open)
    monkeypatch.setattr(_threads, "own_running_threads", lambda: 3)
    assert _threads.busy_cores() == 0  # all three running threads are ours
    monkeypatch.setattr(_threads, "own_running_threads", lambda: 1)
    assert _threads.busy_cores() == 2


def test_own_running_threads_counts_at_least_the_caller():
    assert _threads.own_running_threads() >= 1
