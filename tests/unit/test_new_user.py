"""What a new user hit (issue 13): each test is named after the problem it pins."""

import sys
import warnings

import numpy as np
import pandas as pd
import pytest
import xgboost as xgb

from skl_treeinner import TreeInnerSelector, predecomp, tree_inner
from skl_treeinner._cli._main import main


def small(**kw):
    params = dict(n_estimators=5, max_depth=2, n_jobs=1)
    return {**params, **kw}


def data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    return X, X[:, 0] + rng.normal(size=n)


# -- task detection: one rule, by dtype ---------------------------------------------
@pytest.mark.slow
def test_whole_number_float_target_is_regression_not_classes():
    X, y = data()
    counts = np.round(np.exp(1 + X[:, 0] / 2)).astype(float)  # Poisson-like counts
    for target in (
        counts,
        np.round(y * 1000, -3),
        np.clip(np.round(y * 5 + 10), 0, 20),
    ):
        sel = TreeInnerSelector(random_state=0).fit(X, target)
        assert isinstance(sel.estimator_, xgb.XGBRegressor)


@pytest.mark.slow
@pytest.mark.parametrize(
    "target",
    [
        lambda y: (y > 0).astype(np.int64),
        lambda y: y > 0,
        lambda y: np.where(y > 0, "yes", "no"),
        lambda y: pd.Series(np.where(y > 0, "a", "b"), dtype="category"),
        lambda y: pd.Series(pd.Categorical((y > 0).astype(float))),
    ],
)
def test_integer_boolean_string_categorical_targets_are_classes(target):
    X, y = data()
    sel = TreeInnerSelector(random_state=0).fit(X, target(y))
    assert isinstance(sel.estimator_, xgb.XGBClassifier)


def test_a_price_stored_as_integers_is_a_regression_said_once():
    # Issue 54: an int64 price (hundreds of distinct values) became a 200-class
    # classifier and failed to split. Beyond 20 distinct integers the default
    # booster fits numbers and says so once, naming how to ask for classes.
    X, y = data()
    price = np.round(y * 1000 + 150_000).astype(np.int64)
    with pytest.warns(UserWarning, match=r"distinct integers.*regression") as record:
        sel = TreeInnerSelector(random_state=0).fit(X, price)
    assert len(record) == 1 and record[0].filename == __file__
    assert isinstance(sel.estimator_, xgb.XGBRegressor)
    assert sel.get_support()[0]  # the column that drives the price
    # Following the warning's advice gives classes without a word.
    labels = np.clip(np.round(y * 3), -12, 12).astype(int) + 12  # 23 classes
    clf = xgb.XGBClassifier(**small())
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        try:
            sel = TreeInnerSelector(clf, cv=None, random_state=0).fit(X, labels)
        except ValueError as e:  # a class of a single row: refused by name
            assert "single row" in str(e)


def test_cli_uses_the_same_task_rule_as_python(capsys, tmp_path):
    X, y = data()
    frame = pd.DataFrame(X, columns=list("abcd"))
    frame["whole"] = np.round(y * 1000, -3)  # float column of whole numbers
    frame["label"] = (y > 0).astype(int)
    path = tmp_path / "d.csv"
    frame.to_csv(path, index=False)
    fast = ["--n-estimators", "5", "--cv", "2", "-q"]
    assert main(["select", str(path), "-t", "whole", "--drop", "label", *fast]) == 0
    assert "(regression)" in capsys.readouterr().out
    assert main(["select", str(path), "-t", "label", "--drop", "whole", *fast]) == 0
    assert "(classification)" in capsys.readouterr().out
    # Issue 54: a price stored as integers is a numeric target, said once.
    frame["price"] = np.round(y * 1000 + 150_000).astype(np.int64)
    frame.to_csv(path, index=False)
    drop = ["--drop", "whole,label"]
    assert main(["select", str(path), "-t", "price", *drop, *fast]) == 0
    out, err = capsys.readouterr()
    assert "(regression)" in out
    assert err.count("distinct integers") == 1 and "--task classification" in err
    args = ["select", str(path), "-t", "label", "--task", "classification"]
    assert main([*args, "--drop", "whole,price", *fast]) == 0


