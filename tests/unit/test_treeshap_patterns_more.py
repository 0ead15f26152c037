"""TreeSHAP by leaf patterns for scikit-learn and CatBoost models (issue 31).

HistGradientBoosting and GradientBoosting: their split rules (``x <=
threshold``; NaN by ``missing_go_to_left``) and shap's covers (row counts,
``weighted_n_node_samples``) are read into ``TreeEnsemble.split_rule``.
CatBoost's symmetric trees need no rule: a row's leaf number holds its side at
every level, so numerical, one-hot and CTR splits alike are read off
``calc_leaf_indexes``. Every round's values must equal the library's own
per-round TreeSHAP (shap's TreeExplainer, CatBoost's ``ShapValues``) with the
booster path refused while ours runs, and the scores the numpy path's.
"""

import numpy as np
import pandas as pd
import pytest
from conftest import patterns_only
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.ensemble import (
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
)

from skl_treeinner import tree_inner
from skl_treeinner._kernels import _compiled as _kernels
from skl_treeinner._readers import read_model

pytest.importorskip("skl_treeinner._kernels.cpu._residuals")
pytest.importorskip("shap")
cb = pytest.importorskip("catboost")
# Newton leaf values (log loss) weaken the gain identity, not TreeSHAP's.
pytestmark = pytest.mark.filterwarnings(
    "ignore::skl_treeinner.exceptions.IdentityWarning"
)


def _data(n=400, p=5, seed=0, nan=0.1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = X[:, 0] + X[:, 1] * X[:, 2] + rng.normal(size=n)
    if nan:
        X[rng.random(X.shape) < nan] = np.nan
    return X, y


def _labels(y, kind):
    if kind == "binary":
        return (y > np.median(y)).astype(int)
    if kind == "multiclass":
        return np.digitize(y, np.quantile(y, [0.33, 0.66]))
    return y


def _model(library, kind, seed=0, depth=4, n_trees=6):
    X, y = _data(seed=seed, nan=0.0 if library == "gb" else 0.1)
    y = _labels(y, kind)
    regress = kind == "regression"
    if library == "hgb":
        cls = (
            HistGradientBoostingRegressor if regress else HistGradientBoostingClassifier
        )
        model = cls(max_iter=n_trees, max_leaf_nodes=2**depth, random_state=seed)
    elif library == "gb":
        cls = GradientBoostingRegressor if regress else GradientBoostingClassifier
        model = cls(n_estimators=n_trees, max_depth=depth, random_state=seed)
    else:
        cls = cb.CatBoostRegressor if regress else cb.CatBoostClassifier
        model = cls(
            iterations=n_trees, depth=depth, random_seed=seed, verbose=0,
            allow_writing_files=False, thread_count=1,
        )  # fmt: skip
    half = len(y) // 2
    return model.fit(X[:half], y[:half]), X[half:], y[half:]


def _assert_rounds_equal_the_librarys(model, X, atol=1e-9):
    reader = read_model(model)
    ens = reader.ensemble
    kernels = _kernels.kernels_for(ens, 1)
    leaves = reader.apply(X)
    own = dict(reader.iteration_shap(X))  # the library's own, per round
    scale = max(np.abs(v).max() for v in own.values())
    with patterns_only(type(reader)):
        for r, phi in own.items():
            for k in range(ens.n_outputs):
                residual = np.zeros((len(X), ens.n_trees))
                residual[:, ens.iteration_indptr[r] + k] = 1.0
                got = kernels.treeshap_terms(
                    reader.treeshap_rows(X), leaves, residual, per_row=True
                )
                np.testing.assert_allclose(got, phi[:, k], atol=atol * scale)


@pytest.mark.parametrize("library", ["hgb", "gb", "catboost"])
@pytest.mark.parametrize("kind", ["regression", "binary", "multiclass"])
def test_every_round_equals_the_librarys_own(library, kind):
    model, X, _ = _model(library, kind)
    _assert_rounds_equal_the_librarys(model, X)


@pytest.mark.parametrize("library", ["hgb", "gb", "catboost"])
def test_scores_equal_the_booster_path(library, monkeypatch):
    model, X, y = _model(library, "regression", n_trees=10)
    w = np.random.default_rng(1).uniform(0.5, 2.0, size=len(y))
    reader_type = type(read_model(model))
    for kwargs in ({}, {"sample_weight": w}, {"per_sample": True}):
        with monkeypatch.context() as m:
            m.setenv(_kernels.ENV_VAR, "numpy")
            ref = tree_inner(model, X, y, attribution="treeshap", **kwargs)
        with patterns_only(reader_type):
            got = tree_inner(model, X, y, attribution="treeshap", **kwargs)
        np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-12)


