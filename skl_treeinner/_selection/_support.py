"""The selection given the fitted statistics, and the selected columns.

:class:`SelectionMixin` gives :class:`~skl_treeinner.TreeInnerSelector` its
derived attributes (``support_``, ``threshold_``, from the fitted scores and
p-values and the current ``alpha``, ``threshold`` and ``max_features``, so that
``set_params`` re-selects without refitting) and its ``transform``, which the
engine of X runs: in memory, the result goes into the container
``set_output`` asks for; a Dask collection stays lazy. scikit-learn wraps a
``transform`` defined on the estimator's own class in its ``set_output``
container, which would compute a Dask collection, so ``transform`` and
``fit_transform`` are defined here, on a mixin, and the engines wrap what they
return themselves.
"""

from __future__ import annotations

import functools

import numpy as np
from sklearn.base import TransformerMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils.metadata_routing import _routing_enabled
from sklearn.utils.validation import check_is_fitted

from .._engines import engine_for
from .._engines._plan import SelectionPlan, final_step, selection_seeds
from .._readers import reader_class
from .._stats import _cutoff, _feature_groups, _refit_curve
from ._prefit_check import warn_if_training_rows

__all__ = ["SelectionMixin", "curve_candidates", "unit_statistics"]


def _cutoff_units(selector, groups):
    """Return what the cut-off counts, (number, name): the groups, if any."""
    if groups is None:
        return selector.n_features_in_, "features"
    return groups.n_groups, "feature groups"


def unit_statistics(fitted, groups=None, group_test=None):
    """Return the cut-off's units' tested scores, t statistics and p-values.

    ``fitted`` maps fitted attribute names (``scores_``, ``null_scores_``
    under the test of a column, ``scores_se_``, ``pvalues_``; with
    ``groups``, the ``group_*`` ones) to their values. The units are the
    columns, or the feature ``groups`` (tested by ``group_test``); the
    p-values are not adjusted for their number. The tested score is what
    the test reads (:func:`~skl_treeinner._stats._cutoff.tested_scores`):
    the score less its resampled score under the test of a column, the
    score itself under the test of the model's use; ``threshold`` is
    compared with it, so that a unit the test passes is never dropped by a
    threshold on another number.
    """
    if groups is None:
        tested = _cutoff.tested_scores(fitted["scores_"], fitted.get("null_scores_"))
        se, pvalues = fitted["scores_se_"], fitted["pvalues_"]
    else:
        tested = _cutoff.tested_scores(
            fitted["group_scores_"], fitted.get("group_null_scores_")
        )
        se = fitted["group_scores_se_"]
        pvalues = _feature_groups.combined_pvalues(
            group_test,
            groups,
            fitted["_group_sum_pvalues"],
            fitted["pvalues_"],
            used=np.asarray(fitted["scores_se_"]) > 0,
        )
    return tested, _cutoff.t_statistics(tested, se), np.asarray(pvalues)


def curve_candidates(threshold, group_test, fitted, groups=None) -> np.ndarray:
    """Return the units passing the cut-off on one split's statistics, best first.

    ``fitted`` holds the statistics of one inner split (as
    :func:`unit_statistics` reads them); ``groups`` the fitted feature
    groups, or None. The cut-off is the selector's ``threshold`` alone, on
    the tested scores: a test on the inner half (about 40 % of the rows)
    passes fewer units than the test on all rows, which would cut the
    curve short, so ``alpha`` applies to the final selection instead, of
    which the curve's k best are kept. Returns column indices, or group
    indices with feature groups, ordered as the test ranks them
    (:func:`~skl_treeinner._stats._cutoff.rank`). The refit curve
    (:mod:`~skl_treeinner._stats._refit_curve`) refits the top k.
    """
    tested, t, pvalues = unit_statistics(fitted, groups, group_test)
    ranking = _cutoff.rank(pvalues, t)
    threshold = _cutoff.threshold_value(tested, threshold)
    kept = np.flatnonzero(_cutoff.select(tested, threshold, None, ranking=ranking))
    return kept[np.argsort(ranking[kept], kind="mergesort")]


