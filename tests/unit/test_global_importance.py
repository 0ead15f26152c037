"""global_importance: every method against numbers we did not write.

XGBoost's own staged margins, covers and total gain, shap's TreeSHAP,
scikit-learn's permutation_importance, and properties the papers state
(Prop. 3 of paper 000, Theorem 2 of paper 002).
"""

import numpy as np
import pytest
import scipy.sparse as sp
import xgboost as xgb
from conftest import OBJECTIVES, assert_total_gain, fit, make_data
from scipy.special import softmax
from sklearn.inspection import permutation_importance

from skl_treeinner import global_importance, predecomp, tree_inner
from skl_treeinner._readers import read_model
from skl_treeinner._scoring import _unbiased_gain as gi

shap = pytest.importorskip("shap")

TARGET = {
    "reg:squarederror": lambda y: y,
    "binary:logistic": lambda y: (y > 0.5).astype(int),
    "multi:softprob": lambda y: np.digitize(y, [0.0, 1.5]),
}


def split_fit(objective, n_estimators=6, seed=0, **params):
    """Model fitted on 300 rows, plus 200 held-out rows with their target."""
    X, y = make_data(n=500, seed=seed)
    model, _ = fit(
        objective, X[:300], y[:300], n_estimators=n_estimators, n_jobs=1, **params
    )
    target = TARGET[objective](y)
    return model, X[300:], target[300:], X[:300], target[:300]


def staged_margins(booster, X, n_outputs):
    """XGBoost's own margin before every round: (n_rounds, n, n_outputs)."""
    dmat = xgb.DMatrix(X)
    # XGBoost ignores base_score when rows carry a base_margin of 0.
    zero = xgb.DMatrix(X, base_margin=np.zeros((len(X), n_outputs)).squeeze())
    first = (0, 1)
    intercept = booster.predict(
        dmat, output_margin=True, iteration_range=first
    ) - booster.predict(zero, output_margin=True, iteration_range=first)
    out = [intercept]
    for r in range(1, booster.num_boosted_rounds()):
        out.append(booster.predict(dmat, output_margin=True, iteration_range=(0, r)))
    return np.stack([np.reshape(m, (len(X), n_outputs)) for m in out]).astype(float)


def gradient(objective, margin, y):
    if objective == "reg:squarederror":
        return margin - y[:, None]
    if objective == "binary:logistic":
        return 1 / (1 + np.exp(-margin)) - y[:, None]
    return softmax(margin, axis=1) - (np.arange(margin.shape[1]) == y[:, None])


def summed_residual(objective, booster, X, y, n_outputs):
    """Σ over rounds of -g at XGBoost's staged margins: (n, n_outputs)."""
    margins = staged_margins(booster, X, n_outputs)
    return -sum(gradient(objective, m, y) for m in margins)


def shap_values(model, X):
    """shap's TreeSHAP as (n, n_outputs, n_features)."""
    values = np.asarray(shap.TreeExplainer(model).shap_values(X))
    return values[:, None, :] if values.ndim == 2 else values.transpose(0, 2, 1)


def n_out(objective):
    return 3 if objective == "multi:softprob" else 1


def route_in_chunks(monkeypatch, reader, X, n_chunks):
    """Make the reader's routing use 256-row chunks, and check that it does."""
    from skl_treeinner._readers import _base

    elements = 256 * reader.ensemble.n_trees
    monkeypatch.setattr(_base, "_CHUNK_ELEMENTS", elements)
    assert len(list(reader.iter_leaves(X))) == n_chunks


# -- argument checks ---------------------------------------------------------------
def test_unknown_method_lists_methods(data):
    X, y = data
    model, _ = fit("reg:squarederror", X, y, n_estimators=2, n_jobs=1)
    with pytest.raises(ValueError, match=r"'mdi'.*\['tree_inner', 'forest_inner'"):
        global_importance(model, X, y, method="mdi")
    with pytest.raises(ValueError, match=r"attribution='saabas'.*predecomp"):
        global_importance(model, X, y, method="abs", attribution="saabas")


@pytest.mark.parametrize("method", ["total_gain", "permutation", "unbiased_gain"])
def test_treeshap_refused_where_no_attribution(method, data):
    X, y = data
    model, _ = fit("reg:squarederror", X, y, n_estimators=2, n_jobs=1)
    with pytest.raises(ValueError, match=rf"{method}.*no per-tree attribution"):
        global_importance(model, X, y, method=method, attribution="treeshap")


