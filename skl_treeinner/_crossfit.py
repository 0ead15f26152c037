"""Cross-fitting: fit the booster on each split's training rows, score the rest.

:class:`~skl_treeinner.TreeInnerSelector` describes the work once, as a
:class:`CrossFitPlan` (the booster, the rows, the fit parameters with metadata
routing already resolved) and one :class:`SplitJob` per split (which rows fit,
which stop early, which are scored); :func:`run_splits` runs the jobs, in
parallel if asked. Everything is at module level so that joblib can pickle it.
Library knowledge (how a booster is told to stop early) comes from the reader
registry, never from here.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from dataclasses import dataclass
from numbers import Integral

import numpy as np
from sklearn.base import ClassifierMixin, clone
from sklearn.base import is_classifier as sklearn_is_classifier
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import (
    GroupKFold,
    GroupShuffleSplit,
    KFold,
    ShuffleSplit,
    StratifiedGroupKFold,
    StratifiedKFold,
    StratifiedShuffleSplit,
    check_cv,
    train_test_split,
)
from sklearn.pipeline import Pipeline
from sklearn.utils import _safe_indexing
from sklearn.utils.metadata_routing import _routing_enabled, process_routing
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import _check_method_params
from threadpoolctl import threadpool_limits

from ._progress import progress
from ._readers import SUPPORTED_MODELS, ModelReader, reader_class
from ._threads import plan_threads
from ._tree_inner import tree_inner

__all__ = [
    "EARLY_STOPPING_FRACTION",
    "MIN_SCORING_ROWS",
    "MIN_SPLIT_ROWS",
    "check_groups",
    "check_scoring_rows",
    "CrossFitPlan",
    "SplitJob",
    "check_supported",
    "clone_estimator",
    "is_classifier",
    "early_stopping_reader",
    "final_step",
    "make_jobs",
    "make_plan",
    "make_splits",
    "pipeline_step_params",
    "run_splits",
    "score_features",
]

#: Fraction of each training part set aside for early stopping, when the
#: booster is configured to stop early and needs rows to stop on.
EARLY_STOPPING_FRACTION = 0.1

#: Fewest held-out rows the scores may come from, over all splits. A score is
#: a sum over these rows: from one or two its sign is the noise of their
#: residuals, and its standard error (the spread of the per-row terms) needs
#: several. Five refuses the degenerate cases while letting small data
#: through: scikit-learn's estimator checks fit on 10 to 20 rows. Scores from
#: few rows are weak; their standard errors and p-values say so.
MIN_SCORING_ROWS = 5
#: Fewest held-out rows of a single split (its own score is one of
#: ``split_scores_``): under cross-fitting the rows of all splits are pooled
#: for the test, so one split may score on as few as this.
MIN_SPLIT_ROWS = 2


@dataclass(frozen=True)
class SplitJob:
    """The rows of one split."""

    #: Position of the split, 0-based.
    index: int
    #: Rows the booster is fitted on.
    train: np.ndarray
    #: Held-out rows the features are scored on.
    test: np.ndarray
    #: Rows set aside from ``train``'s part for early stopping, or ``None``.
    es_rows: np.ndarray | None = None


@dataclass(frozen=True)
class CrossFitPlan:
    """What every split shares: the booster, the rows, and how to fit and score."""

    #: The unfitted booster (or Pipeline ending in one), cloned per split.
    estimator: object
    #: All rows, as given to ``fit``.
    X: object
    #: The target the booster is fitted on (classes encoded 0..K-1).
    y: np.ndarray
    #: Weights of the inner product on the held-out rows, or ``None``.
    sample_weight: np.ndarray | None
    #: The booster's fit parameters, one entry per row where they are
    #: row-aligned (split with the rows); routing already resolved.
    fit_params: dict
    #: The key of ``fit_params`` that holds the booster's sample weights.
    weight_key: str
    #: The reader class that hands early-stopping rows to the library, or None.
    es_reader: type[ModelReader] | None
    #: For a Pipeline that stops early: the fit parameters of each step.
    step_params: dict | None
    #: ``"predecomp"`` or ``"treeshap"``.
    attribution: str
    #: Number and names of the input features (scores are mapped back to them).
    n_features_in: int
    feature_names_in: np.ndarray | None
    #: Threads per booster when splits run in parallel, else ``None``.
    threads: int | None = None
    #: Verbosity of each split's own scoring (TreeSHAP progress).
    verbose: int = 0


# -- what to fit -------------------------------------------------------------------
def final_step(estimator):
    """Return the booster at the end of ``estimator`` (itself if no Pipeline)."""
    if isinstance(estimator, Pipeline):
        return estimator.steps[-1][1]
    return estimator


def is_classifier(estimator) -> bool:
    """Whether ``estimator`` (or the booster ending its Pipeline) is a classifier.

    scikit-learn's ``is_classifier`` reads estimator tags, which XGBoost before
    2.1.4 does not declare; its classifiers still derive from ClassifierMixin.
    """
    if sklearn_is_classifier(estimator):
        return True
    final = final_step(estimator)
    return isinstance(final, ClassifierMixin) or (
        getattr(final, "_estimator_type", None) == "classifier"
    )


def check_supported(estimator):
    """Return the booster at the end of ``estimator``; TypeError if unsupported."""
    final = final_step(estimator)
    try:
        supported = reader_class(final) is not None
    except ImportError as e:  # a registered reader that is not installed
        raise TypeError(
            f"TreeInnerSelector cannot read {type(final).__qualname__} models in "
            f"this installation: {e}. Supported models: {SUPPORTED_MODELS}."
        ) from e
    if not supported:
        where = " at the end of the Pipeline" if final is not estimator else ""
        raise TypeError(
            f"TreeInnerSelector cannot score a {type(final).__module__}."
            f"{type(final).__qualname__}{where}: TreeInner reads the trees of a "
            f"gradient-boosted model. Pass one of: {SUPPORTED_MODELS}; or a "
            "Pipeline ending in one; or estimator=None for XGBoost."
        )
    return final


def weight_key_of(estimator, routing: bool) -> str:
    """Name the fit parameter under which the booster gets sample weights."""
    if isinstance(estimator, Pipeline) and not routing:
        return f"{estimator.steps[-1][0]}__sample_weight"
    return "sample_weight"


def early_stopping_reader(final, fit_params) -> type[ModelReader] | None:
    """Return the reader that hands early-stopping rows to ``final``, or None."""
    reader = reader_class(final)
    return reader if reader.early_stopping_rows_needed(final, fit_params) else None


def pipeline_step_params(pipe, params, routing: bool) -> dict:
    """Per-step fit parameters of a Pipeline fitted step by step."""
    names = [name for name, _ in pipe.steps]
    if routing:
        routed = process_routing(pipe, "fit", **params)
        per_step = {}
        for name, step in pipe.steps[:-1]:
            if step is None or step == "passthrough":
                continue
            per_step[name] = dict(routed[name].fit_transform)
        per_step[names[-1]] = dict(routed[names[-1]].fit)
        return per_step
    per_step = {name: {} for name in names}
    for key, value in params.items():
        name, sep, param = key.partition("__")
        if not sep or name not in per_step:
            raise ValueError(
                f"Fit parameter {key!r} is not of the form 'step__parameter' for "
                f"a step of the Pipeline {names}; prefix it with the step name."
            )
        per_step[name][param] = value
    return per_step


def make_plan(selector, base, X, y, weight, *, sample_weight, groups, fit_params):
    """Resolve metadata routing once: the cross-fitting plan and split params.

    ``selector`` is the fitting TreeInnerSelector (its ``cv``, ``attribution``,
    input features and metadata requests).
    """
    routing = _routing_enabled()
    weight_key = weight_key_of(base, routing)
    # ``weight`` is the checked array; routing receives what the user gave.
    if routing:
        params = dict(fit_params)
        if groups is not None and selector.cv is not None:
            params["groups"] = groups
        routed = process_routing(selector, "fit", sample_weight=sample_weight, **params)
        booster_params = dict(routed.estimator.fit)
        split_params = dict(routed.splitter.split) if selector.cv else {}
    else:
        booster_params = dict(fit_params)
        if sample_weight is not None:
            booster_params[weight_key] = weight
        split_params = {} if groups is None else {"groups": groups}
    final = final_step(base)
    if final is base:  # X reaches the booster as given
        X = reader_class(final).fit_input(X)
    early_stopping = early_stopping_reader(final, booster_params)
    step_params = None
    if early_stopping is not None and final is not base:
        step_params = pipeline_step_params(base, booster_params, routing)
    plan = CrossFitPlan(
        estimator=base,
        X=X,
        y=y,
        sample_weight=weight,
        fit_params=booster_params,
        weight_key=weight_key,
        es_reader=early_stopping,
        step_params=step_params,
        attribution=selector.attribution,
        n_features_in=selector.n_features_in_,
        feature_names_in=getattr(selector, "feature_names_in_", None),
    )
    return plan, split_params


# -- which rows --------------------------------------------------------------------
def make_splits(
    X,
    y,
    *,
    cv,
    validation_fraction,
    classifier,
    groups,
    split_params,
    seed,
    labels=None,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Return the checked (train, test) index pairs of ``cv``.

    For a classifier, ``y`` holds class indices 0..K-1 and ``labels`` the
    class labels they stand for (named in messages). ``groups`` have passed
    :func:`check_groups`.
    """
    n = y.shape[0]
    if cv is None:
        if groups is not None:
            splitter = GroupShuffleSplit(
                1, test_size=validation_fraction, random_state=seed
            )
            split_params = {"groups": groups}
        else:
            cls = StratifiedShuffleSplit if classifier else ShuffleSplit
            splitter = cls(1, test_size=validation_fraction, random_state=seed)
        what = f"validation_fraction={validation_fraction}"
    elif isinstance(cv, Integral):
        splitter = int_splitter(cv, classifier, grouped=groups is not None, seed=seed)
        if groups is not None:
            split_params = {"groups": groups}
        what = f"cv={cv}"
    else:
        splitter = check_cv(cv, y, classifier=classifier)
        what = f"cv={cv!r}"
    if classifier:
        _check_class_counts(y, labels, n, what)
    try:
        splits = [
            (np.asarray(train), np.asarray(test))
            for train, test in splitter.split(X, y, **split_params)
        ]
    except ValueError as e:
        if groups is None and "groups" in str(e):
            raise ValueError(
                f"{what} splits the rows by group, but no groups were given: pass "
                "them as fit(X, y, groups=...), one label per row."
            ) from e
        raise ValueError(
            f"Cannot split the {n} rows as {what} asks: {e} Pass more rows "
            "(at least a few per class and per split), or fewer splits."
        ) from e
    if not splits:
        raise ValueError(f"{what} produced no (train, test) split.")
    classes = np.unique(y) if classifier else None
    for i, (train, test) in enumerate(splits):
        if train.size == 0 or test.size == 0:
            raise ValueError(
                f"Split {i} has {train.size} training and {test.size} held-out "
                f"rows; each needs at least one. Pass more rows than the "
                f"{n} given, or fewer splits."
            )
        if classifier:
            held = np.unique(y[test])
            if held.size < 2:
                raise ValueError(
                    f"The held-out rows of split {i} hold a single class "
                    f"({held.tolist()}), so TreeInner cannot tell features "
                    "apart on them. Use a stratified split (cv=None or an int "
                    "cv, which stratifies for classifiers) or more rows per class."
                )
            missing = np.setdiff1d(classes, y[train])
            if missing.size:
                raise ValueError(
                    f"The training rows of split {i} lack the classes (as "
                    f"encoded 0..K-1) {missing.tolist()}; the booster must "
                    "see every class. Use a stratified split or more rows "
                    "per class."
                )
    return splits


