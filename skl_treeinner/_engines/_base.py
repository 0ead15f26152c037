"""What an engine is: where the rows live decides how they are scored and fitted.

An engine runs the public entries on one kind of input: in memory (numpy,
pandas, polars, sparse, ``xgboost.DMatrix``), Dask collections, later others.
:mod:`skl_treeinner._engines` picks one from its table; every engine computes
the same numbers with the shared primitives of :mod:`skl_treeinner._scoring._sums`
and :mod:`skl_treeinner._stats._inference`, only where and how the rows are read
differs. The selector's ``fit`` is written once
(:func:`~skl_treeinner._engines._flow.fit_selection`); an engine supplies its
hooks: :meth:`Engine.check_input` and the :class:`SplitRun` that
:meth:`Engine.prepare_splits` returns.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["CheckedInput", "Engine", "SplitRun", "UnitTests"]


class CheckedInput(NamedTuple):
    """What an engine's checks of ``fit``'s input tell the selection flow."""

    #: The booster to fit (or the prefit one to score): the plan's, or the
    #: engine's default.
    estimator: object
    #: Whether it is a classifier.
    classifier: bool
    #: X's columns, as scikit-learn's input checks record them.
    n_features_in: int
    feature_names_in: np.ndarray | None
    #: The engine's own view of the checked rows (only it reads them), or
    #: None where the rows stay in the plan (Dask collections).
    rows: object


class UnitTests(NamedTuple):
    """The test of one set of scored splits, whatever engine scored them."""

    #: :class:`~skl_treeinner._stats._inference.ScoreTest` of the columns' scores.
    test: object
    #: The same of the feature groups' sums, or None.
    group_test: object
    #: (n_splits, n_features_in): each split's scores.
    split_scores: np.ndarray
    #: (n_features_in,): the scores over all splits.
    scores: np.ndarray
    #: What the test counted: ``"rows"``, ``"groups"`` or ``"blocks"``.
    units: str
    #: The test of a column: (n_features_in,) the scores with each column
    #: resampled among the held-out rows (the mean over draws); else None.
    null_scores: np.ndarray | None = None


class SplitRun:
    """One fit's splits in an engine: fitted, scored, tested, refitted.

    :meth:`Engine.prepare_splits` returns it after every check of the rows
    (nothing is fitted before); the selection flow calls its methods in
    order. ``labels`` are the user's class labels of a classifier the
    splits fit (the refit curve scores in them), else None.
    """

    labels: np.ndarray | None = None

    def fit_and_score(self) -> tuple[list, list]:
        """Fit every split (or take the prefit model) and score its held-out rows.

        Returns the fitted estimators and, per split, what :meth:`test`
        pools (per-row terms, or their moments).
        """
        raise NotImplementedError

    def test(self, scored) -> UnitTests:
        """Pool the splits' ``scored`` rows into the test's units and test them."""
        raise NotImplementedError

    def rankings(self) -> list[UnitTests]:
        """Rank for the refit curve: per split, the test on half its rows.

        The booster is fitted on half of each split's training rows and
        scored on the other half, drawn as the splits themselves were.
        """
        raise NotImplementedError

    def refit_scores(self, points, scoring) -> np.ndarray:
        """Score a refit on each ``(split, columns)`` of ``points``, in order.

        The booster is refitted on the split's training rows with only
        those columns and scored on its held-out rows by ``scoring``
        (:class:`~skl_treeinner._stats._refit_curve.CurveScoring`); no columns
        is the intercept alone
        (:func:`~skl_treeinner._stats._refit_curve.score_intercept`).
        """
        raise NotImplementedError


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

    def default_estimator(self, classifier: bool, random_state, n_rows=None):
        """Build the selector's default booster for this engine's input.

        ``n_rows``: the rows of the data, where known without computing.
        """
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

    def check_input(self, plan) -> CheckedInput:
        """Check a :class:`~skl_treeinner._engines._plan.SelectionPlan`'s data.

        Resolves the booster (the engine's default where the plan names
        none), checks it, X, y and the weights; raises before anything is
        fitted.
        """
        raise NotImplementedError

    def prepare_splits(self, plan, checked: CheckedInput, feature_groups) -> SplitRun:
        """Draw the splits (or the prefit scoring) and check their rows.

        ``feature_groups``: the resolved groups whose sums are tested too,
        or None. Raises before anything is fitted.
        """
        raise NotImplementedError

    def transform(self, selector, X):
        """Return X's selected columns, in the container this engine keeps."""
        raise NotImplementedError
