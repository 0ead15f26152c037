"""Cross-fitting in memory: fit the booster on each split's rows, score the rest.

The in-memory engine describes the work once, as a
:class:`~skl_treeinner._engines._plan.FitSetup` (the booster, the rows, the fit
parameters with metadata routing already resolved) and one
:class:`~._splits.SplitJob` per split (which rows fit, which stop early,
which are scored); :func:`run_splits` runs the jobs, in parallel if
asked. Everything is at module level so that joblib can pickle it. Each split
is scored with the shared primitives (:func:`~skl_treeinner._scoring._sums.row_terms`).
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np
from sklearn.base import clone
from sklearn.pipeline import Pipeline
from sklearn.utils import _safe_indexing
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import _check_method_params
from threadpoolctl import threadpool_limits

from ..._readers import read_model, reader_class
from ..._scoring._noise import terms_and_noise
from ..._scoring._permutation import column_terms
from ..._scoring._pipeline_columns import input_columns
from ..._scoring._sums import HeldOutTerms, gradient_ratio
from ..._stats._refit_curve import Decoded, score_intercept, score_refit
from ..._utils._progress import progress, write_line
from .._plan import FitSetup, final_step
from ._splits import SplitJob
from ._threads import plan_threads, threads_of_setting

__all__ = [
    "clone_estimator",
    "fit_and_score",
    "refit_and_score",
    "resample_seed",
    "run_refits",
    "run_splits",
    "score_features",
]


def _fit(est, setup: FitSetup, job: SplitJob) -> None:
    """Fit ``est`` on the job's training rows, stopping early on its own rows."""
    X, y = setup.X, setup.y
    X_fit, y_fit = _safe_indexing(X, job.train), y[job.train]
    params = _check_method_params(X, setup.fit_params, job.train)
    if job.es_rows is None:
        est.fit(X_fit, y_fit, **params)
        return
    rows = job.es_rows
    X_es, y_es = _safe_indexing(X, rows), y[rows]
    w_all = setup.fit_params.get(setup.weight_key)
    w_es = None if w_all is None else np.asarray(w_all)[rows]
    final = est
    if isinstance(est, Pipeline):
        # Fit the steps before the booster, then hand it the transformed
        # early-stopping rows, which Pipeline.fit cannot do.
        per_step = {
            name: _check_method_params(X, step_params, job.train)
            for name, step_params in setup.step_params.items()
        }
        for name, step in est.steps[:-1]:
            if step is None or step == "passthrough":
                continue
            X_fit = step.fit_transform(X_fit, y_fit, **per_step.get(name, {}))
            X_es = step.transform(X_es)
        final, params = est.steps[-1][1], per_step[est.steps[-1][0]]
    es_params = setup.es_reader.early_stopping_fit_params(
        final, X_es, y_es, sample_weight=w_es, fit_params=params
    )
    final.fit(X_fit, y_fit, **params, **es_params)


def score_features(
    est,
    X,
    y,
    *,
    sample_weight,
    attribution,
    n_features_in,
    feature_names_in,
    feature_groups=None,
    verbose=0,
    resample_seed=None,
    reader=None,
):
    """Per-row TreeInner terms of every input feature of ``est`` on (X, y).

    Returns a :class:`~skl_treeinner._scoring._sums.HeldOutTerms`: the
    per-row terms mapped back to the input features (a Pipeline's output
    columns added into the input column they come from,
    :func:`~skl_treeinner._scoring._pipeline_columns.input_columns`) and the
    target's noise in them (the test's floor), also of the sums of
    ``feature_groups``
    (a :class:`~skl_treeinner._stats._feature_groups.FeatureGroups`) where
    given. With ``resample_seed`` (the test of a column), also the terms'
    paired differences with each column resampled among these rows
    (:func:`~skl_treeinner._scoring._permutation.column_terms`), seeded by it.
    ``reader``: the booster's, where the caller has read it already.
    """
    into = pre = None
    if isinstance(est, Pipeline) and len(est.steps) > 1:
        pre = est[:-1]
        X = pre.transform(X)
    if reader is None:
        reader = read_model(final_step(est))
    X, n, y_rows, w = reader.rows(X, y, sample_weight)
    if pre is not None:
        width = reader.ensemble.n_features
        into = input_columns(pre, width, n_features_in, feature_names_in)
    if resample_seed is not None:
        return column_terms(
            reader, X, n, y_rows, w, attribution=attribution, into=into,
            feature_groups=feature_groups, seed=resample_seed,
        )  # fmt: skip
    sums = [into]
    if feature_groups is not None:
        sums.append(
            feature_groups.sums if into is None else into.then(feature_groups.sums)
        )
    raw, noise = terms_and_noise(
        reader, X, n, y_rows, w, attribution=attribution, sums=sums, verbose=verbose
    )
    terms = raw if into is None else into(raw)
    group_noise = noise[1] if feature_groups is not None else None
    return HeldOutTerms(terms, noise[0], group_noise)


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
    final = final_step(est)
    key = reader_class(final).thread_parameter
    if key is None:  # no such setting (scikit-learn's boosters)
        return
    current = final.get_params(deep=False).get(key)  # CatBoost omits unset ones
    if current is not None:
        current = threads_of_setting(current)
    if not current or current > threads:
        final.set_params(**{key: threads})


