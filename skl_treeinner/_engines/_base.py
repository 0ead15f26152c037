"""What an engine is: where the rows live decides how they are scored and fitted.

An engine runs the public entries on one kind of input: in memory (numpy,
pandas, polars, sparse, ``xgboost.DMatrix``), Dask collections, later others.
:mod:`skl_treeinner._engines` picks one from its table; every engine computes
the same numbers with the shared primitives of :mod:`skl_treeinner._scoring`
and :mod:`skl_treeinner._inference`, only where and how the rows are read
differs.
"""

from __future__ import annotations

__all__ = ["Engine"]


class Engine:
    """The interface every engine implements (one instance per engine)."""

    #: Short name, as the registry's ``Library.engines`` keys it.
    name: str = ""

    def accepts(self, obj) -> bool:
        """Whether ``obj`` (X, y or the weights) is this engine's kind of input."""
        raise NotImplementedError

    def refusal(self, what: str) -> str:
        """Say why ``what`` (a function without this engine's path) refuses it."""
        return f"{what} does not take {self.name} input yet; pass in-memory data."

    def default_estimator(self, classifier: bool, random_state):
        """Build the selector's default booster for this engine's input."""
        raise NotImplementedError

    def predecomp(self, reader, X, *, return_bias):
        """:func:`~skl_treeinner.predecomp` of X with an already read model."""
        raise NotImplementedError

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
        """:func:`~skl_treeinner.tree_inner` of (X, y) with an already read model."""
        raise NotImplementedError

    def fit_selector(self, plan) -> dict:
        """Fit and score every split of a :class:`~skl_treeinner._plan.SelectionPlan`.

        Returns the fitted statistics (``estimators_``, ``scores_``,
        ``scores_se_``, ``pvalues_``, ...), which the selector stores; sets
        only what scikit-learn's input checks set on the selector
        (``n_features_in_``, ``feature_names_in_``).
        """
        raise NotImplementedError

    def transform(self, selector, X):
        """Return X's selected columns, in the container this engine keeps."""
        raise NotImplementedError
