"""The routing check: the leaves a booster reports must add up to its own margin.

Issue 15: a freshly trained XGBoost GPU booster's first ``pred_leaf`` call sent
some rows with missing values down the wrong branch, and every attribution
built on those leaves was silently wrong. No GPU here: boosters whose leaf
routine is made to lie stand in for it, and the check must catch them, repair
what it can (XGBoost: the CPU predictor on a copy) and refuse the rest.
"""

import warnings

import numpy as np
import pytest
import xgboost as xgb
from conftest import make_data

from skl_treeinner import predecomp, tree_inner
from skl_treeinner._readers import _base
from skl_treeinner._readers._xgboost import XGBoostReader
from skl_treeinner.exceptions import RoutingError


class MisroutingBooster(xgb.Booster):
    """An XGBoost booster whose ``pred_leaf`` sends some rows to a sibling leaf."""

    share = 0.1

    def predict(self, data, *args, pred_leaf=False, **kwargs):
        out = super().predict(data, *args, pred_leaf=pred_leaf, **kwargs)
        if pred_leaf:
            out = out.copy()
            rows = np.arange(out.shape[0])[:: int(round(1 / self.share))]
            # Leaf ids of depth-1 trees are 1 and 2: swap them in tree 0.
            out[rows, 0] = 3 - out[rows, 0]
        return out


def _models():
    X, y = make_data(n=300, p=4, seed=3, nan_frac=0.1)
    params = {"max_depth": 1, "eta": 0.3, "base_score": 0.0}
    honest = xgb.train(params, xgb.DMatrix(X, label=y), 10)
    liar = MisroutingBooster(model_file=honest.save_raw())
    return honest, liar, X, y


def test_an_honest_booster_passes_and_a_misrouting_one_is_refused():
    honest, liar, X, y = _models()
    expected = tree_inner(honest, X, y)
    with pytest.raises(RoutingError, match=r"30 of 300 checked rows \(10\.00%\)"):
        tree_inner(liar, X, y)
    with pytest.raises(RoutingError, match="MisroutingBooster|XGBoost"):
        predecomp(liar, X)
    assert issubclass(RoutingError, ValueError)
    np.testing.assert_allclose(tree_inner(honest, X, y), expected)


def test_a_gpu_booster_is_rerouted_on_a_cpu_copy(monkeypatch):
    # The fallback for GPU boosters: the CPU predictor on a copy (a plain
    # Booster, which routes correctly), the caller's booster left as it is.
    honest, liar, X, y = _models()
    monkeypatch.setattr(XGBoostReader, "on_gpu", lambda self: True)
    with pytest.warns(UserWarning, match="routed again by XGBoost's CPU predictor"):
        scores = tree_inner(liar, X, y)
    np.testing.assert_allclose(scores, tree_inner(honest, X, y), rtol=1e-12)
    assert type(liar) is MisroutingBooster  # untouched: still the caller's own
    with pytest.warns(UserWarning, match="routed again"):
        values, bias = predecomp(liar, X, return_bias=True)
    np.testing.assert_allclose(
        values.sum(axis=1) + bias,
        honest.predict(xgb.DMatrix(X), output_margin=True),
        atol=1e-5,
    )


