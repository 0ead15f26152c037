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

from .._stats._feature_groups import group_statistics
from .._stats._refit_curve import (
    CurveScoring,
    curve_results,
    k_grid,
    prefit_refusal,
    refit_points,
)
from ._base import Engine, SplitRun, UnitTests
from ._plan import SelectionPlan, check_prefit, resolve_groups

__all__ = ["fit_selection", "fitted_statistics", "refit_curve"]


def fit_selection(plan: SelectionPlan, engine: Engine) -> dict:
    """Fit the selector's plan with ``engine``: return every fitted attribute.

    ``n_features_in_`` and ``feature_names_in_`` (where X has names) are
    returned with the statistics, never set on the selector here, so that
    nothing is half set when a step fails.
    """
    checked = engine.check_input(plan)
    fgroups = resolve_groups(plan, checked.n_features_in, checked.feature_names_in)
    if plan.prefit:
        if plan.curve:
            raise prefit_refusal(plan.max_features)
        check_prefit(plan.name, checked.n_features_in, checked.estimator)
    run = engine.prepare_splits(plan, checked, fgroups)
    estimators, scored = run.fit_and_score()
    fitted = {"n_features_in_": checked.n_features_in}
    if checked.feature_names_in is not None:
        fitted["feature_names_in_"] = checked.feature_names_in
    fitted.update(
        estimators_=estimators,
        estimator_=estimators[0],
        **fitted_statistics(run.test(scored), fgroups),
    )
    if plan.curve:
        fitted["cv_results_"] = refit_curve(plan, run, fgroups)
    return fitted


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