# -- columns the default booster takes, and those it cannot ---------------------------
@pytest.mark.slow
def test_default_booster_takes_pandas_and_polars_categories():
    X, y = data()
    frame = pd.DataFrame(X, columns=list("abcd"))
    frame["city"] = pd.Categorical(np.where(X[:, 1] > 0, "paris", "lyon"))
    sel = TreeInnerSelector(random_state=0).fit(frame, y)
    assert sel.scores_.shape == (5,)
    pl = pytest.importorskip("polars")
    polars_frame = pl.from_pandas(frame)
    sel = TreeInnerSelector(random_state=0).fit(polars_frame, y)
    assert sel.scores_.shape == (5,)


def test_datetime_and_text_columns_are_named_with_the_conversion():
    X, y = data()
    frame = pd.DataFrame(X, columns=list("abcd"))
    frame["sold"] = pd.date_range("2020-01-01", periods=len(frame))
    with pytest.raises(ValueError, match=r"Column 'sold' of X holds dates.*\.dt\.days"):
        TreeInnerSelector(random_state=0).fit(frame, y)
    frame = frame.drop(columns="sold").assign(city=np.where(y > 0, "x", "y"))
    with pytest.raises(
        ValueError, match=r"'city' of X holds text.*astype\('category'\)"
    ):
        TreeInnerSelector(random_state=0).fit(frame, y)
    pl = pytest.importorskip("polars")
    with pytest.raises(ValueError, match=r"'city'.*cast\(pl\.Categorical\)"):
        est = xgb.XGBRegressor(enable_categorical=True, **small())
        TreeInnerSelector(est, random_state=0).fit(pl.from_pandas(frame), y)


def test_numbers_held_as_objects_get_to_numeric_advice_that_works():
    # Issue 54: an object column of numbers (a JSON or API load) was told to
    # become a category; XGBoost then crashed in its fit ("Category index
    # from DataFrame has floating point dtype") and LightGBM dropped it.
    X, y = data()
    frame = pd.DataFrame(X[:, 1:], columns=["age", "tenure", "visits"])
    frame["income"] = pd.Series([None, *(X[1:, 0] * 10 + 50)], dtype=object)
    with pytest.raises(ValueError, match=r"'income'.*pd\.to_numeric") as e:
        TreeInnerSelector(random_state=0).fit(frame, y)
    assert "category" not in str(e.value)
    frame["income"] = pd.to_numeric(frame["income"])  # the advice, followed
    sel = TreeInnerSelector(xgb.XGBRegressor(**small(n_estimators=30)), cv=None)
    assert sel.fit(frame, y).get_support()[3]  # the one signal is kept
    strings = frame["income"].fillna(50.0).astype(str)  # numbers stored as text
    text = frame.assign(income=strings)
    with pytest.raises(ValueError, match=r"'income'.*pd\.to_numeric"):
        TreeInnerSelector(random_state=0).fit(text, y)
    words = frame.assign(income=np.where(y > 0, "high", "low"))  # real text
    with pytest.raises(ValueError, match=r"'income'.*astype\('category'\)"):
        TreeInnerSelector(random_state=0).fit(words, y)
    pl = pytest.importorskip("polars")
    with pytest.raises(ValueError, match=r"'income'.*cast\(pl\.Float64\)"):
        TreeInnerSelector(random_state=0).fit(pl.from_pandas(text), y)


def test_a_category_of_floats_gets_advice_that_works_before_any_fit(monkeypatch):
    # A float column with NaN made a category (loanapp's 'unit', 'occ'): the
    # default booster crashed inside its fit ("Category index from DataFrame
    # has floating point dtype"), in every fold of cross_val_score.
    X, y = data()
    frame = pd.DataFrame(X[:, 1:], columns=["age", "tenure", "visits"])
    unit = np.where(X[:, 0] > 0, 2.0, 1.0)
    unit[::7] = np.nan
    frame["unit"] = pd.Series(unit).astype("category")
    y = y + 3 * np.nan_to_num(unit)
    fits = []
    monkeypatch.setattr(
        xgb.XGBRegressor, "fit", lambda self, *a, **k: fits.append(1) or self
    )
    with pytest.raises(ValueError, match=r"'unit'.*floats \(1, 2\).*\(str\)"):
        TreeInnerSelector(random_state=0).fit(frame, y)
    assert not fits  # refused before any fit
    monkeypatch.undo()
    small_booster = xgb.XGBRegressor(enable_categorical=True, **small(n_estimators=30))
    for fixed in (  # each advice, followed
        frame.assign(unit=frame["unit"].cat.rename_categories(str)),
        frame.assign(unit=frame["unit"].astype(float)),
    ):
        sel = TreeInnerSelector(small_booster, cv=None, random_state=0)
        assert sel.fit(fixed, y).get_support()[3]  # the signal is kept


