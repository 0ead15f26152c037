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
import sys
import textwrap
import warnings
from pathlib import Path

from threadpoolctl import threadpool_limits

from .._readers import DEFAULT_BOOSTER_PARAMS, LIBRARIES, reader_class
from .._stats._cutoff import CONTROLS, adjusts, describe_rule, resolve_max_features
from .._stats._feature_groups import GROUP_TESTS
from .._stats._refit_curve import curve_rows, format_curve, scoring_name
from .._stats._report import format_group_table, format_table, group_table, score_table
from .._utils._validation import MANY_CLASSES
from ._data import (
    OUT_DATA_SUFFIXES,
    OUT_SUFFIXES,
    PLOT_SUFFIXES,
    CLIError,
    check_finite_cells,
    cli_import,
    curve_path,
    data_kind,
    in_cli_words,
    one_line,
    output_path,
    read_inputs,
    write_scores,
)
from ._options import (
    column_list,
    fraction,
    job_count,
    option_type,
    parse_alpha,
    parse_max_features,
    parse_threshold,
    positive_float,
    positive_int,
)
from ._output import save_plot, version_line

__all__ = ["main"]

PROG = "skl-treeinner"

#: Boosters ``--estimator`` builds, by key, with the names shown to users.
ESTIMATORS = {lib.key: lib.label for lib in LIBRARIES if lib.buildable}

EPILOG = """\
examples:
  skl-treeinner demo
      held-out TreeInner against in-sample gain on generated data (~10 s)
  skl-treeinner select houses.csv --target price
      rank the columns of houses.csv by how much they help predict price on
      rows the model never saw; keep those whose test says they tell
      something about price (p < min(0.05, 1/number of features))
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

how it works: the rows are split into K folds (--cv K) and the booster is
fitted K - 1 times, on folds 1..j, each fit scoring fold j + 1 with TreeInner;
the scores are added up. The same rows are scored again with each feature's
values drawn from other scored rows ("resampled"): a feature that tells
nothing about the target scores as much as its resampled self. Both are
sums over rows, so the difference has a standard error (s.e.) and a
one-sided test of "this feature is independent of the target"; the default
keeps the features whose p-value is below min(0.05, 1/n_features) (--alpha,
--control). --test model tests instead whether the fitted model's use of a
feature helps on new rows. The table on stdout lists, per feature, the
score, its s.e., the p-value, in how many folds it scored above 0, and
whether it is selected.
"""


