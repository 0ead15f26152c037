"""scikit-learn's HistGradientBoosting and GradientBoosting, against sklearn's numbers.

Identities checked: local accuracy against ``_raw_predict``/``decision_function``
(Prop. 1), in-sample TreeInner against the split gains (Prop. 3), the hessian
sums the reader recovers against sums of scikit-learn's own gradients and
hessians over the training rows, and per-iteration TreeSHAP against shap.
The ``test_pin_*`` tests fail loudly if a release changes an internal we read.
"""

import contextlib

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.ensemble import (
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
)
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import train_test_split

from skl_treeinner import predecomp, read_ensemble, tree_inner
from skl_treeinner._readers import read_model
from skl_treeinner._readers._sklearn import HistGradientBoostingReader
from skl_treeinner._readers._sklearn_gb import GradientBoostingReader
from skl_treeinner.exceptions import IdentityWarning

N = 300


def make_data(n=N, p=5, seed=0, nan_frac=0.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    signal = X[:, 0] + X[:, 1] ** 2 - 0.5 * X[:, 2]
    if nan_frac:
        X[rng.random(X.shape) < nan_frac] = np.nan
    return X, signal, rng


TARGETS = {
    "squared_error": lambda s, rng: s + rng.normal(size=s.size),
    "poisson": lambda s, rng: rng.poisson(np.exp(s / 3)),
    "gamma": lambda s, rng: np.exp(s / 3) * rng.gamma(2.0, 1.0, size=s.size),
    "binary": lambda s, rng: np.where(s > 1, "yes", "no"),
    "multiclass": lambda s, rng: np.digitize(s, [0.0, 1.5]),
    "exponential": lambda s, rng: (s > 1).astype(int),
}


def hgb(kind, **params):
    params = {"max_iter": 12, "max_depth": 3, "early_stopping": False, **params}
    if kind in ("binary", "multiclass"):
        return HistGradientBoostingClassifier(**params)
    loss = "squared_error" if kind == "squared_error" else kind
    return HistGradientBoostingRegressor(loss=loss, **params)


def gb(kind, **params):
    params = {"n_estimators": 12, "max_depth": 3, "random_state": 0, **params}
    if kind == "squared_error":
        return GradientBoostingRegressor(**params)
    loss = "exponential" if kind == "exponential" else "log_loss"
    return GradientBoostingClassifier(loss=loss, **params)


def fit_read(model, X, y, **fit_params):
    """Fit, and read without the warning that public functions raise."""
    model.fit(X, y, **fit_params)
    hist = isinstance(
        model, HistGradientBoostingRegressor | HistGradientBoostingClassifier
    )
    reader = (HistGradientBoostingReader if hist else GradientBoostingReader)(model)
    return model, reader


def expect_lost(reader):
    """The IdentityWarning a public function raises, if the reader lost one."""
    if reader.lost_identities:
        return pytest.warns(IdentityWarning, match="Prop. 3")
    return contextlib.nullcontext()


def raw_margin(model, X):
    if isinstance(model, GradientBoostingRegressor | GradientBoostingClassifier):
        X = np.asarray(X, dtype=np.float32)
    raw = model._raw_predict(X)
    return raw[:, 0] if raw.shape[1] == 1 else raw


def l1(v):
    return v / np.abs(v).sum()


def assert_prop3(scores, gain, tol=1e-6):
    assert gain.sum() > 0, "no split: the test would prove nothing"
    np.testing.assert_array_less(np.abs(l1(scores) - l1(gain)), tol)
    np.testing.assert_allclose(scores, gain, rtol=1e-5, atol=1e-7 * gain.max())


def assert_local_accuracy(model, X, expected):
    values, bias = predecomp(model, X, return_bias=True)
    if expected.ndim == 1:
        got = values.sum(axis=1) + bias
    else:
        got = values.sum(axis=1) + bias[None, :]
    # The margins are float64 sums of the same leaf values: far tighter than
    # float32 precision.
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)


def node_sums(ens, leaves, values):
    """Σ over rows of ``values`` (n, n_trees) in every node, leaves upward."""
    out = np.bincount(leaves.ravel(), values.ravel(), minlength=ens.n_nodes)
    depth = np.zeros(ens.n_nodes, dtype=int)
    for _ in range(64):  # depth of each node by repeated parent lookups
        has = ens.parent >= 0
        new = np.where(has, depth[np.maximum(ens.parent, 0)] + 1, 0)
        if np.array_equal(new, depth):
            break
        depth = new
    for d in range(depth.max() - 1, -1, -1):
        t = np.flatnonzero((depth == d) & ~ens.is_leaf)
        out[t] = out[ens.children_left[t]] + out[ens.children_right[t]]
    return out


