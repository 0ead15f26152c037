"""The command line ``skl-treeinner select``: output, files written, errors.

Most tests call ``main(argv)`` in-process (starting Python costs seconds
here); a few run the real ``python -m skl_treeinner`` and the installed
``skl-treeinner`` script, to check that what the user runs behaves the same.
The scores are checked against :class:`TreeInnerSelector` called from Python
with the same booster, so the command line adds no arithmetic of its own.
"""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import xgboost as xgb
from conftest import run_python

from skl_treeinner import TreeInnerSelector
from skl_treeinner._cli._main import main
from skl_treeinner._engines._plan import selection_seeds

pd = pytest.importorskip("pandas")

ROOT = Path(__file__).resolve().parents[2]
FAST = ["--n-estimators", "20", "--learning-rate", "0.3", "--cv", "3"]


def make_frame(n=150, seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "size": rng.normal(size=n),
            "rooms": rng.integers(1, 5, size=n),
            "noise": rng.random(n),
            "city": rng.choice(["paris", "lyon", "nice"], size=n),
        }
    )
    frame["price"] = (
        3 * frame["size"]
        + frame["rooms"]
        + 2 * (frame["city"] == "paris")
        + rng.normal(scale=0.5, size=n)
    )
    return frame


@pytest.fixture
def houses(tmp_path):
    path = tmp_path / "houses.csv"
    make_frame().to_csv(path, index=False)
    return path