class SelectionMixin:
    """Derived selection and engine-run ``transform`` of a fitted selector."""

    def _plan(self, X, y, sample_weight, *, groups, fit_params):
        """Decide once what every engine needs: the data, the settings, the seeds.

        Plain values (:class:`~skl_treeinner._engines._plan.SelectionPlan`): with
        metadata routing, the selector's router; with a refit curve's rule in
        ``max_features`` the plan carries this selector's cut-off as a pure
        function of fitted values (:func:`curve_candidates`).
        """
        split_seed, booster_seed, rng = selection_seeds(self.random_state)
        curve = isinstance(self.max_features, str)
        if curve:  # what the refits could not use fails before any fit
            _refit_curve.check_curve_scoring(self.scoring, sample_weight is not None)
            final = None if self.estimator is None else final_step(self.estimator)
            try:
                reader = None if final is None else reader_class(final)
            except ImportError:  # check_supported names the missing library
                reader = None
            if reader is not None:  # settings that name columns by position
                reader.check_refit_settings(final)
        router = None
        if _routing_enabled() and not self.prefit:
            router = self.get_metadata_routing()
        return SelectionPlan(
            X=X,
            y=y,
            sample_weight=sample_weight,
            groups=groups,
            fit_params=fit_params,
            estimator=self.estimator,
            split_seed=split_seed,
            booster_seed=booster_seed,
            rng=rng,
            name=type(self).__name__,
            cv=self.cv,
            n_repeats=self.n_repeats,
            validation_fraction=self.validation_fraction,
            attribution=self.attribution,
            test=self.test,
            prefit=self.prefit,
            feature_groups=self.feature_groups,
            max_features=self.max_features,
            scoring=self.scoring,
            n_jobs=self.n_jobs,
            verbose=self.verbose,
            router=router,
            candidates=(
                functools.partial(curve_candidates, self.threshold, self.group_test)
                if curve
                else None
            ),
        )

    def _store(self, fitted, X):
        """Set the fitted attributes, then the ranking and the cut-off's inputs."""
        for name, value in fitted.items():
            setattr(self, name, value)
        if self.prefit:  # scored on its own training rows, it keeps everything
            warn_if_training_rows(self.estimator_, self.scores_, self.attribution, X)
        self.ranking_ = self._unit_ranking(None)
        n_units, unit = _cutoff_units(self, getattr(self, "_feature_groups", None))
        self.max_features_ = _cutoff.resolve_max_features(
            self.max_features, n_units, X, unit=unit
        )
        self._fitted_max_features = self.max_features
        # The cut-off is derived on demand; evaluate it once, so that a bad
        # threshold or max_features fails fit rather than transform.
        _ = self.support_

    def _statistics(self) -> dict:
        """Return the fitted statistics :func:`unit_statistics` reads, by name."""
        return {
            name: getattr(self, name)
            for name in _cutoff.CUTOFF_STATISTICS
            if hasattr(self, name)
        }

    def _units(self, groups, statistics=None):
        """Return the cut-off's units' tested scores, t statistics and p-values.

        Of the selector's own ``statistics`` (:meth:`_statistics`), or of
        one repeat's; ``groups`` checked (``group_test`` is, where they are).
        """
        if statistics is None:
            statistics = self._statistics()
        group_test = getattr(self, "group_test", None)
        return unit_statistics(statistics, groups, group_test)

    def _fitted_repeats(self) -> int:
        """Return how many repeats the fitted statistics combine (``n_repeats``)."""
        return len(getattr(self, "_repeat_statistics", None) or [None])

    def _unit_ranking(self, groups):
        """Rank the columns (or ``groups``) by the test, 1 for the best."""
        _, t, pvalues = self._units(groups)
        return _cutoff.rank(pvalues, t)

    def _adjusted(self, pvalues):
        """``pvalues`` adjusted as ``control`` asks, at ``alpha`` (0.05 if None)."""
        alpha = _cutoff.check_alpha(self.alpha)
        # A selector pickled before ``control`` existed selected per feature.
        control = _cutoff.check_control(getattr(self, "control", "per_feature"))
        return _cutoff.adjusted_pvalues(
            pvalues, control, 0.05 if alpha is None else alpha
        )

    @property
    def threshold_(self) -> float:
        """The threshold the tested scores are compared with, from ``threshold``.

        The tested scores are what the test reads: ``scores_ -
        null_scores_`` under ``test="column"`` (how far each score is above
        its score resampled), ``scores_`` under ``test="model"``; with
        feature groups, the groups' (``group_scores_ - group_null_scores_``;
        a ``"mean"`` is then the groups' mean). Derived, so
        ``set_params(threshold=...)`` takes effect without refitting.
        """
        check_is_fitted(self, "scores_")
        tested, _, _ = self._units(self._fitted_groups())
        return _cutoff.threshold_value(tested, self.threshold)

    @property
    def pvalues_adjusted_(self) -> np.ndarray:
        """``pvalues_`` adjusted for the number of features, as ``control`` asks.

        A feature passes the test when its adjusted p-value is below
        ``alpha``. Derived from ``pvalues_``, so ``set_params(control=...)``
        takes effect without refitting; with ``control="expected_false"`` the
        adjustment depends on ``alpha`` (``p · max(1, alpha · n_features)``;
        with ``alpha=None``, which turns the test off, that of 0.05). See
        :func:`~skl_treeinner._stats._cutoff.adjusted_pvalues`.
        """
        check_is_fitted(self, "pvalues_")
        return self._adjusted(self.pvalues_)

    def _fitted_groups(self):
        """Return the fitted feature groups (or None); refuse ones changed since."""
        fitted = getattr(self, "_feature_groups", None)
        current = _feature_groups.resolve_feature_groups(
            getattr(self, "feature_groups", None),
            self.n_features_in_,
            getattr(self, "feature_names_in_", None),
        )
        if (fitted is None) != (current is None) or (
            fitted is not None and not fitted.same_as(current)
        ):
            raise NotFittedError(
                "feature_groups was changed after fit. The group tests need the "
                "held-out rows' per-row terms, which fit does not keep (they are "
                "as large as X), so call fit again."
            )
        return fitted

    @property
    def group_pvalues_(self) -> np.ndarray:
        """One-sided p-value of every feature group, by the current ``group_test``.

        Derived from the fitted sum test and the members' own ``pvalues_``,
        so ``set_params(group_test=...)`` takes effect without refitting. A
        group of one column has that column's p-value. Only with
        ``feature_groups``.
        """
        return self._group_pvalues(self._grouped("group_pvalues_"))

    def _grouped(self, name):
        """Return the fitted groups, for a ``group_*`` attribute that needs them."""
        check_is_fitted(self, "scores_")
        groups = self._fitted_groups()
        if groups is None:
            raise AttributeError(
                f"{name} exists only for a selector fitted with feature_groups; "
                "this one tested and selected columns (pvalues_, support_)."
            )
        return groups

    def _group_pvalues(self, groups, adjust=False):
        """``group_pvalues_`` of the checked fitted ``groups`` (or adjusted)."""
        _, _, pvalues = self._units(groups)
        return self._adjusted(pvalues) if adjust else pvalues

    @property
    def n_features_(self) -> int:
        """The number of features kept (feature groups, with ``feature_groups``).

        Derived, as RFECV's: the count of ``support_`` (of
        ``group_support_``). With ``max_features="best"``/``"1se"`` it is the
        k the rule reads off ``cv_results_``, or fewer where fewer pass the
        test on all rows.
        """
        check_is_fitted(self, "scores_")
        if self._fitted_groups() is None:
            return int(self.support_.sum())
        return int(self.group_support_.sum())

    def _max_count(self) -> int | None:
        """Return the most features (or groups) the current ``max_features`` keeps.

        The one place a fitted selector turns ``max_features`` into a count
        (None: no limit): the refit curve's k for ``"best"``/``"1se"``, what
        the callable returned on fit's X (``max_features_``), else the int or
        the fraction of the features (or groups).
        """
        if isinstance(self.max_features, str):
            return self._curve_k()
        if callable(self.max_features):
            if self.max_features is not self._fitted_max_features:
                raise NotFittedError(
                    "max_features was set to a new callable after fit; it is "
                    "evaluated on the X given to fit, so call fit again."
                )
            return self.max_features_
        n_units, unit = _cutoff_units(self, self._fitted_groups())
        return _cutoff.resolve_max_features(self.max_features, n_units, unit=unit)

    def _curve_k(self) -> int:
        """Return the k ``max_features="best"``/``"1se"`` reads off the curve."""
        if self.max_features not in _refit_curve.CURVE_RULES:
            raise ValueError(
                f"max_features={self.max_features!r} is not an int, a fraction "
                "in (0, 1], a callable, 'best', '1se' or None."
            )
        results = getattr(self, "cv_results_", None)
        if results is None:
            raise NotFittedError(
                f"max_features={self.max_features!r} needs the refit curve "
                "(cv_results_), which fit computes only when max_features is "
                "'best' or '1se': fit again with it."
            )
        return _refit_curve.choose_k(
            results["n_features"],
            results["mean_test_score"],
            _refit_curve.curve_standard_error(results),
            self.max_features,
        )

    @property
    def group_support_(self) -> np.ndarray:
        """The kept feature groups, in the order of ``groups_`` (derived).

        ``dict(zip(selector.groups_, selector.group_support_))`` labels them.
        Only with ``feature_groups``.
        """
        groups = self._grouped("group_support_")
        return self.support_[[cols[0] for cols in groups.members]]

    @property
    def group_pvalues_adjusted_(self) -> np.ndarray:
        """``group_pvalues_`` adjusted for the number of groups, as ``control`` asks.

        A group is kept when its adjusted p-value is below ``alpha`` (and its
        score passes ``threshold``). Only with ``feature_groups``.
        """
        return self._group_pvalues(self._grouped("group_pvalues_adjusted_"), True)

    @property
    def support_(self) -> np.ndarray:
        """The selected features, from the fitted statistics and the current cut-off.

        Changing ``alpha``, ``control``, ``threshold``, ``max_features`` or
        ``group_test`` with ``set_params`` re-selects without refitting; a
        callable ``max_features`` is evaluated on the X given to ``fit``
        (``max_features_``), so changing it to another callable needs a new
        ``fit``, as does changing ``feature_groups``. With feature groups,
        the cut-off acts on the groups (their scores, p-values, counts) and
        every member of a kept group is selected.
        """
        check_is_fitted(self, "scores_")
        return self._select(self._statistics(), self._fitted_groups())

    def _select(self, statistics, groups):
        """Return the features the cut-off keeps on one set of fitted statistics.

        ``statistics`` as :func:`unit_statistics` reads them: the selector's
        own, or one repeat's (``selection_frequency_``).
        """
        count = self._max_count()
        alpha = _cutoff.check_alpha(self.alpha)
        tested, t, pvalues = self._units(groups, statistics)
        adjusted = None if alpha is None else self._adjusted(pvalues)
        kept = _cutoff.select(
            tested,
            _cutoff.threshold_value(tested, self.threshold),
            count,
            ranking=_cutoff.rank(pvalues, t),
            pvalues=adjusted,
            alpha=alpha,
        )
        return kept if groups is None else groups.expand(kept)

    @property
    def selection_frequency_(self) -> np.ndarray:
        """How often one repeat alone keeps each feature, in [0, 1] (derived).

        With ``n_repeats`` > 1: the share of the repeats whose own
        statistics pass the current cut-off (``alpha``, ``control``,
        ``threshold``, ``max_features``), per feature (a group's members
        share its value). The selection itself (``support_``) tests the
        repeats' mean, not this vote. What it guarantees: each repeat is a
        selection of its own, so for the features with no effect the sum of
        their frequencies has at most the expectation ``control`` promises
        for one selection (at most one false pick with
        ``"expected_false"``); a frequency near 0.5 marks a feature whose
        evidence sits at the level. With one repeat: ``support_`` as 0 or 1.
        """
        check_is_fitted(self, "scores_")
        groups = self._fitted_groups()
        repeats = getattr(self, "_repeat_statistics", None)
        if repeats is None:
            return self._select(self._statistics(), groups).astype(np.float64)
        kept = [self._select(statistics, groups) for statistics in repeats]
        return np.mean(kept, axis=0)

    def _get_support_mask(self):
        check_is_fitted(self, "scores_")
        return self.support_

    def transform(self, X):
        """Reduce X to the selected features, keeping data-frame dtypes.

        Parameters
        ----------
        X : array-like, sparse matrix or DataFrame of shape (n_samples, n_features)
            The same features, in the same order (and with the same names),
            as seen in ``fit``.

        Returns
        -------
        X_selected : ndarray, sparse matrix or DataFrame
            The selected columns. With ``set_output(transform="pandas")`` or
            ``"polars"`` and a data-frame X, the columns keep their dtypes
            (categorical columns stay categorical). A Dask array or DataFrame
            gives the same, lazy and partitioned like X.

        Raises
        ------
        ValueError
            If X has a different number of features, or different names, than
            at fit time.

        References
        ----------
        Paper 000, Sec. 4: features are kept by their held-out TreeInner
        score (Eq. 21).

        Examples
        --------
        >>> import numpy as np, pandas as pd, xgboost as xgb
        >>> from skl_treeinner import TreeInnerSelector
        >>> rng = np.random.default_rng(0)
        >>> X = pd.DataFrame(rng.normal(size=(300, 3)), columns=["a", "b", "c"])
        >>> X["d"] = pd.Categorical(rng.choice(["u", "v"], size=300))
        >>> y = X["a"].to_numpy() + rng.normal(size=300)
        >>> est = xgb.XGBRegressor(n_estimators=20, enable_categorical=True)
        >>> sel = TreeInnerSelector(
        ...     est, alpha=None, threshold=-np.inf, max_features=2
        ... )
        >>> sel = sel.set_output(transform="pandas").fit(X, y)
        >>> out = sel.transform(X)
        >>> out.shape[1], "a" in out.columns
        (2, True)
        """
        # Not fitted: say so first, before any warning about X's names.
        check_is_fitted(self, "scores_")
        return engine_for(X).transform(self, X)

    def fit_transform(self, X, y=None, **fit_params):
        """Fit to X and y, then return X's selected columns.

        Parameters
        ----------
        X : array-like, sparse matrix, DataFrame or Dask collection
            The features, as :meth:`fit` takes them.
        y : array-like of shape (n_samples,)
            The target.
        **fit_params : dict
            Passed to :meth:`fit` (``sample_weight``, ``groups``, the booster's
            fit parameters).

        Returns
        -------
        X_selected : ndarray, sparse matrix, DataFrame or Dask collection
            ``fit(X, y, **fit_params).transform(X)``.
        """
        # scikit-learn's own fit_transform without its output wrapper:
        # transform above puts the result in its container (or keeps a
        # collection lazy), so it must not be wrapped twice.
        return TransformerMixin.fit_transform.__wrapped__(self, X, y, **fit_params)