def int_splitter(k, classifier, *, grouped, seed=None):
    """Return the splitter an int ``cv`` stands for.

    ``StratifiedKFold`` for classifiers, ``KFold`` otherwise, shuffled and
    seeded; with groups, their group-aware versions (``StratifiedGroupKFold``,
    ``GroupKFold``), so that no group is both fitted and scored.
    """
    if grouped:
        cls = StratifiedGroupKFold if classifier else GroupKFold
    else:
        cls = StratifiedKFold if classifier else KFold
    return cls(k, shuffle=True, random_state=seed)


def _check_class_counts(y, labels, n, what) -> None:
    """Refuse classes with a single row: none can be both fitted and scored."""
    counts = np.bincount(y.astype(np.int64))
    single = np.flatnonzero(counts < 2)
    if single.size == 0:
        return
    names = single if labels is None else np.asarray(labels)[single]
    names = names[:5].tolist()
    more = f" and {single.size - 5} more" if single.size > 5 else ""
    raise ValueError(
        f"Cannot split the {n} rows as {what} asks: class(es) {names}{more} have "
        "a single row, and every class needs a row to fit on and one to score "
        "on. Drop or merge the rarest classes; if y is a numeric target, fit it "
        "as one: y.astype(float) or a regressor (--task regression on the "
        "command line)."
    )


