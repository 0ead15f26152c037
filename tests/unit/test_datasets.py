"""Tests of skl_treeinner.datasets: seeding, shapes, and the generating laws.

The laws are checked against statistics we did not write: scikit-learn's
logistic regression and numpy's least squares recover the coefficients the
papers' formulas imply (Wald z-scores), scipy's chi-square and
Kolmogorov-Smirnov tests check the marginal laws, and binomial standard
errors bound the observed rates. Every test is seeded, so none is flaky.
"""

import sys

import numpy as np
import pytest
from scipy import sparse, stats
from sklearn import datasets as sk_datasets
from sklearn.linear_model import LogisticRegression

from skl_treeinner.datasets import (
    load_semi_synthetic,
    make_cardinality_simulation,
    make_paper_simulation,
    make_semi_synthetic,
    make_unbiased_gain_example,
)

Z_MAX = 4.5  # two-sided p ~ 7e-6 per statistic
RAND_20x4 = np.random.default_rng(0).random((20, 4))


def _uniform_matrix(n=20000, p=10, seed=0):
    """Independent uniform columns on very different ranges."""
    rng = np.random.default_rng(seed)
    scale = np.logspace(-2, 3, p)
    shift = np.linspace(-50.0, 50.0, p)
    return shift + scale * rng.random((n, p))


def _min_max(X):
    return (X - X.min(axis=0)) / (X.max(axis=0) - X.min(axis=0))


def _ols_z(design, y, truth):
    """Wald z-scores of least-squares coefficients against ``truth``."""
    A = np.column_stack([np.ones(len(y)), design])
    coef, *_ = np.linalg.lstsq(A, y, rcond=None)
    resid = y - A @ coef
    sigma2 = resid @ resid / (len(y) - A.shape[1])
    se = np.sqrt(sigma2 * np.diag(np.linalg.inv(A.T @ A)))
    return (coef - truth) / se, coef / se


def _logit_z(design, y, truth):
    """Wald z-scores of an unpenalised logistic fit against ``truth``."""
    model = LogisticRegression(C=np.inf, max_iter=1000).fit(design, y)
    coef = np.r_[model.intercept_, model.coef_.ravel()]
    A = np.column_stack([np.ones(len(y)), design])
    p = model.predict_proba(design)[:, 1]
    se = np.sqrt(np.diag(np.linalg.inv(A.T @ (A * (p * (1 - p))[:, None]))))
    return (coef - truth) / se, coef / se


def _binomial_z(successes, trials, p):
    return (successes - trials * p) / np.sqrt(trials * p * (1 - p))


# ---------------------------------------------------------------- seeding

GENERATORS = {
    "paper_simulation": lambda rs: make_paper_simulation(
        "classification", n_samples=200, random_state=rs
    ),
    "semi_synthetic": lambda rs: make_semi_synthetic(
        _uniform_matrix(300, 6), n_relevant=2, random_state=rs
    ),
    "load_semi_synthetic": lambda rs: load_semi_synthetic(
        "wine", task="classification", random_state=rs
    ),
    "cardinality_null": lambda rs: make_cardinality_simulation(
        n_samples=500, random_state=rs
    ),
    "cardinality_power": lambda rs: make_cardinality_simulation(
        "power", n_samples=500, random_state=rs
    ),
    "unbiased_gain": lambda rs: make_unbiased_gain_example(300, random_state=rs),
}


@pytest.mark.parametrize("name", list(GENERATORS))
def test_same_seed_same_data_other_seed_other_data(name):
    make = GENERATORS[name]
    X1, y1, r1 = make(0)
    X2, y2, r2 = make(0)
    X3, y3, _ = make(1)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(y1, y2)
    np.testing.assert_array_equal(r1, r2)
    assert not np.array_equal(X1, X3)
    assert not np.array_equal(y1, y3)
    # a RandomState instance is accepted and advanced
    rs = np.random.RandomState(5)
    Xa, ya, _ = make(rs)
    Xb, yb, _ = make(rs)
    assert not np.array_equal(ya, yb)


# ---------------------------------------------------- make_semi_synthetic