def hgb_node_stats(model, X, y, sample_weight=None):
    """G and H of every node from sklearn's loss at its own staged margins."""
    reader = HistGradientBoostingReader(model)
    ens = reader.ensemble
    leaves = reader.apply(X)
    y_enc = y if reader.classes_ is None else np.searchsorted(reader.classes_, y)
    y_enc = np.asarray(y_enc, dtype=np.float64)
    k = ens.n_outputs
    margins = [np.tile(model._baseline_prediction, (len(X), 1))]
    margins += list(model._staged_raw_predict(X))[:-1]
    G = np.zeros((len(X), ens.n_trees))
    H = np.zeros((len(X), ens.n_trees))
    for r, raw in enumerate(margins):
        raw = np.ascontiguousarray(raw if k > 1 else raw[:, 0])
        g = np.empty_like(raw, dtype=np.float32)
        h = np.empty_like(raw, dtype=np.float32)
        model._loss.gradient_hessian(
            y_true=y_enc,
            raw_prediction=raw,
            sample_weight=sample_weight,
            gradient_out=g,
            hessian_out=h,
        )
        G[:, r * k : (r + 1) * k] = g.reshape(len(X), k)
        H[:, r * k : (r + 1) * k] = h.reshape(len(X), k)
    return reader, node_sums(ens, leaves, G), node_sums(ens, leaves, H)


# -- Prop. 1: local accuracy ----------------------------------------------------------
@pytest.mark.parametrize(
    "kind", ["squared_error", "poisson", "gamma", "binary", "multiclass"]
)
def test_hgb_local_accuracy_nan_and_categorical(kind):
    X, s, rng = make_data(nan_frac=0.15, seed=1)
    cat = rng.integers(0, 6, size=N)
    df = pd.DataFrame(
        {
            "a": X[:, 0],
            "c": pd.Categorical.from_codes(cat, list("uvwxyz")),
            "b": X[:, 1],
            "d": X[:, 3],
        }
    )
    s = 0.3 * np.nan_to_num(X[:, 0]) + np.array([0, 2, -1, 0, 1, 3])[cat]
    y = TARGETS[kind](s, rng)
    model, reader = fit_read(hgb(kind, l2_regularization=0.5), df, y)
    assert not reader.lost_identities
    assert model.is_categorical_.tolist() == [False, True, False, False]
    X_new, _, rng2 = make_data(n=120, nan_frac=0.2, seed=2)
    df_new = pd.DataFrame(
        {
            "a": X_new[:, 0],
            "c": pd.Categorical.from_codes(rng2.integers(0, 6, 120), list("uvwxyz")),
            "b": X_new[:, 1],
            "d": X_new[:, 3],
        }
    )
    for frame in (df, df_new):
        assert_local_accuracy(model, frame, raw_margin(model, frame))
        if kind in ("binary", "multiclass"):
            assert_local_accuracy(model, frame, model.decision_function(frame))
    # The categorical column (second) carries the signal: its attributions
    # land in its own column, not in the one scikit-learn moves it to.
    values = predecomp(model, df)
    spread = np.abs(values).reshape(N, 4, -1).mean(axis=(0, 2))
    assert np.argmax(spread) == 1


@pytest.mark.parametrize("kind", ["squared_error", "binary", "multiclass"])
def test_gb_local_accuracy(kind):
    X, s, rng = make_data(seed=3)
    y = TARGETS[kind](s, rng)
    model, reader = fit_read(gb(kind), X, y)
    assert bool(reader.lost_identities) == (kind != "squared_error")
    X_new, _, _ = make_data(n=100, seed=4)
    for rows in (X, X_new):
        with expect_lost(reader):
            assert_local_accuracy(model, rows, raw_margin(model, rows))
    if kind != "squared_error":
        with expect_lost(reader):
            assert_local_accuracy(model, X, model.decision_function(X))


def test_gb_local_accuracy_exponential_and_dummy_init():
    X, s, rng = make_data(seed=5)
    y = TARGETS["exponential"](s, rng)
    model, reader = fit_read(gb("exponential", subsample=0.7), X, y)
    with expect_lost(reader):
        assert_local_accuracy(model, X, model.decision_function(X))
    reg = GradientBoostingRegressor(n_estimators=5, init="zero").fit(X, s)
    assert read_ensemble(reg).intercept.tolist() == [0.0]
    assert_local_accuracy(reg, X, raw_margin(reg, X))