def check_groups(groups, n_samples: int) -> None:
    """Refuse ``groups`` that are not one label per row."""
    if groups is not None and len(groups) != n_samples:
        raise ValueError(
            f"groups has {len(groups)} entries but X has {n_samples} rows; pass "
            "one group label per row of X."
        )


def check_scoring_rows(tests, sample_weight=None) -> None:
    """Refuse held-out rows too few for the scores and their test.

    ``tests`` are the held-out rows of each split (a prefit model's: all of
    them). Every split needs ``MIN_SPLIT_ROWS`` rows, and all splits together
    ``MIN_SCORING_ROWS`` distinct rows of nonzero weight (rows of weight 0 are
    not scored).
    """
    fix = "Pass more rows, a larger validation_fraction, or fewer splits"
    for i, test in enumerate(tests):
        if test.size < MIN_SPLIT_ROWS:
            raise ValueError(
                f"Split {i} would score on {test.size} held-out row(s); each "
                f"split needs at least {MIN_SPLIT_ROWS}. {fix}."
            )
    scored = np.unique(np.concatenate(tests))
    if sample_weight is not None:
        scored = scored[np.asarray(sample_weight)[scored] != 0]
    if scored.size < MIN_SCORING_ROWS:
        raise ValueError(
            f"The scores would come from {scored.size} held-out row(s) of nonzero "
            f"weight; TreeInner needs at least {MIN_SCORING_ROWS} (a score is a "
            "sum over them, and too few leave only the noise of their residuals "
            f"and no standard error). {fix}, or fewer rows of zero weight."
        )