def test_catboost_categorical_splits_one_hot_and_ctr():
    # A 2-level column (one-hot) and a 12-level one (CTR splits): CatBoost's
    # own hashing decides their sides, and the leaf numbers carry them.
    rng = np.random.default_rng(3)
    n = 600
    frame = pd.DataFrame(
        {
            "x": rng.normal(size=n),
            "two": rng.choice(["a", "b"], size=n),
            "many": rng.choice([f"c{i}" for i in range(12)], size=n),
        }
    )
    effect = {f"c{i}": i % 4 for i in range(12)}
    y = frame["x"] + (frame["two"] == "a") + frame["many"].map(effect)
    y = y + rng.normal(size=n)
    model = cb.CatBoostRegressor(
        iterations=8, depth=4, cat_features=["two", "many"], max_ctr_complexity=1,
        verbose=0, random_seed=0, allow_writing_files=False, thread_count=1,
    ).fit(frame[:300], y[:300])  # fmt: skip
    import json
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model.json")
        model.save_model(path, format="json")
        with open(path) as f:
            trees = json.load(f)["oblivious_trees"]
    kinds = {split["split_type"] for tree in trees for split in tree["splits"]}
    assert kinds == {"FloatFeature", "OneHotFeature", "OnlineCtr"}
    _assert_rounds_equal_the_librarys(model, frame[300:])


def test_hgb_with_categorical_splits_has_no_rule():
    rng = np.random.default_rng(4)
    X = np.column_stack([rng.normal(size=400), rng.integers(0, 6, size=400)])
    y = X[:, 0] + (X[:, 1] % 3 == 0) + rng.normal(size=400)
    model = HistGradientBoostingRegressor(max_iter=5, categorical_features=[1]).fit(
        X, y
    )
    reader = read_model(model)
    assert reader.ensemble.split_rule is None
    assert not reader.has_treeshap_rows(X)


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    library=st.sampled_from(["hgb", "gb", "catboost"]),
    kind=st.sampled_from(["regression", "binary", "multiclass"]),
    seed=st.integers(0, 10_000),
    depth=st.integers(1, 6),
)
def test_rounds_equal_the_librarys_property(library, kind, seed, depth):
    model, X, _ = _model(library, kind, seed=seed, depth=depth, n_trees=3)
    _assert_rounds_equal_the_librarys(model, X)


@pytest.mark.parametrize("library", ["hgb", "catboost"])
@pytest.mark.parametrize("kind", ["regression", "binary", "multiclass"])
@pytest.mark.parametrize("attribution", ["predecomp", "treeshap"])
def test_one_pass_for_the_terms_and_their_noise(library, kind, attribution):
    # The selector's terms and its noise model's terms at other targets come
    # from one pass (channels): the same numbers as one pass per target.
    from skl_treeinner._scoring._noise import row_noise_sums, terms_and_noise
    from skl_treeinner._scoring._sums import row_terms

    model, X, y = _model(library, kind)
    reader = read_model(model)
    X, n, y, w = reader.rows(X, y, np.linspace(0.5, 1.5, len(y)))
    z, noise = terms_and_noise(reader, X, n, y, w, attribution=attribution, sums=[None])
    z_ref = row_terms(reader, X, n, y, w, attribution=attribution)
    noise_ref = row_noise_sums(
        reader, X, n, y, w, attribution=attribution, terms=z_ref, sums=[None]
    )
    np.testing.assert_allclose(z, z_ref, rtol=1e-12, atol=1e-14)
    for got, ref in zip(noise[0], noise_ref[0], strict=True):
        np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-14)
