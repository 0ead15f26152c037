"""The command line's data handling: reading DATA, checking columns and the target.

Everything here reports a user's mistake as :class:`CLIError`, which
``skl-treeinner`` prints as one line, ``skl-treeinner: error: ...``. Beside
it: the writer of the score table (``--out``). The option types are in
``_options``.
"""

from __future__ import annotations

import difflib
import json
import math
import re
import warnings
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .._utils._optional import import_optional
from .._utils._validation import MANY_CLASSES, target_is_classes

__all__ = [
    "CLIError",
    "Inputs",
    "read_inputs",
    "check_columns",
    "cli_import",
    "data_kind",
    "one_line",
    "in_cli_words",
    "output_path",
    "prepare_features",
    "check_finite_cells",
    "read_data",
    "task_of",
    "write_scores",
]

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


class CLIError(Exception):
    """A mistake of the user's, reported as one line on stderr."""


def one_line(error: BaseException) -> str:
    """Put an error's message on one line, its advice in the CLI's options."""
    return in_cli_words(" ".join(str(error).split()))


#: The selector's advice, as Python spells it, and the options the CLI has
#: for it: a warning or an error must not send a user of the command line to
#: a setting it cannot pass (the order matters: the longest first).
_CLI_WORDS = (
    (
        r"cv=TimeSeriesSplit\(n_splits=\d+, gap=\.\.\.\) on rows in time order",
        "--time-order on rows in time order (oldest first)",
    ),
    (
        r"\bgroups= \(the entity of every row\)",
        "--row-groups COLUMN (the column naming the entity of every row)",
    ),
    (r"\bgroups= for rows", "--row-groups COLUMN for rows"),
    (r"\bcv=None\b", "--cv 1"),
    (r"\bcv=(\d+)\b", r"--cv \1"),
)


def in_cli_words(message: str) -> str:
    """Rewrite the selector's Python advice in a message as the CLI's options."""
    for pattern, words in _CLI_WORDS:
        message = re.sub(pattern, words, message)
    return message


def cli_import(module: str, purpose: str, extra: str):
    """:func:`import_optional`, its ImportError reported as a one-line error."""
    try:
        return import_optional(module, extra=extra, purpose=purpose)
    except ImportError as e:
        raise CLIError(str(e)) from e


def suffix_of(path: Path | None) -> str:
    if path is None:
        return ""
    name = path.name.lower()
    for suffix in sorted(DATA_SUFFIXES, key=len, reverse=True):
        if name.endswith(suffix):
            return suffix
    return path.suffix.lower()


def data_kind(path: Path) -> str:
    suffix = suffix_of(path)
    if suffix not in DATA_SUFFIXES:
        shown = suffix or "no suffix"
        raise CLIError(
            f"cannot read {path.name!r}: unsupported file type ({shown}); pass a "
            f"{', '.join(DATA_SUFFIXES)} file (from pandas: "
            "df.to_csv('data.csv', index=False))"
        )
    return DATA_SUFFIXES[suffix]


def output_path(value, suffixes, option, what) -> Path | None:
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


def read_data(pd, path: Path, kind: str):
    try:
        if kind == "parquet":
            frame = pd.read_parquet(path)
        else:
            frame = pd.read_csv(path, sep="\t" if kind == "tsv" else ",")
    except pd.errors.EmptyDataError as e:
        raise CLIError(f"{path} is empty; it needs a header and rows") from e
    except (ValueError, OSError, UnicodeDecodeError) as e:
        # pandas' ParserError and pyarrow's ArrowInvalid are ValueErrors.
        raise CLIError(f"cannot read {path} as {kind.upper()}: {one_line(e)}") from e
    if len(frame) == 0:
        raise CLIError(f"{path} has a header but no rows")
    frame.columns = [str(c) for c in frame.columns]
    return frame


def check_columns(frame, names, path, option) -> None:
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