#: Above this ratio a booster is worse than its intercept on its own training
#: rows (a model that cannot split sits at 1 to rounding).
DIVERGED_RATIO = 1.01
#: Training rows the convergence check reads at most (a diverged booster's
#: ratio is orders of magnitude off, so a sample tells).
CONVERGENCE_ROWS = 2000


def check_converged(est, setup: FitSetup, job: SplitJob, *, reader=None) -> None:
    """Refuse a booster worse on its own training rows than its intercept alone.

    Boosting brings the training rows' gradients down; where Σ w g² at the
    fitted margins exceeds Σ w g² at the intercept
    (:func:`~skl_treeinner._scoring._sums.gradient_ratio`), the booster diverged
    and its scores on held-out rows would be noise read as findings
    (docs/how-it-works.md, "Inputs that are refused, and why", has the ratios
    of fitted and diverged boosters). Only for losses whose gradient is
    (mean - y) (squared error, log-loss, softmax, Poisson), where Σ g² falls
    with the loss: for gamma, g = 1 - y/μ, and a good fit can raise it.
    """
    final = final_step(est)
    if reader is None:
        reader = read_model(final)
    if not reader.ensemble.objective.gradient_is_residual:
        return  # Σ g² tracks the loss only where g is (mean - y)
    rows = job.train
    if rows.size > CONVERGENCE_ROWS:  # evenly spread: the ratio, not every row
        rows = rows[np.linspace(0, rows.size - 1, CONVERGENCE_ROWS).astype(np.int64)]
    X_fit = _safe_indexing(setup.X, rows)
    if isinstance(est, Pipeline) and len(est.steps) > 1:
        X_fit = est[:-1].transform(X_fit)
    w_all = setup.fit_params.get(setup.weight_key)
    w_fit = None if w_all is None else np.asarray(w_all)[rows]
    X_r, n, y_r, w_r = reader.rows(X_fit, setup.y[rows], w_fit)
    ratio = gradient_ratio(reader, X_r, n, y_r, w_r)
    if ratio > DIVERGED_RATIO:
        raise ValueError(
            f"The {type(final).__name__} fitted on split {job.index + 1} is worse "
            "on its own training rows than its intercept alone (their squared "
            f"gradients sum to {ratio:.3g} times the intercept's): it diverged, "
            "and its scores would be noise. Lower the learning rate to at most "
            "1, or rescale the target, and fit again."
        )


def fit_and_score(setup: FitSetup, job: SplitJob):
    """Fit a clone on one split's training rows and score its held-out rows.

    Returns the split's index, the fitted clone, its held-out rows scored
    (:class:`~skl_treeinner._scoring._sums.HeldOutTerms`) and the seconds it
    took.
    """
    start = time.perf_counter()
    est = clone_estimator(setup.estimator)
    final = final_step(est)  # X reaches it as given, unless a Pipeline's steps
    reader_class(final).prepare_estimator(final, setup.X if final is est else None)
    if setup.threads is not None:
        _set_threads(est, setup.threads)
    w_held = None if setup.sample_weight is None else setup.sample_weight[job.held_out]
    # OpenMP's limit is per thread; BLAS's is per process and is set once by
    # run_splits (splits may run in threads here).
    with threadpool_limits(limits=setup.threads, user_api="openmp"):
        _fit(est, setup, job)
        reader = read_model(final_step(est))  # read once, for the check and scoring
        check_converged(est, setup, job, reader=reader)
        scored = score_features(
            est,
            _safe_indexing(setup.X, job.held_out),
            setup.y[job.held_out],
            sample_weight=w_held,
            attribution=setup.attribution,
            n_features_in=setup.n_features_in,
            feature_names_in=setup.feature_names_in,
            feature_groups=setup.feature_groups,
            verbose=setup.verbose,
            resample_seed=resample_seed(setup.resample_seed, job.index),
            reader=reader,
        )
    return job.index, est, scored, time.perf_counter() - start


def resample_seed(seed, index):
    """Return split ``index``'s seed of the column test's draws, or None (no test).

    ``seed``: the plan's seed of the draws (``FitSetup.resample_seed``), or
    None for the test of the model's use.
    """
    return None if seed is None else [seed, index]