# -- Prop. 3: in-sample TreeInner equals total gain -----------------------------------
HGB_CASES = [
    ("squared_error", {}),
    ("squared_error", {"l2_regularization": 3.0}),
    ("poisson", {"l2_regularization": 1.0}),
    ("gamma", {}),
    ("binary", {}),
    ("binary", {"l2_regularization": 2.0, "max_leaf_nodes": 5, "max_depth": None}),
    ("multiclass", {"l2_regularization": 0.5}),
    ("squared_error", {"interaction_cst": [[0, 1], [2, 3, 4]]}),
]


@pytest.mark.slow
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize(("kind", "params"), HGB_CASES)
def test_hgb_total_gain(kind, params, weighted):
    X, s, rng = make_data(seed=6, nan_frac=0.05)
    y = TARGETS[kind](np.nan_to_num(s), rng)
    w = rng.uniform(0.2, 3.0, size=N) if weighted else None
    model, reader = fit_read(hgb(kind, **params), X, y, sample_weight=w)
    assert not reader.lost_identities
    assert_prop3(tree_inner(model, X, y, sample_weight=w), reader.total_gain())
    if weighted:  # the test can tell: without the weights the identity fails
        with pytest.raises(AssertionError):
            assert_prop3(tree_inner(model, X, y), reader.total_gain())


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["poisson", "binary", "multiclass"])
def test_hgb_recovered_hessians_match_training_rows(kind):
    """H, p̂ and gain from sklearn's own gradients and hessians, summed per node."""
    X, s, rng = make_data(seed=7, nan_frac=0.05)
    y = TARGETS[kind](np.nan_to_num(s), rng)
    w = rng.uniform(0.2, 3.0, size=N)
    lam, lr = 0.8, 0.2
    model = hgb(kind, l2_regularization=lam, learning_rate=lr, max_depth=4)
    model.fit(X, y, sample_weight=w)
    reader, G, H = hgb_node_stats(model, X, y, w)
    ens = reader.ensemble
    np.testing.assert_allclose(ens.cover, H, rtol=1e-7)
    np.testing.assert_allclose(ens.value, -lr * G / (H + lam), rtol=1e-6, atol=1e-12)
    inner = np.flatnonzero(~ens.is_leaf)
    lt, rt = ens.children_left[inner], ens.children_right[inner]
    gain = G[lt] ** 2 / (H[lt] + lam) + G[rt] ** 2 / (H[rt] + lam)
    gain -= G[inner] ** 2 / (H[inner] + lam)
    expected = np.bincount(ens.feature[inner], gain, minlength=ens.n_features)
    np.testing.assert_allclose(reader.total_gain(), expected, rtol=1e-7)


def test_hgb_stumps():
    X, s, rng = make_data(seed=8)
    # Squared error without weights: every hessian is 1, H is the count.
    y = TARGETS["squared_error"](s, rng)
    model, reader = fit_read(hgb("squared_error", max_depth=1), X, y)
    assert not reader.lost_identities
    assert_prop3(tree_inner(model, X, y), reader.total_gain(), tol=1e-9)
    # Otherwise a stump's root H is not determined: warned, Prop. 1 still holds.
    y = TARGETS["binary"](s, rng)
    model = hgb("binary", max_depth=1).fit(X, y)
    with pytest.warns(IdentityWarning, match="root split has two leaves"):
        values, bias = predecomp(model, X, return_bias=True)
    np.testing.assert_allclose(values.sum(axis=1) + bias, raw_margin(model, X))


def test_hgb_monotonic_constraints_clip_values():
    X, s, rng = make_data(seed=9)
    y = X[:, 0] ** 2 + 0.3 * rng.normal(size=N)  # not monotonic in feature 0
    cst = [1, 0, 0, 0, -1]
    model = hgb("squared_error", monotonic_cst=cst, max_depth=4).fit(X, y)
    reader = HistGradientBoostingReader(model)
    # The clipped nodes are exactly those whose value is not -G/(H+λ).
    _, G, H = hgb_node_stats(model, X, y)
    ens = reader.ensemble
    lr = model.learning_rate
    stored = np.concatenate([p[0].nodes["value"] for p in model._predictors])
    w = np.where(ens.is_leaf, stored / lr, stored)
    not_root = ens.parent >= 0
    n_clipped = np.sum(~np.isclose(w, -G / H, rtol=1e-9, atol=1e-12) & not_root)
    assert n_clipped > 0
    assert reader.lost_identities == [
        f"monotonic_cst ({n_clipped} node values were clipped to keep the constraints)"
    ]
    with pytest.warns(IdentityWarning, match="monotonic_cst"):
        assert_local_accuracy(model, X, raw_margin(model, X))