def read_groups(path: str, features, target: str, dropped, data: Path) -> dict:
    """Read ``--groups``: a JSON object ``{name: [column, ...]}`` of feature columns.

    Columns are named as in the data file's header; the target, a dropped
    column or a column the file lacks is an error naming it.
    """
    file = Path(path)
    try:
        groups = json.loads(file.read_text())
    except FileNotFoundError:
        raise CLIError(f"--groups {path}: no such file") from None
    except (OSError, ValueError) as e:
        raise CLIError(f"--groups {path}: not a JSON file ({one_line(e)})") from None
    if not isinstance(groups, dict) or not all(
        isinstance(cols, list) and all(isinstance(c, str) for c in cols)
        for cols in groups.values()
    ):
        raise CLIError(
            f"--groups {path}: write an object of lists of column names, such as "
            '{"city": ["city_a", "city_b"], "lags": ["lag1", "lag2"]}'
        )
    columns = set(map(str, features.columns))
    for name, cols in groups.items():
        for col in cols:
            if col == target:
                raise CLIError(f"--groups: group {name!r} names the target {col!r}")
            if col in dropped:
                raise CLIError(
                    f"--groups: group {name!r} names {col!r}, which --drop drops"
                )
            if col not in columns:
                check_columns(features, [col], data, f"--groups group {name!r}:")
    return groups


def prepare_features(pd, frame, categorical: bool, booster: str):
    """Return the features, text columns as categories if asked; else refuse."""
    X = frame.copy()
    text, dates, durations = [], [], []
    for name in X.columns:
        col = X[name]
        if isinstance(col.dtype, pd.CategoricalDtype):
            (dates if _iso_dates(col.astype(object)) else text).append(name)
        elif pd.api.types.is_bool_dtype(col.dtype):
            X[name] = col.astype(np.float64) if col.isna().any() else col.astype(int)
        elif pd.api.types.is_numeric_dtype(col.dtype):
            if pd.api.types.is_complex_dtype(col.dtype):
                raise CLIError(f"column {name!r} holds complex numbers; drop it")
        elif pd.api.types.is_timedelta64_dtype(col.dtype):
            durations.append(name)
        elif pd.api.types.is_datetime64_any_dtype(col.dtype) or isinstance(
            col.dtype, pd.PeriodDtype
        ):
            dates.append(name)
        elif _iso_dates(col):  # a CSV's dates arrive as text
            dates.append(name)
        else:
            text.append(name)
    if durations:
        raise CLIError(
            f"column {durations[0]!r} holds durations, which the booster cannot "
            "split on; turn it into numbers (e.g. seconds) in the file, or "
            f"leave it out with --drop {','.join(durations)}"
        )
    if dates:
        raise CLIError(
            f"column {dates[0]!r} holds dates or times, which the booster cannot "
            "split on; turn it into numbers (e.g. a day count) in the file, or "
            f"leave it out with --drop {','.join(dates)}"
        )
    if text and not categorical:
        name = text[0]
        example = first_text(pd, X[name])
        others = (
            f" (and {len(text) - 1} more: {', '.join(text[1:4])})"
            if (len(text) > 1)
            else ""
        )
        raise CLIError(
            f"column {name!r}{others} holds text ({example}), which "
            f"{booster} cannot take as a number; pass --categorical "
            f"to treat text columns as categories, or leave them out with "
            f"--drop {','.join(text)}"
        )
    for name in text:
        if not isinstance(X[name].dtype, pd.CategoricalDtype):
            X[name] = X[name].astype("category")
    return X


#: A date as ISO 8601 writes it, with or without a time and a zone.
_ISO_DATE = (
    r"\d{4}-\d{2}-\d{2}"
    r"(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
)


def _iso_dates(col) -> bool:
    """Whether a text column holds ISO dates only (at least one)."""
    values = col.dropna()
    textual = col.dtype.kind in "OU" or str(col.dtype).startswith(("string", "str"))
    if values.empty or not textual:
        return False
    return bool(values.astype(str).str.fullmatch(_ISO_DATE).all())


def check_finite_cells(X, booster: str) -> None:
    """Refuse infinite cells, and beyond float32's range, in command-line words.

    For boosters that cannot split on them (the reader's ``accepts_infinity``);
    rows are counted as the file's data rows, from 1 below the header.
    """
    from .._utils._validation import beyond_float32

    for name in X.columns:
        if X[name].dtype.kind != "f":
            continue
        values = X[name].to_numpy(dtype=np.float64, na_value=np.nan)
        bad = np.flatnonzero(beyond_float32(values))
        if bad.size:
            raise CLIError(
                f"column {name!r} holds {bad.size} infinite value(s) or beyond "
                f"float32's range (e.g. {values[bad[0]]!r} in data row "
                f"{bad[0] + 1}), which {booster} cannot split on; leave those "
                f"cells empty (missing) in the file, or leave the column out "
                f"with --drop {name}"
            )