@pytest.mark.parametrize("task", ["regression", "classification"])
def test_semi_synthetic_shapes_masks_and_marginals(task):
    X = _uniform_matrix(2000, 9)
    X_out, y, relevant = make_semi_synthetic(X, task=task, n_relevant=4, random_state=3)
    assert X_out.shape == X.shape and X_out.dtype == X.dtype
    assert y.shape == (2000,)
    assert relevant.dtype == bool and relevant.shape == (9,)
    assert relevant.sum() == 4
    if task == "classification":
        assert y.dtype == np.int64 and set(np.unique(y)) == {0, 1}
    else:
        assert y.dtype == np.float64
    # relevant columns untouched, row for row
    np.testing.assert_array_equal(X_out[:, relevant], X[:, relevant])
    # every column keeps its multiset of values ...
    np.testing.assert_array_equal(np.sort(X_out, axis=0), np.sort(X, axis=0))
    # ... and every noise column is reordered, each in its own order
    noise = ~relevant
    assert not (X_out[:, noise] == X[:, noise]).all(axis=0).any()
    sources = []  # the row each output value came from, per noise column
    for j in np.flatnonzero(noise):
        order = np.argsort(X[:, j])
        sources.append(order[np.searchsorted(X[order, j], X_out[:, j])])
    sources = np.array(sources)
    assert all(np.array_equal(np.sort(s), np.arange(2000)) for s in sources)
    agree = (sources[:, None, :] == sources[None, :, :]).mean(axis=2)
    assert agree[~np.eye(len(sources), dtype=bool)].max() < 0.01
    # the input was not modified
    np.testing.assert_array_equal(X, _uniform_matrix(2000, 9))


def test_semi_synthetic_breaks_correlation_of_noise_only():
    rng = np.random.default_rng(1)
    n, p = 5000, 6
    X = rng.normal(size=(n, 1)) + 0.3 * rng.normal(size=(n, p))  # corr ~ 0.92
    X_out, _, relevant = make_semi_synthetic(X, n_relevant=2, random_state=0)
    before, after = np.corrcoef(X.T), np.corrcoef(X_out.T)
    assert before[np.triu_indices(p, 1)].min() > 0.85
    both = np.outer(relevant, relevant)
    np.testing.assert_allclose(after[both], before[both])
    off = ~both & ~np.eye(p, dtype=bool)
    assert np.abs(after[off]).max() < Z_MAX / np.sqrt(n)


def test_semi_synthetic_regression_law():
    """y = m + Normal(0, sd = 100 Var(m)), m the mean of the scaled relevant."""
    X = _uniform_matrix()
    X_out, y, relevant = make_semi_synthetic(X, n_relevant=5, random_state=7)
    Z = _min_max(X_out)
    m = Z[:, relevant].mean(axis=1)
    # the noise level the authors' code uses: sd = 100 * Var(m)
    resid = y - m
    assert abs(resid.std() / (100 * m.var()) - 1) < 0.03
    # least squares on all scaled columns: 1/5 on relevant, 0 elsewhere
    truth = np.r_[0.0, np.where(relevant, 0.2, 0.0)]
    z, _ = _ols_z(Z, y, truth)
    assert np.abs(z).max() < Z_MAX
    # pooled: slope 1 on m, clearly detected
    z, z_zero = _ols_z(m[:, None], y, np.array([0.0, 1.0]))
    assert np.abs(z).max() < Z_MAX and z_zero[1] > 2 * Z_MAX


def test_semi_synthetic_classification_law():
    """P(y = 1) = sigmoid(4 m): log-odds 4/5 per scaled relevant column."""
    X = _uniform_matrix()
    X_out, y, relevant = make_semi_synthetic(
        X, task="classification", n_relevant=5, random_state=11
    )
    Z = _min_max(X_out)
    truth = np.r_[0.0, np.where(relevant, 0.8, 0.0)]
    z, z_zero = _logit_z(Z, y, truth)
    assert np.abs(z).max() < Z_MAX
    assert z_zero[1:][relevant].min() > Z_MAX
    # the text's Logistic(2 m - 1) (half the slope) would be rejected
    z_text, _ = _logit_z(Z, y, np.r_[-1.0, np.where(relevant, 0.4, 0.0)])
    assert np.abs(z_text).max() > Z_MAX


