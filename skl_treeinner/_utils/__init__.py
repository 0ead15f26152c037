"""Helpers every layer may use.

Optional imports that name their extra (``_optional``), checks of the user's
input (``_validation``), progress bars (``_progress``) and warnings about a
target (``_target_warnings``). Nothing here knows a booster or a statistic.
"""
