"""The command line: ``skl-treeinner demo`` and ``skl-treeinner select``.

``select`` reads a CSV or Parquet file, fits :class:`TreeInnerSelector` on it
and prints the features ranked by their held-out TreeInner score. Everything
the user can get wrong (a missing file or column, text columns, NaN in the
target, an unknown file type, a missing optional package) ends in one line on
stderr, ``skl-treeinner: error: ...``, saying what to do, and exit status 1;
argparse's own usage errors exit with status 2.
"""

from __future__ import annotations

import argparse
import difflib
import json
import math
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np

from ._cutoff import parse_max_features, parse_threshold, resolve_max_features
from ._optional import import_optional
from ._readers import DEFAULT_BOOSTER_PARAMS, LIBRARIES

__all__ = ["main"]

PROG = "skl-treeinner"

#: File types ``select`` reads, by suffix.
DATA_SUFFIXES = {
    ".csv": "csv",
    ".csv.gz": "csv",
    ".tsv": "tsv",
    ".parquet": "parquet",
    ".pq": "parquet",
}
#: File types of ``--out`` (the score table) and ``--out-data`` (the data).
OUT_SUFFIXES = (".csv", ".json")
OUT_DATA_SUFFIXES = (".csv", ".parquet")
PLOT_SUFFIXES = (".png", ".pdf", ".svg")
#: An integer-valued numeric target with at most this many distinct values
#: is taken as class labels by ``--task auto``.
MAX_AUTO_CLASSES = 10

#: Boosters ``--estimator`` builds, by key, with the names shown to users.
ESTIMATORS = {lib.key: lib.label for lib in LIBRARIES if lib.buildable}

EPILOG = """\
examples:
  skl-treeinner demo
      held-out TreeInner against in-sample gain on generated data (~10 s)
  skl-treeinner select houses.csv --target price
      rank the columns of houses.csv by how much they help predict price on
      rows the model never saw; keep those scoring above 0
  skl-treeinner select churn.parquet -t churned --categorical --cv 10 \\
      --out scores.json --out-data selected.parquet --plot scores.png

run 'skl-treeinner select --help' for all the options of select.
"""

SELECT_EPILOG = """\
examples:
  skl-treeinner select houses.csv --target price
  skl-treeinner select houses.csv -t price --estimator lightgbm --cv 10
  skl-treeinner select churn.parquet -t churned --categorical --drop customer_id
  skl-treeinner select houses.csv -t price --threshold '0.1*mean' --max-features 20
  skl-treeinner select houses.csv -t price --out scores.csv \\
      --out-data selected.csv --plot scores.png

how it works: the booster is fitted K times (--cv K), each time on all rows
but one fold; every feature is scored with TreeInner on the fold the model
did not see, and the K scores are added up. A feature the model only
overfits to scores below 0 in expectation, so the default keeps the
features scoring above 0. The table on stdout lists, per feature, the score,
the standard deviation of the K per-fold scores (split sd), in how many
folds it scored above 0, and whether it is selected.
"""


class CLIError(Exception):
    """A mistake of the user's, reported as one line on stderr."""