def test_hgb_early_stopping_split_reproduced():
    X, s, rng = make_data(n=600, seed=10)
    y = TARGETS["binary"](s, rng)
    model = HistGradientBoostingClassifier(
        max_iter=200, learning_rate=0.5, early_stopping=True, n_iter_no_change=3
    ).fit(X, y)
    assert len(model._predictors) == model.n_iter_ < 200
    X_tr, _, y_tr, _ = train_test_split(
        X,
        y,
        test_size=model.validation_fraction,
        stratify=y,
        random_state=model._random_seed,
    )
    reader = HistGradientBoostingReader(model)
    assert_prop3(tree_inner(model, X_tr, y_tr), reader.total_gain())


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_gb_total_gain_and_feature_importances(weighted):
    X, s, rng = make_data(seed=11)
    y = TARGETS["squared_error"](s, rng)
    w = rng.uniform(0.2, 3.0, size=N) if weighted else None
    model, reader = fit_read(gb("squared_error"), X, y, sample_weight=w)
    gain = reader.total_gain()
    assert_prop3(tree_inner(model, X, y, sample_weight=w), gain, tol=1e-9)
    np.testing.assert_allclose(l1(gain), model.feature_importances_, atol=1e-12)


@pytest.mark.parametrize("kind", ["binary", "multiclass", "exponential"])
def test_gb_line_searched_losses(kind):
    """Leaves hold scikit-learn's Newton steps; inner nodes the row-weighted mean.

    scikit-learn re-fits each leaf by one Newton step but keeps the mean
    residual at inner nodes, 10-20x smaller: read as they are, a path's last
    split took the whole gap and PreDecomp credited it to whatever feature
    split last. Inner values come from the leaves, children weighted by rows.
    """
    X, s, rng = make_data(seed=12)
    y = TARGETS[kind](s, rng)
    model, reader = fit_read(gb(kind, max_depth=2), X, y)
    assert "line search" in reader.lost_identities[0]
    ens = reader.ensemble
    trees = [e.tree_ for e in model.estimators_.ravel()]
    stored = model.learning_rate * np.concatenate([t.value[:, 0, 0] for t in trees])
    leaf = ens.is_leaf
    np.testing.assert_allclose(ens.value[leaf], stored[leaf], rtol=1e-12)
    leaves = reader.apply(X)
    own = ens.value[leaves]  # each row's leaf value, per tree
    mean = node_sums(ens, leaves, own) / node_sums(ens, leaves, np.ones_like(own))
    inner = ~leaf
    np.testing.assert_allclose(ens.value[inner], mean[inner], rtol=1e-9, atol=1e-12)
    assert not np.allclose(ens.value[inner], stored[inner], rtol=0.5)
    # Leaves were re-fitted, so Prop. 3 is lost, and the test can tell.
    with expect_lost(reader), pytest.raises(AssertionError):
        assert_prop3(tree_inner(model, X, y), reader.total_gain())


@pytest.mark.parametrize("loss", ["log_loss", "exponential"])
def test_gb_classifier_noise_scores_at_most_zero_on_held_out_rows(loss):
    # Found by a new-user trial: with the inner nodes read as scikit-learn
    # stores them, five pure-noise columns scored +60 to +640 against +1174
    # for the one real column, and the selector kept all six at p = 0.
    from sklearn.ensemble import GradientBoostingClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 6))
    y = (2 * X[:, 0] + rng.logistic(size=2000) > 0).astype(int)
    model = GradientBoostingClassifier(
        n_estimators=100, max_depth=3, loss=loss, random_state=0
    ).fit(X[:1000], y[:1000])
    with pytest.warns(IdentityWarning):
        scores = tree_inner(model, X[1000:], y[1000:])
    assert scores[0] > 1000
    assert np.all(scores[1:] < 0.05 * scores[0])
    assert scores[1:].mean() < 0


