"""A boosted ensemble as the rest of the package sees it.

:class:`~skl_treeinner._model._ensemble.TreeEnsemble` holds any library's
trees as flat arrays (the readers in ``_readers`` fill it), and
``_objectives`` the losses it was trained with: their gradients and links.
"""
