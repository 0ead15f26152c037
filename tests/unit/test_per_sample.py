"""tree_inner(per_sample=True): one row of Eq. 21's sum per row of X.

Checked against tree_inner itself, whose sums the booster's own total gain
pins (Prop. 3, test_total_gain.py): the rows must add up to the score, and
each row must be the score of that row alone.
"""

import numpy as np
import pytest
import xgboost as xgb
from conftest import make_data
from hypothesis import given
from test_properties import SETTINGS, make_model, params

from skl_treeinner import tree_inner
from skl_treeinner._readers import _base

lgb = pytest.importorskip("lightgbm")
from sklearn.ensemble import (  # noqa: E402
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
)


def _targets(X):
    signal = np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]) ** 2
    return {
        "reg": signal,
        "binary": (signal > 1).astype(int),
        "multi": np.digitize(signal, [0.0, 1.5]),
    }


MODELS = {
    "xgboost-reg": (lambda: xgb.XGBRegressor(n_estimators=15, max_depth=3), "reg"),
    "xgboost-multi": (
        lambda: xgb.XGBClassifier(n_estimators=10, max_depth=3),
        "multi",
    ),
    "xgboost-booster-binary": (None, "binary"),
    "lightgbm-reg": (
        lambda: lgb.LGBMRegressor(n_estimators=15, num_leaves=7, verbose=-1),
        "reg",
    ),
    "lightgbm-multi": (
        lambda: lgb.LGBMClassifier(n_estimators=8, num_leaves=5, verbose=-1),
        "multi",
    ),
    "hgb-binary": (lambda: HistGradientBoostingClassifier(max_iter=10), "binary"),
    "hgb-multi": (lambda: HistGradientBoostingClassifier(max_iter=6), "multi"),
    "hgb-reg": (lambda: HistGradientBoostingRegressor(max_iter=10), "reg"),
    "gb-reg": (lambda: GradientBoostingRegressor(n_estimators=10), "reg"),
    "gb-binary": (lambda: GradientBoostingClassifier(n_estimators=10), "binary"),
}


def _fitted(name):
    make, target = MODELS[name]
    nan = 0.0 if name.startswith("gb-") else 0.05
    X, _ = make_data(n=360, p=5, seed=41, nan_frac=nan)
    y = _targets(X)[target]
    if make is None:
        booster = xgb.train(
            {"objective": "binary:logistic", "max_depth": 3, "eta": 0.3},
            xgb.DMatrix(X[:180], label=y[:180]),
            12,
        )
        return booster, X, y
    return make().fit(X[:180], y[:180]), X, y


@pytest.mark.filterwarnings("ignore::skl_treeinner.exceptions.IdentityWarning")
@pytest.mark.parametrize("attribution", ["predecomp", "treeshap"])
@pytest.mark.parametrize("name", list(MODELS))
def test_rows_sum_to_the_score_and_each_row_is_its_own_score(name, attribution):
    if attribution == "treeshap" and name.startswith(("hgb", "gb")):
        pytest.importorskip("shap")
    model, X, y = _fitted(name)
    X_out, y_out = X[180:], y[180:]
    w = np.random.default_rng(3).uniform(0.2, 3.0, size=y_out.size)
    kwargs = {"attribution": attribution, "sample_weight": w}
    z = tree_inner(model, X_out, y_out, per_sample=True, **kwargs)
    scores = tree_inner(model, X_out, y_out, **kwargs)
    assert z.shape == (y_out.size, X.shape[1]) and z.dtype == np.float64
    assert np.abs(scores).max() > 0, "nothing to compare"
    np.testing.assert_allclose(z.sum(axis=0), scores, rtol=1e-9, atol=1e-12)
    # Row i is the score of row i alone (Eq. 21 with a single row).
    for i in (0, 7, 100):
        alone = tree_inner(
            model,
            X_out[i : i + 1],
            y_out[i : i + 1],
            attribution=attribution,
            sample_weight=w[i : i + 1],
        )
        np.testing.assert_allclose(z[i], alone, rtol=1e-9, atol=1e-12)


@SETTINGS
@given(params)
def test_rows_sum_to_the_score_property(prm):
    booster, X, y = make_model(prm)
    w = np.random.default_rng(prm["seed"]).uniform(0.0, 2.0, size=y.size)
    z = tree_inner(booster, X, y, sample_weight=w, per_sample=True)
    scores = tree_inner(booster, X, y, sample_weight=w)
    scale = max(np.abs(scores).max(), np.abs(z).max(), 1e-300)
    np.testing.assert_allclose(z.sum(axis=0), scores, rtol=0, atol=1e-10 * scale)
    alone = tree_inner(booster, X[:1], y[:1], sample_weight=w[:1])
    np.testing.assert_allclose(z[0], alone, rtol=0, atol=1e-10 * scale)


def test_rows_are_the_same_in_chunks(monkeypatch):
    model, X, y = _fitted("xgboost-multi")
    whole = tree_inner(model, X, y, per_sample=True)
    whole_shap = tree_inner(model, X, y, per_sample=True, attribution="treeshap")
    monkeypatch.setattr(_base, "_CHUNK_ELEMENTS", 64)  # 256-row chunks
    np.testing.assert_allclose(tree_inner(model, X, y, per_sample=True), whole)
    np.testing.assert_allclose(
        tree_inner(model, X, y, per_sample=True, attribution="treeshap"), whole_shap
    )


def test_per_sample_and_per_iteration_together_are_refused():
    model, X, y = _fitted("xgboost-reg")
    with pytest.raises(ValueError, match="cannot be combined"):
        tree_inner(model, X, y, per_sample=True, per_iteration=True)
    with pytest.raises(ValueError, match="per_sample"):
        tree_inner(model, X, y, per_sample="yes")


def test_per_sample_with_progress(capsys):
    model, X, y = _fitted("xgboost-reg")
    z = tree_inner(model, X, y, per_sample=True, verbose=1)
    np.testing.assert_allclose(z.sum(axis=0), tree_inner(model, X, y))
    assert "per sample" in capsys.readouterr().err