def test_semi_synthetic_dataframe_round_trip():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(2)
    n = 400
    df = pd.DataFrame(
        {
            "ints": rng.integers(0, 50, n),
            "f32": rng.random(n).astype(np.float32),
            "flag": rng.random(n) < 0.3,
            "f64": rng.normal(size=n),
            "big": 1e6 * rng.random(n),
        },
        index=pd.RangeIndex(100, 100 + n, name="row"),
    )
    X_out, y, relevant = make_semi_synthetic(df, n_relevant=2, random_state=4)
    assert isinstance(X_out, pd.DataFrame)
    assert list(X_out.columns) == list(df.columns)
    pd.testing.assert_series_equal(X_out.dtypes, df.dtypes)
    pd.testing.assert_index_equal(X_out.index, df.index)
    # the same seed gives the same data from the ndarray path
    X_np, y_np, relevant_np = make_semi_synthetic(
        df.to_numpy(dtype=np.float64), n_relevant=2, random_state=4
    )
    np.testing.assert_array_equal(relevant, relevant_np)
    np.testing.assert_array_equal(y, y_np)
    np.testing.assert_array_equal(X_out.to_numpy(dtype=np.float64), X_np)
    for j, name in enumerate(df.columns):
        if relevant[j]:
            pd.testing.assert_series_equal(X_out[name], df[name])
        else:
            assert sorted(X_out[name]) == sorted(df[name])


def test_semi_synthetic_never_picks_constant_columns():
    rng = np.random.default_rng(0)
    X = np.column_stack(
        [np.full(50, 3.0), rng.random(50), np.zeros(50), rng.random(50)]
    )
    for seed in range(20):
        X_out, _, relevant = make_semi_synthetic(X, n_relevant=2, random_state=seed)
        assert relevant.tolist() == [False, True, False, True]
        np.testing.assert_array_equal(X_out[:, [0, 2]], X[:, [0, 2]])
    with pytest.raises(ValueError, match="2 of them non-constant"):
        make_semi_synthetic(X, n_relevant=3)


def test_semi_synthetic_integer_array_keeps_dtype():
    X = np.arange(60).reshape(20, 3) % 7
    X_out, _, _ = make_semi_synthetic(X, n_relevant=1, random_state=0)
    assert X_out.dtype == X.dtype
    np.testing.assert_array_equal(np.sort(X_out, axis=0), np.sort(X, axis=0))


@pytest.mark.parametrize(
    ("X", "kwargs", "error", "match"),
    [
        (np.ones((10, 3)) * np.arange(3), {"task": "ranking"}, ValueError, "task="),
        (np.arange(10.0), {}, ValueError, "must be 2-D"),
        (np.array([["a", "b"], ["c", "d"]]), {}, ValueError, "not a numeric"),
        (
            np.c_[np.arange(5.0), [0, 1, np.nan, 3, 4]],
            {"n_relevant": 1},
            ValueError,
            r"NaN or infinite values in column\(s\) \[1\]",
        ),
        (
            np.c_[np.arange(5.0), [0, 1, np.inf, 3, 4]],
            {"n_relevant": 1},
            ValueError,
            "SimpleImputer",
        ),
        (
            np.arange(5.0).reshape(1, 5),
            {"n_relevant": 1},
            ValueError,
            "at least 2 rows",
        ),
        (RAND_20x4, {"n_relevant": 0}, ValueError, "1 <= n_relevant <= 3"),
        (RAND_20x4, {"n_relevant": 4}, ValueError, "noise feature"),
        (RAND_20x4, {"n_relevant": 2.0}, TypeError, "must be an int"),
        (RAND_20x4, {"n_relevant": True}, TypeError, "must be an int"),
        (
            sparse.random(20, 4, density=0.5, format="csr", random_state=0),
            {"n_relevant": 1},
            TypeError,
            "toarray",
        ),
    ],
)
def test_semi_synthetic_errors(X, kwargs, error, match):
    with pytest.raises(error, match=match):
        make_semi_synthetic(X, **kwargs)


