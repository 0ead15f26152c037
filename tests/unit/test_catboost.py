"""CatBoost models against CatBoost's own numbers.

Prop. 1 against ``predict(prediction_type="RawFormulaVal")``; Prop. 3 against
the split gains recomputed from CatBoost's own leaf assignments
(``calc_leaf_indexes``) and staged margins (``staged_predict``); per-round
TreeSHAP against CatBoost's ``ShapValues``; and what the reader relies on in
CatBoost's JSON export.
"""

import json
import warnings

import numpy as np
import pytest

from skl_treeinner import TreeInnerSelector, predecomp, tree_inner
from skl_treeinner._readers import read_model
from skl_treeinner.exceptions import IdentityWarning

cb = pytest.importorskip("catboost")
pd = pytest.importorskip("pandas")


def _data(n=800, seed=0, nan=0.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    y = 3 * X[:, 0] + X[:, 1] ** 2 - X[:, 2] + rng.normal(size=n)
    if nan:
        X[rng.random(X.shape) < nan] = np.nan
    return X, y


def _frame(n=1500, seed=1):
    """Numbers, a two-level column (one-hot), a nine-level one (CTR), noise."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "x": rng.normal(size=n),
            "two": rng.choice(["a", "b"], size=n),
            "nine": rng.choice(list("abcdefghi"), size=n),
            "noise": rng.normal(size=n),
        }
    )
    level = frame["nine"].map({c: i for i, c in enumerate("abcdefghi")})
    y = frame["x"] + 2.0 * (frame["two"] == "a") + 0.5 * level + rng.normal(size=n)
    return frame, y.to_numpy()


def _fit(cls, X, y, **params):
    params = {
        "iterations": 12,
        "depth": 3,
        "learning_rate": 0.3,
        "random_seed": 0,
        "thread_count": 1,
        "verbose": 0,
        "allow_writing_files": False,
        **params,
    }
    return cls(**params).fit(X, y)


def _model_json(model):
    """CatBoost's own JSON export of ``model``, parsed."""
    import os
    import tempfile

    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        model.save_model(path, format="json")
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    finally:
        os.unlink(path)


def _softmax(f):
    e = np.exp(f - f.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def catboost_gain(model, X, y, weight=None):
    """Σ over splits of G_l²/(H_l+λ) + G_r²/(H_r+λ) - G²/(H+λ), per feature.

    From CatBoost's own numbers only: the rows of every leaf
    (``calc_leaf_indexes``), the margin before every tree (``staged_predict``
    after the bias) and the splits of the JSON export; H counts rows (the
    hessian of RMSE, and the "hessian" of leaf_estimation_method="Gradient").
    """
    params = model.get_all_params()
    lam = params["l2_leaf_reg"]
    exported = _model_json(model)
    trees = exported["oblivious_trees"]
    bias = np.atleast_1d(np.asarray(exported["scale_and_bias"][1], dtype=np.float64))
    k = max(1, len(trees[0]["leaf_values"]) // len(trees[0]["leaf_weights"]))
    n = X.shape[0]
    w = np.ones(n) if weight is None else weight
    margin = np.tile(np.resize(bias, k), (n, 1))
    staged = model.staged_predict(X, prediction_type="RawFormulaVal")
    leaves = model.calc_leaf_indexes(X).astype(np.int64)
    from skl_treeinner._readers._catboost import _split_features

    owners = _split_features(exported["features_info"])
    gain = np.zeros(X.shape[1])
    if params["loss_function"] not in ("RMSE", "CrossEntropy"):  # class indices
        order = {c: i for i, c in enumerate(model.classes_)}
        y = np.array([order[v] for v in np.asarray(y).tolist()], dtype=np.float64)
        onehot = np.eye(max(k, 2))[y.astype(np.int64)]
    for m, tree in enumerate(trees):
        if params["loss_function"] == "RMSE":
            residual = (y - margin[:, 0])[:, None]
        elif k == 1:
            residual = (y - 1 / (1 + np.exp(-margin[:, 0])))[:, None]
        else:
            residual = onehot - _softmax(margin)
        d = len(tree["splits"])
        for level, split in enumerate(tree["splits"]):
            # The nodes of this level: rows grouped by the sides of the splits
            # above it; each node is split by this level's split.
            above = leaves[:, m] & ((1 << level) - 1)
            side = (leaves[:, m] >> level) & 1
            for c in range(k):
                G = np.zeros((2**level, 2))
                H = np.zeros((2**level, 2))
                np.add.at(G, (above, side), w * residual[:, c])
                np.add.at(H, (above, side), w)
                parent = G.sum(axis=1) ** 2 / (H.sum(axis=1) + lam)
                children = (G**2 / (H + lam)).sum(axis=1)
                gain[owners[split["split_index"]][0]] += (children - parent).sum()
        assert d == len(tree["splits"])
        margin = np.asarray(next(staged), dtype=np.float64).reshape(n, k)
    return gain


def _assert_prop1(model, X):
    values, bias = predecomp(model, X, return_bias=True)
    raw = model.predict(X, prediction_type="RawFormulaVal")
    total = values.sum(axis=1) + bias
    np.testing.assert_allclose(total, raw, rtol=1e-9, atol=1e-9)


def _assert_prop3(model, X, y):
    scores = tree_inner(model, X, y)
    gain = catboost_gain(
        model, X, y if not hasattr(model, "classes_") else np.asarray(y)
    )
    assert gain.sum() > 0
    np.testing.assert_allclose(scores, gain, rtol=1e-6, atol=1e-8 * gain.max())


@pytest.mark.parametrize("boosting_type", ["Plain", "Ordered"])
def test_rmse_identities(boosting_type):
    X, y = _data(nan=0.05)
    model = _fit(cb.CatBoostRegressor, X, y, boosting_type=boosting_type)
    assert read_model(model).lost_identities == []
    _assert_prop1(model, X)
    _assert_prop3(model, X, y)


def test_gradient_leaves_make_classifiers_exact():
    X, y = _data(seed=2)
    binary = (y > 1).astype(np.int64)
    model = _fit(cb.CatBoostClassifier, X, binary, leaf_estimation_method="Gradient")
    assert read_model(model).lost_identities == []
    _assert_prop1(model, X)
    _assert_prop3(model, X, binary)
    labels = np.array(["low", "mid", "high"])[np.digitize(y, [0.0, 2.0])]
    model = _fit(cb.CatBoostClassifier, X, labels, leaf_estimation_method="Gradient")
    assert read_model(model).ensemble.n_outputs == 3
    _assert_prop1(model, X)
    _assert_prop3(model, X, labels)


def test_newton_classifier_keeps_prop1_and_warns():
    X, y = _data(seed=3)
    binary = (y > 1).astype(np.int64)
    model = _fit(cb.CatBoostClassifier, X, binary)  # Newton, the default
    with pytest.warns(IdentityWarning, match="Newton leaf values"):
        tree_inner(model, X, binary)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IdentityWarning)
        _assert_prop1(model, X)


def test_categorical_columns_and_weights():
    frame, y = _frame()
    # One-hot splits route training rows as predict does: exact.
    model = _fit(
        cb.CatBoostRegressor,
        frame,
        y,
        cat_features=["two", "nine"],
        one_hot_max_size=9,
        iterations=20,
    )
    assert read_model(model).lost_identities == []
    _assert_prop1(model, frame)
    _assert_prop3(model, frame, y)
    scores = tree_inner(model, frame, y)
    assert scores[1] > 0 and scores[2] > 0  # both categorical columns matter
    # CTR splits: training rows saw online CTRs, so in-sample Prop. 3 is only
    # close (see the reader's notes).
    model = _fit(
        cb.CatBoostRegressor,
        frame,
        y,
        cat_features=["two", "nine"],
        one_hot_max_size=2,
        max_ctr_complexity=1,
        iterations=20,
    )
    splits = {
        s["split_type"]
        for t in _model_json(model)["oblivious_trees"]
        for s in t["splits"]
    }
    assert {"FloatFeature", "OneHotFeature", "OnlineCtr"} <= splits
    assert read_model(model).lost_identities == []  # held-out scores are exact
    _assert_prop1(model, frame)
    scores, gain = tree_inner(model, frame, y), catboost_gain(model, frame, y)
    np.testing.assert_allclose(scores, gain, rtol=0.1)  # close, not equal
    assert not np.allclose(scores, gain, rtol=1e-3)
    weight = np.random.default_rng(0).uniform(0.5, 2.0, size=len(y))
    weighted = cb.CatBoostRegressor(
        iterations=5, depth=3, verbose=0, thread_count=1, allow_writing_files=False
    ).fit(frame[["x", "noise"]], y, sample_weight=weight)
    with pytest.warns(IdentityWarning, match="l2_leaf_reg by the mean"):
        _assert_prop1(weighted, frame[["x", "noise"]])


def test_feature_combinations_are_refused():
    rng = np.random.default_rng(4)
    n = 2000
    frame = pd.DataFrame(
        {
            "a": rng.choice(list("pqrs"), size=n),
            "b": rng.choice(list("tuvw"), size=n),
        }
    )
    y = 4.0 * ((frame["a"] == "p") == (frame["b"] == "t")) + rng.normal(size=n)
    model = _fit(
        cb.CatBoostRegressor,
        frame,
        y,
        cat_features=["a", "b"],
        max_ctr_complexity=2,
        iterations=30,
        one_hot_max_size=1,
    )
    with pytest.raises(ValueError, match="max_ctr_complexity=1"):
        tree_inner(model, frame, y)


@pytest.mark.slow
@pytest.mark.parametrize("task", ["regression", "multiclass"])
def test_per_round_treeshap_sums_to_catboosts_own(task):
    X, y = _data(n=300, seed=5)
    if task == "regression":
        model = _fit(cb.CatBoostRegressor, X, y, iterations=6)
    else:
        labels = np.digitize(y, [0.0, 2.0])
        model = _fit(
            cb.CatBoostClassifier,
            X,
            labels,
            iterations=6,
            leaf_estimation_method="Gradient",
        )
    reader = read_model(model)
    rounds = sum(phi for _, phi in reader.iteration_shap(X))
    own = model.get_feature_importance(cb.Pool(X), type="ShapValues")
    own = np.asarray(own).reshape(X.shape[0], reader.ensemble.n_outputs, -1)
    np.testing.assert_allclose(rounds, own[:, :, :-1], rtol=1e-6, atol=1e-9)
    target = y if task == "regression" else labels
    both = tree_inner(model, X, target, attribution="treeshap")
    assert both.shape == (5,) and np.isfinite(both).all()


def test_selector_with_categorical_frame_and_early_stopping():
    frame, y = _frame(n=2000, seed=6)
    est = cb.CatBoostRegressor(
        iterations=300,
        learning_rate=0.1,
        depth=3,
        cat_features=["two", "nine"],
        max_ctr_complexity=1,
        early_stopping_rounds=10,
        verbose=0,
        thread_count=1,
        allow_writing_files=False,
    )
    selector = TreeInnerSelector(est, cv=3, random_state=0).fit(frame, y)
    assert selector.get_feature_names_out().tolist() == ["x", "two", "nine"]
    for fitted in selector.estimators_:
        # Stopped on the rows set aside from the training part (eval_set).
        assert fitted.get_best_iteration() is not None
        assert fitted.tree_count_ < 300
    out = selector.set_output(transform="pandas").transform(frame)
    assert out["two"].dtype == frame["two"].dtype


def test_string_labels_follow_catboosts_class_order():
    X, y = _data(n=600, seed=7)
    labels = np.where(y > 1, "yes", "no")
    model = _fit(cb.CatBoostClassifier, X, labels, leaf_estimation_method="Gradient")
    reader = read_model(model)
    order = list(model.classes_)
    np.testing.assert_array_equal(
        reader.check_target(labels, len(labels)),
        [order.index(v) for v in labels],
    )
    _assert_prop3(model, X, labels)
    with pytest.raises(ValueError, match="not trained on"):
        tree_inner(model, X, np.where(y > 1, "yes", "maybe"))


def test_selector_declares_categorical_columns_itself():
    frame, y = _frame(n=900, seed=8)
    frame["two"] = frame["two"].astype("category")  # text and category columns
    est = cb.CatBoostRegressor(
        iterations=30, depth=3, verbose=0, thread_count=1, allow_writing_files=False
    )
    selector = TreeInnerSelector(est, cv=2, random_state=0).fit(frame, y)
    assert selector.estimator_.get_params()["cat_features"] == [1, 2]
    assert est.get_params().get("cat_features") is None  # the user's is untouched
    assert selector.get_support()[[0, 1, 2]].all()
    frame.loc[3, "nine"] = None
    with pytest.raises(ValueError, match="'nine' is categorical and holds missing"):
        TreeInnerSelector(est, cv=2).fit(frame, y)


def test_total_gain_is_refused_with_the_alternative():
    from skl_treeinner import global_importance

    X, y = _data(n=200, seed=9)
    model = _fit(cb.CatBoostRegressor, X, y, iterations=3)
    with pytest.raises(NotImplementedError, match="method='tree_inner'"):
        global_importance(model, X, y, method="total_gain")
    np.testing.assert_allclose(
        global_importance(model, X, y, method="tree_inner"),
        catboost_gain(model, X, y),
        rtol=1e-6,
    )


def test_cross_entropy_takes_probabilities():
    X, y = _data(n=600, seed=10)
    p = 1 / (1 + np.exp(-(y - 1)))
    model = cb.CatBoost(
        {
            "loss_function": "CrossEntropy",
            "leaf_estimation_method": "Gradient",
            "iterations": 8,
            "depth": 3,
            "verbose": 0,
            "thread_count": 1,
            "allow_writing_files": False,
        }
    ).fit(X, p)
    _assert_prop1(model, X)
    _assert_prop3(model, X, p)


def test_selector_refuses_label_keyed_class_settings_before_fitting():
    X, y = _data(n=300, seed=11)
    labels = np.where(y > 1, "yes", "no")
    for params in (
        {"class_names": ["no", "yes"]},
        {"class_weights": {"no": 1, "yes": 3}},
    ):
        est = cb.CatBoostClassifier(iterations=3, verbose=0, **params)
        with pytest.raises(ValueError, match="class_weights as a list"):
            TreeInnerSelector(est, cv=2).fit(X, labels)
        assert not est.is_fitted()
    est = cb.CatBoostClassifier(iterations=3, verbose=0, class_weights=[1.0, 3.0])
    with pytest.warns(IdentityWarning, match="sample or class weights"):  # a list
        TreeInnerSelector(est, cv=2, random_state=0).fit(X, labels)
    est = cb.CatBoostRegressor(iterations=3, verbose=0, loss_function="MAE")
    with pytest.raises(ValueError, match="loss_function='MAE' is not supported"):
        TreeInnerSelector(est, cv=2).fit(X, y)


def test_selector_on_polars_with_a_categorical_column():
    pl = pytest.importorskip("polars")
    frame, y = _frame(n=600, seed=12)
    frame = pl.from_pandas(frame).with_columns(pl.col("two").cast(pl.Categorical))
    est = cb.CatBoostRegressor(
        iterations=20,
        depth=3,
        verbose=0,
        thread_count=1,
        allow_writing_files=False,
        max_ctr_complexity=1,
    )
    selector = TreeInnerSelector(est, cv=2, random_state=0).fit(frame, y)
    assert selector.estimator_.get_params()["cat_features"] == [1, 2]
    assert selector.get_support()[0]


def test_the_selector_sets_one_column_per_ctr_before_any_fit(monkeypatch):
    """Issue 41, item 4: CatBoost's default CTRs of several columns.

    CatBoostRegressor(verbose=0) on a frame with two category columns used to
    run every fit and only then refuse the models; now the selector sets
    max_ctr_complexity=1 itself (on a frame, with cat_features passed to fit,
    and at the end of a Pipeline) and refuses an explicit 2 before any fit.
    """
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    rng = np.random.default_rng(3)
    n = 600
    x = rng.normal(size=n)
    shop = rng.integers(0, 200, n).astype(str)
    size = rng.choice(["0", "1", "2"], size=n)  # an object array takes digits only
    y = x + (size == "2") + rng.normal(size=n)
    frame = pd.DataFrame(
        {"x": x, "shop": pd.Categorical(shop), "size": pd.Categorical(size)}
    )
    cells = np.empty((n, 3), dtype=object)
    cells[:, 0], cells[:, 1], cells[:, 2] = x, shop, size

    def cases(**params):
        def booster(**more):
            return cb.CatBoostRegressor(
                # 300: CatBoost's default then builds CTRs of several columns
                iterations=300, verbose=0, thread_count=1, allow_writing_files=False,
                **params, **more,
            )  # fmt: skip

        piped = make_pipeline(FunctionTransformer(), booster(cat_features=[1, 2]))
        return [
            (booster(), frame, {}),
            (booster(), cells, {"cat_features": [1, 2]}),
            (piped, cells, {}),
        ]

    for estimator, X, fit_params in cases():
        selector = TreeInnerSelector(estimator, cv=2, random_state=0)
        selector.fit(X, y, **fit_params)
        final = selector.estimator_
        final = final.steps[-1][1] if hasattr(final, "steps") else final
        assert final.get_params()["max_ctr_complexity"] == 1
        assert selector.support_[0]
    fits = []
    monkeypatch.setattr(
        cb.CatBoostRegressor, "fit", lambda self, *a, **k: fits.append(1)
    )
    for estimator, X, fit_params in cases(max_ctr_complexity=2):
        with pytest.raises(ValueError, match="max_ctr_complexity=2 combines"):
            TreeInnerSelector(estimator, cv=2).fit(X, y, **fit_params)
    assert not fits


def test_the_read_cache_skips_the_json_and_still_sees_changes_in_place(
    monkeypatch, tmp_path
):
    """The cache key is CatBoost's binary model: a hit writes no JSON; a model
    trained again, loaded over, or given a new bias in place is read again."""
    from skl_treeinner._readers._catboost import CatBoostReader

    dumps = []
    real = CatBoostReader._json
    monkeypatch.setattr(
        CatBoostReader, "_json", lambda self: dumps.append(1) or real(self)
    )
    X, y = _data(n=400, seed=7)
    model = _fit(cb.CatBoostRegressor, X, y)
    first = read_model(model).ensemble
    assert read_model(model).ensemble is first and len(dumps) == 1

    def assert_read_again():
        count = len(dumps)
        _assert_prop1(model, X)  # against CatBoost's own margins, as changed
        assert len(dumps) == count + 1

    model.fit(X, -y)  # trained again in place
    assert_read_again()
    scale, bias = model.get_scale_and_bias()
    model.set_scale_and_bias(scale, bias + 1.0)
    assert_read_again()
    # Same parameters, other data: only the model's bytes tell them apart.
    other = _fit(cb.CatBoostRegressor, X, 2.0 * y)
    assert other.get_all_params() == model.get_all_params()
    path = tmp_path / "other.cbm"
    other.save_model(str(path))
    model.load_model(str(path))  # loaded over
    assert_read_again()