def run_cli(capsys, *args):
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def table_rows(stdout):
    """The rows of the ranked table: (rank, feature, score, selected)."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("rank"))
    rows = []
    for line in lines[start + 1 :]:
        if not line.strip():
            break
        fields = line.split()  # rank feature score [resampled] s.e. p k/K yes|-
        positive = next(i for i, f in enumerate(fields) if re.fullmatch(r"\d+/\d+", f))
        rank, feature, score, selected = *fields[:3], fields[positive + 1]
        rows.append((int(rank), feature, float(score), selected == "yes"))
    return rows


def _fast_booster_as_the_cli_builds_it(seed):
    """The houses' features and target, and the booster ``FAST`` asks for."""
    frame = make_frame()
    X, y = frame[["size", "rooms", "noise"]], frame["price"].to_numpy()
    est = xgb.XGBRegressor(
        n_estimators=20, learning_rate=0.3, max_depth=4, colsample_bytree=0.5,
        min_child_weight=1,
        reg_lambda=1.0, tree_method="hist", enable_categorical=False,
        random_state=selection_seeds(seed)[1],  # as the selector seeds its default
        max_bin=max(16, len(frame) // 16),  # one bin per 16 rows, as the CLI's
    )  # fmt: skip
    return X, y, est


def test_select_matches_the_python_api(capsys, houses, tmp_path):
    out_json = tmp_path / "scores.json"
    status, stdout, err = run_cli(
        capsys, "select", houses, "--target", "price", "--drop", "city", *FAST,
        "--random-state", "3", "--out", out_json, "-q",
    )  # fmt: skip
    assert status == 0 and err == ""
    X, y, est = _fast_booster_as_the_cli_builds_it(seed=3)
    ref = TreeInnerSelector(est, cv=3, random_state=3).fit(X, y)

    doc = json.loads(out_json.read_text())
    scores = {f["feature"]: f["score"] for f in doc["features"]}
    np.testing.assert_allclose([scores[c] for c in X.columns], ref.scores_)
    for f in doc["features"]:
        np.testing.assert_allclose(
            f["split_scores"], ref.split_scores_[:, list(X.columns).index(f["feature"])]
        )
    assert doc["selected"] == [c for c in ref.get_feature_names_out()]
    # --cv 3 under the default test of the column: 2 chained splits, the
    # first fold only fitted on.
    assert doc["n_splits"] == 2 == len(ref.estimators_) and doc["threshold"] == 0.0
    assert doc["alpha"] == 0.05 and doc["n_scored_rows"] == ref.n_scored_rows_
    assert doc["test"] == "column"
    for f in doc["features"]:
        j = list(X.columns).index(f["feature"])
        assert f["null_score"] == pytest.approx(ref.null_scores_[j], rel=1e-12)
    for f in doc["features"]:
        j = list(X.columns).index(f["feature"])
        assert f["score_se"] == pytest.approx(ref.scores_se_[j], rel=1e-12)
        assert f["pvalue"] == pytest.approx(ref.pvalues_[j], rel=1e-12)
    assert [f["rank"] for f in doc["features"]] == [1, 2, 3]

    # stdout: the same ranking and scores (to the 5 digits printed)
    rows = table_rows(stdout)
    assert [r[1] for r in rows] == [f["feature"] for f in doc["features"]]
    # to the decimals printed, which are the same for the whole column
    printed = [line.split()[2] for line in stdout.splitlines() if line[:4].strip()
               in {"1", "2", "3"}]  # fmt: skip
    decimals = {len(text.partition(".")[2]) for text in printed}
    assert len(decimals) == 1
    (d,) = decimals
    assert printed == [f"{scores[r[1]]:.{d}f}" for r in rows]
    assert rows[0][1] == "size" and rows[0][3]
    assert "target 'price' (regression)" in stdout
    assert f"selected {len(doc['selected'])} of 3 features" in stdout


@pytest.mark.slow
def test_default_booster_and_seed_equal_the_python_defaults(capsys, houses, tmp_path):
    # Issue 28: the command line seeded its booster with the seed itself,
    # the selector with one drawn from it, so scores differed for one seed.
    out_json = tmp_path / "scores.json"
    status, _, _ = run_cli(
        capsys, "select", houses, "--target", "price", "--drop", "city",
        "--random-state", "4", "--out", out_json, "-q",
    )  # fmt: skip
    assert status == 0
    frame = make_frame()
    X, y = frame[["size", "rooms", "noise"]], frame["price"].to_numpy()
    ref = TreeInnerSelector(random_state=4).fit(X, y)
    scores = {
        f["feature"]: f["score"] for f in json.loads(out_json.read_text())["features"]
    }
    np.testing.assert_allclose([scores[c] for c in X.columns], ref.scores_, rtol=1e-9)


def test_out_csv_and_out_data(capsys, houses, tmp_path):
    scores_csv, data_csv = tmp_path / "scores.csv", tmp_path / "selected.csv"
    status, stdout, _ = run_cli(
        capsys, "select", houses, "-t", "price", "--drop", "city,noise", *FAST,
        "--max-features", "1", "--out", scores_csv, "--out-data", data_csv, "-q",
    )  # fmt: skip
    assert status == 0
    table = pd.read_csv(scores_csv)
    assert list(table.columns) == [
        "rank", "feature", "score", "null_score", "score_se", "pvalue",
        "pvalue_adjusted", "split_sd", "positive_splits", "selected", "split_1",
        "split_2",
    ]  # fmt: skip
    splits = table[["split_1", "split_2"]].to_numpy()
    np.testing.assert_allclose(splits.sum(axis=1), table["score"])
    np.testing.assert_allclose(splits.std(axis=1, ddof=1), table["split_sd"])
    np.testing.assert_array_equal(table["positive_splits"], (splits > 0).sum(axis=1))
    assert table["selected"].tolist() == [True, False]  # --max-features 1
    assert (table["pvalue"] < 0.05).all() and (table["score_se"] > 0).all()
    assert (table["pvalue_adjusted"] == table["pvalue"]).all()  # 2 features, alpha 0.05
    data = pd.read_csv(data_csv)
    assert list(data.columns) == [table["feature"][0], "price"]
    original = pd.read_csv(houses)
    pd.testing.assert_frame_equal(data, original[list(data.columns)])
    assert "(p < 0.05 and score > resampled score, at most 1 feature)" in stdout


@pytest.mark.parametrize("estimator", ["xgboost", "lightgbm", "hgb", "catboost"])
def test_parquet_with_categorical_column(capsys, tmp_path, estimator):
    if estimator in ("lightgbm", "catboost"):
        pytest.importorskip(estimator)
    pytest.importorskip("pyarrow")
    path = tmp_path / "houses.parquet"
    # 300 rows: with 150 the chained folds' first booster (50 rows) missed the
    # city in some seeds (CatBoost p = 0.08 in seed 0; LightGBM and
    # HistGradientBoosting 0.3 in seed 3); with 300 every library keeps it at
    # p < 1e-6 in seeds 0 to 3.
    make_frame(300).to_parquet(path)
    out_data = tmp_path / "selected.parquet"
    status, stdout, err = run_cli(
        capsys, "select", path, "-t", "price", "--categorical", *FAST,
        "--estimator", estimator, "--out-data", out_data, "-q",
    )  # fmt: skip
    assert status == 0, err
    ranked = {r[1]: r for r in table_rows(stdout)}
    assert set(ranked) == {"size", "rooms", "noise", "city"}
    assert ranked["size"][0] == 1
    assert ranked["city"][3]  # the category column helps and is kept
    written = pd.read_parquet(out_data)
    assert "city" in written.columns and written.columns[-1] == "price"


def test_classification_target_is_detected(capsys, houses):
    status, stdout, _ = run_cli(
        capsys, "select", houses, "-t", "city", "--drop", "price", *FAST, "-q"
    )
    assert status == 0
    assert "target 'city' (classification)" in stdout
    status, stdout, _ = run_cli(
        capsys, "select", houses, "-t", "rooms", "--drop", "city", *FAST, "-q"
    )
    assert "target 'rooms' (classification)" in stdout  # 4 distinct integers
    status, stdout, _ = run_cli(
        capsys, "select", houses, "-t", "rooms", "--drop", "city", *FAST, "-q",
        "--task", "regression",
    )  # fmt: skip
    assert "target 'rooms' (regression)" in stdout


def test_progress_on_stderr_unless_quiet(capsys, houses):
    pytest.importorskip("tqdm")
    status, _, err = run_cli(
        capsys, "select", houses, "-t", "price", "--drop", "city", *FAST
    )
    assert status == 0
    # --cv 3, chained by the default test: 2 splits
    assert "TreeInnerSelector: fitting and scoring" in err and "2/2" in err
    status, _, err = run_cli(
        capsys, "select", houses, "-t", "price", "--drop", "city", *FAST, "-v"
    )
    assert "split 1/2" in err and "split 2/2" in err  # -v: one line per split


def test_plot(capsys, houses, tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "scores.png"
    status, _, err = run_cli(
        capsys, "select", houses, "-t", "price", "--drop", "city", *FAST,
        "--plot", png,
    )  # fmt: skip
    assert status == 0, err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"drew the scores to {png}" in err


def write(path, text):
    path.write_text(text)
    return path


ERRORS = {
    "missing file": (
        lambda d: ["select", d / "nope.csv", "-t", "price"],
        "nope.csv: no such file",
    ),
    "missing target": (
        lambda d: ["select", d / "houses.csv", "-t", "pric"],
        "--target 'pric': no such column in houses.csv; did you mean 'price'?",
    ),
    "target in other case": (
        lambda d: ["select", d / "houses.csv", "-t", "PRICE"],
        "did you mean 'price'?",
    ),
    "text column": (
        lambda d: ["select", d / "houses.csv", "-t", "price"],
        "column 'city' holds text (e.g. 'lyon' in data row 1), which XGBoost "
        "cannot take as a number; pass --categorical to treat text columns as "
        "categories, or leave them out with --drop city",
    ),
    "NaN in target": (
        lambda d: [
            "select",
            write(d / "nan.csv", "a,b,y\n1,2,3\n4,5,\n7,8,9\n"),
            "-t",
            "y",
        ],  # fmt: skip
        "the target 'y' is missing in 1 of 3 rows (first at data rows [2]",
    ),
    "unsupported extension": (
        lambda d: ["select", write(d / "houses.xlsx", "x"), "-t", "price"],
        "cannot read 'houses.xlsx': unsupported file type (.xlsx)",
    ),
    "bad --out suffix": (
        lambda d: ["select", d / "houses.csv", "-t", "price", "--out", d / "s.txt"],
        "end the name with .csv or .json",
    ),
    "missing output folder": (
        lambda d: [
            "select",
            d / "houses.csv",
            "-t",
            "price",
            "--out-data",
            d / "no/x.csv",
        ],  # fmt: skip
        "does not exist",
    ),
    "target dropped": (
        lambda d: ["select", d / "houses.csv", "-t", "price", "--drop", "price"],
        "--drop 'price' names the target",
    ),
    "too many features": (
        lambda d: [
            "select",
            d / "houses.csv",
            "-t",
            "price",
            "--drop",
            "city",
            "--max-features",
            "9",
        ],  # fmt: skip
        "--max-features 9 is more than the 3 features",
    ),
    "empty file": (
        lambda d: ["select", write(d / "empty.csv", ""), "-t", "y"],
        "empty.csv is empty",
    ),
    "fractional classes": (
        lambda d: [
            "select",
            d / "houses.csv",
            "-t",
            "size",
            "--task",
            "classification",
            "--drop",
            "city",
        ],  # fmt: skip
        "--task classification needs class labels, but 'size' holds fractions",
    ),
    "too few rows for the folds": (
        lambda d: [
            "select",
            write(d / "tiny.csv", "a,y\n1,2\n3,4\n"),
            "-t",
            "y",
            "-q",
        ],  # fmt: skip
        "Cannot split the 2 rows as --cv 5 asks",
    ),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors_are_one_line_on_stderr(capsys, houses, case):
    argv, message = ERRORS[case]
    status, stdout, err = run_cli(capsys, *argv(houses.parent))
    assert status == 1
    assert stdout == ""
    assert err.count("\n") == 1 and err.startswith("skl-treeinner: error: "), err
    assert message in err


def test_date_column_is_refused(capsys, tmp_path):
    pytest.importorskip("pyarrow")
    frame = make_frame(n=20).drop(columns="city")
    frame["sold"] = pd.date_range("2020-01-01", periods=20)
    frame.to_parquet(tmp_path / "dated.parquet")
    status, _, err = run_cli(
        capsys, "select", tmp_path / "dated.parquet", "-t", "price"
    )
    assert status == 1
    assert "column 'sold' holds dates or times" in err and "--drop sold" in err


@pytest.mark.parametrize("stamp", ["%Y-%m-%d", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M"])
def test_iso_dates_in_a_csv_are_refused_even_with_categorical(capsys, tmp_path, stamp):
    # Issue 41, item 7: a CSV's dates arrive as text, and --categorical made
    # them a category of one level per day, silently.
    frame = make_frame(n=40).drop(columns="city")
    frame["sold"] = pd.date_range("2020-01-01", periods=40).strftime(stamp)
    frame.loc[3, "sold"] = None  # a missing date is still a date column
    frame.to_csv(tmp_path / "dated.csv", index=False)
    status, _, err = run_cli(
        capsys, "select", tmp_path / "dated.csv", "-t", "price", "--categorical"
    )
    assert status == 1
    assert "column 'sold' holds dates or times" in err and "--drop sold" in err
    frame["sold"] = frame["sold"].fillna("") + " (approx.)"  # text: a category
    frame.to_csv(tmp_path / "text.csv", index=False)
    status, _, err = run_cli(
        capsys, "select", tmp_path / "text.csv", "-t", "price", "--categorical", "-q"
    )
    assert status == 0, err


@pytest.mark.parametrize("dtype", ["category", "string"])
def test_iso_dates_stored_as_categories_or_strings_are_dates(dtype):
    from skl_treeinner._cli._data import CLIError, prepare_features

    frame = make_frame(n=30).drop(columns="city")
    frame["sold"] = pd.date_range("2020-01-01", periods=30).strftime("%Y-%m-%d")
    frame["sold"] = frame["sold"].astype(dtype)
    with pytest.raises(CLIError, match="column 'sold' holds dates"):
        prepare_features(pd, frame, True, "XGBoost")


def test_duration_column_is_called_a_duration(capsys, tmp_path):
    pytest.importorskip("pyarrow")
    frame = make_frame(n=20).drop(columns="city")
    frame["open"] = pd.to_timedelta(np.arange(20), unit="h")
    frame.to_parquet(tmp_path / "timed.parquet")
    status, _, err = run_cli(
        capsys, "select", tmp_path / "timed.parquet", "-t", "price"
    )
    assert status == 1
    assert "column 'open' holds durations" in err and "seconds" in err


def test_infinite_cells_are_refused_in_command_line_words(capsys, tmp_path):
    # Issue 28: the message counted rows from 0 and suggested Python.
    frame = make_frame(n=30).drop(columns="city")
    frame.loc[3, "noise"] = np.inf
    frame.to_csv(tmp_path / "inf.csv", index=False)
    status, _, err = run_cli(capsys, "select", tmp_path / "inf.csv", "-t", "price")
    assert status == 1
    assert "column 'noise' holds 1 infinite value(s)" in err
    assert "in data row 4" in err and "--drop noise" in err and "X." not in err


def test_out_data_keeps_the_files_column_order(capsys, houses, tmp_path):
    data_csv = tmp_path / "kept.csv"
    status, _, _ = run_cli(
        capsys, "select", houses, "-t", "price", "--drop", "city", *FAST,
        "--alpha", "none", "--threshold=-inf", "--out-data", data_csv, "-q",
    )  # fmt: skip
    assert status == 0
    assert list(pd.read_csv(data_csv).columns) == ["size", "rooms", "noise", "price"]


def test_usage_errors_exit_2(capsys, houses):
    with pytest.raises(SystemExit) as exc:
        main(["select", str(houses), "-t", "price", "--threshold", "foo"])
    assert exc.value.code == 2
    assert "argument --threshold: threshold='foo' is not understood" in (
        capsys.readouterr().err
    )
    with pytest.raises(SystemExit) as exc:
        main(["select", str(houses), "-t", "price", "--max-features", "1.5"])
    assert exc.value.code == 2
    with pytest.raises(SystemExit) as exc:
        main(["select", str(houses)])  # no --target
    assert exc.value.code == 2
    assert "--target" in capsys.readouterr().err
    for bad in ("2", "0", "x"):
        with pytest.raises(SystemExit) as exc:
            main(["select", str(houses), "-t", "price", "--alpha", bad])
        assert exc.value.code == 2
        assert "is not a significance level" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["select", str(houses), "-t", "price", "--colsample", "1.5"])
    assert exc.value.code == 2
    assert "must be at most 1" in capsys.readouterr().err


def test_alpha_none_selects_on_the_score_alone(capsys, houses, tmp_path):
    out_json = tmp_path / "scores.json"
    status, stdout, _ = run_cli(
        capsys, "select", houses, "-t", "price", "--drop", "city", *FAST,
        "--alpha", "none", "--colsample", "1", "--out", out_json, "-q",
    )  # fmt: skip
    assert status == 0
    doc = json.loads(out_json.read_text())
    assert doc["alpha"] is None
    # The test of a column's threshold reads the score less its resampled score.
    assert doc["selected"] == [
        f["feature"] for f in doc["features"] if f["score"] - f["null_score"] > 0
    ]
    assert "(score > resampled score)" in stdout


@pytest.mark.parametrize(
    "module, suffix, extra_args, purpose, extra",
    [
        ("pandas", ".csv", [], "reading DATA", "cli"),
        ("pyarrow", ".parquet", [], "reading Parquet files", "cli"),
        ("matplotlib", ".csv", ["--plot", "p.png"], "drawing --plot", "plot"),
    ],
)
def test_missing_optional_package(
    capsys, monkeypatch, tmp_path, module, suffix, extra_args, purpose, extra
):
    path = write(tmp_path / f"d{suffix}", "a,y\n1,2\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, module, None)  # import fails
    status, _, err = run_cli(capsys, "select", path, "-t", "y", *extra_args)
    assert status == 1
    assert err == (
        f"skl-treeinner: error: {purpose} needs {module}, which is not "
        f'installed: pip install {module} (or the "{extra}" extra: python -m '
        f'pip install ".[{extra}]" in a clone of skl-treeinner)\n'
    )


def test_version(capsys):
    from importlib.metadata import version

    from skl_treeinner import __version__

    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"skl-treeinner {__version__} (")
    assert f"xgboost {version('xgboost')}" in out


# -- the real programs -----------------------------------------------------------
@pytest.mark.slow
def test_help_of_python_m():
    out = run_python('-m', 'skl_treeinner', 'select', '--help', cwd=ROOT)  # fmt: skip
    assert out.returncode == 0
    for text in ("--target", "--categorical", "--out-data", "examples:",
                 "how it works"):  # fmt: skip
        assert text in out.stdout


@pytest.mark.slow
def test_console_script(tmp_path):
    # The installed script is wired to main() and passes on its exit status;
    # an error ends in one line, no traceback.
    script = Path(sys.executable).with_name("skl-treeinner")
    if not script.exists():
        script = shutil.which("skl-treeinner")
    if script is None:
        pytest.skip("the skl-treeinner script is not installed")
    out = subprocess.run(
        [str(script), "select", "nope.csv", "-t", "y"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 1
    assert out.stderr == "skl-treeinner: error: nope.csv: no such file\n"


def test_groups_from_a_json_file(capsys, houses, tmp_path):
    groups = tmp_path / "groups.json"
    groups.write_text(json.dumps({"house": ["size", "rooms"]}))
    out_json, out_csv = tmp_path / "scores.json", tmp_path / "scores.csv"
    status, stdout, err = run_cli(
        capsys, "select", houses, "--target", "price", "--drop", "city", *FAST,
        "--random-state", "3", "--groups", groups, "--out", out_json, "-q",
    )  # fmt: skip
    assert status == 0 and err == ""
    X, y, est = _fast_booster_as_the_cli_builds_it(seed=3)
    ref = TreeInnerSelector(
        est, cv=3, random_state=3, feature_groups={"house": ["size", "rooms"]}
    ).fit(X, y)
    doc = json.loads(out_json.read_text())
    assert doc["group_test"] == "sum+simes"
    by_name = {g["group"]: g for g in doc["groups"]}
    assert set(by_name) == {"house", "noise"}
    for g, name in enumerate(ref.groups_):
        assert by_name[name]["score"] == pytest.approx(ref.group_scores_[g], rel=1e-12)
        assert by_name[name]["pvalue"] == pytest.approx(
            ref.group_pvalues_[g], rel=1e-12
        )
    assert by_name["house"]["columns"] == ["size", "rooms"]
    assert {f["feature"]: f["group"] for f in doc["features"]}["rooms"] == "house"
    assert "2 groups (sum+simes test):" in stdout
    assert "features in 1 of 2 groups" in stdout
    # The CSV has each feature's group.
    run_cli(
        capsys, "select", houses, "--target", "price", "--drop", "city", *FAST,
        "--groups", groups, "--out", out_csv, "-q",
    )  # fmt: skip
    table = pd.read_csv(out_csv).set_index("feature")
    assert table.loc["size", "group"] == "house"
    assert table.loc["size", "group_pvalue"] == table.loc["rooms", "group_pvalue"]
    assert table.loc["noise", "group_pvalue"] == table.loc["noise", "pvalue"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"g": ["price"]}', "names the target 'price'"),
        ('{"g": ["city"]}', "which --drop drops"),
        ('{"g": ["sise"]}', "no such column in houses.csv; did you mean 'size'"),
        ('["size"]', "write an object of lists of column names"),
        ("{", "not a JSON file"),
        ('{"a": ["size"], "b": ["size"]}', "in groups 'a' and 'b'"),
    ],
)
def test_bad_groups_files_are_one_line_errors(
    capsys, houses, tmp_path, content, message
):
    groups = tmp_path / "groups.json"
    groups.write_text(content)
    status, _, err = run_cli(
        capsys, "select", houses, "--target", "price", "--drop", "city", *FAST,
        "--groups", groups, "-q",
    )  # fmt: skip
    assert status != 0 and message in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_refit_curve_on_screen_in_json_csv_and_plot(capsys, houses, tmp_path):
    pytest.importorskip("matplotlib")
    out_json, out_csv, png = (tmp_path / n for n in ("s.json", "s.csv", "s.png"))
    status, stdout, err = run_cli(
        capsys, "select", houses, "--target", "price", "--drop", "city", *FAST,
        "--random-state", "3", "--max-features", "1se", "--alpha", "none",
        "--out", out_json, "--plot", png, "-q",
    )  # fmt: skip
    assert status == 0 and err == ""
    X, y, est = _fast_booster_as_the_cli_builds_it(seed=3)
    ref = TreeInnerSelector(
        est, cv=3, random_state=3, alpha=None, max_features="1se"
    ).fit(X, y)
    doc = json.loads(out_json.read_text())
    assert doc["max_features"] == "1se"
    curve = doc["refit_curve"]
    assert [row["k"] for row in curve] == ref.cv_results_["n_features"].tolist()
    np.testing.assert_allclose(
        [row["mean"] for row in curve], ref.cv_results_["mean_test_score"], rtol=1e-12
    )
    one_se = next(row["k"] for row in curve if "1se" in row["rules"])
    assert doc["selected"] == [
        name for name, kept in zip(X.columns, ref.get_support(), strict=True) if kept
    ]
    assert "refit curve (held-out R² of the booster" in stdout
    assert doc["scoring"] == "r2"
    assert f"the best {one_se} feature" in stdout and "(1se)" in stdout
    assert png.stat().st_size > 0
    run_cli(
        capsys, "select", houses, "--target", "price", "--drop", "city", *FAST,
        "--random-state", "3", "--max-features", "best", "--alpha", "none",
        "--out", out_csv,
    )  # fmt: skip
    table = pd.read_csv(tmp_path / "s-curve.csv")
    assert table["k"].tolist() == [row["k"] for row in curve]
    assert (table["rules"].fillna("").str.contains("best")).sum() == 1
    with pytest.raises(SystemExit) as exc:
        main(["select", str(houses), "-t", "price", "--max-features", "most"])
    assert exc.value.code == 2 and "'best' or '1se'" in capsys.readouterr().err


def test_test_of_the_column_matches_the_python_api(capsys, houses, tmp_path):
    out_json = tmp_path / "scores.json"
    status, stdout, err = run_cli(
        capsys, "select", houses, "--target", "price", "--drop", "city", *FAST,
        "--random-state", "3", "--test", "column", "--out", out_json, "-q",
    )  # fmt: skip
    assert status == 0 and err == ""
    assert "test of the column" in stdout
    X, y, est = _fast_booster_as_the_cli_builds_it(seed=3)
    ref = TreeInnerSelector(est, cv=3, random_state=3, test="column").fit(X, y)
    doc = json.loads(out_json.read_text())
    assert doc["test"] == "column"
    for f in doc["features"]:
        j = list(X.columns).index(f["feature"])
        assert f["pvalue"] == pytest.approx(ref.pvalues_[j], rel=1e-9, abs=1e-15)
    assert doc["selected"] == list(ref.get_feature_names_out())


def test_repeats_say_how_often_each_feature_is_kept(capsys, houses, tmp_path):
    """--repeats R (issue 53): n_repeats, and a "kept in" column of the repeats."""
    out_json = tmp_path / "scores.json"
    status, stdout, _ = run_cli(
        capsys, "select", houses, "-t", "price", "--drop", "city", *FAST,
        "--repeats", "3", "--out", out_json, "-q",
    )  # fmt: skip
    assert status == 0
    assert "3 repeats of 3 chained folds (6 fits)" in stdout
    header = next(line for line in stdout.splitlines() if line.startswith("rank"))
    assert header.endswith("selected  kept in")
    doc = json.loads(out_json.read_text())
    for feature in doc["features"]:
        assert feature["n_repeats"] == 3
        assert round(feature["selection_frequency"] * 3, 9) in (0, 1, 2, 3)
        assert len(feature["split_scores"]) == 6
        line = next(
            line for line in stdout.splitlines() if f" {feature['feature']} " in line
        )
        kept = round(feature["selection_frequency"] * 3)
        assert line.endswith(f"{kept}/3")
    size = next(f for f in doc["features"] if f["feature"] == "size")
    assert size["selected"] and size["selection_frequency"] == 1.0


@pytest.mark.filterwarnings("default::skl_treeinner.exceptions.DependentRowsWarning")
def test_dependent_rows_advice_names_options_the_cli_has(capsys, tmp_path):
    # Issue 54: on rows stored in time order the warning said
    # cv=TimeSeriesSplit/groups=, which the command line has no option for.
    rng = np.random.default_rng(0)
    n = 400
    level = np.cumsum(rng.normal(size=n))  # a series, stored oldest first
    frame = pd.DataFrame(
        {
            "temperature": level + rng.normal(size=n),
            "promotion": rng.normal(size=n),
            "store": np.repeat(np.arange(20), 20),
            "sales": level,
        }
    )
    path = tmp_path / "sales.csv"
    frame.to_csv(path, index=False)
    args = [path, "-t", "sales", "--n-estimators", "20", "-q"]
    status, out, err = run_cli(capsys, "select", *args)
    assert status == 0 and "The rows look ordered" in err
    assert "--time-order" in err and "--row-groups COLUMN" in err
    assert "TimeSeriesSplit" not in err and "groups=" not in err
    # The options it names work.
    status, out, err = run_cli(capsys, "select", *args, "--time-order")
    assert status == 0 and "5 time-ordered splits" in out
    assert "look ordered" not in err
    status, out, err = run_cli(capsys, "select", *args, "--row-groups", "store")
    assert status == 0 and "by 'store'" in out and "store " not in out.split("\n", 2)[2]
    status, out, err = run_cli(capsys, "select", *args, "--time-order", "--cv", "1")
    assert status == 1 and "--time-order needs --cv 2" in err