def test_semi_synthetic_rejects_non_numeric_and_missing_frames():
    pd = pytest.importorskip("pandas")
    base = {"a": np.arange(6.0), "b": np.arange(6.0)[::-1]}
    with pytest.raises(ValueError, match=r"non-numeric column\(s\) 'c' \("):
        make_semi_synthetic(pd.DataFrame({**base, "c": list("abcdef")}), n_relevant=1)
    cat = pd.DataFrame({**base, "c": pd.Categorical(list("aabbcc"))})
    with pytest.raises(ValueError, match="OrdinalEncoder"):
        make_semi_synthetic(cat, n_relevant=1)
    na = pd.DataFrame({**base, "c": pd.array([1, None, 3, 4, 5, 6], dtype="Int64")})
    with pytest.raises(ValueError, match=r"column\(s\) \['c'\]"):
        make_semi_synthetic(na, n_relevant=1)


# ---------------------------------------------------- load_semi_synthetic


@pytest.mark.parametrize("name", ["breast_cancer", "diabetes", "digits", "wine"])
def test_load_semi_synthetic_matches_the_bundled_data(name):
    raw = getattr(sk_datasets, f"load_{name}")().data
    kept = raw.min(axis=0) < raw.max(axis=0)
    X, y, relevant = load_semi_synthetic(
        name, task="classification", n_relevant=3, random_state=0
    )
    assert X.shape == (raw.shape[0], kept.sum()) and X.dtype == np.float64
    assert y.shape == (raw.shape[0],) and set(np.unique(y)) <= {0, 1}
    assert relevant.shape == (kept.sum(),) and relevant.sum() == 3
    np.testing.assert_array_equal(X[:, relevant], raw[:, kept][:, relevant])
    np.testing.assert_array_equal(np.sort(X, axis=0), np.sort(raw[:, kept], axis=0))
    assert (X.min(axis=0) < X.max(axis=0)).all()


def test_load_semi_synthetic_digits_drops_three_constant_pixels():
    X, _, relevant = load_semi_synthetic("digits", random_state=0)
    raw = sk_datasets.load_digits().data
    assert X.shape == (1797, 61)
    np.testing.assert_array_equal(
        np.sort(X, axis=0), np.sort(np.delete(raw, [0, 32, 39], axis=1), axis=0)
    )
    assert relevant.sum() == 5


def test_load_semi_synthetic_errors():
    with pytest.raises(ValueError, match="breast_cancer.*diabetes.*digits.*wine"):
        load_semi_synthetic("iris")
    with pytest.raises(ValueError, match=r"1 <= n_relevant <= 9"):
        load_semi_synthetic("diabetes", n_relevant=10)
    with pytest.raises(ValueError, match="task="):
        load_semi_synthetic("wine", task="survival")


# -------------------------------------------- make_cardinality_simulation

LEVELS = [10, 20, 50, 100]


@pytest.mark.parametrize("case", ["null", "power"])
def test_cardinality_features(case):
    X, y, relevant = make_cardinality_simulation(case, random_state=0)
    assert X.shape == (6000, 5) and X.dtype == np.float64
    assert y.shape == (6000,) and y.dtype == np.int64
    assert relevant.tolist() == [False, case == "power", False, False, False]
    assert stats.kstest(X[:, 0], "norm").pvalue > 1e-3
    for j, k in enumerate(LEVELS, start=1):
        counts = np.bincount(X[:, j].astype(np.int64), minlength=k)
        assert counts.size == k and counts.min() > 0  # codes 0 .. k-1, all drawn
        np.testing.assert_array_equal(X[:, j], np.floor(X[:, j]))
        assert np.abs(_binomial_z(counts, 6000, 1 / k)).max() < Z_MAX
        assert stats.chisquare(counts).pvalue > 1e-3
    # the features are independent of each other
    table = np.histogram2d(X[:, 1], X[:, 2], bins=[10, 20])[0]
    assert stats.chi2_contingency(table).pvalue > 1e-3


def test_cardinality_null_target_is_a_fair_coin_independent_of_x():
    X, y, _ = make_cardinality_simulation("null", random_state=1)
    assert abs(_binomial_z(y.sum(), 6000, 0.5)) < Z_MAX
    for j, k in enumerate(LEVELS, start=1):
        table = np.histogram2d(X[:, j], y, bins=[k, 2])[0]
        assert stats.chi2_contingency(table).pvalue > 1e-3
    assert stats.ks_2samp(X[y == 0, 0], X[y == 1, 0]).pvalue > 1e-3