def run_splits(setup: FitSetup, jobs, *, n_jobs, verbose, name):
    """Fit and score every split, in parallel if asked; results in split order.

    Returns the fitted estimators and, per split, its held-out rows scored
    (:class:`~skl_treeinner._scoring._sums.HeldOutTerms`: per-row terms, whose
    column sums are the split's scores, and their target noise).
    ``name`` prefixes the progress bar and lines (the selector's class name).
    """
    final = final_step(setup.estimator)
    threads = plan_threads(
        len(jobs),
        n_jobs,
        threads_change_results=reader_class(final).threads_change_results(final),
    )
    n_workers = threads.workers
    setup = dataclasses.replace(
        setup,
        threads=threads.booster_threads,
        verbose=(
            verbose
            if verbose > 1 and setup.attribution == "treeshap" and n_workers == 1
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
    with threadpool_limits(limits=setup.threads, user_api="blas"):
        results = parallel(delayed(fit_and_score)(setup, job) for job in jobs)
        bar = progress(
            results,
            total=len(jobs),
            desc=f"{name}: fitting and scoring",
            verbose=verbose,
            unit="split",
        )
        done = {}
        for i, est, scored, seconds in bar:
            done[i] = (est, scored)
            if verbose > 1:
                job = jobs[i]
                fitted_on = f"{job.train.size} rows" + (
                    f" (+{job.es_rows.size} for early stopping)"
                    if job.es_rows is not None
                    else ""
                )
                write_line(
                    bar,
                    f"[{name}] split {i + 1}/{len(jobs)}: fitted on {fitted_on}, "
                    f"scored on {job.held_out.size} held-out rows, {seconds:.1f}s",
                )
    estimators = [done[i][0] for i in range(len(jobs))]
    scored = [done[i][1] for i in range(len(jobs))]
    return estimators, scored


def refit_and_score(setup: FitSetup, job: SplitJob, columns, scoring):
    """Refit a clone on the job's training rows with ``columns`` only; score its test.

    The refit curve's step (:mod:`skl_treeinner._stats._refit_curve`): early
    stopping on the job's own carved rows, as the selector's fits; no
    columns, the intercept alone (``scoring.dummy``). ``scoring`` holds the
    scorer, the dummy and, for a classifier, the user's class labels (the
    refit is scored in them: :class:`~skl_treeinner._stats._refit_curve.Decoded`).
    Returns the held-out score.
    """
    labels = scoring.labels
    y, w = setup.y, setup.sample_weight
    y_held = y[job.held_out] if labels is None else labels[y[job.held_out]]
    w_held = None if w is None else w[job.held_out]
    if len(columns) == 0:
        rows = job.train
        if job.es_rows is not None:
            rows = np.concatenate([rows, job.es_rows])
        y_rows = y[rows] if labels is None else labels[y[rows]]
        w_rows = None if w is None else w[rows]
        return score_intercept(scoring, y_rows, w_rows, y_held, w_held)
    sub = dataclasses.replace(
        setup,
        X=_safe_indexing(setup.X, columns, axis=1),
        n_features_in=len(columns),
        feature_names_in=None,
        fit_params=_subset_fit_params(setup, columns),
    )
    est = clone_estimator(setup.estimator)
    final = final_step(est)
    reader_class(final).prepare_estimator(final, sub.X if final is est else None)
    if setup.threads is not None:
        _set_threads(est, setup.threads)
    with threadpool_limits(limits=setup.threads, user_api="openmp"):
        try:
            _fit(est, sub, job)
        except Exception as e:
            raise ValueError(
                f"The refit curve (max_features='best' or '1se') refits "
                f"{type(est).__name__} on {len(columns)} of the columns of X, "
                f"which failed: {str(e).rstrip('.')}. Steps or parameters that "
                "name X's columns by position or name must take any subset of "
                "them (in a ColumnTransformer, select by dtype with "
                "make_column_selector); or choose k yourself (max_features=int)."
            ) from e
        model = est if labels is None else Decoded(est, labels)
        X_held = _safe_indexing(sub.X, job.held_out)
        return score_refit(scoring.scorer, model, X_held, y_held, w_held)


def _subset_fit_params(setup: FitSetup, columns):
    """Return the fit parameters for a refit on ``columns`` of X only (the reader's)."""
    return reader_class(final_step(setup.estimator)).fit_params_for_columns(
        setup.fit_params,
        columns,
        feature_names=setup.feature_names_in,
        take=_take_columns,
    )


def _take_columns(X, columns):
    return _safe_indexing(X, columns, axis=1)


def run_refits(setup: FitSetup, tasks, *, n_jobs, verbose, name):
    """Run :func:`refit_and_score` on ``(job, columns, scoring)`` tasks, in order.

    In parallel as :func:`run_splits` runs the splits (the same setup of
    workers and booster threads, over the tasks).
    """
    final = final_step(setup.estimator)
    threads = plan_threads(
        len(tasks),
        n_jobs,
        threads_change_results=reader_class(final).threads_change_results(final),
    )
    setup = dataclasses.replace(setup, threads=threads.booster_threads, verbose=0)
    parallel = Parallel(
        n_jobs=threads.workers, prefer=threads.prefer, return_as="generator"
    )
    with threadpool_limits(limits=setup.threads, user_api="blas"):
        calls = (delayed(refit_and_score)(setup, *task) for task in tasks)
        bar = progress(
            parallel(calls),
            total=len(tasks),
            desc=f"{name}: refit curve",
            verbose=verbose,
            unit="refit",
        )
        return np.asarray(list(bar), dtype=np.float64)
