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
from .._plan import (
    check_supported,
    final_step,
    make_fit_setup,
    resolve_estimator,
)
from .._readers import default_estimator, reader_class
from .._scoring import (
    predecomp_rows,
    predecomp_scores,
    row_terms,
    shaped,
    treeshap_terms,
)
from .._validation import (
    check_fit_input,
    check_target_scale,
    check_target_suits_estimator,
    is_pandas_df,
    is_polars_df,
    warn_many_integer_classes,
)
from ._base import CheckedInput, Engine, SplitRun, UnitTests

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

    def check_input(self, plan) -> CheckedInput:
        """Check X, y, the weights and the row groups as scikit-learn does."""
        base, classifier = resolve_estimator(plan, self.default_estimator)
        final = check_supported(base)
        X, y, weight, n_features_in, names = check_fit_input(
            plan.name,
            plan.X,
            plan.y,
            plan.sample_weight,
            reader=reader_class(final) if final is base else None,
        )
        if plan.estimator is None and classifier:
            warn_many_integer_classes(y)
        y_fit = check_target_suits_estimator(y, classifier, final)
        if not classifier and not plan.prefit:
            reader = reader_class(final)
            check_target_scale(
                y_fit,
                weight,
                reader.max_target_spread,
                type(final).__name__,
                reader.target_offset_limit(final),
            )
        _splits.check_groups(plan.groups, y.shape[0])
        rows = _Rows(X, y, y_fit, weight)
        return CheckedInput(base, classifier, n_features_in, names, rows)

    def prepare_splits(self, plan, checked, feature_groups) -> SplitRun:
        """Draw the splits as index pairs and check their rows (:mod:`._splits`)."""
        if plan.prefit:
            return _PrefitRun(plan, checked, feature_groups)
        return _CrossFitRun(plan, checked, feature_groups)

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


class _Rows(NamedTuple):
    """The checked rows: X, y as given and as fitted (classes 0..K-1), weights."""

    X: object
    y: np.ndarray
    y_fit: np.ndarray
    weight: np.ndarray | None


class _Pooled(NamedTuple):
    """What pooling the splits' rows into the test's units needs beside the rows."""

    n_rows: int
    weight: object
    groups: object  # the row groups where the units are groups, else None


