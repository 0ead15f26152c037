"""Fuzzing the selector's input (issue 28): our error before any fit, or finite results.

hypothesis draws X (numpy, pandas with every dtype a user meets, polars, scipy
sparse), its shape (0 to 3 columns, 0 to 40 rows), special values (NaN, ±inf,
beyond float32, huge and tiny), repeated names, and y (numbers, classes,
strings, booleans, NaN, a single value). For every draw, ``fit`` either raises
a ``ValueError`` or ``TypeError`` whose message was written in this package
(raised from a frame of ``skl_treeinner``) before the booster was fitted once,
or returns a selector whose statistics are finite and whose p-values are
probabilities.
"""

import traceback

import numpy as np
import pytest
import xgboost as xgb
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skl_treeinner import TreeInnerSelector

pd = pytest.importorskip("pandas")

SPECIAL = [np.nan, np.inf, -np.inf, 1e308, -4e38, 1e30, 1e-308, 0.0]
KINDS = [
    "float",
    "int",
    "bool",
    "nullable-int",
    "nullable-bool",
    "category",
    "text",
    "datetime",
    "timedelta",
]


def _column(kind, rng, n, specials):
    x = rng.normal(size=n)
    if kind == "float":
        if specials and n:
            x[rng.integers(0, n, size=min(n, 2))] = rng.choice(SPECIAL, size=min(n, 2))
        return x
    if kind == "int":
        return rng.integers(-5, 5, size=n)
    if kind == "bool":
        return x > 0
    if kind == "nullable-int":
        return pd.array([None if v > 1.2 else int(v * 10) for v in x], dtype="Int64")
    if kind == "nullable-bool":
        return pd.array([None if v > 1.2 else bool(v > 0) for v in x], dtype="boolean")
    if kind == "category":
        return pd.Categorical(np.array(["a", "b", "c"])[rng.integers(0, 3, size=n)])
    if kind == "text":
        return np.array(["red", "green", "blue"], dtype=object)[rng.integers(0, 3, n)]
    if kind == "datetime":
        return pd.date_range("2021-01-01", periods=n, freq="D")
    return pd.to_timedelta(rng.integers(0, 100, size=n), unit="h")


def _target(kind, rng, n):
    x = rng.normal(size=n)
    if kind == "float":
        return x
    if kind == "float-nan":
        y = x.copy()
        if n:
            y[0] = np.nan
        return y
    if kind == "classes":
        return (x > 0).astype(int)
    if kind in ("strings", "strings-nan"):
        y = np.array(["yes", "no"], dtype=object)[(x > 0).astype(int)]
        if kind == "strings-nan" and n:
            y[-1] = np.nan  # issue 54: numpy's sort failed on it
        return y
    if kind == "bool":
        return x > 0
    if kind == "huge":
        return x * 1e25
    return np.zeros(n)  # a single value


@st.composite
def inputs(draw):
    # Weighted towards input that fits, so that finite statistics are checked
    # often too, not only refusals.
    n = draw(st.sampled_from([0, 1, 2, 5, 40, 40, 40]))
    p = draw(st.integers(0, 3))
    container = draw(st.sampled_from(["numpy", "pandas", "polars", "sparse"]))
    kinds = [
        draw(st.sampled_from(["float"] * 6 + ["int"] * 2 + KINDS)) for _ in range(p)
    ]
    specials = draw(st.booleans())
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    columns = [_column(k, rng, n, specials) for k in kinds]
    names = [f"c{j}" for j in range(p)]
    if p >= 2 and draw(st.booleans()):
        names[1] = names[0]  # a repeated name
    if container == "pandas":
        X = pd.DataFrame(dict(enumerate(columns)))
        X.columns = names
    elif container == "polars":
        pl = pytest.importorskip("polars")
        pytest.importorskip("pyarrow")
        frame = pd.DataFrame(
            {f"c{j}": c for j, c in enumerate(columns)}, index=range(n)
        )
        X = pl.from_pandas(frame)  # Categorical, nullable, Datetime, Duration
    else:
        X = (
            np.column_stack([np.asarray(c, dtype=object) for c in columns])
            if p
            else np.empty((n, 0))
        )
        if all(k in ("float", "int", "bool") for k in kinds):
            X = X.astype(np.float64)
        if container == "sparse":
            from scipy import sparse

            try:
                X = sparse.csr_matrix(X.astype(np.float64))
            except (TypeError, ValueError):
                pass  # object columns: the array itself
    y_kind = draw(
        st.sampled_from(
            ["float"] * 3
            + ["classes"] * 2
            + ["float-nan", "strings", "strings-nan", "bool", "huge", "one"]
        )
    )
    y = _target(y_kind, rng, n)
    return X, y, (container, n, p, kinds, specials, y_kind)


def _ours(error):
    """Whether the exception was raised by a frame of this package."""
    frames = traceback.extract_tb(error.__traceback__)
    return bool(frames) and "skl_treeinner" in frames[-1].filename


@pytest.fixture(scope="module")
def fits():
    return []


@pytest.mark.slow
@settings(
    max_examples=500,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(case=inputs())
def test_bad_input_gets_our_error_before_any_fit_or_finite_statistics(case, fits):
    X, y, description = case
    fitted = []
    classes = (xgb.XGBRegressor, xgb.XGBClassifier)
    originals = {cls: cls.fit for cls in classes}

    def counting(original):
        def fit(self, *args, **kwargs):
            fitted.append(1)
            return original(self, *args, **kwargs)

        return fit

    for cls in classes:
        cls.fit = counting(originals[cls])
    try:
        sel = TreeInnerSelector(
            xgb.XGBClassifier(n_estimators=3, max_depth=2, n_jobs=1)
            if description[-1] in ("classes", "strings", "strings-nan", "bool")
            else xgb.XGBRegressor(n_estimators=3, max_depth=2, n_jobs=1),
            cv=2,
            random_state=0,
        ).fit(X, y)
    except (ValueError, TypeError) as e:
        fits.append(("refused", description))
        assert _ours(e), (description, "".join(traceback.format_exception(e)))
        assert not fitted, (description, str(e))
        return
    finally:
        for cls in classes:
            cls.fit = originals[cls]
    fits.append(("fitted", description))
    for name in ("scores_", "scores_se_", "pvalues_"):
        assert np.isfinite(getattr(sel, name)).all(), (description, name)
    assert ((sel.pvalues_ >= 0) & (sel.pvalues_ <= 1)).all()
