"""The selector's ``fit``, written once for every engine.

The steps read top to bottom: the engine checks its input, the feature
groups are resolved over X's columns, a prefit model is checked, the
engine draws its splits and checks their rows, fits and scores them, and
the pooled terms are tested; with ``max_features="best"``/``"1se"`` the
refit curve follows. An engine (:class:`~skl_treeinner._engines._base.Engine`)
supplies only how its rows are checked, split, fitted, scored and refitted;
the fitted statistics are built here, once (:func:`fitted_statistics`), as
is the refit curve's skeleton (:func:`refit_curve`).
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np

from .._stats._cutoff import CUTOFF_STATISTICS
from .._stats._feature_groups import group_statistics
from .._stats._inference import combine_repeats
from .._stats._refit_curve import (
    CurveScoring,
    curve_results,
    k_grid,
    prefit_refusal,
    refit_points,
)
from .._utils._validation import user_stacklevel
from ._base import CheckedInput, Engine, SplitRun, UnitTests
from ._plan import (
    SelectionPlan,
    check_prefit,
    repeat_plans,
    resolve_estimator,
    resolve_groups,
)

__all__ = ["combine_tests", "fit_selection", "fitted_statistics", "refit_curve"]


def fit_selection(plan: SelectionPlan, engine: Engine) -> dict:
    """Fit the selector's plan with ``engine``: return every fitted attribute.

    ``n_features_in_`` and ``feature_names_in_`` (where X has names) are
    returned with the statistics, never set on the selector here, so that
    nothing is half set when a step fails. With ``plan.n_repeats`` > 1 every
    repeat's splits are drawn and checked before any fit; each repeat is
    fitted, scored and tested in turn (its per-row terms dropped before the
    next), and the repeats' tests are combined (:func:`combine_tests`).
    """
    checked = engine.check_input(plan)
    fgroups = resolve_groups(plan, checked.n_features_in, checked.feature_names_in)
    if plan.prefit:
        if plan.curve:
            raise prefit_refusal(plan.max_features)
        check_prefit(plan.name, checked.n_features_in, checked.estimator)
    with _each_warning_once():  # not once per split or repeat
        runs = [
            engine.prepare_splits(
                repeat, _repeat_input(repeat, plan, checked, engine), fgroups
            )
            for repeat in repeat_plans(plan)
        ]
        estimators, tests = [], []
        for run in runs:
            fitted_models, scored = run.fit_and_score()
            estimators.extend(fitted_models)
            tests.append(run.test(scored))
            del scored  # as large as the held-out rows: one repeat's at a time
    fitted = {"n_features_in_": checked.n_features_in}
    if checked.feature_names_in is not None:
        fitted["feature_names_in_"] = checked.feature_names_in
    fitted.update(
        estimators_=estimators,
        estimator_=estimators[0],
        **fitted_statistics(combine_tests(tests), fgroups),
    )
    if len(tests) > 1:  # each repeat's own, for how often each would keep a unit
        fitted["_repeat_statistics"] = [
            {
                k: v
                for k, v in fitted_statistics(t, fgroups).items()
                if k in CUTOFF_STATISTICS
            }
            for t in tests
        ]
    if plan.curve:  # the first repeat's splits (the curve averages its splits)
        fitted["cv_results_"] = refit_curve(plan, runs[0], fgroups)
    return fitted


@contextlib.contextmanager
def _each_warning_once():
    """Emit each distinct warning of the block once, at the user's line.

    The splits read every fitted booster and the repeats run the same checks
    on other folds: a warning about the data or a booster's settings (rows
    that look ordered, LightGBM's ``cat_l2``) would otherwise come once per
    split and repeat. Warnings pass the filters as they are raised (an
    ``"error"`` filter raises at once) and again when emitted here, also
    when the block fails (a warning may say why).
    """
    caught = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            yield
    finally:
        seen = set()
        for w in caught:
            key = (w.category, str(w.message))
            if key not in seen:
                seen.add(key)
                warnings.warn(w.message, stacklevel=user_stacklevel())


def _repeat_input(repeat, plan, checked: CheckedInput, engine: Engine):
    """Return one repeat's checked input: a default booster seeded by the repeat."""
    if repeat is plan or plan.estimator is not None:  # a given booster's own seed
        return checked
    estimator, _ = resolve_estimator(repeat, engine.default_estimator)
    return checked._replace(estimator=estimator)


def combine_tests(tests: list[UnitTests]) -> UnitTests:
    """Combine the tests of repeated selections on the same rows.

    The scores (and resampled scores) are the repeats' means, the split
    scores every repeat's splits in turn, and the tests of the columns and
    of the groups' sums :func:`~skl_treeinner._stats._inference.combine_repeats`:
    the mean tested score over the mean standard error, valid whatever ties
    the repeats. One test is returned as it is.
    """
    if len(tests) == 1:
        return tests[0]
    first = tests[0]
    group_test = None
    if first.group_test is not None:
        group_test = combine_repeats([t.group_test for t in tests])
    null = None
    if first.null_scores is not None:
        null = np.mean([t.null_scores for t in tests], axis=0)
    return UnitTests(
        combine_repeats([t.test for t in tests]),
        group_test,
        np.vstack([t.split_scores for t in tests]),
        np.mean([t.scores for t in tests], axis=0),
        first.units,
        null,
    )


def fitted_statistics(tests: UnitTests, fgroups) -> dict:
    """Return the fitted statistics of one pooled test (the columns', groups')."""
    fitted = {
        "split_scores_": tests.split_scores,
        "scores_": tests.scores,
        "scores_se_": tests.test.se,
        "pvalues_": tests.test.pvalues,
        "n_scored_rows_": tests.test.n_rows,
        "test_units_": tests.units,
    }
    if tests.null_scores is not None:
        fitted["null_scores_"] = tests.null_scores
    if fgroups is not None:
        fitted.update(group_statistics(fgroups, tests.group_test))
        if tests.null_scores is not None:  # the test's sums are differences
            scores = fgroups.sums(tests.scores[None])[0]
            fitted["group_scores_"] = scores
            fitted["group_null_scores_"] = scores - tests.group_test.scores
    return fitted


def refit_curve(plan: SelectionPlan, run: SplitRun, fgroups) -> dict:
    """Return the honest refit curve's ``cv_results_`` (:mod:`.._refit_curve`).

    Per split: the candidates ranked on half of its training rows after
    fitting on the other half (:meth:`SplitRun.rankings`), by the
    selector's own test and cut-off (``plan.candidates``); then the booster
    refitted on the split's training rows with the top k candidates'
    columns, for every k of the grid, and scored on its held-out rows
    (:meth:`SplitRun.refit_scores`).
    """
    orders = [
        plan.candidates(fitted_statistics(t, fgroups), fgroups) for t in run.rankings()
    ]
    ks = k_grid(max(order.size for order in orders))
    scoring = CurveScoring.make(plan.scoring, run.labels)
    members = None if fgroups is None else fgroups.members
    keys, points = refit_points(orders, ks, members)
    done = dict(zip(points, run.refit_scores(points, scoring), strict=True))
    return curve_results(ks, [[done[key] for key in row] for row in keys])