def test_the_fallback_must_pass_the_check_too(monkeypatch):
    honest, liar, X, y = _models()
    monkeypatch.setattr(XGBoostReader, "on_gpu", lambda self: True)
    monkeypatch.setattr(xgb.Booster, "copy", lambda self: self)  # copy misroutes
    with pytest.raises(RoutingError, match="CPU predictor on a copy .* disagreed"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree_inner(liar, X, y)


def test_large_inputs_are_checked_on_a_sample(monkeypatch):
    # Beyond ROUTING_CHECK_ROWS rows a seeded sample is checked; 10 % misrouted
    # rows are caught (the message counts the checked rows of the chunk).
    honest, liar, X, y = _models()
    monkeypatch.setattr(_base, "ROUTING_CHECK_ROWS", 100)
    monkeypatch.setattr(_base, "_CHUNK_ELEMENTS", 64)  # several chunks
    with pytest.raises(RoutingError, match=r"[0-9]+ of [0-9]+ checked rows"):
        tree_inner(liar, X, y)
    np.testing.assert_allclose(
        tree_inner(honest, X, y), tree_inner(honest, X, y, per_sample=True).sum(0)
    )


def test_one_misrouted_row_in_a_thousand_is_caught():
    # The check compares every row up to ROUTING_CHECK_ROWS (5000).
    X, y = make_data(n=3000, p=4, seed=4)
    honest = xgb.train({"max_depth": 1, "eta": 0.3}, xgb.DMatrix(X, label=y), 5)
    liar = MisroutingBooster(model_file=honest.save_raw())
    liar.share = 1 / 1000
    with pytest.raises(RoutingError, match=r"3 of 3000 checked rows \(0\.10%\)"):
        tree_inner(liar, X, y)


@pytest.mark.parametrize("library", ["lightgbm", "hgb", "gb"])
def test_every_reader_checks_its_routing(monkeypatch, library):
    # Make each reader's own apply() lie for every tenth row: caught.
    X, y = make_data(n=200, p=4, seed=5)
    if library == "lightgbm":
        lgb = pytest.importorskip("lightgbm")
        model = lgb.LGBMRegressor(n_estimators=5, num_leaves=4, verbose=-1)
    elif library == "hgb":
        from sklearn.ensemble import HistGradientBoostingRegressor

        model = HistGradientBoostingRegressor(max_iter=5, max_leaf_nodes=4)
    else:
        from sklearn.ensemble import GradientBoostingRegressor

        model = GradientBoostingRegressor(n_estimators=5, max_depth=2)
        X = np.nan_to_num(X)
    model.fit(X, y)
    expected = tree_inner(model, X, y)
    from skl_treeinner._readers import reader_class

    cls = reader_class(model)
    honest_apply = cls.apply

    def lying_apply(self, X):
        leaves = honest_apply(self, X)
        leaves[::10, 0] = self.ensemble.tree_offsets[0]  # the root: not a leaf
        return leaves

    monkeypatch.setattr(cls, "apply", lying_apply)
    with pytest.raises(RoutingError, match=r"20 of 200 checked rows"):
        tree_inner(model, X, y)
    monkeypatch.setattr(cls, "apply", honest_apply)
    np.testing.assert_allclose(tree_inner(model, X, y), expected)


@pytest.mark.parametrize(
    "offset, n_trees, eta", [(1000.0, 1000, 0.3), (5e6, 300, 0.1), (5e4, 900, 0.05)]
)
def test_float32_sums_of_an_honest_xgboost_model_pass(offset, n_trees, eta):
    # A regression test (found in review): XGBoost adds leaves in float32, so
    # leaves small beside a large margin are partly lost, always the same way;
    # the float64 sum of the same leaves drifted past the tolerance and an
    # honest model was refused. The check now also accepts XGBoost's own sum.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1000, 4))
    y = offset + (X[:, 0] > 0) + 0.01 * rng.normal(size=1000)
    model = xgb.XGBRegressor(n_estimators=n_trees, learning_rate=eta).fit(X, y)
    values, bias = predecomp(model, X, return_bias=True)
    assert np.isfinite(tree_inner(model, X, y)).all()
    # Local accuracy holds to XGBoost's own float32 drift, at most one float32
    # rounding per tree (here up to 1.5 on margins near 5e4).
    margin = model.predict(X, output_margin=True)
    drift = n_trees * 2.0**-24 * np.abs(margin)
    assert (np.abs(values.sum(axis=1) + bias - margin) <= drift).all()


def test_large_quantile_dmatrix_is_checked_without_slicing_it():
    # A regression test: the sampled check sliced the DMatrix, which a
    # QuantileDMatrix refuses.
    X, y = make_data(n=24000, p=4, seed=6)
    booster = xgb.train({"max_depth": 3}, xgb.DMatrix(X, label=y), 20)
    values = predecomp(booster, xgb.QuantileDMatrix(X))
    np.testing.assert_allclose(values, predecomp(booster, X), rtol=1e-6, atol=1e-6)


def test_a_dmatrix_with_base_margin_is_refused_by_name():
    honest, _, X, y = _models()
    dmat = xgb.DMatrix(X)
    dmat.set_base_margin(np.ones(X.shape[0]))
    with pytest.raises(ValueError, match="base_margin"):
        predecomp(honest, dmat)
