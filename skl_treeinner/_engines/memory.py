"""The in-memory engine: rows this process holds, indexed, fitted and scored here.

X may be anything a booster takes in memory (numpy, pandas, polars, scipy
sparse, ``xgboost.DMatrix``). PreDecomp and TreeInner run the shared
primitives over row chunks; the selector's splits are index pairs
(:mod:`skl_treeinner._splits`) fitted and scored by
:func:`~skl_treeinner._crossfit.run_splits`, in threads or joblib workers; the
per-row terms of all splits are pooled for the test
(:mod:`skl_treeinner._inference`).
"""

from __future__ import annotations

import copy
from typing import NamedTuple

import numpy as np
from sklearn.feature_selection import SelectorMixin
from sklearn.utils import _safe_indexing
from sklearn.utils._set_output import _get_output_config, _wrap_data_with_container
from sklearn.utils.validation import validate_data

from .. import _crossfit, _dependence, _inference, _splits
from .._cutoff import warn_if_empty
from .._feature_groups import group_statistics
from .._plan import (
    check_supported,
    make_cross_fit_plan,
    resolve_estimator,
    resolve_groups,
)
from .._readers import default_estimator, reader_class
from .._refit_curve import (
    CurveScoring,
    curve_results,
    k_grid,
    prefit_refusal,
    refit_points,
)
from .._scoring import (
    predecomp_rows,
    predecomp_scores,
    row_terms,
    shaped,
    treeshap_terms,
)
from .._validation import (
    check_fit_input,
    check_prefit,
    check_target_scale,
    check_target_suits_estimator,
    is_pandas_df,
    is_polars_df,
    warn_many_integer_classes,
)
from ._base import Engine

__all__ = ["IN_MEMORY", "InMemory"]