# -- TreeSHAP -------------------------------------------------------------------------
def shap_values(model, X):
    shap = pytest.importorskip("shap")
    values = np.asarray(shap.TreeExplainer(model).shap_values(X))
    return values[:, None, :] if values.ndim == 2 else values.transpose(0, 2, 1)


SHAP_CASES = [
    ("hgb", "squared_error"),
    ("hgb", "poisson"),
    ("hgb", "binary"),
    ("hgb", "multiclass"),
    ("gb", "squared_error"),
    ("gb", "binary"),
]


@pytest.mark.parametrize(("family", "kind"), SHAP_CASES)
def test_iteration_shap_sums_to_shap(family, kind):
    pytest.importorskip("shap")
    X, s, rng = make_data(seed=13, nan_frac=0.1 if family == "hgb" else 0.0)
    y = TARGETS[kind](np.nan_to_num(s), rng)
    model = hgb(kind, l2_regularization=1.0) if family == "hgb" else gb(kind)
    model, reader = fit_read(model, X, y)
    per_round = list(reader.iteration_shap(X))
    assert [r for r, _ in per_round] == list(range(reader.ensemble.n_iterations))
    total = sum(phi for _, phi in per_round)
    np.testing.assert_allclose(total, shap_values(model, X), atol=1e-5)
    with expect_lost(reader):
        scores = tree_inner(model, X, y, attribution="treeshap")
    assert scores.shape == (X.shape[1],) and np.all(np.isfinite(scores))


def test_gb_multiclass_iteration_shap_adds_up_to_margin():
    # shap has no TreeExplainer for multi-class GradientBoostingClassifier:
    # check additivity against sklearn's margin instead.
    shap = pytest.importorskip("shap")
    X, s, rng = make_data(seed=14)
    y = TARGETS["multiclass"](s, rng)
    model, reader = fit_read(gb("multiclass", n_estimators=5), X, y)
    total = sum(phi for _, phi in reader.iteration_shap(X))
    expected = np.zeros(3)
    for stage in model.estimators_:
        for k, tree in enumerate(stage):
            ev = np.ravel(shap.TreeExplainer(tree).expected_value)[0]
            expected[k] += model.learning_rate * ev
    margin = raw_margin(model, X) - reader.ensemble.intercept
    np.testing.assert_allclose(total.sum(axis=2) + expected, margin, atol=1e-5)


@pytest.mark.parametrize("family", ["hgb", "gb"])
def test_treeshap_equals_predecomp_on_unregularised_stumps(family):
    pytest.importorskip("shap")
    X, s, rng = make_data(seed=15)
    y = TARGETS["squared_error"](s, rng)
    model = (hgb if family == "hgb" else gb)("squared_error", max_depth=1)
    model.fit(X, y)
    np.testing.assert_allclose(
        tree_inner(model, X, y, attribution="treeshap"),
        tree_inner(model, X, y),
        rtol=1e-9,
        atol=1e-9,
    )


def test_treeshap_refused_for_categorical_splits():
    pytest.importorskip("shap")
    _, _, rng = make_data()
    cat = rng.integers(0, 5, size=N)
    df = pd.DataFrame({"c": pd.Categorical.from_codes(cat, list("abcde"))})
    model = hgb("squared_error").fit(df, np.array([0, 3, -1, 2, 1])[cat] * 1.0)
    with pytest.raises(ValueError, match="categorical splits"):
        tree_inner(model, df, np.zeros(N), attribution="treeshap")


# -- errors ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "model",
    [
        HistGradientBoostingRegressor(),
        HistGradientBoostingClassifier(),
        GradientBoostingRegressor(),
        GradientBoostingClassifier(),
    ],
    ids=["hgb-reg", "hgb-clf", "gb-reg", "gb-clf"],
)
def test_unfitted_model(model):
    X, s, _ = make_data(n=20)
    with pytest.raises(NotFittedError):
        predecomp(model, X)


@pytest.mark.parametrize(
    ("model", "match"),
    [
        (HistGradientBoostingRegressor(loss="absolute_error"), "median or quantile"),
        (
            HistGradientBoostingRegressor(loss="quantile", quantile=0.5),
            "median or quantile",
        ),
        (GradientBoostingRegressor(loss="huber"), "huber's delta"),
        (GradientBoostingRegressor(loss="quantile"), "median or quantile"),
        (GradientBoostingRegressor(loss="absolute_error"), "median or quantile"),
        (GradientBoostingRegressor(init=LinearRegression()), "one intercept"),
    ],
    ids=["hgb-abs", "hgb-quantile", "gb-huber", "gb-quantile", "gb-abs", "gb-init"],
)
def test_unsupported_models(model, match):
    X, s, _ = make_data(n=100)
    model = clone(model).set_params(
        **{("max_iter" if "max_iter" in model.get_params() else "n_estimators"): 3}
    )
    model.fit(X, s)
    with pytest.raises(ValueError, match=match):
        tree_inner(model, X, s)