@pytest.mark.parametrize("alpha", [0.2, 0.05])
def test_cardinality_power_conditional_rates(alpha):
    X, y, _ = make_cardinality_simulation("power", alpha=alpha, random_state=2)
    low = X[:, 1] <= 4
    assert abs(_binomial_z(y[low].sum(), low.sum(), 0.5 + alpha)) < Z_MAX
    assert abs(_binomial_z(y[~low].sum(), (~low).sum(), 0.5 - alpha)) < Z_MAX
    # per level of x1 as well
    for level in range(10):
        rows = X[:, 1] == level
        p = 0.5 + alpha if level <= 4 else 0.5 - alpha
        assert abs(_binomial_z(y[rows].sum(), rows.sum(), p)) < Z_MAX
    # the other categorical features carry no signal
    for j, k in [(2, 20), (3, 50), (4, 100)]:
        table = np.histogram2d(X[:, j], y, bins=[k, 2])[0]
        assert stats.chi2_contingency(table).pvalue > 1e-3


def test_cardinality_as_frame_dtypes_and_values():
    pd = pytest.importorskip("pandas")
    X, y, relevant = make_cardinality_simulation(
        "power", n_samples=300, as_frame=True, random_state=3
    )
    X_np, y_np, relevant_np = make_cardinality_simulation(
        "power", n_samples=300, random_state=3
    )
    assert isinstance(X, pd.DataFrame)
    assert list(X.columns) == ["x0", "x1", "x2", "x3", "x4"]
    assert X["x0"].dtype == np.float64
    for j, k in enumerate(LEVELS, start=1):
        col = X[f"x{j}"]
        assert isinstance(col.dtype, pd.CategoricalDtype)
        assert list(col.cat.categories) == list(range(k))  # unseen levels listed
        np.testing.assert_array_equal(col.cat.codes.to_numpy(), X_np[:, j])
    np.testing.assert_array_equal(X["x0"].to_numpy(), X_np[:, 0])
    np.testing.assert_array_equal(y, y_np)
    np.testing.assert_array_equal(relevant, relevant_np)


def test_cardinality_frame_is_accepted_as_categorical_by_the_boosters():
    pytest.importorskip("pandas")
    import xgboost as xgb
    from sklearn.ensemble import HistGradientBoostingClassifier

    X, y, _ = make_cardinality_simulation(
        "power", n_samples=600, as_frame=True, random_state=4
    )
    booster = xgb.XGBClassifier(
        n_estimators=3,
        max_depth=2,
        enable_categorical=True,
        tree_method="hist",
        n_jobs=1,
    ).fit(X, y)
    assert booster.get_booster().feature_types == ["float", "c", "c", "c", "c"]
    hgb = HistGradientBoostingClassifier(
        max_iter=3, categorical_features="from_dtype"
    ).fit(X, y)
    assert hgb.is_categorical_.tolist() == [False, True, True, True, True]


def test_cardinality_as_frame_without_pandas(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r'pip install pandas \(or the "pandas"'):
        make_cardinality_simulation(n_samples=10, as_frame=True)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"case": "alternative"}, ValueError, r"\['null', 'power'\]"),
        ({"case": "power", "alpha": 0.0}, ValueError, "0 < alpha <= 0.5"),
        ({"case": "power", "alpha": 0.6}, ValueError, "0 < alpha <= 0.5"),
        ({"n_samples": 0}, ValueError, "at least 1"),
        ({"n_samples": 10.5}, TypeError, "must be an int"),
    ],
)
def test_cardinality_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        make_cardinality_simulation(**kwargs)


def test_cardinality_null_ignores_alpha():
    a = make_cardinality_simulation(n_samples=50, alpha=0.9, random_state=0)
    b = make_cardinality_simulation(n_samples=50, random_state=0)
    np.testing.assert_array_equal(a[1], b[1])


# --------------------------------------------- make_unbiased_gain_example