def make_jobs(splits, *, y, classifier, es_reader, seeds) -> list[SplitJob]:
    """One job per split, with early-stopping rows carved out of its training part.

    With ``es_reader`` (the plan's reader, or None for no early stopping),
    ``EARLY_STOPPING_FRACTION`` of each training part, stratified for
    classifiers and seeded by that split's ``seeds`` entry, stops the booster.
    """
    jobs = []
    for i, ((train, test), seed) in enumerate(zip(splits, seeds, strict=True)):
        if es_reader is None:
            jobs.append(SplitJob(i, train, test))
            continue
        try:
            fit_rows, es_rows = train_test_split(
                train,
                test_size=EARLY_STOPPING_FRACTION,
                stratify=y[train] if classifier else None,
                random_state=int(seed),
            )
        except ValueError as e:
            raise ValueError(
                f"Cannot set aside {EARLY_STOPPING_FRACTION:.0%} of the "
                f"{train.size} training rows of split {i} for early stopping: "
                f"{e} Pass more rows, or turn early stopping off."
            ) from e
        if classifier:
            missing = np.setdiff1d(np.unique(y), y[fit_rows])
            if missing.size:
                raise ValueError(
                    f"After setting aside early-stopping rows, the training rows "
                    f"of split {i} lack classes {missing.tolist()}. Pass more "
                    "rows per class, or turn early stopping off."
                )
        jobs.append(SplitJob(i, np.sort(fit_rows), test, np.sort(es_rows)))
    return jobs


