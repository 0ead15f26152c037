"""TreeInnerSelector with LightGBM and scikit-learn boosters.

Each split's score is compared with ``tree_inner`` called by hand on a model
refitted on the same rows, early stopping included (the rows set aside for it
are recomputed from the documented rule and must never be held-out rows).
"""

import inspect

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import KFold, StratifiedKFold, train_test_split

from skl_treeinner import TreeInnerSelector, tree_inner


def make_data(n=400, p=5, seed=0, classification=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = 2 * X[:, 0] - X[:, 1] + rng.normal(size=n)
    if classification:
        y = (y > 0).astype(int)
    return X, y


def es_rows(random_state, n_splits, train, y, classifier):
    """The documented carve-out: 10% of the training part, seeded, stratified."""
    rng = np.random.RandomState(random_state)
    rng.randint(2**31 - 1, size=2)  # split seed, default-booster seed
    seeds = rng.randint(2**31 - 1, size=n_splits)
    return [
        tuple(
            np.sort(part)
            for part in train_test_split(
                tr,
                test_size=0.1,
                stratify=y[tr] if classifier else None,
                random_state=int(seed),
            )
        )
        for tr, seed in zip(train, seeds, strict=True)
    ]


def assert_splits_match_manual(sel, est, X, y, splits, fit=None, **kw):
    for (train, test), fitted, got in zip(
        splits, sel.estimators_, sel.split_scores_, strict=True
    ):
        model = fit(train) if fit else clone(est).fit(X[train], y[train])
        np.testing.assert_allclose(model.predict(X), fitted.predict(X), rtol=1e-12)
        expected = tree_inner(model, X[test], y[test], **kw)
        np.testing.assert_allclose(got, expected, rtol=1e-10)


# -- LightGBM -----------------------------------------------------------------------
@pytest.fixture
def lgb():
    return pytest.importorskip("lightgbm")


def small_lgb(lgb, classifier=False, **kw):
    params = dict(
        n_estimators=15,
        num_leaves=4,
        min_child_samples=5,
        learning_rate=0.2,
        reg_lambda=1.0,
        verbose=-1,
        n_jobs=1,
    )
    cls = lgb.LGBMClassifier if classifier else lgb.LGBMRegressor
    return cls(**{**params, **kw})


@pytest.mark.parametrize("attribution", ["predecomp", "treeshap"])
def test_lightgbm_cv_matches_manual(lgb, attribution):
    X, y = make_data()
    est = small_lgb(lgb)
    splits = list(KFold(2, shuffle=True, random_state=0).split(X))
    sel = TreeInnerSelector(est, cv=splits, attribution=attribution).fit(X, y)
    assert_splits_match_manual(sel, est, X, y, splits, attribution=attribution)
    assert np.argmax(sel.scores_) == 0


def test_lightgbm_early_stopping_callback(lgb):
    X, y = make_data(classification=True)
    est = small_lgb(lgb, classifier=True, n_estimators=300, learning_rate=0.5)
    splits = list(StratifiedKFold(2, shuffle=True, random_state=0).split(X, y))
    callbacks = [lgb.early_stopping(3, verbose=False)]
    sel = TreeInnerSelector(est, cv=splits, random_state=3)
    sel.fit(X, y, callbacks=callbacks)
    carved = es_rows(3, 2, [tr for tr, _ in splits], y, True)
    for (_fit_rows, stop_rows), (_, test) in zip(carved, splits, strict=True):
        assert not set(stop_rows) & set(test)
    fitted_iters = [e.best_iteration_ for e in sel.estimators_]
    assert all(0 < it < 300 for it in fitted_iters)  # it did stop early

    def fit(train):
        i = next(k for k, (tr, _) in enumerate(splits) if tr is train)
        fit_rows, stop_rows = carved[i]
        # LightGBM >= 4.7 takes eval_X/eval_y; before, eval_set.
        if "eval_X" in inspect.signature(est.fit).parameters:
            rows = {"eval_X": (X[stop_rows],), "eval_y": (y[stop_rows],)}
        else:
            rows = {"eval_set": [(X[stop_rows], y[stop_rows])]}
        return clone(est).fit(
            X[fit_rows],
            y[fit_rows],
            **rows,
            callbacks=[lgb.early_stopping(3, verbose=False)],
        )

    assert_splits_match_manual(sel, est, X, y, splits, fit=fit)


def test_lightgbm_early_stopping_parameter(lgb):
    X, y = make_data()
    est = small_lgb(lgb, n_estimators=300, learning_rate=0.5, early_stopping_round=3)
    sel = TreeInnerSelector(est, cv=2, random_state=0).fit(X, y)
    assert all(0 < e.best_iteration_ < 300 for e in sel.estimators_)


@pytest.mark.parametrize(
    "onehot",
    [
        8,
        # Many-vs-many categorical splits (4 categories + "other" > 4 bins): the
        # reader warns that Prop. 3 is approximate (cat_l2); scores still match.
        pytest.param(
            4,
            marks=pytest.mark.filterwarnings(
                "ignore::skl_treeinner.exceptions.IdentityWarning"
            ),
        ),
    ],
)
def test_lightgbm_categorical_and_nan(lgb, onehot):
    pd = pytest.importorskip("pandas")
    X, y = make_data(n=500, p=3)
    rng = np.random.default_rng(1)
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    df.loc[rng.random(len(df)) < 0.1, "a"] = np.nan
    cat = rng.choice(list("pqrs"), size=len(df))
    df["cat"] = pd.Categorical(cat)
    y = y + 3.0 * (cat == "p")
    est = small_lgb(lgb, max_cat_to_onehot=onehot)
    splits = list(KFold(2, shuffle=True, random_state=0).split(df))
    sel = TreeInnerSelector(est, cv=splits).fit(df, y)

    def fit(train):
        return clone(est).fit(df.iloc[train], y[train])

    for (train, test), got in zip(splits, sel.split_scores_, strict=True):
        expected = tree_inner(fit(train), df.iloc[test], y[test])
        np.testing.assert_allclose(got, expected, rtol=1e-10)
    assert sel.scores_[3] > 0
    out = sel.set_params(threshold=-1e9).fit(df, y)
    out = out.set_output(transform="pandas").transform(df)
    assert out["cat"].dtype.name == "category"


# -- scikit-learn ------------------------------------------------------------------
def test_hist_gradient_boosting_early_stopping_and_categorical():
    pd = pytest.importorskip("pandas")
    from sklearn.ensemble import HistGradientBoostingRegressor

    X, y = make_data(n=500, p=3)
    rng = np.random.default_rng(2)
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    df.loc[rng.random(len(df)) < 0.1, "b"] = np.nan
    cat = rng.choice(list("pqr"), size=len(df))
    df["cat"] = pd.Categorical(cat)
    y = y + 3.0 * (cat == "p")
    est = HistGradientBoostingRegressor(
        max_iter=300,
        learning_rate=0.5,
        max_leaf_nodes=4,
        l2_regularization=1.0,
        early_stopping=True,
        n_iter_no_change=3,
        random_state=0,
    )
    splits = list(KFold(2, shuffle=True, random_state=0).split(df))
    sel = TreeInnerSelector(est, cv=splits).fit(df, y)
    assert all(e.n_iter_ < 300 for e in sel.estimators_)  # stopped early
    for (train, test), fitted, got in zip(
        splits, sel.estimators_, sel.split_scores_, strict=True
    ):
        # HGB carves its validation rows from the training part it is given
        model = clone(est).fit(df.iloc[train], y[train])
        assert model.n_iter_ == fitted.n_iter_
        expected = tree_inner(model, df.iloc[test], y[test])
        np.testing.assert_allclose(got, expected, rtol=1e-10)
    assert sel.scores_[3] > 0


@pytest.mark.parametrize("attribution", ["predecomp", "treeshap"])
def test_hist_gradient_boosting_classifier(attribution):
    from sklearn.ensemble import HistGradientBoostingClassifier

    X, y = make_data(classification=True)
    labels = np.array(["no", "yes"])[y]
    est = HistGradientBoostingClassifier(max_iter=10, max_leaf_nodes=4)
    splits = list(StratifiedKFold(2, shuffle=True, random_state=0).split(X, y))
    sel = TreeInnerSelector(est, cv=splits, attribution=attribution).fit(X, labels)
    assert_splits_match_manual(sel, est, X, y, splits, attribution=attribution)


@pytest.mark.parametrize("attribution", ["predecomp", "treeshap"])
def test_gradient_boosting_with_n_iter_no_change(attribution):
    from sklearn.ensemble import GradientBoostingRegressor

    X, y = make_data()
    est = GradientBoostingRegressor(
        n_estimators=200,
        learning_rate=0.5,
        max_depth=2,
        n_iter_no_change=2,
        random_state=0,
    )
    splits = list(KFold(2, shuffle=True, random_state=0).split(X))
    sel = TreeInnerSelector(est, cv=splits, attribution=attribution).fit(X, y)
    assert all(e.n_estimators_ < 200 for e in sel.estimators_)
    assert_splits_match_manual(sel, est, X, y, splits, attribution=attribution)