def test_unbiased_gain_example_law():
    n = 50000
    X, y, relevant = make_unbiased_gain_example(n, random_state=0)
    assert X.shape == (n, 3) and X.dtype == np.float64 and y.dtype == np.float64
    assert relevant.tolist() == [True, False, False]
    x1, x2, x3 = X.T
    assert set(np.unique(x1)) == {0.0, 1.0}
    assert abs(_binomial_z(x1.sum(), n, 0.5)) < Z_MAX
    counts = np.bincount(x2.astype(np.int64))
    assert counts.size == 6 and stats.chisquare(counts).pvalue > 1e-3
    assert stats.kstest(x3, "norm").pvalue > 1e-3
    # y - 0.1 x1 is standard normal, independent of the features
    assert stats.kstest(y - 0.1 * x1, "norm").pvalue > 1e-3
    z, z_zero = _ols_z(X, y, np.array([0.0, 0.1, 0.0, 0.0]))
    assert np.abs(z).max() < Z_MAX
    assert z_zero[1] > Z_MAX


def test_unbiased_gain_example_errors():
    with pytest.raises(ValueError, match="at least 1"):
        make_unbiased_gain_example(0)
    with pytest.raises(TypeError, match="must be an int"):
        make_unbiased_gain_example("1000")


# ------------------------------------------ parameter validation, all five

# The public generators, each with arguments that make it cheap to call.
PUBLIC = {
    "make_paper_simulation": (make_paper_simulation, (), {"n_samples": 20}),
    "make_semi_synthetic": (make_semi_synthetic, (RAND_20x4,), {"n_relevant": 1}),
    "load_semi_synthetic": (load_semi_synthetic, ("wine",), {}),
    "make_cardinality_simulation": (make_cardinality_simulation, (), {"n_samples": 20}),
    "make_unbiased_gain_example": (make_unbiased_gain_example, (), {"n_samples": 20}),
}
N_SAMPLES = ["make_paper_simulation", "make_cardinality_simulation"]
N_SAMPLES += ["make_unbiased_gain_example"]
TASKED = ["make_paper_simulation", "make_semi_synthetic", "load_semi_synthetic"]


def _call(name, **kwargs):
    func, args, defaults = PUBLIC[name]
    return func(*args, **{**defaults, **kwargs})


def test_make_paper_simulation_refuses_float_n_samples():
    # it used to be rounded down by int(): 20.7 rows gave 20
    with pytest.raises(TypeError, match=r"n_samples must be an int, got 20\.7"):
        make_paper_simulation(n_samples=20.7)


def test_make_paper_simulation_refuses_too_few_rows():
    with pytest.raises(ValueError, match="must be at least 2; the noise level"):
        make_paper_simulation(n_samples=1)


@pytest.mark.parametrize("name", N_SAMPLES)
@pytest.mark.parametrize(
    "n_samples", [20.7, 20.0, np.float64(20.0), True, False, "20", None]
)
def test_n_samples_must_be_an_int_not_a_bool(name, n_samples):
    with pytest.raises(TypeError, match="n_samples must be an int"):
        _call(name, n_samples=n_samples)


@pytest.mark.parametrize("name", N_SAMPLES)
def test_n_samples_accepts_numpy_integers(name):
    X, y, relevant = _call(name, n_samples=np.int64(20), random_state=0)
    X_int, y_int, _ = _call(name, n_samples=20, random_state=0)
    assert len(y) == 20
    np.testing.assert_array_equal(X, X_int)
    np.testing.assert_array_equal(y, y_int)


@pytest.mark.parametrize("name", N_SAMPLES)
@pytest.mark.parametrize("n_samples", [0, -5])
def test_n_samples_below_the_minimum_is_refused(name, n_samples):
    with pytest.raises(ValueError, match=rf"n_samples={n_samples} must be at least"):
        _call(name, n_samples=n_samples)


@pytest.mark.parametrize("name", TASKED)
@pytest.mark.parametrize("task", ["ranking", "Regression", None, 1, ["regression"]])
def test_unknown_task_is_refused(name, task):
    with pytest.raises(ValueError, match=r"task=.* is not supported; choose one of"):
        _call(name, task=task)


@pytest.mark.parametrize("name", ["make_semi_synthetic", "load_semi_synthetic"])
@pytest.mark.parametrize("n_relevant", [1.0, True, "1", None])
def test_n_relevant_must_be_an_int_not_a_bool(name, n_relevant):
    with pytest.raises(TypeError, match="n_relevant must be an int"):
        _call(name, n_relevant=n_relevant)