@pytest.mark.parametrize("family", ["hgb", "gb"])
def test_wrong_features(family):
    X, s, rng = make_data(n=100)
    df = pd.DataFrame(X, columns=[f"x{i}" for i in range(5)])
    model = (hgb if family == "hgb" else gb)("squared_error").fit(df, s)
    with pytest.raises(ValueError, match="trained on 5"):
        predecomp(model, X[:, :4])
    with pytest.raises(ValueError, match="different order"):
        predecomp(model, df[df.columns[::-1]])
    with pytest.raises(ValueError, match="missing"):
        predecomp(model, df.rename(columns={"x0": "z"}))


# -- pins on scikit-learn internals ---------------------------------------------------
def test_pin_hgb_layout():
    X, s, rng = make_data(n=200)
    y = TARGETS["multiclass"](s, rng)
    model = hgb("multiclass", max_iter=3, l2_regularization=1.0).fit(X, y)
    assert len(model._predictors) == 3 and all(len(p) == 3 for p in model._predictors)
    assert model._baseline_prediction.shape == (1, 3)
    nodes = model._predictors[1][0].nodes
    for field in ("value", "count", "feature_idx", "left", "right", "gain"):
        assert field in nodes.dtype.names, f"TreePredictor.nodes lost {field!r}"
    for field in ("is_leaf", "is_categorical", "depth"):
        assert field in nodes.dtype.names, f"TreePredictor.nodes lost {field!r}"
    assert nodes["value"][0] == 0.0, "the root value is no longer 0"
    assert type(model._loss).__name__ == "HalfMultinomialLoss"
    assert not model._loss.constant_hessian
    # Routing with node ids as values gives leaves whose values add up to
    # the raw prediction.
    reader = HistGradientBoostingReader(model)
    leaves = reader.apply(X)
    assert reader.ensemble.is_leaf[leaves].all()
    per_tree = reader.ensemble.value[leaves].reshape(200, 3, 3).sum(axis=1)
    np.testing.assert_allclose(
        per_tree + model._baseline_prediction, model._raw_predict(X), atol=1e-12
    )


def test_pin_hgb_categorical_columns_come_first():
    X, _, rng = make_data(n=50)
    df = pd.DataFrame(
        {
            "a": X[:, 0],
            "b": X[:, 1],
            "c": pd.Categorical.from_codes(rng.integers(0, 4, 50), list("pqrs")),
            "d": X[:, 2],
        }
    )
    model = hgb("squared_error", max_iter=2).fit(df, X[:, 3])
    Xp = model._preprocess_X(df, reset=False)
    column_of = HistGradientBoostingReader(model)._column_of
    assert column_of.tolist() == [2, 0, 1, 3]
    np.testing.assert_array_equal(Xp[:, 0], df["c"].cat.codes)
    np.testing.assert_array_equal(Xp[:, 1:], df[["a", "b", "d"]].to_numpy())


def test_pin_gb_layout():
    X, s, rng = make_data(n=200)
    y = TARGETS["multiclass"](s, rng)
    model = gb("multiclass", n_estimators=3).fit(X, y)
    assert model.estimators_.shape == (3, 3)
    tree = model.estimators_[0, 0]
    # scikit-learn < 1.7 grows the stage trees with friedman_mse: the same node
    # values (means of the residual) and impurities, another split search.
    assert tree.criterion in ("squared_error", "friedman_mse")
    assert tree.tree_.value.shape[1:] == (1, 1)
    assert type(model.init_).__name__ == "DummyClassifier"
    assert model.apply(X).shape == (200, 3, 3)
    reader = GradientBoostingReader(model)
    np.testing.assert_allclose(
        model._raw_predict_init(X.astype(np.float32)),
        np.tile(reader.ensemble.intercept, (200, 1)),
    )
    with expect_lost(reader):
        assert isinstance(read_model(model), GradientBoostingReader)
    assert reader.ensemble.tree_group.tolist() == [0, 1, 2] * 3