def test_a_pipeline_step_after_the_selector_gets_the_frame_it_needs():
    # Issue 54: transform gave the next step a numpy object array, which
    # LightGBM refused in every fold ("could not convert string to float:
    # 'rent'"); with a bool or Int64 column transform itself raised.
    lgb = pytest.importorskip("lightgbm")
    from sklearn.model_selection import cross_val_score
    from sklearn.pipeline import Pipeline

    X, y = data()
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(X[:, :2], columns=["income", "age"])
    frame["home"] = pd.Categorical(np.where(X[:, 1] > 0, "rent", "own"))
    frame["active"] = rng.random(len(frame)) > 0.5
    frame["children"] = pd.array(rng.integers(0, 4, len(frame)), dtype="Int64")
    labels = (y > 0).astype(int)
    booster = xgb.XGBClassifier(enable_categorical=True, **small(n_estimators=20))
    sel = TreeInnerSelector(booster, max_features=5, alpha=None, threshold=-np.inf)
    out = sel.fit(frame, labels).transform(frame)
    assert isinstance(out, pd.DataFrame)
    assert out.dtypes.equals(frame.dtypes)
    pipe = Pipeline(
        [
            ("select", TreeInnerSelector(booster, random_state=0)),
            ("model", lgb.LGBMClassifier(n_estimators=10, verbose=-1)),
        ]
    )
    assert np.isfinite(cross_val_score(pipe, frame, labels, cv=3)).all()
    pl = pytest.importorskip("polars")
    assert isinstance(sel.transform(pl.from_pandas(frame)), pl.DataFrame)
    assert isinstance(sel.set_output(transform="pandas").transform(frame), pd.DataFrame)


# -- no silent nonsense --------------------------------------------------------------
def test_inf_in_x_is_one_line_naming_the_column():
    X, y = data()
    frame = pd.DataFrame(X.copy(), columns=list("abcd"))  # pandas < 3 shares X
    frame.loc[7, "c"] = np.inf
    with pytest.raises(
        ValueError, match=r"in column 'c' \(first at row 7, counted from 0\)"
    ):
        TreeInnerSelector(random_state=0).fit(frame, y)
    model = xgb.XGBRegressor(**small()).fit(X, y)
    for call in (lambda: tree_inner(model, frame, y), lambda: predecomp(model, frame)):
        with pytest.raises(ValueError, match="column 'c'"):
            call()
    Xa = X.copy()
    Xa[5, 2] = -np.inf
    with pytest.raises(
        ValueError, match=r"column 2 \(first at row 5, counted from 0\)"
    ):
        tree_inner(model, Xa, y)


def test_lightgbm_routes_inf_itself_so_it_passes():
    lgb = pytest.importorskip("lightgbm")
    X, y = data()
    model = lgb.LGBMRegressor(n_estimators=5, verbose=-1).fit(X, y)
    Xi = X.copy()
    Xi[0, 0] = np.inf
    assert np.isfinite(tree_inner(model, Xi, y)).all()


@pytest.mark.parametrize(
    "n, kwargs",
    [
        (2, {"cv": None}),
        (4, {"cv": 2}),
        (9, {"cv": 5}),
        (300, {"cv": None, "validation_fraction": 0.001}),
    ],
)
def test_too_few_scoring_rows_is_an_error_not_a_selection(n, kwargs):
    X, y = data(n=max(n, 2))
    match = r"(at least 5 \(a score|at least 2\. |Cannot split)"
    with pytest.raises(ValueError, match=match):
        TreeInnerSelector(xgb.XGBRegressor(**small()), **kwargs).fit(X[:n], y[:n])


def test_empty_x_is_an_error():
    X, y = data()
    with pytest.raises(ValueError, match="0 sample"):
        TreeInnerSelector().fit(X[:0], y[:0])
    with pytest.raises(ValueError, match=r"shape \(0, 4\)"):
        TreeInnerSelector().fit(pd.DataFrame(X[:0]), y[:0])


