"""Pipelines whose steps expand a column (issue 29): scores per input column.

The expected map from the booster's columns to the input columns is read
from scikit-learn's own output names (``get_feature_names_out``), which the
package does not use where an attribute says it; the expected scores are
the public ``tree_inner`` terms of the booster on the transformed rows,
added per input column.
"""

import numpy as np
import pytest
import xgboost as xgb
from scipy import stats
from sklearn.compose import make_column_transformer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import (
    OneHotEncoder,
    PolynomialFeatures,
    SplineTransformer,
    StandardScaler,
)

from skl_treeinner import TreeInnerSelector, tree_inner

pd = pytest.importorskip("pandas")


def _frame(n, seed):
    rng = np.random.default_rng(seed)
    cities = np.array(list("abcdefgh"))
    frame = pd.DataFrame(
        {
            "num": rng.normal(size=n),
            "city": cities[rng.integers(8, size=n)],
            "rare": rng.choice(["u", "v", "w", "x"], p=[0.7, 0.2, 0.06, 0.04], size=n),
            "curve": rng.uniform(-2, 2, size=n),
            "noise": rng.normal(size=n),
        }
    )
    # The same city effects in every sample (train and new rows alike).
    effect = dict(zip(cities, np.linspace(-1.5, 1.5, 8), strict=True))
    y = (
        frame["num"].to_numpy()
        + frame["city"].map(effect).to_numpy()
        + np.sin(2 * frame["curve"].to_numpy())
        + rng.normal(size=n)
    )
    return frame, y


def _pipeline():
    encode = make_column_transformer(
        (OneHotEncoder(sparse_output=False), ["city"]),
        (
            OneHotEncoder(drop="first", min_frequency=0.05, sparse_output=False),
            ["rare"],
        ),
        (SplineTransformer(n_knots=4), ["curve"]),
        (StandardScaler(), ["noise"]),
        remainder="passthrough",
    )
    booster = xgb.XGBRegressor(n_estimators=40, max_depth=3, learning_rate=0.2)
    return make_pipeline(encode, booster)


def _input_of(names_out, names_in):
    """The input column of each output name: scikit-learn's naming, parsed."""
    index = []
    for name in names_out:
        bare = name.split("__", 1)[1]
        matches = [i for i, c in enumerate(names_in) if bare.startswith(c)]
        index.append(max(matches, key=lambda i: len(names_in[i])))
    return np.asarray(index)


def test_expanded_columns_are_scored_as_their_input_column():
    train, y_train = _frame(1500, 0)
    new, y_new = _frame(800, 1)
    pipe = _pipeline().fit(train, y_train)
    selector = TreeInnerSelector(pipe, prefit=True, test="model").fit(new, y_new)
    names_in = list(train.columns)
    pre, booster = pipe[:-1], pipe[-1]
    names_out = list(pre.get_feature_names_out())
    assert len(names_out) == 18  # 8 cities, 2 rare kept + infrequent - 1, 6 splines, 2
    owner = _input_of(names_out, names_in)
    Xt = pre.transform(new)
    z = tree_inner(booster, Xt, y_new, per_sample=True)
    expected = np.zeros((len(y_new), len(names_in)))
    np.add.at(expected.T, owner, z.T)
    np.testing.assert_allclose(selector.scores_, expected.sum(axis=0), rtol=1e-9)
    # The standard error: the rows' spread of the summed terms, or the
    # target's noise in the summed slopes, whichever is larger.
    up = tree_inner(booster, Xt, y_new + 1.0, per_sample=True) - z
    slopes = np.zeros_like(expected)
    np.add.at(slopes.T, owner, up.T)
    dispersion = np.mean((y_new - booster.predict(Xt)) ** 2)
    m = len(y_new)
    se = np.maximum(
        np.sqrt(m) * expected.std(axis=0, ddof=1),
        np.sqrt((slopes**2).sum(axis=0) * dispersion),
    )
    np.testing.assert_allclose(selector.scores_se_, se, rtol=1e-6)
    p = stats.t.sf(expected.sum(axis=0) / se, df=m - 1)
    np.testing.assert_allclose(selector.pvalues_, p, rtol=1e-5, atol=1e-12)
    assert selector.support_[names_in.index("city")]
    assert selector.support_[names_in.index("curve")]