def test_arguments_that_do_not_apply(data):
    X, y = data
    model, _ = fit("reg:squarederror", X, y, n_estimators=2, n_jobs=1)
    with pytest.raises(ValueError, match="n_repeats applies only"):
        global_importance(model, X, y, method="tree_inner", n_repeats=3)
    with pytest.raises(ValueError, match="positive integer"):
        global_importance(model, X, y, method="permutation", n_repeats=0)
    with pytest.raises(ValueError, match="sample_weight cannot apply"):
        global_importance(model, X, y, method="total_gain", sample_weight=np.ones(400))
    # total_gain leaves X and y unused, but checks them when given.
    with pytest.raises(ValueError, match="X has 2 features"):
        global_importance(model, X[:, :2], None, method="total_gain")
    with pytest.raises(ValueError, match="y has 3 rows"):
        global_importance(model, X, y[:3], method="total_gain")
    with pytest.raises(ValueError, match="dense array or a pandas"):
        global_importance(model, sp.csr_matrix(X), y, method="permutation")


# -- TreeInner and total gain ------------------------------------------------------
@pytest.mark.parametrize("attribution", ["predecomp", "treeshap"])
@pytest.mark.parametrize("objective", sorted(TARGET))
def test_tree_inner_is_tree_inner(objective, attribution):
    model, X, y, _, _ = split_fit(objective)
    w = np.random.default_rng(1).uniform(0, 2, size=len(y))
    expected = tree_inner(model, X, y, attribution=attribution, sample_weight=w)
    got = global_importance(
        model, X, y, method="tree_inner", attribution=attribution, sample_weight=w
    )
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("objective", sorted(TARGET))
def test_total_gain_is_in_sample_tree_inner(objective):
    # Prop. 3 of paper 000, on the booster's own get_score numbers.
    model, _, _, X_train, y_train = split_fit(objective)
    gain = global_importance(model, None, None, method="total_gain")
    assert_total_gain(gain, model, X_train.shape[1], tol=1e-12)
    in_sample = global_importance(model, X_train, y_train, method="tree_inner")
    assert_total_gain(in_sample, model, X_train.shape[1])


# -- ForestInner -------------------------------------------------------------------
@pytest.mark.parametrize("objective", sorted(TARGET))
def test_forest_inner_predecomp_matches_definition(objective):
    """Eq. 22 as the paper's code computes it, from XGBoost's staged margins."""
    eta = 0.3
    model, X, y, _, _ = split_fit(objective, learning_rate=eta)
    k = n_out(objective)
    residual = summed_residual(objective, model.get_booster(), X, y, k)
    attr = predecomp(model, X).reshape(len(X), X.shape[1], k)
    expected = np.einsum("ijk,ik->j", attr, residual) / eta
    got = global_importance(model, X, y, method="forest_inner")
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6 * abs(got).max())
    # The residual is the sum of per-stage residuals, not the final one.
    final = -gradient(objective, model.predict(X, output_margin=True).reshape(-1, k), y)
    assert not np.allclose(got, np.einsum("ijk,ik->j", attr, final) / eta, rtol=1e-2)


@pytest.mark.parametrize("objective", sorted(TARGET))
def test_forest_inner_treeshap_matches_definition(objective):
    # TreeSHAP is additive over trees: Σ_m φ_m is shap's value of the model.
    eta = 0.3
    model, X, y, _, _ = split_fit(objective, learning_rate=eta)
    k = n_out(objective)
    residual = summed_residual(objective, model.get_booster(), X, y, k)
    expected = np.einsum("ikj,ik->j", shap_values(model, X), residual) / eta
    got = global_importance(model, X, y, method="forest_inner", attribution="treeshap")
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-6 * abs(got).max())


@pytest.mark.parametrize("attribution", ["predecomp", "treeshap"])
@pytest.mark.parametrize("objective", sorted(TARGET))
def test_forest_inner_of_one_round_is_tree_inner(objective, attribution):
    # With M = 1 the sums over trees in Eq. 22 collapse to Eq. 20.
    model, X, y, _, _ = split_fit(objective, n_estimators=1, max_depth=4)
    kw = dict(attribution=attribution)
    forest = global_importance(model, X, y, method="forest_inner", **kw)
    np.testing.assert_allclose(forest, tree_inner(model, X, y, **kw), rtol=1e-12)
    assert np.abs(forest).max() > 0
    # ...and not with more rounds: the cross terms m != m' count.
    model, X, y, _, _ = split_fit(objective, n_estimators=4, max_depth=4)
    forest = global_importance(model, X, y, method="forest_inner", **kw)
    assert not np.allclose(forest, tree_inner(model, X, y, **kw), rtol=1e-3)