class InMemory(Engine):
    """Rows held by this process: the engine every other input falls back to."""

    name = "in-memory"

    def accepts(self, obj) -> bool:
        """Take anything: the dispatch asks the other engines first."""
        return True

    def default_estimator(self, classifier: bool, random_state):
        """Build XGBoost with the paper's settings (the registry's default)."""
        return default_estimator(classifier, random_state)

    def predecomp(self, reader, X, *, return_bias):
        """:func:`~skl_treeinner.predecomp` of rows in memory."""
        X, n, _, _ = reader.rows(X)
        values = predecomp_rows(reader, X, n)
        return shaped(values, reader.ensemble, return_bias=return_bias)

    def tree_inner(
        self,
        reader,
        X,
        y,
        *,
        attribution,
        sample_weight,
        per_iteration=False,
        per_sample=False,
        verbose=0,
    ):
        """:func:`~skl_treeinner.tree_inner` of rows in memory."""
        X, n, y, w = reader.rows(X, y, sample_weight)
        if per_sample:
            return row_terms(
                reader, X, n, y, w, attribution=attribution, verbose=verbose
            )
        if attribution == "treeshap":
            return treeshap_terms(
                reader, X, y, w, per_iteration=per_iteration, verbose=verbose
            )
        return predecomp_scores(
            reader, X, y, w, per_iteration=per_iteration, verbose=verbose
        )

    def fit_selector(self, plan) -> dict:
        """Check the rows, fit and score every split, test the pooled terms."""
        selector = plan.selector
        base, classifier = resolve_estimator(plan, self.default_estimator)
        final = check_supported(base)
        X, y, weight = check_fit_input(
            selector,
            plan.X,
            plan.y,
            plan.sample_weight,
            reader=reader_class(final) if final is base else None,
        )
        if plan.estimator is None and classifier:
            warn_many_integer_classes(y)
        y_fit = check_target_suits_estimator(y, classifier, final)
        if not classifier and not selector.prefit:
            reader = reader_class(final)
            check_target_scale(
                y_fit,
                weight,
                reader.max_target_spread,
                type(final).__name__,
                reader.target_offset_limit(final),
            )
        groups = plan.groups
        _splits.check_groups(groups, y.shape[0])
        fgroups = resolve_groups(selector)
        if plan.candidates is not None and selector.prefit:
            raise prefit_refusal(selector.max_features)

        if selector.prefit:
            tests = [np.arange(y.shape[0])]
            _splits.check_scoring_rows(tests, weight)
            check_prefit(selector, base)
            fitted = copy.deepcopy(base)
            scored = [
                _crossfit.score_features(
                    fitted,
                    X,
                    y,
                    sample_weight=weight,
                    attribution=selector.attribution,
                    n_features_in=selector.n_features_in_,
                    feature_names_in=getattr(selector, "feature_names_in_", None),
                    feature_groups=fgroups,
                )
            ]
            estimators = [fitted]
        else:
            if classifier:  # 0..K-1, as XGBoost requires
                labels, y_fit = np.unique(y_fit, return_inverse=True)
                y_fit = y_fit.astype(np.int64)
            cross_fit, split_params = make_cross_fit_plan(
                selector,
                base,
                X,
                y_fit,
                weight,
                sample_weight=plan.sample_weight,
                groups=groups,
                fit_params=plan.fit_params,
                feature_groups=fgroups,
            )
            splits = _splits.make_splits(
                X,
                y_fit,
                cv=selector.cv,
                validation_fraction=selector.validation_fraction,
                classifier=classifier,
                labels=np.unique(y) if classifier else None,
                groups=groups,
                split_params=split_params,
                seed=plan.split_seed,
            )
            jobs = _splits.make_jobs(
                splits,
                y=y_fit,
                classifier=classifier,
                es_reader=cross_fit.es_reader,
                seeds=plan.rng.randint(2**31 - 1, size=len(splits)),
            )
            tests = [job.test for job in jobs]
            _splits.check_scoring_rows(tests, weight)
            if final is base:  # what each split's copy is told, refused here first
                reader_class(final).prepare_estimator(
                    _crossfit.clone_estimator(base), cross_fit.X
                )
            _dependence.check_dependent_rows(
                X,
                y_fit,
                splits,
                classifier=classifier,
                grouped=groups is not None,
                what=f"cv={selector.cv!r}",
            )
            estimators, scored = _crossfit.run_splits(
                cross_fit,
                jobs,
                n_jobs=selector.n_jobs,
                verbose=selector.verbose,
                name=type(selector).__name__,
            )

        units = _dependence.test_units(
            y_fit,
            groups,
            splits=None if selector.prefit else splits,
            classifier=classifier,
        )
        pooled = _Pooled(y.shape[0], weight, groups if units == "groups" else None)
        fitted = {
            "estimators_": estimators,
            "estimator_": estimators[0],
            **_statistics(pooled, tests, scored, units=units, fgroups=fgroups),
        }
        if plan.candidates is not None:
            fitted["cv_results_"] = _curve(
                plan,
                cross_fit,
                jobs,
                pooled,
                y=y_fit,
                labels=labels if classifier else None,
                units=units,
                fgroups=fgroups,
            )
        return fitted

    def transform(self, selector, X):
        """Select columns, keeping data-frame dtypes under ``set_output``.

        The result goes into the container ``set_output`` asks for, as
        scikit-learn's own wrapper of ``transform`` would put it.
        """
        dense = _get_output_config("transform", estimator=selector)["dense"]
        if dense == "default" or not (is_pandas_df(X) or is_polars_df(X)):
            out = SelectorMixin.transform(selector, X)
        else:
            validate_data(selector, X, skip_check_array=True, reset=False)
            mask = selector.get_support()
            warn_if_empty(mask, stacklevel=3)
            out = _safe_indexing(X, np.flatnonzero(mask), axis=1)
            if dense == "pandas" and is_polars_df(out):
                out = out.to_pandas()
            elif dense == "polars" and is_pandas_df(out):
                import polars as pl

                out = pl.from_pandas(out)
        return _wrap_data_with_container("transform", out, X, selector)