@pytest.mark.parametrize("name", list(PUBLIC))
@pytest.mark.parametrize(
    "random_state", ["0", -1, 2**32, 1.5, np.random.default_rng(0)]
)
def test_bad_random_state_is_refused(name, random_state):
    from sklearn.utils._param_validation import InvalidParameterError

    with pytest.raises(
        InvalidParameterError, match=rf"'random_state' parameter of {name} must be"
    ) as info:
        _call(name, random_state=random_state)
    assert isinstance(info.value, ValueError) and isinstance(info.value, TypeError)


@pytest.mark.parametrize("name", list(PUBLIC))
def test_numpy_integer_random_state_is_accepted(name):
    X, y, _ = _call(name, random_state=np.int64(3))
    X_int, y_int, _ = _call(name, random_state=3)
    np.testing.assert_array_equal(X, X_int)
    np.testing.assert_array_equal(y, y_int)


@pytest.mark.parametrize("name", [None, 3, ["wine"], "Wine", "load_wine"])
def test_load_semi_synthetic_refuses_unknown_names(name):
    with pytest.raises(ValueError, match=r"name=.* is not supported; choose one of"):
        load_semi_synthetic(name)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"task": "survival"},
        {"n_relevant": 2.0},
        {"random_state": "0"},
        {"name": "iris"},
    ],
)
def test_load_semi_synthetic_checks_parameters_before_loading(monkeypatch, kwargs):
    def no_loading():
        raise AssertionError("the data were loaded before the parameters checked")

    monkeypatch.setattr(sk_datasets, "load_wine", no_loading)
    with pytest.raises((ValueError, TypeError)):
        load_semi_synthetic(**{"name": "wine", **kwargs})


def test_make_semi_synthetic_refuses_a_scalar_x():
    from sklearn.utils._param_validation import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="'X' parameter.*array-like"):
        make_semi_synthetic(5.0, n_relevant=1)


@pytest.mark.parametrize("case", ["null", "power"])
@pytest.mark.parametrize("alpha", ["0.2", None, [0.2]])
def test_cardinality_alpha_must_be_a_number_in_both_cases(case, alpha):
    from sklearn.utils._param_validation import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="'alpha' parameter"):
        make_cardinality_simulation(case, n_samples=20, alpha=alpha)


@pytest.mark.parametrize("alpha", [float("nan"), float("inf"), -0.1])
def test_cardinality_power_refuses_alpha_out_of_range(alpha):
    with pytest.raises(ValueError, match="0 < alpha <= 0.5"):
        make_cardinality_simulation("power", n_samples=20, alpha=alpha)


def test_cardinality_alpha_accepts_numpy_floats():
    a = make_cardinality_simulation(
        "power", n_samples=50, alpha=np.float32(0.25), random_state=0
    )
    b = make_cardinality_simulation("power", n_samples=50, alpha=0.25, random_state=0)
    np.testing.assert_array_equal(a[1], b[1])


@pytest.mark.parametrize("as_frame", ["yes", 1, 0, None])
def test_cardinality_as_frame_must_be_a_bool(as_frame):
    from sklearn.utils._param_validation import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="'as_frame' parameter"):
        make_cardinality_simulation(n_samples=20, as_frame=as_frame)


def test_cardinality_as_frame_accepts_numpy_bool():
    X, _, _ = make_cardinality_simulation(
        n_samples=20, as_frame=np.bool_(False), random_state=0
    )
    assert isinstance(X, np.ndarray)


@pytest.mark.parametrize("value", [20.7, True])
def test_unbiased_gain_example_refuses_positional_float_and_bool(value):
    with pytest.raises(TypeError, match="n_samples must be an int"):
        make_unbiased_gain_example(value)


@pytest.mark.parametrize("name", list(PUBLIC))
def test_validation_keeps_name_signature_and_docstring(name):
    import inspect

    from skl_treeinner import datasets

    func = getattr(datasets, name)
    assert func.__name__ == name
    assert func.__module__.startswith("skl_treeinner.datasets.")
    assert "\n    Examples\n    --------\n    >>> " in func.__doc__
    assert inspect.signature(func) == inspect.signature(func.__wrapped__)
    assert "random_state" in func._skl_parameter_constraints
