"""Statistics of the scores, on arrays: no booster, no data frame.

The tests of a score and their multiplicity adjustments (``_inference``),
the cut-off (``_cutoff``), feature groups (``_feature_groups``), the refit
curve (``_refit_curve``), the checks for dependent rows (``_dependence``) and
the one score table every display shows (``_report``).
"""