def test_forest_inner_with_learning_rate_schedule():
    """Each tree's attribution is divided by its own α_m (documented choice)."""
    X, y = make_data(n=300, seed=5)
    sched = xgb.callback.LearningRateScheduler(lambda r: 0.3 if r < 2 else 0.1)
    model = xgb.XGBRegressor(n_estimators=5, max_depth=3, callbacks=[sched], n_jobs=1)
    model.fit(X, y)
    booster = model.get_booster()
    rates = [0.3, 0.3, 0.3, 0.1, 0.1]  # the callback sets round r + 1 from f(r)
    scaled = sum(
        predecomp(booster[r : r + 1], X) / rate for r, rate in enumerate(rates)
    )
    residual = summed_residual("reg:squarederror", booster, X, y, 1)[:, 0]
    got = global_importance(model, X, y, method="forest_inner")
    np.testing.assert_allclose(got, scaled.T @ residual, rtol=1e-5)


# -- Abs ---------------------------------------------------------------------------
@pytest.mark.parametrize("objective", sorted(TARGET))
def test_abs_matches_definition(objective):
    model, X, y, _, _ = split_fit(objective)
    booster = model.get_booster()
    rounds = range(booster.num_boosted_rounds())
    k = n_out(objective)
    # PreDecomp of each one-round model, and shap's TreeSHAP of it.
    expected = sum(
        np.abs(predecomp(booster[r : r + 1], X)).reshape(len(X), -1, k).sum((0, 2))
        for r in rounds
    )
    got = global_importance(model, X, y, method="abs")
    np.testing.assert_allclose(got, expected, rtol=1e-10)
    expected = sum(
        np.abs(shap_values(booster[r : r + 1], X)).sum((0, 1)) for r in rounds
    )
    got = global_importance(model, X, y, method="abs", attribution="treeshap")
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    # Triangle inequality: at least the magnitude of the summed attribution.
    total = np.abs(predecomp(model, X).reshape(len(X), -1, k).sum(0)).sum(1)
    assert np.all(global_importance(model, X, y, method="abs") >= total - 1e-9)


@pytest.mark.parametrize("attribution", ["predecomp", "treeshap"])
@pytest.mark.parametrize("method", ["tree_inner", "forest_inner", "abs"])
def test_integer_weights_equal_repeated_rows(method, attribution, monkeypatch):
    model, X, y, _, _ = split_fit("binary:logistic")
    w = np.random.default_rng(2).integers(0, 4, size=len(y))
    kw = dict(method=method, attribution=attribution)
    weighted = global_importance(model, X, y, sample_weight=w, **kw)
    repeated = global_importance(model, np.repeat(X, w, 0), np.repeat(y, w), **kw)
    np.testing.assert_allclose(weighted, repeated, rtol=1e-9)
    # Chunked routing (256 rows at a time) gives the same numbers.
    X_rep = np.repeat(X, w, 0)
    route_in_chunks(monkeypatch, read_model(model), X_rep, -(-len(X_rep) // 256))
    chunked = global_importance(model, X_rep, np.repeat(y, w), **kw)
    np.testing.assert_allclose(chunked, repeated, rtol=1e-9)


# -- permutation -------------------------------------------------------------------
@pytest.mark.parametrize(
    ("objective", "scoring"),
    [
        ("reg:squarederror", "neg_mean_squared_error"),
        ("binary:logistic", "roc_auc"),
        ("multi:softprob", "neg_log_loss"),
    ],
)
@pytest.mark.parametrize("n_repeats", [None, 3])
def test_permutation_is_sklearns(objective, scoring, n_repeats):
    model, X, y, _, _ = split_fit(objective)
    w = np.random.default_rng(3).uniform(0.5, 2, size=len(y))
    expected = permutation_importance(
        model,
        X,
        y,
        scoring=scoring,
        n_repeats=n_repeats or 1,
        random_state=7,
        sample_weight=w,
    ).importances_mean
    kw = dict(method="permutation", random_state=7, sample_weight=w)
    got = global_importance(model, X, y, n_repeats=n_repeats, **kw)
    # Our margins are float64 sums of p̂, XGBoost's float32.
    np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-5)
    # The raw booster, which has no scikit-learn API, gives the same.
    raw = global_importance(model.get_booster(), X, y, n_repeats=n_repeats, **kw)
    np.testing.assert_allclose(raw, got, rtol=1e-12)


def test_permutation_log_link_scores_the_response():
    X, y = make_data(n=400, seed=6)
    model, target = fit("count:poisson", X[:250], y[:250], n_estimators=6, n_jobs=1)
    counts = np.floor(np.exp(y[250:] / 3))
    expected = permutation_importance(
        model,
        X[250:],
        counts,
        scoring="neg_mean_squared_error",
        n_repeats=1,
        random_state=0,
    ).importances_mean
    got = global_importance(
        model, X[250:], counts, method="permutation", random_state=0
    )
    np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-6)