def _unit_tests(pooled: _Pooled, tests, scored, *, units, fgroups) -> UnitTests:
    """Test the splits' ``scored`` rows ``tests``, pooled into the test's units.

    The per-row terms of all splits are pooled into the units (rows, groups
    or time blocks; a row scored by several splits enters once), the
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
    noise = [part.noise for part in scored]
    test = _inference.one_sided_test(
        rows, _inference.pool_noise(pooled.n_rows, tests, noise, pooled.weight)
    )
    group_test = None
    if fgroups is not None:
        noise = [part.group_noise for part in scored]
        group_test = _inference.one_sided_test(
            summed, _inference.pool_noise(pooled.n_rows, tests, noise, pooled.weight)
        )
    split_scores = np.vstack([z.sum(axis=0) for z in contributions])
    return UnitTests(test, group_test, split_scores, split_scores.sum(axis=0), units)


class _PrefitRun(SplitRun):
    """A prefit model scored on all the rows given (``prefit=True``)."""

    def __init__(self, plan, checked, fgroups):
        self.plan, self.checked, self.fgroups = plan, checked, fgroups
        rows = checked.rows
        self.tests = [np.arange(rows.y.shape[0])]
        _splits.check_scoring_rows(self.tests, rows.weight)

    def fit_and_score(self):
        """Score a copy of the prefit model on every row."""
        rows, checked = self.checked.rows, self.checked
        fitted = copy.deepcopy(checked.estimator)
        scored = _crossfit.score_features(
            fitted,
            rows.X,
            rows.y,
            sample_weight=rows.weight,
            attribution=self.plan.attribution,
            n_features_in=checked.n_features_in,
            feature_names_in=checked.feature_names_in,
            feature_groups=self.fgroups,
        )
        return [fitted], [scored]

    def test(self, scored):
        """Test the rows (or their groups, or time blocks)."""
        rows, groups = self.checked.rows, self.plan.groups
        units = _dependence.test_units(
            rows.y_fit, groups, splits=None, classifier=self.checked.classifier
        )
        pooled = _Pooled(
            rows.y.shape[0], rows.weight, groups if units == "groups" else None
        )
        return _unit_tests(
            pooled, self.tests, scored, units=units, fgroups=self.fgroups
        )


class _CrossFitRun(SplitRun):
    """Index pairs fitted and scored in this process (:mod:`.._crossfit`)."""

    def __init__(self, plan, checked, fgroups):
        self.plan, self.fgroups = plan, fgroups
        base, classifier, rows = checked.estimator, checked.classifier, checked.rows
        y_fit = rows.y_fit
        if classifier:  # 0..K-1, as XGBoost requires
            self.labels, y_fit = np.unique(y_fit, return_inverse=True)
            y_fit = y_fit.astype(np.int64)
        self.y_fit, self.classifier = y_fit, classifier
        self.setup, split_params = make_fit_setup(
            plan,
            base,
            rows.X,
            y_fit,
            rows.weight,
            n_features_in=checked.n_features_in,
            feature_names_in=checked.feature_names_in,
            groups=plan.groups,
            feature_groups=fgroups,
        )
        self.splits = _splits.make_splits(
            rows.X,
            y_fit,
            cv=plan.cv,
            validation_fraction=plan.validation_fraction,
            classifier=classifier,
            labels=np.unique(rows.y) if classifier else None,
            groups=plan.groups,
            split_params=split_params,
            seed=plan.split_seed,
        )
        self.jobs = _splits.make_jobs(
            self.splits,
            y=y_fit,
            classifier=classifier,
            es_reader=self.setup.es_reader,
            seeds=plan.rng.randint(2**31 - 1, size=len(self.splits)),
        )
        _splits.check_scoring_rows([job.test for job in self.jobs], rows.weight)
        final = final_step(base)
        if final is base:  # what each split's copy is told, refused here first
            reader_class(final).prepare_estimator(
                _crossfit.clone_estimator(base), self.setup.X
            )
        _dependence.check_dependent_rows(
            rows.X,
            y_fit,
            self.splits,
            classifier=classifier,
            grouped=plan.groups is not None,
            what=f"cv={plan.cv!r}",
        )
        self.units = _dependence.test_units(
            y_fit, plan.groups, splits=self.splits, classifier=classifier
        )
        self.pooled = _Pooled(
            y_fit.shape[0],
            rows.weight,
            plan.groups if self.units == "groups" else None,
        )

    def _run(self, jobs, name):
        plan = self.plan
        return _crossfit.run_splits(
            self.setup, jobs, n_jobs=plan.n_jobs, verbose=plan.verbose, name=name
        )

    def fit_and_score(self):
        """Fit and score every split, in threads or joblib workers."""
        return self._run(self.jobs, self.plan.name)

    def test(self, scored):
        """Pool all splits' held-out rows into the test's units and test them."""
        tests = [job.test for job in self.jobs]
        return _unit_tests(
            self.pooled, tests, scored, units=self.units, fgroups=self.fgroups
        )

    def rankings(self):
        """Fit on half of each split's training rows, test on the other half."""
        plan, units = self.plan, self.units
        pairs = _splits.inner_splits(
            self.jobs,
            y=self.y_fit,
            classifier=self.classifier,
            labels=self.labels,
            groups=self.pooled.groups if units == "groups" else plan.groups,
            ordered=units == "blocks",
            seed=plan.rng.randint(2**31 - 1),
        )
        inner = _splits.make_jobs(
            pairs,
            y=self.y_fit,
            classifier=self.classifier,
            es_reader=self.setup.es_reader,
            seeds=plan.rng.randint(2**31 - 1, size=len(pairs)),
        )
        _, scored = self._run(inner, f"{plan.name} (refit curve's rankings)")
        return [
            _unit_tests(
                self.pooled, [job.test], [part], units=units, fgroups=self.fgroups
            )
            for job, part in zip(inner, scored, strict=True)
        ]

    def refit_scores(self, points, scoring):
        """Refit on each split's training rows with the points' columns, in parallel."""
        plan = self.plan
        tasks = [
            (self.jobs[j], np.asarray(cols, np.int64), scoring) for j, cols in points
        ]
        return _crossfit.run_refits(
            self.setup, tasks, n_jobs=plan.n_jobs, verbose=plan.verbose, name=plan.name
        )


#: The one instance the dispatch uses.
IN_MEMORY = InMemory()