def test_cross_fitted_pipeline_with_one_hot_gives_one_score_per_input_column():
    frame, y = _frame(900, 2)
    pipe = make_pipeline(
        make_column_transformer(
            (OneHotEncoder(handle_unknown="ignore"), ["city", "rare"]),
            remainder="passthrough",
        ),
        xgb.XGBRegressor(n_estimators=30, max_depth=3, learning_rate=0.2),
    )
    selector = TreeInnerSelector(
        pipe, cv=3, random_state=0, feature_groups={"cats": ["city", "rare"]}
    ).fit(frame, y)
    assert selector.scores_.shape == (5,)
    assert list(selector.groups_) == ["num", "cats", "curve", "noise"]
    cats = list(selector.groups_).index("cats")
    assert selector.group_scores_[cats] == pytest.approx(
        selector.scores_[[1, 2]].sum(), rel=1e-9
    )
    assert selector.get_support()[1] == selector.get_support()[2]


@pytest.mark.parametrize("drop", [None, "first", "if_binary"])
def test_one_hot_encoder_alone_on_an_array(drop):
    rng = np.random.default_rng(3)
    X = rng.integers(0, 5, size=(600, 3)).astype(float)
    X[:, 2] = rng.integers(0, 2, size=600)
    y = X[:, 0] + rng.normal(size=600)
    pipe = make_pipeline(
        OneHotEncoder(drop=drop), xgb.XGBRegressor(n_estimators=20, max_depth=3)
    )
    selector = TreeInnerSelector(pipe, cv=2, random_state=0).fit(X, y)
    assert selector.scores_.shape == (3,)
    assert selector.ranking_[0] == 1


def test_a_step_that_mixes_columns_is_refused_with_what_to_do():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(200, 3))
    y = X[:, 0] + rng.normal(size=200)
    pipe = make_pipeline(
        StandardScaler(), PolynomialFeatures(2), xgb.XGBRegressor(n_estimators=5)
    )
    with pytest.raises(ValueError, match="PolynomialFeatures turns 3 columns into"):
        TreeInnerSelector(pipe, cv=2).fit(X, y)


def test_a_step_after_an_unnamed_expansion_is_refused_not_misread():
    # Found in review: a transformer that adds columns without naming them,
    # then splines: the splines' columns were assigned to the wrong inputs.
    from sklearn.preprocessing import FunctionTransformer

    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 2))
    y = X[:, 0] + rng.normal(size=300)
    pipe = make_pipeline(
        FunctionTransformer(lambda X: np.hstack([X, X**2])),
        SplineTransformer(n_knots=3, degree=1),
        xgb.XGBRegressor(n_estimators=5),
    )
    with pytest.raises(ValueError, match="fitted on 4 columns where 2 reach it"):
        TreeInnerSelector(pipe, cv=2).fit(X, y)


def test_column_test_resamples_an_input_column_with_all_its_dummies():
    """test="column" with a one-hot Pipeline: the input column is resampled.

    Resampling "city" among the held-out rows before the encoder is
    resampling its whole block of dummies after it; the reference does the
    former with the public tree_inner on the transformed rows.
    """
    from skl_treeinner._engines._plan import selection_seeds
    from skl_treeinner._scoring import _permutation as perm

    frame, y = _frame(900, 5)
    pipe = make_pipeline(
        make_column_transformer(
            (OneHotEncoder(handle_unknown="ignore"), ["city", "rare"]),
            remainder="passthrough",
        ),
        xgb.XGBRegressor(n_estimators=30, max_depth=3, learning_rate=0.2),
    ).fit(frame.iloc[:500], y[:500])
    new, y_new = frame.iloc[500:].reset_index(drop=True), y[500:]
    selector = TreeInnerSelector(pipe, prefit=True, test="column", random_state=1)
    selector.fit(new, y_new)
    sources = perm.draw_sources(len(y_new), perm.DRAWS, [selection_seeds(1)[0], 0])
    pre, booster = pipe[:-1], pipe[-1]
    names_out = list(pre.get_feature_names_out())
    z = tree_inner(booster, pre.transform(new), y_new, per_sample=True)
    for j, column in enumerate(new.columns):
        block = [k for k, name in enumerate(names_out) if column in name]
        drawn = 0.0
        for src in sources:
            moved = new.copy()
            moved[column] = new[column].to_numpy()[src]
            terms = tree_inner(booster, pre.transform(moved), y_new, per_sample=True)
            drawn = drawn + terms[:, block].sum(axis=1) / len(sources)
        assert selector.scores_[j] == pytest.approx(z[:, block].sum(), rel=1e-9)
        assert selector.null_scores_[j] == pytest.approx(
            np.sum(drawn), rel=1e-9, abs=1e-9
        )
    assert selector.support_[list(new.columns).index("city")]