def first_text(pd, col) -> str:
    """Describe the first value of ``col`` that is not a number."""
    values = col.to_numpy()
    numbers = pd.to_numeric(col.astype("object"), errors="coerce")
    bad = np.flatnonzero(numbers.isna().to_numpy() & col.notna().to_numpy())
    if bad.size == 0:
        return f"e.g. {values[0]!r}"
    return f"e.g. {values[bad[0]]!r} in data row {bad[0] + 1}"


def task_of(pd, y, requested: str, name: str) -> str:
    numeric = pd.api.types.is_numeric_dtype(y.dtype) and not (
        pd.api.types.is_bool_dtype(y.dtype)
    )
    if requested == "regression":
        if not numeric:
            raise CLIError(
                f"--task regression needs a numeric target, but {name!r} holds "
                f"{first_text(pd, y)}; use --task classification"
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
    if target_is_classes(y):
        return "classification"
    if pd.api.types.is_integer_dtype(y.dtype):
        warnings.warn(
            f"the target {name!r} holds {y.nunique()} distinct integers, more than "
            f"{MANY_CLASSES}, taken as a numeric target (a price or a count); "
            "pass --task classification for class labels",
            UserWarning,
            stacklevel=2,
        )
    return "regression"


def write_scores(
    pd, path: Path, table, selector, args, task: str, *, groups=None, curve=None
) -> None:
    """Write the score table of ``select`` to ``path`` (``--out``).

    Parameters
    ----------
    pd : module
        pandas.
    path : pathlib.Path
        A ``.json`` file (the run's settings, the selection and one record per
        feature) or a ``.csv`` file (one row per feature, a column per split;
        ``null_score`` with the test of the column).
    table : list of dict
        The rows of :func:`~skl_treeinner._stats._report.score_table`.
    selector : TreeInnerSelector
        The fitted selector.
    args : argparse.Namespace
        The parsed options of ``select``.
    task : str
        ``"regression"`` or ``"classification"``.
    groups : list of dict or None
        The rows of :func:`~skl_treeinner._stats._report.group_table`, with
        ``--groups``.
    curve : list of dict or None
        The rows of :func:`~skl_treeinner._stats._refit_curve.curve_rows`, with
        ``--max-features best`` or ``1se``: in the JSON document, or in a
        CSV file beside a CSV ``path`` (``NAME-curve.csv``).
    """
    if path.suffix.lower() == ".json":
        document = {
            "data": str(args.data),
            "target": args.target,
            "task": task,
            "estimator": args.estimator,
            "attribution": args.attribution,
            "test": args.test,
            "n_splits": int(selector.split_scores_.shape[0]),
            "n_scored_rows": float(selector.n_scored_rows_),
            "alpha": args.alpha,
            "control": args.control,
            # JSON has no infinity: --threshold -inf is written as a string
            "threshold": (
                float(selector.threshold_)
                if math.isfinite(selector.threshold_)
                else str(selector.threshold_)
            ),
            "selected": [row["feature"] for row in table if row["selected"]],
            "features": [
                {
                    key: value
                    for key, value in row.items()
                    if key not in ("n_splits", "column")
                }
                for row in table
            ],
        }
        if groups is not None:
            document["group_test"] = selector.group_test
            document["groups"] = groups
        if curve is not None:
            document["max_features"] = selector.max_features
            document["scoring"] = args.scoring or (
                "neg_log_loss" if task == "classification" else "r2"
            )
            document["refit_curve"] = curve
        path.write_text(json.dumps(document, indent=2, allow_nan=False) + "\n")
        return
    by_group = {row["group"]: row for row in groups or ()}
    records = []
    for row in table:
        record = {
            key: row[key]
            for key in (
                "rank",
                "feature",
                "score",
                "null_score",  # the test of the column's resampled score
                "score_se",
                "pvalue",
                "pvalue_adjusted",
                "split_sd",
                "positive_splits",
                "selected",
            )
            if key in row
        }
        if "group" in row:  # the group's statistics, which the selection used
            group = by_group[row["group"]]
            record["group"] = row["group"]
            record["group_score"] = group["score"]
            record["group_score_se"] = group["score_se"]
            record["group_pvalue"] = group["pvalue"]
            record["group_pvalue_adjusted"] = group["pvalue_adjusted"]
        for i, value in enumerate(row["split_scores"], 1):
            record[f"split_{i}"] = value
        records.append(record)
    pd.DataFrame.from_records(records).to_csv(path, index=False)
    if curve is not None:
        rows = [{**row, "rules": " ".join(row["rules"])} for row in curve]
        pd.DataFrame.from_records(rows).to_csv(curve_path(path), index=False)


def curve_path(path: Path) -> Path:
    """Where a CSV ``--out`` puts the refit curve: ``NAME-curve.csv`` beside it."""
    return path.with_name(f"{path.stem}-curve{path.suffix}")


class Inputs(NamedTuple):
    """What ``select`` read from DATA and the options, checked."""

    data: Path
    #: The whole file, and its feature columns (the target and --drop out).
    frame: object
    features: object
    #: The features as the booster gets them, the target, the task.
    X: object
    y: np.ndarray
    task: str
    #: ``--groups``: the feature groups, or None.
    groups: dict | None
    #: ``--row-groups``: the entity of every row, or None.
    row_groups: np.ndarray | None = None


def read_inputs(pd, args, kind: str, booster: str) -> Inputs:
    """Read DATA, the target and the groups that ``args`` name; CLIError if bad.

    ``kind`` is DATA's file type (:func:`data_kind`); ``booster`` the label
    of the estimator ``--estimator`` names.
    """
    data = Path(args.data)
    frame = read_data(pd, data, kind)
    check_columns(frame, [args.target], data, "--target")
    check_columns(frame, args.drop, data, "--drop")
    if args.target in args.drop:
        raise CLIError(f"--drop {args.target!r} names the target; drop another one")
    row_groups = _row_groups(frame, args, data)
    y_col = frame[args.target]
    if y_col.isna().any():
        rows = np.flatnonzero(y_col.isna().to_numpy())
        raise CLIError(
            f"the target {args.target!r} is missing in {rows.size} of "
            f"{len(frame)} rows (first at data rows {(rows[:5] + 1).tolist()}, "
            "counting from 1 below the header); drop those rows or fill them in"
        )
    entity = [] if args.row_groups is None else [args.row_groups]
    features = frame.drop(columns=[args.target, *args.drop, *entity])
    if features.shape[1] == 0:
        raise CLIError(
            f"{data} has no columns left besides the target {args.target!r}; "
            "TreeInner needs at least one feature"
        )
    X = prepare_features(pd, features, args.categorical, booster)
    task = task_of(pd, y_col, args.task, args.target)
    y = y_col.to_numpy()
    if task == "regression":
        y = y.astype(np.float64)
    groups = None
    if args.groups is not None:
        groups = read_groups(args.groups, features, args.target, args.drop, data)
    return Inputs(data, frame, features, X, y, task, groups, row_groups)


def _row_groups(frame, args, data):
    """Return the entity of every row that ``--row-groups`` names (or None)."""
    name = args.row_groups
    if name is None:
        return None
    check_columns(frame, [name], data, "--row-groups")
    if name == args.target or name in args.drop:
        raise CLIError(
            f"--row-groups {name!r} names the target or a dropped column; name "
            "the column that says which entity each row belongs to"
        )
    if args.time_order:
        raise CLIError(
            "--time-order and --row-groups cannot be combined: time-ordered "
            "splits keep the order of the rows, not their entities; choose one"
        )
    entity = frame[name]
    if entity.isna().any():
        row = int(np.flatnonzero(entity.isna().to_numpy())[0])
        raise CLIError(
            f"--row-groups {name!r} is missing in data row {row + 1}; every row "
            "needs its entity"
        )
    return entity.to_numpy()
