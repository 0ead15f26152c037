"""The in-memory engine's splits: fitted, scored, pooled and tested here.

:class:`CrossFitRun` draws the splits as index pairs (:mod:`._splits`), runs
them with :mod:`._crossfit` and pools the per-row terms of all splits into
the test's units (rows, groups or time blocks; a row scored by several
splits enters once); :class:`PrefitRun` scores a prefit model on every row.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import NamedTuple

import numpy as np

from ..._readers import reader_class
from ..._stats import _dependence, _inference
from .._base import SplitRun, UnitTests
from .._plan import final_step, make_fit_setup
from ._crossfit import (
    clone_estimator,
    resample_seed,
    run_refits,
    run_splits,
    score_features,
)
from ._splits import check_scoring_rows, inner_splits, make_jobs, make_splits

__all__ = ["CrossFitRun", "PrefitRun", "Rows"]


class Rows(NamedTuple):
    """The checked rows: X, y as given and as fitted (classes 0..K-1), weights."""

    X: object
    y: np.ndarray
    y_fit: np.ndarray
    weight: np.ndarray | None


class _Pooled(NamedTuple):
    """What pooling the splits' rows into the test's units needs beside the rows."""

    n_rows: int
    weight: object
    #: The row groups (the units are then groups: ``test_units``), or None.
    groups: object


def _unit_tests(pooled: _Pooled, held_out, scored, *, units, fgroups) -> UnitTests:
    """Test the splits' ``scored`` rows ``held_out``, pooled into the test's units.

    The per-row terms of all splits are pooled into the units (rows, groups
    or time blocks; a row scored by several splits enters once), the
    columns and, with ``fgroups``, the groups' sums are tested.
    """
    contributions = [part.terms for part in scored]
    column = scored[0].tested is not None  # the test of a column
    tested = [part.tested for part in scored] if column else contributions
    rows = _inference.pool_rows(
        pooled.n_rows, held_out, tested, pooled.weight, pooled.groups
    )
    summed = None
    if fgroups is not None and column:  # members resampled together
        summed = _inference.pool_rows(
            pooled.n_rows, held_out, [part.group_tested for part in scored],
            pooled.weight, pooled.groups,
        )  # fmt: skip
    elif fgroups is not None:
        # The groups' per-unit sums: linear, so the same rows or groups as
        # the columns' test.
        summed = fgroups.sums(rows)
    if units == "blocks":
        if summed is not None:  # blocks long enough for the sums too
            width = rows.shape[1]
            summed = _dependence.block_sums(np.hstack([rows, summed]))[:, width:]
        rows = _dependence.block_sums(rows)
    noise = [part.noise for part in scored]
    # Differences of terms: their rounding is that of the terms' size.
    scale = group_scale = None
    if column:
        terms = _inference.pool_rows(
            pooled.n_rows, held_out, contributions, pooled.weight, pooled.groups
        )
        scale = np.abs(terms).max(axis=0, initial=0.0)
        if fgroups is not None:
            group_scale = np.abs(fgroups.sums(terms)).max(axis=0, initial=0.0)
    test = _inference.one_sided_test(
        rows,
        _inference.pool_noise(pooled.n_rows, held_out, noise, pooled.weight),
        scale,
    )
    group_test = None
    if fgroups is not None:
        noise = [part.group_noise for part in scored]
        group_test = _inference.one_sided_test(
            summed,
            _inference.pool_noise(pooled.n_rows, held_out, noise, pooled.weight),
            group_scale,
        )
    split_scores = np.vstack([z.sum(axis=0) for z in contributions])
    null = None
    if column:
        null = np.sum([part.null for part in scored], axis=0)
    return UnitTests(
        test, group_test, split_scores, split_scores.sum(axis=0), units, null
    )


class PrefitRun(SplitRun):
    """A prefit model scored on all the rows given (``prefit=True``)."""

    def __init__(self, plan, checked, fgroups):
        self.plan, self.checked, self.fgroups = plan, checked, fgroups
        self.seed = plan.split_seed if plan.test == "column" else None
        rows = checked.rows
        self.held_out = [np.arange(rows.y.shape[0])]
        check_scoring_rows(self.held_out, rows.weight)

    def fit_and_score(self):
        """Score a copy of the prefit model on every row."""
        rows, checked = self.checked.rows, self.checked
        fitted = copy.deepcopy(checked.estimator)
        scored = score_features(
            fitted,
            rows.X,
            rows.y,
            sample_weight=rows.weight,
            attribution=self.plan.attribution,
            n_features_in=checked.n_features_in,
            feature_names_in=checked.feature_names_in,
            feature_groups=self.fgroups,
            resample_seed=resample_seed(self.seed, 0),
        )
        return [fitted], [scored]

    def test(self, scored):
        """Test the rows (or their groups, or time blocks)."""
        rows, groups = self.checked.rows, self.plan.groups
        units = _dependence.test_units(
            rows.y_fit, groups, splits=None, classifier=self.checked.classifier
        )
        pooled = _Pooled(rows.y.shape[0], rows.weight, groups)
        return _unit_tests(
            pooled, self.held_out, scored, units=units, fgroups=self.fgroups
        )


class CrossFitRun(SplitRun):
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
        self.splits = make_splits(
            rows.X,
            y_fit,
            cv=plan.cv,
            validation_fraction=plan.validation_fraction,
            classifier=classifier,
            labels=np.unique(rows.y) if classifier else None,
            groups=plan.groups,
            split_params=split_params,
            seed=plan.split_seed,
            chained=plan.chained,
        )
        self.jobs = make_jobs(
            self.splits,
            y=y_fit,
            classifier=classifier,
            es_reader=self.setup.es_reader,
            seeds=plan.rng.randint(2**31 - 1, size=len(self.splits)),
        )
        check_scoring_rows([job.held_out for job in self.jobs], rows.weight)
        # What each split's copy is told, refused here first.
        copy = clone_estimator(base)
        final = final_step(copy)
        X = self.setup.X if final is copy else None
        reader_class(final).prepare_estimator(final, X)
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
        self.pooled = _Pooled(y_fit.shape[0], rows.weight, plan.groups)

    def _run(self, jobs, name, setup=None):
        plan = self.plan
        return run_splits(
            setup or self.setup,
            jobs,
            n_jobs=plan.n_jobs,
            verbose=plan.verbose,
            name=name,
        )

    def fit_and_score(self):
        """Fit and score every split, in threads or joblib workers."""
        return self._run(self.jobs, self.plan.name)

    def test(self, scored):
        """Pool all splits' held-out rows into the test's units and test them."""
        held_out = [job.held_out for job in self.jobs]
        return _unit_tests(
            self.pooled, held_out, scored, units=self.units, fgroups=self.fgroups
        )

    def rankings(self):
        """Fit on half of each split's training rows, test on the other half."""
        plan, units = self.plan, self.units
        pairs = inner_splits(
            self.jobs,
            y=self.y_fit,
            classifier=self.classifier,
            labels=self.labels,
            groups=plan.groups,
            ordered=units == "blocks",
            seed=plan.rng.randint(2**31 - 1),
        )
        inner = make_jobs(
            pairs,
            y=self.y_fit,
            classifier=self.classifier,
            es_reader=self.setup.es_reader,
            seeds=plan.rng.randint(2**31 - 1, size=len(pairs)),
        )
        setup = self.setup
        if setup.resample_seed is not None:  # draws of their own, not the splits'
            setup = dataclasses.replace(setup, resample_seed=setup.resample_seed + 1)
        _, scored = self._run(inner, f"{plan.name} (refit curve's rankings)", setup)
        return [
            _unit_tests(
                self.pooled, [job.held_out], [part], units=units, fgroups=self.fgroups
            )
            for job, part in zip(inner, scored, strict=True)
        ]

    def refit_scores(self, points, scoring):
        """Refit on each split's training rows with the points' columns, in parallel."""
        plan = self.plan
        tasks = [
            (self.jobs[j], np.asarray(cols, np.int64), scoring) for j, cols in points
        ]
        return run_refits(
            self.setup, tasks, n_jobs=plan.n_jobs, verbose=plan.verbose, name=plan.name
        )