class _Pooled(NamedTuple):
    """What pooling the splits' rows into the test's units needs beside the rows."""

    n_rows: int
    weight: object
    groups: object  # the row groups where the units are groups, else None


def _statistics(pooled: _Pooled, tests, scored, *, units, fgroups) -> dict:
    """Return the fitted statistics of the splits' ``scored`` rows ``tests``.

    The per-row terms of all splits are pooled into the test's units (rows,
    groups or time blocks; a row scored by several splits enters once), the
    columns and, with ``fgroups``, the groups' sums are tested.
    """
    contributions = [part.terms for part in scored]
    rows = _inference.pool_rows(
        pooled.n_rows, tests, contributions, pooled.weight, pooled.groups
    )
    # The groups' per-unit sums: linear, so the same rows or groups as the
    # columns' test.
    summed = None if fgroups is None else fgroups.sums(rows)
    if units == "blocks":
        if summed is not None:  # blocks long enough for the sums too
            width = rows.shape[1]
            summed = _dependence.block_sums(np.hstack([rows, summed]))[:, width:]
        rows = _dependence.block_sums(rows)
    test = _inference.one_sided_test(
        rows,
        _inference.pool_noise(
            pooled.n_rows, tests, [part.noise for part in scored], pooled.weight
        ),
    )
    split_scores = np.vstack([z.sum(axis=0) for z in contributions])
    fitted = {
        "split_scores_": split_scores,
        "scores_": split_scores.sum(axis=0),
        "scores_se_": test.se,
        "pvalues_": test.pvalues,
        "n_scored_rows_": test.n_rows,
        "test_units_": units,
    }
    if fgroups is not None:
        group_test = _inference.one_sided_test(
            summed,
            _inference.pool_noise(
                pooled.n_rows,
                tests,
                [part.group_noise for part in scored],
                pooled.weight,
            ),
        )
        fitted.update(group_statistics(fgroups, group_test))
    return fitted


def _curve(plan, cross_fit, jobs, pooled, *, y, labels, units, fgroups):
    """Return the honest refit curve's ``cv_results_`` (:mod:`.._refit_curve`).

    Per outer split: the candidates ranked on half of its training rows
    after fitting on the other half (:func:`~.._splits.inner_splits`), the
    test and cut-off the selector's own; then the booster refitted on the
    split's training rows with the top k candidates' columns, for every k
    of the grid, and scored on the split's held-out rows.
    """
    selector = plan.selector
    name = type(selector).__name__
    classifier = labels is not None
    pairs = _splits.inner_splits(
        jobs,
        y=y,
        classifier=classifier,
        labels=labels,
        groups=pooled.groups if units == "groups" else plan.groups,
        ordered=units == "blocks",
        seed=plan.rng.randint(2**31 - 1),
    )
    inner = _splits.make_jobs(
        pairs,
        y=y,
        classifier=classifier,
        es_reader=cross_fit.es_reader,
        seeds=plan.rng.randint(2**31 - 1, size=len(pairs)),
    )
    _, scored = _crossfit.run_splits(
        cross_fit,
        inner,
        n_jobs=selector.n_jobs,
        verbose=selector.verbose,
        name=f"{name} (refit curve's rankings)",
    )
    orders = [
        plan.candidates(
            _statistics(pooled, [job.test], [part], units=units, fgroups=fgroups)
        )
        for job, part in zip(inner, scored, strict=True)
    ]
    ks = k_grid(max(order.size for order in orders))
    scoring = CurveScoring.make(selector.scoring, labels)
    members = None if fgroups is None else fgroups.members
    keys, points = refit_points(orders, ks, members)
    tasks = [(jobs[j], np.asarray(cols, np.int64), scoring) for j, cols in points]
    scores = _crossfit.run_refits(
        cross_fit, tasks, n_jobs=selector.n_jobs, verbose=selector.verbose, name=name
    )
    done = dict(zip(points, scores, strict=True))
    return curve_results(ks, [[done[key] for key in row] for row in keys])


#: The one instance the dispatch uses.
IN_MEMORY = InMemory()
