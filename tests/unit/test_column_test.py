"""The test of a column (``test="column"``): resampled terms and their test.

The compiled kernel reroutes only the trees that split on a column by the
library's split rule; it must equal the booster's own routing of rows whose
column was resampled. The selector's statistics must be the paired t-test of
the terms against their resampled mean, built here from the public
``tree_inner`` on explicitly resampled rows. What it keeps on data with a
known truth is in tests/statistical/test_column_test_power.py.
"""

import functools

import numpy as np
import pytest
import xgboost as xgb
from scipy import stats

from skl_treeinner import TreeInnerSelector, tree_inner
from skl_treeinner._engines._plan import selection_seeds
from skl_treeinner._readers import read_model
from skl_treeinner._scoring import _noise
from skl_treeinner._scoring import _permutation as perm

lgb = pytest.importorskip("lightgbm")


def _data(n=400, p=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    X[rng.random((n, p)) < 0.05] = np.nan
    signal = np.nan_to_num(X[:, 0]) + 2 * np.nan_to_num(X[:, 1])
    y = signal + rng.normal(size=n)
    return X, y


def _targets(kind, y):
    if kind == "binary":
        return (y > 0).astype(int)
    if kind == "multiclass":
        return np.digitize(y, [-1.0, 1.0])
    return y


MODELS = {
    "xgboost-regression": lambda: xgb.XGBRegressor(n_estimators=30, max_depth=3),
    "xgboost-binary": lambda: xgb.XGBClassifier(n_estimators=30, max_depth=3),
    "xgboost-multiclass": lambda: xgb.XGBClassifier(n_estimators=15, max_depth=3),
    "lightgbm-regression": lambda: lgb.LGBMRegressor(n_estimators=30, verbose=-1),
    "lightgbm-multiclass": lambda: lgb.LGBMClassifier(n_estimators=15, verbose=-1),
}


UNITS = pytest.mark.parametrize(
    "units", [np.arange(6), np.array([0, 0, 1, -1, 1, 2])], ids=["columns", "groups"]
)


def _kernel_and_reference(name, units, attribution, rows, reference_setup=None):
    """The compiled resampled terms and ``_rescored``'s, the booster's scoring.

    ``rows`` is (fitted, all): a model of ``MODELS[name]`` fitted on the
    first rows of ``_data``, scoring the others with weights, 2 draws;
    ``reference_setup(reader)`` runs between the two (to switch a path off).
    """
    fitted, n_rows = rows
    X, y = _data(n_rows)
    y = _targets(name.split("-")[1], y)
    model = MODELS[name]().fit(X[:fitted], y[:fitted])
    reader = read_model(model)
    rows, n, y_rows, _ = reader.rows(X[fitted:], y[fitted:])
    w = np.random.default_rng(1).random(n)
    ys = _noise.noise_targets(reader.ensemble, y_rows)
    sources = perm.draw_sources(n, 2, seed=3)
    n_units = int(units.max()) + 1
    ptr, trees = perm.unit_trees(reader.ensemble, units, n_units)
    compiled = perm._compiled(
        reader, rows, ys, w, attribution=attribution, unit_of=units, ptr=ptr,
        trees=trees, sources=sources, own=None,
    )  # fmt: skip
    assert compiled is not None  # the rule covers these models
    if reference_setup is not None:
        reference_setup(reader)
    booster = perm._rescored(
        reader, rows, n, ys, w, attribution=attribution, unit_of=units, ptr=ptr,
        sources=sources,
    )  # fmt: skip
    assert np.abs(booster).max() > 0
    return compiled, booster


@pytest.mark.parametrize("name", sorted(MODELS))
@UNITS
def test_rerouted_trees_equal_the_boosters_routing(name, units):
    """The rule-rerouted terms equal the booster's routing of resampled rows."""
    compiled, booster = _kernel_and_reference(name, units, "predecomp", (300, 400))
    np.testing.assert_allclose(
        compiled, booster, rtol=1e-9, atol=1e-9 * np.abs(booster).max()
    )


@pytest.mark.parametrize("name", sorted(MODELS))
@UNITS
def test_resampled_treeshap_equals_the_boosters_treeshap_of_resampled_rows(
    name, units, monkeypatch
):
    """The TreeSHAP kernel's resampled terms: the booster's own TreeSHAP.

    The reference scores every resampled copy of the rows with the booster's
    per-round TreeSHAP (``pred_contribs`` / ``pred_contrib``), not ours.
    """

    def booster_treeshap(reader):
        monkeypatch.setattr(type(reader), "has_treeshap_rows", lambda self, X: False)

    compiled, booster = _kernel_and_reference(
        name, units, "treeshap", (200, 260), booster_treeshap
    )
    np.testing.assert_allclose(
        compiled, booster, rtol=1e-6, atol=1e-6 * np.abs(booster).max()
    )


@pytest.mark.parametrize("attribution", ["predecomp", "treeshap"])
def test_selector_statistics_are_the_paired_test_of_resampled_rows(attribution):
    """scores_, null_scores_, pvalues_: tree_inner on explicitly resampled rows.

    With TreeSHAP the selector scores both targets of the noise floor in one
    pass (two channels); here each is a call of its own.
    """
    terms = functools.partial(tree_inner, per_sample=True, attribution=attribution)
    X, y = _data(600)
    model = xgb.XGBRegressor(n_estimators=40, max_depth=3).fit(X[:300], y[:300])
    X_new, y_new = X[300:], y[300:]
    selector = TreeInnerSelector(
        model, prefit=True, test="column", attribution=attribution, random_state=5
    )
    selector.fit(X_new, y_new)
    split_seed = selection_seeds(5)[0]
    sources = perm.draw_sources(len(y_new), perm.DRAWS, [split_seed, 0])
    z = terms(model, X_new, y_new)
    z1 = terms(model, X_new, y_new + 1.0)
    drawn = np.zeros_like(z)
    drawn1 = np.zeros_like(z)
    for j in range(X.shape[1]):
        for src in sources:
            Xb = X_new.copy()
            Xb[:, j] = X_new[src, j]
            drawn[:, j] += terms(model, Xb, y_new)[:, j]
            drawn1[:, j] += terms(model, Xb, y_new + 1.0)[:, j]
    drawn /= len(sources)
    drawn1 /= len(sources)
    d = z - drawn
    slope = (z1 - drawn1) - d
    dispersion = np.mean((y_new - model.predict(X_new).astype(np.float64)) ** 2)
    m = len(y_new)
    se = np.maximum(
        np.sqrt(m) * d.std(axis=0, ddof=1), np.sqrt((slope**2).sum(0) * dispersion)
    )
    np.testing.assert_allclose(selector.scores_, z.sum(0), rtol=1e-9)
    np.testing.assert_allclose(selector.null_scores_, drawn.sum(0), rtol=1e-9)
    np.testing.assert_allclose(selector.scores_se_, se, rtol=1e-4)
    p = stats.t.sf(d.sum(0) / se, df=m - 1)
    np.testing.assert_allclose(selector.pvalues_, p, rtol=1e-3, atol=1e-12)
    assert selector.support_[:2].all() and not selector.support_[2:].any()


def test_group_members_are_resampled_together():
    """A group's test resamples its members jointly: not the sum of their tests."""
    X, y = _data(600)
    groups = {"pair": [0, 2]}
    kw = dict(cv=3, random_state=0, test="column")
    booster = xgb.XGBRegressor(n_estimators=30, max_depth=3)
    selector = TreeInnerSelector(booster, feature_groups=groups, **kw).fit(X, y)
    plain = TreeInnerSelector(booster, **kw).fit(X, y)
    np.testing.assert_allclose(selector.scores_, plain.scores_)
    np.testing.assert_array_equal(selector.pvalues_, plain.pvalues_)
    pair = list(selector.groups_).index("pair")
    assert selector.group_scores_[pair] == pytest.approx(
        selector.scores_[[0, 2]].sum(), rel=1e-9
    )
    # The joint draw differs from the members' own draws added.
    joint = selector.group_scores_se_[pair]
    assert joint > 0
    assert selector.group_pvalues_[pair] < 0.01  # carries column 0's signal


def test_the_column_test_is_the_default_of_the_selector_and_the_cli():
    from skl_treeinner._cli._main import build_parser

    assert TreeInnerSelector().get_params()["test"] == "column"
    args = build_parser().parse_args(["select", "data.csv", "--target", "y"])
    assert args.test == "column"


@pytest.mark.parametrize("test", ["column", "model"])
def test_reproducible_and_the_model_test_unchanged(test):
    X, y = _data(500)
    kw = dict(cv=3, random_state=2, test=test)
    booster = xgb.XGBRegressor(n_estimators=20, max_depth=3)
    a = TreeInnerSelector(booster, **kw).fit(X, y)
    b = TreeInnerSelector(booster, **kw).fit(X, y)
    np.testing.assert_array_equal(a.pvalues_, b.pvalues_)
    assert hasattr(a, "null_scores_") == (test == "column")


def test_every_library_runs_the_column_test():
    """Where the split rule does not cover the model, the booster rescores."""
    import pandas as pd
    from sklearn.ensemble import (
        GradientBoostingRegressor,
        HistGradientBoostingRegressor,
    )

    X, y = _data(400)
    X = np.nan_to_num(X)
    frame = pd.DataFrame(X, columns=[f"c{i}" for i in range(6)])
    frame["cat"] = pd.Categorical(np.random.default_rng(0).integers(0, 4, 400))
    models = [
        (HistGradientBoostingRegressor(max_iter=20, categorical_features=[6]), frame),
        (GradientBoostingRegressor(n_estimators=20), X),
        (lgb.LGBMRegressor(n_estimators=20, verbose=-1), frame),
        (xgb.XGBRegressor(n_estimators=20, enable_categorical=True), frame),
    ]
    for model, data in models:
        selector = TreeInnerSelector(model, cv=None, test="column", random_state=0)
        selector.fit(data, y)
        assert np.isfinite(selector.pvalues_).all()
        assert selector.pvalues_[1] < 0.01  # the strong column


@pytest.mark.parametrize("attribution", ["predecomp", "treeshap"])
def test_draws_of_equal_values_take_the_rows_own_terms(attribution):
    """The kernel's shortcut (a source row with the same values) changes nothing."""
    rng = np.random.default_rng(4)
    X = rng.integers(0, 3, size=(500, 5)).astype(float)  # many equal values
    X[rng.random(X.shape) < 0.05] = np.nan
    y = np.nan_to_num(X[:, 0]) + rng.normal(size=500)
    if attribution == "predecomp":
        model = xgb.XGBRegressor(n_estimators=30, max_depth=3)
    else:  # leaf-wise trees: leaves with many path features
        model = lgb.LGBMRegressor(n_estimators=30, num_leaves=15, verbose=-1)
    model.fit(X[:300], y[:300])
    reader = read_model(model)
    rows, n, y_rows, _ = reader.rows(X[300:], y[300:])
    ys = _noise.noise_targets(reader.ensemble, y_rows)
    units = np.arange(5)
    ptr, trees = perm.unit_trees(reader.ensemble, units, 5)
    sources = perm.draw_sources(n, 3, seed=0)
    own = np.stack(
        [
            tree_inner(model, X[300:], yc, per_sample=True, attribution=attribution)
            for yc in ys
        ]
    )
    kw = dict(unit_of=units, ptr=ptr, trees=trees, sources=sources)
    kw["attribution"] = attribution
    walked = perm._compiled(reader, rows, ys, None, own=None, **kw)
    shortcut = perm._compiled(reader, rows, ys, None, own=own, **kw)
    np.testing.assert_allclose(shortcut, walked, rtol=1e-9, atol=1e-12)


def test_int_cv_chains_its_folds_for_the_column_test():
    """cv=k with test="column": split j fits on folds 0..j, holds out fold j + 1."""
    X, y = _data(600)
    booster = xgb.XGBRegressor(n_estimators=10, max_depth=2)
    column = TreeInnerSelector(booster, cv=4, test="column", random_state=0)
    column.fit(X, y)
    model = TreeInnerSelector(booster, cv=4, test="model", random_state=0).fit(X, y)
    assert len(column.estimators_) == 3 and len(model.estimators_) == 4
    assert column.n_scored_rows_ == 450 and model.n_scored_rows_ == 600
    # The folds are the symmetric fit's, in a row.
    from skl_treeinner._engines.memory._splits import chain

    rng = np.random.default_rng(0)
    folds = np.array_split(rng.permutation(12), 4)
    chained = chain([(None, f) for f in folds])
    for j, (train, test) in enumerate(chained):
        np.testing.assert_array_equal(test, np.sort(folds[j + 1]))
        np.testing.assert_array_equal(train, np.sort(np.concatenate(folds[: j + 1])))


def test_sparse_rows_resample_only_the_units_columns():
    """Stored zeros and NaN of the other columns stay as they are (sparse rows).

    To XGBoost an explicit 0 is a value and an absent entry is missing; a
    resampled copy must keep both in every column but the unit's.
    """
    from scipy import sparse

    X = sparse.csr_matrix(
        (
            np.array([1, np.nan, 0.0, 2, 3, np.nan, 5, 7]),
            np.array([0, 1, 2, 0, 1, 2, 1, 2]),
            np.array([0, 3, 6, 8]),
        ),
        shape=(3, 3),
    )
    out = perm._with_columns_from(X, np.array([0]), np.array([1, 2, 0]))
    assert out.format == "csr" and out.nnz == X.nnz
    dense = out.toarray()
    np.testing.assert_array_equal(dense[:, 0], [2, 0, 1])
    np.testing.assert_array_equal(dense[:, 1:], X.toarray()[:, 1:])
    first = slice(out.indptr[0], out.indptr[1])
    stored = dict(zip(out.indices[first].tolist(), out.data[first], strict=True))
    assert stored[2] == 0.0 and np.isnan(stored[1])  # its own, still stored


def test_sparse_rows_give_the_dense_rows_column_test():
    """The booster rescores sparse rows; with every entry stored, as dense rows."""
    from scipy import sparse

    X, y = _data(500)
    X = np.nan_to_num(X, nan=0.5)
    model = xgb.XGBRegressor(n_estimators=20, max_depth=3).fit(X[:300], y[:300])
    kw = dict(prefit=True, test="column", random_state=0)
    dense = TreeInnerSelector(model, **kw).fit(X[300:], y[300:])
    stored = sparse.csr_matrix(X[300:])  # no zero in X: every entry is stored
    assert stored.nnz == X[300:].size
    rows = TreeInnerSelector(model, **kw).fit(stored, y[300:])
    np.testing.assert_allclose(rows.pvalues_, dense.pvalues_, rtol=1e-7, atol=1e-12)
    np.testing.assert_allclose(rows.null_scores_, dense.null_scores_, rtol=1e-7)


def test_the_kernels_misrouted_status_is_the_one_the_caller_warns_of():
    from skl_treeinner._kernels.cpu import _permute as _numba_permute
    from skl_treeinner._kernels.cpu import _permute_shap as _numba_permute_shap

    assert perm.MISROUTED == _numba_permute.MISROUTED == _numba_permute_shap.MISROUTED
    assert _numba_permute_shap.TOO_DEEP != perm.MISROUTED