# -- fitting and scoring -----------------------------------------------------------
def _fit(est, plan: CrossFitPlan, job: SplitJob) -> None:
    """Fit ``est`` on the job's training rows, stopping early on its own rows."""
    X, y = plan.X, plan.y
    X_fit, y_fit = _safe_indexing(X, job.train), y[job.train]
    params = _check_method_params(X, plan.fit_params, job.train)
    if job.es_rows is None:
        est.fit(X_fit, y_fit, **params)
        return
    rows = job.es_rows
    X_es, y_es = _safe_indexing(X, rows), y[rows]
    w_all = plan.fit_params.get(plan.weight_key)
    w_es = None if w_all is None else np.asarray(w_all)[rows]
    final = est
    if isinstance(est, Pipeline):
        # Fit the steps before the booster, then hand it the transformed
        # early-stopping rows, which Pipeline.fit cannot do.
        per_step = {
            name: _check_method_params(X, step_params, job.train)
            for name, step_params in plan.step_params.items()
        }
        for name, step in est.steps[:-1]:
            if step is None or step == "passthrough":
                continue
            X_fit = step.fit_transform(X_fit, y_fit, **per_step.get(name, {}))
            X_es = step.transform(X_es)
        final, params = est.steps[-1][1], per_step[est.steps[-1][0]]
    es_params = plan.es_reader.early_stopping_fit_params(
        final, X_es, y_es, sample_weight=w_es, fit_params=params
    )
    final.fit(X_fit, y_fit, **params, **es_params)


def _input_columns(pre, n_out, n_in, names_in):
    """Index of the input feature behind each column the booster sees."""
    try:
        names_out = [str(n) for n in pre.get_feature_names_out()]
    except (AttributeError, NotFittedError, ValueError, TypeError):
        names_out = None
    if names_out is None:
        if n_out == n_in:
            return np.arange(n_in)
        detail = f"{n_out} columns without names"
    else:
        names = (
            [str(n) for n in names_in]
            if names_in is not None
            else [f"x{i}" for i in range(n_in)]
        )
        position = {name: i for i, name in enumerate(names)}
        index = []
        for name in names_out:
            if name not in position:
                name = name.partition("__")[2]  # ColumnTransformer's prefix
            index.append(position.get(name, -1))
        index = np.asarray(index, dtype=np.int64)
        if (
            index.size == n_in
            and index.min(initial=0) >= 0
            and np.array_equal(np.sort(index), np.arange(n_in))
        ):
            return index
        detail = f"columns {names_out[:6]}{'...' if n_out > 6 else ''}"
    raise ValueError(
        f"The Pipeline's steps before the booster turn the {n_in} input features "
        f"into {detail}, which do not map one-to-one to the input features. "
        "TreeInnerSelector scores and selects input features, so those steps must "
        "keep one column per feature (imputers, scalers, OrdinalEncoder). Use the "
        "booster's native categorical support instead of one-hot encoding, or "
        "select on the transformed data."
    )


def score_features(
    est,
    X,
    y,
    *,
    sample_weight,
    attribution,
    n_features_in,
    feature_names_in,
    verbose=0,
):
    """Per-row TreeInner terms of every input feature of ``est`` on (X, y).

    Returns an array of shape (n_rows, n_features_in): ``tree_inner(...,
    per_sample=True)`` mapped back to the input features; its column sums
    are the scores.
    """
    kwargs = {
        "attribution": attribution,
        "sample_weight": sample_weight,
        "per_sample": True,
        "verbose": verbose,
    }
    if isinstance(est, Pipeline) and len(est.steps) > 1:
        pre, model = est[:-1], est.steps[-1][1]
        raw = tree_inner(model, pre.transform(X), y, **kwargs)
        z = np.zeros((raw.shape[0], n_features_in))
        columns = _input_columns(pre, raw.shape[1], n_features_in, feature_names_in)
        z[:, columns] = raw
        return z
    return tree_inner(final_step(est), X, y, **kwargs)


def clone_estimator(estimator):
    """``sklearn.base.clone``, or an unfitted copy where a booster breaks clone.

    CatBoost 1.2.10 returns copies of list parameters (``cat_features``) from
    ``get_params``, which ``clone``'s identity check refuses (catboost issue
    #3078); an unfitted copy with the same parameters is then made with
    ``copy.deepcopy`` (fitting resets a CatBoost model).
    """
    try:
        return clone(estimator)
    except RuntimeError as e:
        if "Cannot clone object" not in str(e):
            raise
        import copy

        return copy.deepcopy(estimator)


