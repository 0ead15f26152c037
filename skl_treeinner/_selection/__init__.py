"""The scikit-learn selector.

:class:`~skl_treeinner.TreeInnerSelector` (``_selector``), its selection from
the fitted statistics and ``transform`` (``_support``), metadata routing
(``_metadata_routing``), hints on its parameters (``_parameter_hints``), the
check of a prefit model's training rows (``_prefit_check``) and the cache of
fitted selections that ``memory`` keeps (``_cache``).
"""