# -- argument parsing --------------------------------------------------------------
def _threshold(text: str):
    """Read ``--threshold`` as the selector's ``threshold``: a number, or 'mean'..."""
    try:
        return parse_threshold(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from e


def _max_features(text: str):
    """Read ``--max-features`` as the selector's ``max_features`` reads numbers."""
    try:
        return parse_max_features(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from e


def _column_list(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"{text!r} names no column")
    return names


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be above 0")
    return value


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser of ``skl-treeinner``.

    Returns
    -------
    parser : argparse.ArgumentParser
        With the sub-commands ``demo`` and ``select``.
    """
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=textwrap.fill(
            "Find the features a gradient boosted tree model really uses: score "
            "every feature with TreeInner on rows the model never saw (Sun, "
            "AISTATS 2023), and keep those scoring above zero.",
            width=78,
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"%(prog)s {_version()}",
        help="print the versions of skl-treeinner and its boosters, and exit",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = sub.add_parser(
        "demo",
        help="compare held-out TreeInner with in-sample gain on generated data "
        "with known truth",
        description=(
            "Generate data in which 5 of 30 features drive the target, select "
            "features with held-out TreeInner (5-fold cross-fitted XGBoost) and "
            "with in-sample gain, and show how each matches the truth."
        ),
    )
    demo.add_argument("--rows", type=int, default=2000, help="rows (default 2000)")
    demo.add_argument("--seed", type=int, default=0, help="random seed (default 0)")

    select = sub.add_parser(
        "select",
        help="rank and select the columns of a CSV or Parquet file",
        description=textwrap.fill(
            "Fit a gradient boosted tree model to predict the target column COL "
            "from the other columns of DATA, score every column with TreeInner "
            "on held-out rows, and print the columns ranked by score, the "
            "selected ones marked.",
            width=78,
        ),
        epilog=SELECT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    select.add_argument(
        "data",
        metavar="DATA",
        help="the data: a .csv, .csv.gz, .tsv, .parquet or .pq file with a header",
    )
    select.add_argument(
        "-t",
        "--target",
        required=True,
        metavar="COL",
        help="the column to predict; every other column is a candidate feature",
    )
    select.add_argument(
        "--drop",
        action="append",
        type=_column_list,
        default=[],
        metavar="COL[,COL...]",
        help="columns to leave out (identifiers, leaks, free text); repeat it or "
        "separate names with commas",
    )
    select.add_argument(
        "--task",
        choices=("auto", "regression", "classification"),
        default="auto",
        help="auto (default): classification when the target holds text, "
        f"booleans or at most {MAX_AUTO_CLASSES} distinct integers, regression "
        "otherwise",
    )
    select.add_argument(
        "--categorical",
        action="store_true",
        help="treat text columns as categories and turn on the booster's "
        "categorical support (otherwise a text column is an error)",
    )

    model = select.add_argument_group("model")
    model.add_argument(
        "--estimator",
        choices=tuple(ESTIMATORS),
        default="xgboost",
        help="the booster: xgboost (default), lightgbm or hgb (scikit-learn's "
        "HistGradientBoosting)",
    )
    model.add_argument(
        "--n-estimators",
        type=_positive_int,
        default=DEFAULT_BOOSTER_PARAMS["n_estimators"],
        metavar="N",
        help="boosting rounds (default %(default)s)",
    )
    model.add_argument(
        "--learning-rate",
        type=_positive_float,
        default=DEFAULT_BOOSTER_PARAMS["learning_rate"],
        metavar="ETA",
        help="learning rate (default %(default)s)",
    )
    model.add_argument(
        "--max-depth",
        type=_positive_int,
        default=DEFAULT_BOOSTER_PARAMS["max_depth"],
        metavar="D",
        help="depth of each tree (default %(default)s)",
    )

    scoring = select.add_argument_group("scoring and selection")
    scoring.add_argument(
        "--attribution",
        choices=("predecomp", "treeshap"),
        default="predecomp",
        help="per-tree attribution inside TreeInner: predecomp (default, fast) "
        "or treeshap (needs the shap package for scikit-learn models; slower)",
    )
    scoring.add_argument(
        "--cv",
        type=_positive_int,
        default=5,
        metavar="K",
        help="cross-fit over K folds (default 5); 1 fits once on a random half "
        "of the rows and scores the other half",
    )
    scoring.add_argument(
        "--threshold",
        type=_threshold,
        default=0.0,
        metavar="T",
        help="keep the features scoring above T: a number (default 0), 'mean', "
        "'median' or a multiple such as '0.5*mean'",
    )
    scoring.add_argument(
        "--max-features",
        type=_max_features,
        default=None,
        metavar="N",
        help="keep at most N of them, the best first (an integer, or a fraction "
        "of the features such as 0.2)",
    )
    scoring.add_argument(
        "--random-state",
        type=int,
        default=0,
        metavar="SEED",
        help="seed of the folds and the booster (default 0)",
    )
    scoring.add_argument(
        "--n-jobs",
        type=int,
        default=None,
        metavar="J",
        help="folds fitted in parallel (default 1; -1 for all cores)",
    )

    output = select.add_argument_group("output")
    output.add_argument(
        "--out",
        metavar="FILE",
        help="write the score table (one row per feature, with the score of "
        "each fold) to FILE.csv or FILE.json",
    )
    output.add_argument(
        "--out-data",
        metavar="FILE",
        help="write DATA restricted to the selected columns and the target to "
        "FILE.csv or FILE.parquet",
    )
    output.add_argument(
        "--plot",
        metavar="FILE",
        help="draw the scores, their spread over folds and the threshold to "
        "FILE.png, .pdf or .svg (needs matplotlib)",
    )
    output.add_argument(
        "-q", "--quiet", action="store_true", help="no progress bar on stderr"
    )
    output.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="also one line per fold (and per tree with --attribution treeshap)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line.

    Parameters
    ----------
    argv : list of str, default=None
        The arguments; ``sys.argv[1:]`` if None.

    Returns
    -------
    status : int
        0 on success, 1 after an error reported on stderr (2 for usage errors,
        which argparse reports and exits on).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "demo":
        if args.rows < 100:
            parser.error("--rows must be at least 100")
        from ._demo import run_demo

        run_demo(n_samples=args.rows, seed=args.seed)
        return 0
    if args.command == "select":
        try:
            with warnings.catch_warnings():
                warnings.showwarning = _show_warning
                _select(args)
        except CLIError as e:
            print(f"{PROG}: error: {e}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            print(f"{PROG}: interrupted", file=sys.stderr)
            return 130
        return 0
    parser.print_help()
    return 0


def _show_warning(message, category, filename, lineno, file=None, line=None):
    print(f"{PROG}: warning: {message}", file=sys.stderr)


# -- select ------------------------------------------------------------------------
def _select(args) -> None:
    args.drop = [name for names in args.drop for name in names]
    data = Path(args.data)
    kind = _data_kind(data)
    out = _output_path(args.out, OUT_SUFFIXES, "--out", "the score table")
    out_data = _output_path(
        args.out_data, OUT_DATA_SUFFIXES, "--out-data", "the selected data"
    )
    plot = _output_path(args.plot, PLOT_SUFFIXES, "--plot", "the plot")
    if plot is not None:
        _cli_import("matplotlib", "drawing --plot", "plot")
    if not data.exists():
        raise CLIError(f"{data}: no such file")
    if data.is_dir():
        raise CLIError(f"{data} is a folder; pass the data file itself")
    pd = _cli_import("pandas", "reading DATA", "cli")
    if kind == "parquet":
        _cli_import("pyarrow", "reading Parquet files", "cli")
    if out_data is not None and out_data.suffix.lower() == ".parquet":
        _cli_import("pyarrow", "writing Parquet files", "cli")

    frame = _read(pd, data, kind)
    _check_columns(frame, [args.target], data, "--target")
    _check_columns(frame, args.drop, data, "--drop")
    if args.target in args.drop:
        raise CLIError(f"--drop {args.target!r} names the target; drop another one")
    y_col = frame[args.target]
    if y_col.isna().any():
        rows = np.flatnonzero(y_col.isna().to_numpy())
        raise CLIError(
            f"the target {args.target!r} is missing in {rows.size} of "
            f"{len(frame)} rows (first at data rows {(rows[:5] + 1).tolist()}, "
            "counting from 1 below the header); drop those rows or fill them in"
        )
    features = frame.drop(columns=[args.target, *args.drop])
    if features.shape[1] == 0:
        raise CLIError(
            f"{data} has no columns left besides the target {args.target!r}; "
            "TreeInner needs at least one feature"
        )
    X = _prepare_features(pd, features, args.categorical, args.estimator)
    task = _task(pd, y_col, args.task, args.target)
    y = y_col.to_numpy()
    if task == "regression":
        y = y.astype(np.float64)
    max_features = args.max_features
    try:
        resolve_max_features(max_features, X.shape[1])
    except ValueError as e:
        raise CLIError(
            f"--max-features {max_features} is more than the {X.shape[1]} "
            "features; pass at most that, or a fraction such as 0.5"
        ) from e

    from ._selector import TreeInnerSelector

    estimator = _make_estimator(args, task == "classification")
    selector = TreeInnerSelector(
        estimator,
        attribution=args.attribution,
        cv=args.cv if args.cv > 1 else None,
        threshold=args.threshold,
        max_features=max_features,
        random_state=args.random_state,
        n_jobs=args.n_jobs,
        verbose=0 if args.quiet else 1 + args.verbose,
    )
    try:
        selector.fit(X, y)
    except ValueError as e:  # the selector's and the boosters' own messages
        raise CLIError(_one_line(e)) from e
    except Exception as e:  # LightGBMError is not a ValueError
        if type(e).__name__ != "LightGBMError":
            raise
        raise CLIError(f"LightGBM: {_one_line(e)}") from e

    table = _score_table(selector)
    split_word = f"{args.cv}-fold cross-fitting" if args.cv > 1 else "one 50/50 split"
    print(
        f"{data.name}: {len(frame)} rows, {X.shape[1]} features; target "
        f"{args.target!r} ({task}); {ESTIMATORS[args.estimator]}, {split_word}, "
        f"{args.attribution}."
    )
    print(_format_table(table))
    names = [row["feature"] for row in table if row["selected"]]
    rule = f"score > {selector.threshold_:.6g}"
    if max_features is not None:
        rule += f", at most {max_features}"
    print(
        f"\nselected {len(names)} of {X.shape[1]} features ({rule}): "
        + (", ".join(names) if names else "none")
    )
    if out is not None:
        _write_scores(pd, out, table, selector, args, task)
        _notice(args, f"wrote the score table to {out}")
    if out_data is not None:
        subset = frame[[*names, args.target]]
        if out_data.suffix.lower() == ".parquet":
            subset.to_parquet(out_data, index=False)
        else:
            subset.to_csv(out_data, index=False)
        _notice(args, f"wrote {len(names)} columns and the target to {out_data}")
    if plot is not None:
        _save_plot(selector, plot, args.target)
        _notice(args, f"drew the scores to {plot}")


def _notice(args, text: str) -> None:
    if not args.quiet:
        print(f"{PROG}: {text}", file=sys.stderr)


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split())


def _cli_import(module: str, purpose: str, extra: str):
    """:func:`import_optional`, its ImportError reported as a one-line error."""
    try:
        return import_optional(module, extra=extra, purpose=purpose)
    except ImportError as e:
        raise CLIError(str(e)) from e


def _suffix(path: Path | None) -> str:
    if path is None:
        return ""
    name = path.name.lower()
    for suffix in sorted(DATA_SUFFIXES, key=len, reverse=True):
        if name.endswith(suffix):
            return suffix
    return path.suffix.lower()


def _data_kind(path: Path) -> str:
    suffix = _suffix(path)
    if suffix not in DATA_SUFFIXES:
        shown = suffix or "no suffix"
        raise CLIError(
            f"cannot read {path.name!r}: unsupported file type ({shown}); pass a "
            f"{', '.join(DATA_SUFFIXES)} file (from pandas: "
            "df.to_csv('data.csv', index=False))"
        )
    return DATA_SUFFIXES[suffix]


def _output_path(value, suffixes, option, what) -> Path | None:
    if value is None:
        return None
    path = Path(value)
    if path.suffix.lower() not in suffixes:
        raise CLIError(
            f"{option} {value}: cannot tell how to write {what} from the suffix "
            f"{path.suffix or '(none)'!r}; end the name with " + " or ".join(suffixes)
        )
    parent = path.parent
    if not parent.is_dir():
        raise CLIError(f"{option} {value}: the folder {str(parent)!r} does not exist")
    return path


def _read(pd, path: Path, kind: str):
    try:
        if kind == "parquet":
            frame = pd.read_parquet(path)
        else:
            frame = pd.read_csv(path, sep="\t" if kind == "tsv" else ",")
    except pd.errors.EmptyDataError as e:
        raise CLIError(f"{path} is empty; it needs a header and rows") from e
    except (ValueError, OSError, UnicodeDecodeError) as e:
        # pandas' ParserError and pyarrow's ArrowInvalid are ValueErrors.
        raise CLIError(f"cannot read {path} as {kind.upper()}: {_one_line(e)}") from e
    if len(frame) == 0:
        raise CLIError(f"{path} has a header but no rows")
    frame.columns = [str(c) for c in frame.columns]
    return frame


def _check_columns(frame, names, path, option) -> None:
    columns = list(frame.columns)
    for name in names:
        if name in columns:
            continue
        close = difflib.get_close_matches(name, columns, n=3, cutoff=0.6)
        if not close:  # e.g. a different case
            close = [c for c in columns if c.lower() == name.lower()]
        hint = (
            "did you mean " + " or ".join(repr(c) for c in close) + "?"
            if close
            else "the columns are "
            + ", ".join(repr(c) for c in columns[:12])
            + (f" and {len(columns) - 12} more" if len(columns) > 12 else "")
        )
        raise CLIError(f"{option} {name!r}: no such column in {path.name}; {hint}")


def _prepare_features(pd, frame, categorical: bool, estimator: str):
    """Return the features, text columns as categories if asked; else refuse."""
    X = frame.copy()
    text, dates = [], []
    for name in X.columns:
        col = X[name]
        if isinstance(col.dtype, pd.CategoricalDtype):
            text.append(name)
        elif pd.api.types.is_bool_dtype(col.dtype):
            X[name] = col.astype(np.float64) if col.isna().any() else col.astype(int)
        elif pd.api.types.is_numeric_dtype(col.dtype):
            if pd.api.types.is_complex_dtype(col.dtype):
                raise CLIError(f"column {name!r} holds complex numbers; drop it")
        elif (
            pd.api.types.is_datetime64_any_dtype(col.dtype)
            or isinstance(col.dtype, pd.PeriodDtype)
            or pd.api.types.is_timedelta64_dtype(col.dtype)
        ):
            dates.append(name)
        else:
            text.append(name)
    if dates:
        raise CLIError(
            f"column {dates[0]!r} holds dates or times, which the booster cannot "
            "split on; turn it into numbers (e.g. a day count) in the file, or "
            f"leave it out with --drop {' '.join(dates)}"
        )
    if text and not categorical:
        name = text[0]
        example = _first_text(pd, X[name])
        others = (
            f" (and {len(text) - 1} more: {', '.join(text[1:4])})"
            if (len(text) > 1)
            else ""
        )
        raise CLIError(
            f"column {name!r}{others} holds text ({example}), which "
            f"{ESTIMATORS[estimator]} cannot take as a number; pass --categorical "
            f"to treat text columns as categories, or leave them out with "
            f"--drop {' '.join(text)}"
        )
    for name in text:
        if not isinstance(X[name].dtype, pd.CategoricalDtype):
            X[name] = X[name].astype("category")
    return X


def _first_text(pd, col) -> str:
    """Describe the first value of ``col`` that is not a number."""
    values = col.to_numpy()
    numbers = pd.to_numeric(col.astype("object"), errors="coerce")
    bad = np.flatnonzero(numbers.isna().to_numpy() & col.notna().to_numpy())
    if bad.size == 0:
        return f"e.g. {values[0]!r}"
    return f"e.g. {values[bad[0]]!r} in data row {bad[0] + 1}"


def _task(pd, y, requested: str, name: str) -> str:
    numeric = pd.api.types.is_numeric_dtype(y.dtype) and not (
        pd.api.types.is_bool_dtype(y.dtype)
    )
    if requested == "regression":
        if not numeric:
            raise CLIError(
                f"--task regression needs a numeric target, but {name!r} holds "
                f"{_first_text(pd, y)}; use --task classification"
            )
        return requested
    if requested == "classification":
        if numeric:
            values = y.to_numpy(dtype=np.float64)
            fractional = values != np.round(values)
            if fractional.any():
                row = int(np.flatnonzero(fractional)[0])
                raise CLIError(
                    f"--task classification needs class labels, but {name!r} holds "
                    f"fractions (e.g. {values[row]!r} in data row {row + 1}); use "
                    "--task regression, or bin the target into classes"
                )
        return requested
    if not numeric:
        return "classification"
    values = y.to_numpy(dtype=np.float64)
    distinct = np.unique(values)
    integral = np.all(np.isfinite(values)) and np.all(values == np.round(values))
    if integral and distinct.size <= MAX_AUTO_CLASSES:
        return "classification"
    return "regression"


def _make_estimator(args, classifier: bool):
    from ._readers import make_estimator

    try:
        return make_estimator(
            args.estimator,
            classifier,
            random_state=args.random_state,
            n_estimators=args.n_estimators,
            learning_rate=args.learning_rate,
            max_depth=args.max_depth,
            categorical=args.categorical,
        )
    except ImportError as e:
        raise CLIError(str(e)) from e


# -- output ------------------------------------------------------------------------
def _score_table(selector) -> list[dict]:
    """One dict per feature, best first."""
    names = [str(n) for n in selector.feature_names_in_]
    split = selector.split_scores_
    n_splits = split.shape[0]
    spread = split.std(axis=0, ddof=1) if n_splits > 1 else None
    rows = []
    for j in np.argsort(selector.ranking_, kind="mergesort"):
        rows.append(
            {
                "rank": int(selector.ranking_[j]),
                "feature": names[j],
                "score": float(selector.scores_[j]),
                "split_sd": None if spread is None else float(spread[j]),
                "positive_splits": int((split[:, j] > 0).sum()),
                "n_splits": n_splits,
                "selected": bool(selector.support_[j]),
                "split_scores": [float(v) for v in split[:, j]],
            }
        )
    return rows


def _number_format(values):
    """One format for a column of numbers, so that they line up."""
    finite = [abs(v) for v in values if v is not None and math.isfinite(v)]
    largest = max(finite, default=0.0)
    if largest == 0.0:
        return lambda v: f"{v:.1f}"
    if largest >= 1e6 or largest < 1e-3:
        return lambda v: f"{v:.4e}"
    decimals = max(0, 4 - int(math.floor(math.log10(largest))))
    return lambda v: f"{v:.{decimals}f}"


def _format_table(table: list[dict]) -> str:
    width = max(7, *(len(row["feature"]) for row in table))
    score = _number_format([row["score"] for row in table])
    spread = _number_format([row["split_sd"] for row in table])
    lines = [
        f"{'rank':>4}  {'feature':<{width}}  {'score':>11}  {'split sd':>11}  "
        f"{'>0 in':>6}  selected"
    ]
    for row in table:
        sd = "-" if row["split_sd"] is None else spread(row["split_sd"])
        positive = f"{row['positive_splits']}/{row['n_splits']}"
        lines.append(
            f"{row['rank']:>4}  {row['feature']:<{width}}  {score(row['score']):>11}  "
            f"{sd:>11}  {positive:>6}  {'yes' if row['selected'] else '-'}"
        )
    return "\n".join(lines)


def _write_scores(pd, path: Path, table, selector, args, task) -> None:
    if path.suffix.lower() == ".json":
        document = {
            "data": str(args.data),
            "target": args.target,
            "task": task,
            "estimator": args.estimator,
            "attribution": args.attribution,
            "n_splits": int(selector.split_scores_.shape[0]),
            # JSON has no infinity: --threshold -inf is written as a string
            "threshold": (
                float(selector.threshold_)
                if math.isfinite(selector.threshold_)
                else str(selector.threshold_)
            ),
            "selected": [row["feature"] for row in table if row["selected"]],
            "features": [
                {key: value for key, value in row.items() if key != "n_splits"}
                for row in table
            ],
        }
        path.write_text(json.dumps(document, indent=2, allow_nan=False) + "\n")
        return
    records = []
    for row in table:
        record = {
            key: row[key]
            for key in (
                "rank",
                "feature",
                "score",
                "split_sd",
                "positive_splits",
                "selected",
            )
        }
        for i, value in enumerate(row["split_scores"], 1):
            record[f"split_{i}"] = value
        records.append(record)
    pd.DataFrame.from_records(records).to_csv(path, index=False)


def _save_plot(selector, path: Path, target: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .plotting import plot_scores

    ax = plot_scores(selector)
    ax.set_title(f"held-out TreeInner scores for {target!r}")
    ax.figure.savefig(path, dpi=150, bbox_inches="tight")
    plt.close(ax.figure)


def _version() -> str:
    """Return the package version and those of the boosters installed beside it."""
    from importlib.metadata import PackageNotFoundError, version

    from . import __version__

    parts = []
    for dist in ("xgboost", "lightgbm", "scikit-learn"):
        try:
            parts.append(f"{dist} {version(dist)}")
        except PackageNotFoundError:
            continue
    return f"{__version__} ({', '.join(parts)})"