def _set_threads(est, threads):
    """Give the booster ``threads`` threads, unless it was given fewer (rule 4).

    A negative setting counts in joblib's way (-1 every core, -2 all but
    one), so ``n_jobs=-2`` on 2 cores is one thread and is kept.
    """
    from ._threads import machine_cores

    final = final_step(est)
    key = reader_class(final).thread_parameter
    if key is None:  # no such setting (scikit-learn's boosters)
        return
    current = final.get_params(deep=False).get(key)  # CatBoost omits unset ones
    if current is not None and current < 0:
        current = max(1, machine_cores() + 1 + current)
    if not current or current > threads:
        final.set_params(**{key: threads})


def fit_and_score(plan: CrossFitPlan, job: SplitJob):
    """Fit a clone on one split's training rows and score its held-out rows.

    Returns the split's index, the fitted clone, the per-row contributions
    on its held-out rows (n_test, n_features) and the seconds it took.
    """
    start = time.perf_counter()
    est = clone_estimator(plan.estimator)
    if final_step(est) is est:  # X reaches the booster as given
        reader_class(est).prepare_estimator(est, plan.X)
    if plan.threads is not None:
        _set_threads(est, plan.threads)
    w_test = None if plan.sample_weight is None else plan.sample_weight[job.test]
    # OpenMP's limit is per thread; BLAS's is per process and is set once by
    # run_splits (splits may run in threads here).
    with threadpool_limits(limits=plan.threads, user_api="openmp"):
        _fit(est, plan, job)
        contributions = score_features(
            est,
            _safe_indexing(plan.X, job.test),
            plan.y[job.test],
            sample_weight=w_test,
            attribution=plan.attribution,
            n_features_in=plan.n_features_in,
            feature_names_in=plan.feature_names_in,
            verbose=plan.verbose,
        )
    return job.index, est, contributions, time.perf_counter() - start


def _write(bar, line: str) -> None:
    """Print ``line`` to stderr without breaking a tqdm bar in progress."""
    write = getattr(bar, "write", None)
    if write is not None:
        write(line, file=sys.stderr)
    else:
        print(line, file=sys.stderr, flush=True)


def run_splits(plan: CrossFitPlan, jobs, *, n_jobs, verbose, name):
    """Fit and score every split, in parallel if asked; results in split order.

    Returns the fitted estimators and, per split, the per-row contributions
    on its held-out rows (n_test, n_features), whose column sums are the
    split's scores.
    ``name`` prefixes the progress bar and lines (the selector's class name).
    """
    final = final_step(plan.estimator)
    threads = plan_threads(
        len(jobs),
        n_jobs,
        threads_change_results=reader_class(final).threads_change_results(final),
    )
    n_workers = threads.workers
    plan = dataclasses.replace(
        plan,
        threads=threads.booster_threads,
        verbose=(
            verbose
            if verbose > 1 and plan.attribution == "treeshap" and n_workers == 1
            else 0
        ),
    )
    # Unordered: the bar advances as soon as any split finishes; the
    # results are put back in split order below.
    parallel = Parallel(
        n_jobs=n_workers,
        prefer=threads.prefer,
        return_as="generator_unordered" if n_workers > 1 else "generator",
    )
    # BLAS's thread limit is per process: set once here, not in the threads.
    with threadpool_limits(limits=plan.threads, user_api="blas"):
        results = parallel(delayed(fit_and_score)(plan, job) for job in jobs)
        bar = progress(
            results,
            total=len(jobs),
            desc=f"{name}: fitting and scoring",
            verbose=verbose,
            unit="split",
        )
        done = {}
        for i, est, contributions, seconds in bar:
            done[i] = (est, contributions)
            if verbose > 1:
                job = jobs[i]
                fitted_on = f"{job.train.size} rows" + (
                    f" (+{job.es_rows.size} for early stopping)"
                    if job.es_rows is not None
                    else ""
                )
                _write(
                    bar,
                    f"[{name}] split {i + 1}/{len(jobs)}: fitted on {fitted_on}, "
                    f"scored on {job.test.size} held-out rows, {seconds:.1f}s",
                )
    estimators = [done[i][0] for i in range(len(jobs))]
    contributions = [done[i][1] for i in range(len(jobs))]
    return estimators, contributions