def test_permutation_reproducible_under_random_state():
    model, X, y, _, _ = split_fit("reg:squarederror")
    kw = dict(method="permutation", n_repeats=2)
    a = global_importance(model, X, y, random_state=11, **kw)
    b = global_importance(model, X, y, random_state=11, **kw)
    c = global_importance(model, X, y, random_state=12, **kw)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


# -- unbiased gain -----------------------------------------------------------------
@pytest.mark.parametrize("tree_method", ["exact", "hist"])
@pytest.mark.parametrize("objective", sorted(OBJECTIVES))
def test_staged_gradients_and_hessians_are_xgboosts(objective, tree_method, data):
    """Σ h over the training rows in a node is XGBoost's cover of it, and
    G recovered from p̂ = -αG/(H+λ) with that cover is Σ g: what unbiased gain
    relies on.
    """
    X, y = data
    model, target = fit(
        objective, X, y, n_estimators=4, tree_method=tree_method, n_jobs=1
    )
    reader = read_model(model)
    ens = reader.ensemble
    leaves = reader.apply(X)
    y_enc = ens.objective.validate_target(target)
    grad, hess = gi._staged_gradient_hessian(ens, leaves, y_enc)
    np.testing.assert_allclose(grad, ens.staged_gradients(leaves, y_enc), rtol=1e-12)
    rows, nodes = gi._memberships(ens.parent, leaves)
    tree = ens.node_tree[nodes]
    h_sum = np.bincount(nodes, hess[rows, tree], ens.n_nodes)
    g_sum = np.bincount(nodes, grad[rows, tree], ens.n_nodes)
    # XGBoost doubles the softmax hessian p(1 - p) when growing trees.
    factor = 2.0 if objective.startswith("multi") else 1.0
    np.testing.assert_allclose(factor * h_sum, ens.cover, rtol=2e-5, atol=1e-4)
    recovered = -ens.value * (ens.cover + ens.reg_lambda) / ens.learning_rate[0]
    np.testing.assert_allclose(
        recovered, g_sum, rtol=1e-3, atol=1e-4 * np.abs(g_sum).max()
    )


def test_unbiased_gain_is_total_gain_in_expectation_on_training_rows(monkeypatch):
    """λ = 0, squared error (h = 1): E[G'/H'] is the node mean of g, so the
    expectation over draws on the training rows is XGBoost's split gain.
    """
    X, y = make_data(n=600, seed=7)
    model, _ = fit(
        "reg:squarederror", X, y, n_estimators=3, max_depth=2, reg_lambda=0.0, n_jobs=1
    )
    gain = global_importance(model, None, None, method="total_gain")
    kw = dict(method="unbiased_gain", n_repeats=1000)
    got = global_importance(model, X, y, random_state=0, **kw)
    np.testing.assert_allclose(got, gain, rtol=0.05, atol=0.01 * gain.max())
    # The same through chunked routing (hypergeometric split of each draw).
    route_in_chunks(monkeypatch, read_model(model), X, 3)
    chunked = global_importance(model, X, y, random_state=1, **kw)
    np.testing.assert_allclose(chunked, gain, rtol=0.05, atol=0.01 * gain.max())


def test_unbiased_gain_of_noise_is_zero_in_expectation():
    """Theorem 2 of paper 002: over fresh held-out rows, a feature independent
    of y scores zero in expectation, while total gain rewards it."""
    rng = np.random.default_rng(8)

    def sample(n):
        X = np.column_stack([rng.integers(0, 2, n), rng.normal(size=n)])
        return X, 0.5 * X[:, 0] + rng.normal(size=n)

    X, y = sample(300)
    model = xgb.XGBRegressor(n_estimators=1, max_depth=3, learning_rate=0.3, n_jobs=1)
    model.fit(X, y)
    gain = global_importance(model, None, None, method="total_gain")
    assert gain[1] > 0.3 * gain[0]  # gain overfits to the noise column
    reader = read_model(model)  # read once, score on 200 fresh samples
    draws = np.array(
        [
            global_importance(
                reader, *sample(300), method="unbiased_gain", random_state=s
            )
            for s in range(200)
        ]
    )
    mean, se = draws.mean(0), draws.std(0) / np.sqrt(len(draws))
    assert abs(mean[1]) < 3 * se[1]
    assert mean[0] > 10 * se[0]