def test_all_constant_x_warns_that_nothing_can_be_selected():
    X, y = data()
    with pytest.warns(UserWarning, match="holds a single value") as record:
        sel = TreeInnerSelector(xgb.XGBRegressor(**small())).fit(np.ones_like(X), y)
    assert not sel.support_.any()
    assert record[0].filename == __file__


# -- split errors that name the real cause -------------------------------------------
def test_groups_of_the_wrong_length_say_so():
    X, y = data()
    with pytest.raises(ValueError, match="groups has 10 entries but X has 300 rows"):
        TreeInnerSelector(xgb.XGBRegressor(**small())).fit(X, y, groups=np.arange(10))


def test_group_kfold_without_groups_asks_for_groups():
    from sklearn.model_selection import GroupKFold

    X, y = data()
    with pytest.raises(ValueError, match=r"no groups were given: pass them as fit"):
        TreeInnerSelector(xgb.XGBRegressor(**small()), cv=GroupKFold(3)).fit(X, y)


def test_single_row_class_names_the_class_not_stratification():
    X, y = data()
    labels = (y > 0).astype(int)
    labels[0] = 7
    with pytest.raises(ValueError, match=r"class\(es\) \[7\] have a single row") as e:
        TreeInnerSelector(xgb.XGBClassifier(**small()), cv=5).fit(X, labels)
    assert "stratified" not in str(e.value)


def test_a_rare_class_is_named_by_its_label_with_the_rows_the_folds_need():
    # Issue 54: a class of 3 rows under cv=5 was "[1] (as encoded 0..K-1)",
    # and the message said to stratify a split that already was.
    X, y = data()
    labels = pd.Series(np.where(y > 0, "Adelie", "Gentoo"))
    labels[[10, 17, 24]] = "Chinstrap"
    rows = r"'Chinstrap' \(3 rows\).*at least 5 rows"
    with pytest.raises(ValueError, match=rows) as e:
        TreeInnerSelector(xgb.XGBClassifier(**small()), random_state=0).fit(X, labels)
    assert "stratified split" not in str(e.value)
    # The advice works: fewer splits.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # scikit-learn's fold count
        TreeInnerSelector(xgb.XGBClassifier(**small()), cv=3).fit(X, labels)


def test_string_labels_with_a_missing_value_name_the_rows():
    # Issue 54: TypeError from numpy's sort ("'<' not supported between
    # 'float' and 'str'") where numeric targets with NaN name their rows.
    X, y = data()
    labels = pd.Series(np.where(y > 0, "yes", "no"), dtype=object)
    labels[[4, 9]] = [np.nan, None]
    with pytest.raises(ValueError, match=r"2 missing label.*rows \[4, 9\]"):
        TreeInnerSelector(xgb.XGBClassifier(**small())).fit(X, labels)
    # The fix the message gives works.
    sel = TreeInnerSelector(xgb.XGBClassifier(**small()), cv=None)
    sel.fit(X, labels.fillna("missing"))
    assert sel.scores_.shape == (4,)


def test_cli_drop_suggestion_is_accepted_by_its_parser(capsys, tmp_path):
    X, y = data()
    frame = pd.DataFrame(X, columns=list("abcd"))
    frame["t1"] = np.where(y > 0, "u", "v")
    frame["t2"] = np.where(X[:, 1] > 0, "p", "q")
    frame["y"] = y
    path = tmp_path / "d.csv"
    frame.to_csv(path, index=False)
    assert main(["select", str(path), "-t", "y", "-q"]) == 1
    err = capsys.readouterr().err
    suggestion = err.split("leave them out with ")[1].split()
    assert suggestion[0] == "--drop"
    argv = ["select", str(path), "-t", "y", "-q", "--n-estimators", "5"]
    assert main([*argv, *suggestion]) == 0