# -- argument parsing --------------------------------------------------------------
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
            "AISTATS 2023), and keep those whose test says they tell something "
            "about the target (a one-sided test of each score, p < min(0.05, "
            "1/number of features) by default).",
            width=78,
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"%(prog)s {version_line()}",
        help="print the versions of skl-treeinner and its boosters, and exit",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = sub.add_parser(
        "demo",
        help="compare held-out TreeInner with in-sample gain on generated data "
        "with known truth",
        description=(
            "Generate data in which 5 of 30 features drive the target, select "
            "features with held-out TreeInner (XGBoost on 5 chained folds) and "
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
            "on held-out rows, and print the columns ranked by their test, the "
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
        type=column_list,
        default=[],
        metavar="COL[,COL...]",
        help="columns to leave out (identifiers, leaks, free text); repeat it or "
        "separate names with commas",
    )
    select.add_argument(
        "--task",
        choices=("auto", "regression", "classification"),
        default="auto",
        help="auto (default): classification when the target holds booleans, "
        f"text or integers with at most {MANY_CLASSES} distinct values, regression "
        "when it holds other numbers (the rule of TreeInnerSelector's default "
        "booster; more integers warn)",
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
        help="the booster: xgboost (default), lightgbm, catboost or hgb "
        "(scikit-learn's HistGradientBoosting)",
    )
    model.add_argument(
        "--n-estimators",
        type=positive_int,
        default=DEFAULT_BOOSTER_PARAMS["n_estimators"],
        metavar="N",
        help="boosting rounds (default %(default)s)",
    )
    model.add_argument(
        "--learning-rate",
        type=positive_float,
        default=DEFAULT_BOOSTER_PARAMS["learning_rate"],
        metavar="ETA",
        help="learning rate (default %(default)s)",
    )
    model.add_argument(
        "--max-depth",
        type=positive_int,
        default=DEFAULT_BOOSTER_PARAMS["max_depth"],
        metavar="D",
        help="depth of each tree (default %(default)s)",
    )
    model.add_argument(
        "--colsample",
        type=fraction,
        default=DEFAULT_BOOSTER_PARAMS["colsample"],
        metavar="F",
        help="fraction of the features each tree may use (hgb: each split; "
        "default %(default)s)",
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
        "--test",
        choices=("column", "model"),
        default="column",
        help="what each feature's test asks: column (default: does it tell "
        "anything about the target: its terms against the same model's with "
        "its values drawn from other held-out rows) or model (does the fitted "
        "model's use of it help on new rows)",
    )
    scoring.add_argument(
        "--cv",
        type=positive_int,
        default=5,
        metavar="K",
        help="cross-fit over K folds (default 5); 1 fits once on a random half "
        "of the rows and scores the other half",
    )
    scoring.add_argument(
        "--time-order",
        action="store_true",
        help="the rows are in time order, oldest first: cross-fit with "
        "TimeSeriesSplit over K splits (--cv, at least 2), each booster fitted "
        "on earlier rows and scored on later ones",
    )
    scoring.add_argument(
        "--row-groups",
        metavar="COLUMN",
        help="a column naming the entity of every row (customer, store, "
        "patient): each entity stays on one side of every split and the test "
        "counts entities; the column is not a feature",
    )
    scoring.add_argument(
        "--repeats",
        type=positive_int,
        default=1,
        metavar="R",
        help="repeat the selection R times on the same rows, each with its own "
        "folds and draws (the booster keeps its seed), and test the repeats' "
        "mean (default 1); the table then says in how many repeats alone each "
        "feature is kept",
    )
    scoring.add_argument(
        "--alpha",
        type=option_type(parse_alpha),
        default=0.05,
        metavar="A",
        help="keep the features whose one-sided p-value is below A (default "
        "0.05, or 1/n for n features where smaller: see --control); 'none' "
        "keeps every feature that passes --threshold",
    )
    scoring.add_argument(
        "--control",
        choices=list(CONTROLS),
        default="expected_false",
        help="which error --alpha bounds among the features that do nothing "
        "(default expected_false: at most one kept on average, whatever "
        "their number; per_feature: each is kept with probability below A; "
        "family_wise: any kept with probability below A; false_discovery: "
        "their share among the kept below A)",
    )
    scoring.add_argument(
        "--threshold",
        type=option_type(parse_threshold),
        default=0.0,
        metavar="T",
        help="and scoring more than T above its resampled score (with --test "
        "model: scoring above T): a number (default 0), 'mean', 'median' or a "
        "multiple such as '0.5*mean' of those differences",
    )
    scoring.add_argument(
        "--max-features",
        type=option_type(parse_max_features),
        default=None,
        metavar="N",
        help="keep at most N of them, the best first (an integer, or a fraction "
        "of the features such as 0.2); or 'best' / '1se': N from a refit curve "
        "(the booster's held-out score refitted on the top N; 'best' the "
        "highest, '1se' the fewest within one standard error of it)",
    )
    scoring.add_argument(
        "--scoring",
        default=None,
        metavar="NAME",
        help="with --max-features best or 1se: the refit curve's score, a "
        "scikit-learn scorer name such as roc_auc or neg_mean_absolute_error "
        "(default: r2 for regression, minus the log loss for classification)",
    )
    scoring.add_argument(
        "--groups",
        metavar="FILE",
        help="a JSON file {name: [column, ...]} of feature groups (one-hot "
        "dummies, lags) to score, test and keep or drop as one; the other "
        "columns stand alone, and --max-features then counts groups",
    )
    scoring.add_argument(
        "--group-test",
        choices=sorted(GROUP_TESTS),
        default="sum+simes",
        help="how a group is tested (default sum+simes; see the user guide)",
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
        type=job_count,
        default=None,
        metavar="J",
        help="folds fitted at once (default: the thread policy, folds in "
        "threads sharing the cores; -1 for all cores)",
    )
    scoring.add_argument(
        "--threads",
        type=positive_int,
        default=None,
        metavar="T",
        help="threads of each booster fit (default: the thread policy, the "
        "cores shared among the folds fitted at once, less those other "
        "programs use); also caps the cores the policy shares",
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
        help="draw the scores, ± one standard error and the threshold to "
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
    print(f"{PROG}: warning: {in_cli_words(str(message))}", file=sys.stderr)


# -- select ------------------------------------------------------------------------
def _select(args) -> None:
    args.drop = [name for names in args.drop for name in names]
    data = Path(args.data)
    kind = data_kind(data)
    out = output_path(args.out, OUT_SUFFIXES, "--out", "the score table")
    out_data = output_path(
        args.out_data, OUT_DATA_SUFFIXES, "--out-data", "the selected data"
    )
    plot = output_path(args.plot, PLOT_SUFFIXES, "--plot", "the plot")
    if plot is not None:
        cli_import("matplotlib", "drawing --plot", "plot")
    if not data.exists():
        raise CLIError(f"{data}: no such file")
    if data.is_dir():
        raise CLIError(f"{data} is a folder; pass the data file itself")
    pd = cli_import("pandas", "reading DATA", "cli")
    if kind == "parquet":
        cli_import("pyarrow", "reading Parquet files", "cli")
    if out_data is not None and out_data.suffix.lower() == ".parquet":
        cli_import("pyarrow", "writing Parquet files", "cli")
    if args.time_order and args.cv < 2:
        raise CLIError("--time-order needs --cv 2 or more time-ordered splits")
    inputs = read_inputs(pd, args, kind, ESTIMATORS[args.estimator])
    X = inputs.X
    try:
        resolve_max_features(args.max_features, X.shape[1])
    except ValueError as e:
        raise CLIError(
            f"--max-features {args.max_features} is more than the {X.shape[1]} "
            "features; pass at most that, or a fraction such as 0.5"
        ) from e
    selector = _fit(args, inputs)
    table = score_table(selector)
    names, rows = _report(args, selector, inputs, table)
    if out is not None:
        curve = None
        if isinstance(args.max_features, str):
            curve = curve_rows(selector.cv_results_)
        write_scores(
            pd, out, table, selector, args, inputs.task, groups=rows, curve=curve
        )
        _notice(args, f"wrote the score table to {out}")
        if curve is not None and out.suffix.lower() == ".csv":
            _notice(args, f"wrote the refit curve to {curve_path(out)}")
    if out_data is not None:
        kept = set(names)  # in the file's order, as a selector's transform keeps them
        columns = [c for c in inputs.features.columns if str(c) in kept]
        subset = inputs.frame[[*columns, args.target]]
        if out_data.suffix.lower() == ".parquet":
            subset.to_parquet(out_data, index=False)
        else:
            subset.to_csv(out_data, index=False)
        _notice(args, f"wrote {len(names)} columns and the target to {out_data}")
    if plot is not None:
        save_plot(selector, plot, args.target)
        _notice(args, f"drew the scores to {plot}")


def _fit(args, inputs):
    """Fit the selector the options describe on the inputs; errors as CLIError."""
    from .._selection._selector import TreeInnerSelector

    estimator = _make_estimator(args, inputs.task == "classification", inputs.X)
    if not reader_class(estimator).accepts_infinity:
        check_finite_cells(inputs.X, ESTIMATORS[args.estimator])
    selector = TreeInnerSelector(
        estimator,
        attribution=args.attribution,
        test=args.test,
        cv=_cv(args),
        n_repeats=args.repeats,
        alpha=args.alpha,
        control=args.control,
        threshold=args.threshold,
        max_features=args.max_features,
        feature_groups=inputs.groups,
        group_test=args.group_test,
        scoring=args.scoring,
        random_state=args.random_state,
        n_jobs=args.n_jobs,
        verbose=0 if args.quiet else 1 + args.verbose,
    )
    # --threads caps OpenMP and BLAS too: HistGradientBoosting has no n_jobs.
    try:
        with threadpool_limits(limits=args.threads):
            selector.fit(inputs.X, inputs.y, groups=inputs.row_groups)
    except ValueError as e:  # the selector's and the boosters' own messages
        raise CLIError(one_line(e)) from e
    except Exception as e:  # LightGBMError is not a ValueError
        if type(e).__name__ != "LightGBMError":
            raise
        raise CLIError(f"LightGBM: {one_line(e)}") from e
    return selector


def _cv(args):
    """Return the selector's cv for --cv K and --time-order."""
    if args.time_order:
        from sklearn.model_selection import TimeSeriesSplit

        return TimeSeriesSplit(n_splits=args.cv)
    return args.cv if args.cv > 1 else None


def _split_words(args) -> str:
    """Name the splits for the header, with the number of fits where it differs."""
    chained = args.cv > 1 and args.test == "column" and not args.time_order
    if args.cv == 1:
        split_word, fits = "one 50/50 split", 1
    elif args.time_order:
        split_word, fits = f"{args.cv} time-ordered splits", args.cv
    elif chained:  # fold j + 1 scored by folds 1..j's fit
        split_word, fits = f"{args.cv} chained folds", args.cv - 1
    else:
        split_word, fits = f"{args.cv}-fold cross-fitting", args.cv
    if args.row_groups is not None:
        split_word += f" by {args.row_groups!r}"
    if args.repeats > 1:
        split_word = f"{args.repeats} repeats of {split_word}"
    if chained or args.repeats > 1:  # the fits are not the splits' number
        split_word += f" ({args.repeats * fits} fits)"
    return split_word


def _report(args, selector, inputs, table):
    """Print the score table, the groups, the curve and the selection.

    Returns the selected features' names and the group table (or None).
    """
    X, groups, task, max_features = (
        inputs.X,
        inputs.groups,
        inputs.task,
        args.max_features,
    )
    split_word = _split_words(args)
    print(
        f"{inputs.data.name}: {len(inputs.frame)} rows, {X.shape[1]} features; "
        f"target {args.target!r} ({task}); {ESTIMATORS[args.estimator]}, "
        f"{split_word}, {args.attribution}"
        + (", test of the column." if args.test == "column" else ".")
    )
    # With groups the columns' adjusted p-values decide nothing: not shown.
    adjusted = groups is None and adjusts(args.control, args.alpha, X.shape[1])
    extra = ()
    if groups is not None:
        extra = [("group", {row["column"]: row["group"] for row in table})]
    print(format_table(table, extra, adjusted=adjusted))
    names = [row["feature"] for row in table if row["selected"]]
    n_units, units, rows = X.shape[1], f"of {X.shape[1]} features", None
    if groups is not None:  # the cut-off acts on groups
        rows = group_table(selector)
        n_units = len(rows)
        print(f"\n{n_units} groups ({args.group_test} test):")
        print(
            format_group_table(
                rows, adjusted=adjusts(args.control, args.alpha, n_units)
            )
        )
        kept = sum(row["selected"] for row in rows)
        units = f"features in {kept} of {n_units} groups"
    rule = f"score > {selector.threshold_:.6g}"
    if getattr(selector, "null_scores_", None) is not None:  # the test of a column
        rule = "score > resampled score"
        if selector.threshold_ != 0:
            rule = f"score - resampled score > {selector.threshold_:.6g}"
    if args.alpha is not None:
        rule = f"{describe_rule(args.control, args.alpha, n_units)} and {rule}"
    word = "group" if groups is not None else "feature"
    if isinstance(max_features, str):  # the refit curve's rule
        score = scoring_name(args.scoring, task == "classification")
        print("\n" + format_curve(selector.cv_results_, word, score))
        cap = next(
            row["k"]
            for row in curve_rows(selector.cv_results_)
            if max_features in row["rules"]
        )
        rule += f", the best {cap} {word}{'' if cap == 1 else 's'} ({max_features})"
    elif max_features is not None:
        cap = selector.max_features_
        rule += f", at most {cap} {word}{'' if cap == 1 else 's'}"
    print(
        f"\nselected {len(names)} {units} ({rule}): "
        + (", ".join(names) if names else "none")
    )
    return names, rows


def _notice(args, text: str) -> None:
    if not args.quiet:
        print(f"{PROG}: {text}", file=sys.stderr)


def _make_estimator(args, classifier: bool, X):
    from .._engines._plan import known_rows, selection_seeds
    from .._readers import make_estimator

    try:
        return make_estimator(
            args.estimator,
            classifier,
            # the seed TreeInnerSelector(random_state=...) gives its default
            random_state=selection_seeds(args.random_state)[1],
            n_estimators=args.n_estimators,
            learning_rate=args.learning_rate,
            max_depth=args.max_depth,
            colsample=args.colsample,
            categorical=args.categorical,
            n_jobs=args.threads,
            n_rows=known_rows(X),  # the default booster's bins
        )
    except ImportError as e:
        raise CLIError(str(e)) from e