def test_unbiased_gain_reproducible_and_multiclass():
    model, X, y, _, _ = split_fit("multi:softprob")
    kw = dict(method="unbiased_gain", n_repeats=3)
    a = global_importance(model, X, y, random_state=4, **kw)
    b = global_importance(model, X, y, random_state=4, **kw)
    c = global_importance(model, X, y, random_state=5, **kw)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert np.all(np.isfinite(a)) and np.abs(a).max() > 0


def test_allocate_splits_draw_sizes_over_chunks():
    rng = np.random.default_rng(9)
    counts = [np.array([5, 0, 3]), np.array([2, 4, 3]), np.array([0, 1, 3])]
    sizes = np.array([[7, 2, 4], [3, 5, 0]])
    alloc = gi._allocate(rng, counts, sizes, n_repeats=50)
    np.testing.assert_array_equal(alloc.sum(axis=1), np.broadcast_to(sizes, (50, 2, 3)))
    assert np.all(alloc <= np.stack(counts)[None, :, None, :])
    assert np.all(alloc >= 0)


# -- other backends --------------------------------------------------------------------
def backend_models():
    import lightgbm as lgb
    from sklearn.ensemble import (
        GradientBoostingRegressor,
        HistGradientBoostingClassifier,
        HistGradientBoostingRegressor,
    )

    small = dict(n_estimators=6, num_leaves=8, verbose=-1, n_jobs=1)
    return {
        "lgb-reg": (lgb.LGBMRegressor(**small), "reg:squarederror"),
        "lgb-binary": (lgb.LGBMClassifier(**small), "binary:logistic"),
        "lgb-multi": (lgb.LGBMClassifier(**small), "multi:softprob"),
        "hgb-reg": (HistGradientBoostingRegressor(max_iter=6), "reg:squarederror"),
        "hgb-binary": (HistGradientBoostingClassifier(max_iter=6), "binary:logistic"),
        "gb-reg": (GradientBoostingRegressor(n_estimators=6), "reg:squarederror"),
    }


@pytest.fixture
def one_thread():
    # OpenMP threads fight over the shared cores of CI; one is faster here.
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        yield


SCORING = {
    "reg:squarederror": "neg_mean_squared_error",
    "binary:logistic": "roc_auc",
    "multi:softprob": "neg_log_loss",
}


@pytest.mark.parametrize(
    "name", ["lgb-reg", "lgb-binary", "lgb-multi", "hgb-reg", "hgb-binary", "gb-reg"]
)
def test_other_backends(name, one_thread):
    """LightGBM and scikit-learn models through the same code path."""
    model, objective = backend_models()[name]
    X, y = make_data(n=500, seed=0)
    target = TARGET[objective](y)
    model.fit(X[:300], target[:300])
    X_val, y_val = X[300:], target[300:]
    # Prop. 3 against the library's own total gain.
    gain = global_importance(model, None, None, method="total_gain")
    in_sample = global_importance(model, X[:300], target[:300], method="tree_inner")
    np.testing.assert_allclose(in_sample, gain, rtol=1e-5, atol=1e-6 * gain.max())
    # Permutation importance as scikit-learn computes it on the estimator.
    expected = permutation_importance(
        model, X_val, y_val, scoring=SCORING[objective], n_repeats=1, random_state=3
    ).importances_mean
    got = global_importance(model, X_val, y_val, method="permutation", random_state=3)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-9)
    # Every other method runs and gives finite scores.
    for method in ["forest_inner", "abs", "unbiased_gain"]:
        scores = global_importance(model, X_val, y_val, method=method, random_state=0)
        assert scores.shape == (6,) and np.all(np.isfinite(scores))
        assert np.abs(scores).max() > 0


@pytest.mark.slow
@pytest.mark.parametrize("name", ["lgb-reg", "hgb-reg", "gb-reg"])
def test_other_backends_unbiased_gain_in_expectation(name, one_thread):
    # As for XGBoost: λ = 0 and squared error (the defaults of these
    # libraries), so on the training rows the expectation is the total gain.
    model, _ = backend_models()[name]
    X, y = make_data(n=600, seed=7)
    model.set_params(**{"n_estimators" if name != "hgb-reg" else "max_iter": 3}).fit(
        X, y
    )
    gain = global_importance(model, None, None, method="total_gain")
    got = global_importance(
        model, X, y, method="unbiased_gain", n_repeats=500, random_state=0
    )
    np.testing.assert_allclose(got, gain, rtol=0.05, atol=0.01 * gain.max())