# -- threads ------------------------------------------------------------------------
@pytest.mark.slow
def test_cli_threads_and_n_jobs_reach_the_booster(capsys, tmp_path, monkeypatch):
    from skl_treeinner._selection import _selector

    X, y = data()
    frame = pd.DataFrame(X, columns=list("abcd")).assign(y=y)
    path = tmp_path / "d.csv"
    frame.to_csv(path, index=False)
    seen = {}
    real_fit = _selector.TreeInnerSelector.fit

    def spy(self, X, y=None, **kw):
        from threadpoolctl import threadpool_info

        seen["n_jobs"] = self.n_jobs
        seen["booster_threads"] = self.estimator.get_params()["n_jobs"]
        seen["openmp"] = {i["num_threads"] for i in threadpool_info()}
        return real_fit(self, X, y, **kw)

    monkeypatch.setattr(_selector.TreeInnerSelector, "fit", spy)
    argv = ["select", str(path), "-t", "y", "-q", "--n-estimators", "5", "--cv", "2"]
    assert main([*argv, "--n-jobs", "2", "--threads", "1"]) == 0
    assert seen["n_jobs"] == 2 and seen["booster_threads"] == 1
    assert seen["openmp"] == {1}
    with pytest.raises(SystemExit):
        main([*argv, "--n-jobs", "0"])
    with pytest.raises(SystemExit):
        main([*argv, "--threads", "0"])


def test_xgboost_classifier_detected_without_sklearn_tags(monkeypatch):
    # XGBoost before 2.1.4 declares no scikit-learn tags: is_classifier says
    # False, and the selector must still stratify and encode labels.
    from skl_treeinner._engines import _plan

    monkeypatch.setattr(_plan, "sklearn_is_classifier", lambda est: False)
    X, y = data()
    labels = np.where(y > 0, "yes", "no")
    sel = TreeInnerSelector(xgb.XGBClassifier(**small()), random_state=0).fit(X, labels)
    assert sel.scores_.shape == (4,)


def test_package_imports_without_private_sklearn_dataframe_module(monkeypatch):
    # scikit-learn 1.6 and 1.7 have no sklearn.utils._dataframe.
    monkeypatch.setitem(sys.modules, "sklearn.utils._dataframe", None)
    for name in [m for m in sys.modules if m.startswith("skl_treeinner")]:
        monkeypatch.delitem(sys.modules, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import skl_treeinner  # noqa: F401


def test_ci_lowest_constraints_are_the_pyproject_floors():
    # CI proves the floors only if .ci/constraints-lowest.txt pins exactly them.
    import re
    from pathlib import Path

    tomllib = pytest.importorskip("tomllib")
    root = Path(__file__).resolve().parents[2]
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    floors = {}
    for spec in [
        *project["dependencies"],
        *(s for extra in project["optional-dependencies"].values() for s in extra),
    ]:
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)(\[[^]]*\])?>=([0-9.]+)(;.*)?", spec)
        if match and not match.group(1).startswith("skl-treeinner"):
            floors.setdefault(match.group(1).lower(), set()).add(match.group(3))
    pins = {}
    for line in (root / ".ci" / "constraints-lowest.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            name, version = line.split("==")
            pins[name.lower()] = version

    def release(text):
        parts = [int(p) for p in text.split(".")]
        return tuple(parts + [0] * (3 - len(parts)))

    for name, version in pins.items():
        assert name in floors, f"{name} is pinned but has no floor in pyproject"
        assert len(floors[name]) == 1, f"{name} has several floors {floors[name]}"
        assert release(version) == release(next(iter(floors[name]))), name
    core = {"numpy", "scipy", "scikit-learn", "xgboost"}
    assert core <= set(pins)


def test_a_y_whose_index_differs_from_x_is_matched_by_position_with_a_word():
    # Issue 54: a y shuffled apart from X was fitted by position without a word.
    X, y = data()
    frame = pd.DataFrame(X, columns=list("abcd"))
    target = pd.Series(y, index=frame.index)
    shuffled = target.sample(frac=1.0, random_state=0)
    est = xgb.XGBRegressor(**small())
    with pytest.warns(UserWarning, match=r"index differs.*y = y\.loc\[X\.index\]") as w:
        TreeInnerSelector(est, cv=None).fit(frame, shuffled)
    assert w[0].filename == __file__
    with warnings.catch_warnings():  # the advice, followed: no word
        warnings.simplefilter("error")
        TreeInnerSelector(est, cv=None).fit(frame, shuffled.loc[frame.index])
        TreeInnerSelector(est, cv=None).fit(frame, y)  # no index: nothing to say
