"""TreeInnerSelector: keep the features whose TreeInner score on held-out rows is high.

Everything here goes through :func:`tree_inner` and the reader registry, so it
works for every library a reader supports. The one thing a reader cannot
know, how a library is told to stop early and how it receives the rows to
stop on, is in ``_early_stopping_kind`` and ``_early_stopping_params``.
"""

from __future__ import annotations

import copy
import sys
import time
import warnings
from numbers import Integral, Real

import numpy as np
from joblib import cpu_count, effective_n_jobs
from sklearn.base import (
    BaseEstimator,
    MetaEstimatorMixin,
    _fit_context,
    clone,
    is_classifier,
)
from sklearn.exceptions import NotFittedError
from sklearn.feature_selection import SelectorMixin
from sklearn.model_selection import (
    GroupShuffleSplit,
    KFold,
    ShuffleSplit,
    StratifiedKFold,
    StratifiedShuffleSplit,
    check_cv,
    train_test_split,
)
from sklearn.pipeline import Pipeline
from sklearn.utils import _safe_indexing, check_random_state, metadata_routing
from sklearn.utils._dataframe import is_pandas_df, is_polars_df
from sklearn.utils._param_validation import HasMethods, Interval, RealNotInt, StrOptions
from sklearn.utils._set_output import _get_output_config
from sklearn.utils.metadata_routing import (
    MetadataRouter,
    MethodMapping,
    _routing_enabled,
    process_routing,
)
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import (
    _check_method_params,
    _check_sample_weight,
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
    validate_data,
)
from threadpoolctl import threadpool_limits

from ._importance import tree_inner
from ._progress import progress
from ._readers import SUPPORTED_MODELS, default_estimator, reader_class

__all__ = ["TreeInnerSelector"]

#: Fraction of each training part set aside for early stopping, when the
#: booster is configured to stop early and needs rows to stop on.
EARLY_STOPPING_FRACTION = 0.1

_FITTED = (
    "estimator_",
    "estimators_",
    "scores_",
    "split_scores_",
    "ranking_",
    "support_",
    "threshold_",
    "n_features_in_",
    "feature_names_in_",
)


class TreeInnerSelector(SelectorMixin, MetaEstimatorMixin, BaseEstimator):
    """Select features by their TreeInner score on rows the booster never saw.

    A gradient-boosted tree model is fitted on part of the rows, and every
    feature is scored with :func:`~skl_treeinner.tree_inner` on the other
    part: the inner product, tree by tree, of the feature's attribution with
    the residual the tree was fitting (paper 000, Def. 4, Eq. 21). On the
    training rows that is the booster's total gain (Prop. 3), which rewards the
    features the model overfits to; on held-out rows a feature the model only
    overfits to scores negative in expectation, so the default threshold keeps
    the features with a positive score.

    Parameters
    ----------
    estimator : estimator or None, default=None
        The booster to fit: an XGBoost, LightGBM or scikit-learn
        (HistGradientBoosting / GradientBoosting) regressor or classifier, or
        a :class:`~sklearn.pipeline.Pipeline` ending in one whose earlier steps
        keep one column per input feature (imputers, scalers, column-wise
        encoders). It is cloned and never modified. ``None`` uses XGBoost with
        the paper's standard hyper-parameters: ``XGBClassifier`` when ``y``
        holds class labels (``type_of_target`` is binary or multiclass),
        ``XGBRegressor`` otherwise, with ``n_estimators=400,
        learning_rate=0.01, max_depth=4, min_child_weight=1, reg_lambda=1,
        tree_method="hist"`` and a seed drawn from ``random_state``.
    attribution : {"predecomp", "treeshap"}, default="predecomp"
        Per-tree attribution in the inner product: PreDecomp (Def. 1) or each
        tree's own TreeSHAP (much slower). See :func:`tree_inner`.
    cv : int, cross-validation generator, iterable or None, default=None
        ``None``: one split, ``validation_fraction`` of the rows held out
        (stratified for classifiers; grouped when ``groups`` is given).
        Otherwise cross-fitting: every split's test rows are scored by the
        model fitted on its training rows, and the scores are summed over
        splits. An int ``k`` means ``StratifiedKFold(k, shuffle=True)`` for
        classifiers and ``KFold(k, shuffle=True)`` otherwise, seeded from
        ``random_state``; a splitter receives ``groups``; an iterable yields
        ``(train, test)`` index arrays.
    validation_fraction : float in (0, 1), default=0.5
        Fraction of the rows held out for scoring when ``cv=None``.
    threshold : float, str or callable, default=0.0
        Features whose score is strictly greater are kept. A string is
        ``"mean"``, ``"median"`` or a scaled one such as ``"1.25*mean"``, as in
        :class:`~sklearn.feature_selection.SelectFromModel`; a callable
        receives ``scores_`` and returns the threshold.
    max_features : int, float, callable or None, default=None
        Keep at most this many of the features that pass the threshold, the
        best-ranked first: an int, a fraction of the features in (0, 1]
        (at least one), or a callable on X returning an int.
    prefit : bool, default=False
        Whether ``estimator`` is already fitted. Then ``fit(X, y)`` scores it on
        all the given rows, which must be rows it was not trained on.
    random_state : int, RandomState instance or None, default=None
        Seeds the held-out split, the folds of an int ``cv``, the rows set
        aside for early stopping and the default estimator. A given
        estimator's own seed is left as it is.
    n_jobs : int or None, default=None
        Splits fitted in parallel (joblib). The booster of each split is given
        ``max(1, cpu_count // workers)`` threads so that the machine is not
        oversubscribed; results do not depend on ``n_jobs``.
    verbose : int, default=0
        1: a progress bar over the splits on stderr (tqdm when installed,
        otherwise a few plain lines), advancing as splits finish, also with
        ``n_jobs > 1``. 2 and above: also one line per split (rows fitted and
        scored, seconds) and, with ``attribution="treeshap"`` and the splits
        run one after the other, progress over each model's trees.

    Attributes
    ----------
    estimator_ : estimator
        The fitted booster (or pipeline) of the single split, or of the first
        split under ``cv``; the estimator itself (a deep copy) with
        ``prefit=True``.
    estimators_ : list of estimators
        One fitted estimator per split.
    scores_ : ndarray of shape (n_features,)
        TreeInner score of each input feature, summed over splits (and over
        classes for multi-class models).
    split_scores_ : ndarray of shape (n_splits, n_features)
        The score of each split, on its own held-out rows.
    ranking_ : ndarray of shape (n_features,)
        Rank of each feature by score, 1 for the best; ties are ranked in
        column order.
    support_ : ndarray of shape (n_features,), bool
        The selected features.
    threshold_ : float
        The threshold the scores were compared with.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features seen during ``fit``, when X had string column
        names.

    See Also
    --------
    tree_inner : The score, for a model you fitted yourself.
    sklearn.feature_selection.SelectFromModel : Selection on in-sample
        importances such as gain.

    Notes
    -----
    *Rows.* Scoring rows are never used to fit the booster nor to stop it
    early. When the booster is set to stop early (XGBoost
    ``early_stopping_rounds`` or an ``EarlyStopping`` callback, LightGBM's
    ``early_stopping`` callback or ``early_stopping_round`` parameter),
    ``EARLY_STOPPING_FRACTION`` (0.1) of each training part, stratified for
    classifiers and seeded from ``random_state``, is set aside and passed as
    ``eval_set`` (LightGBM >= 4.7: ``eval_X``/``eval_y``), with its sample
    weights. A user-supplied ``eval_set`` (or ``eval_X``) is passed on
    untouched instead. scikit-learn's HistGradientBoosting and
    GradientBoosting set their validation rows aside themselves, from the
    training part they are given.

    *Classes.* Class labels are encoded as 0..K-1 (sorted) before the booster
    is fitted, which XGBoost requires, so ``estimators_`` predict encoded
    labels: ``np.unique(y)[pred]`` maps them back. Every held-out part must
    hold at least two classes and every training part all of them.

    *Weights.* ``sample_weight`` is split with the rows, passed to the
    booster's fit (under metadata routing, when the booster requests it) and
    always weights the inner product on the held-out rows.

    *Pipelines.* Scores are computed for the booster's own input columns and
    mapped back to the input features by the names the earlier steps report
    (``get_feature_names_out``, with ``ColumnTransformer`` prefixes removed),
    or by position when they keep the number of columns and report no names.

    *Default tree method.* On the paper's simulated data (discrete features
    with at most 51 values) ``"hist"`` and ``"exact"`` gave the same mean
    held-out AUC (20 seeds, regression 0.556 and 0.555, classification 0.747
    and 0.745) at less than half the fit time, so the default uses ``"hist"``;
    with continuous features ``"exact"`` may rank better.

    References
    ----------
    Y. Sun, "Individualized and Global Feature Attributions for Gradient
    Boosted Trees in the Presence of ℓ2 Regularization", AISTATS 2023.
    Def. 4, Eq. 20-21 (TreeInner), Prop. 3 (in-sample TreeInner is total
    gain), Sec. 4 and Table 4 (held-out TreeInner as a feature selector).

    Examples
    --------
    >>> import xgboost as xgb
    >>> from skl_treeinner import TreeInnerSelector
    >>> from skl_treeinner.datasets import make_paper_simulation
    >>> X, y, relevant = make_paper_simulation("classification", random_state=0)
    >>> selector = TreeInnerSelector(
    ...     xgb.XGBClassifier(n_estimators=100, max_depth=3, learning_rate=0.1),
    ...     random_state=0,
    ... ).fit(X, y)
    >>> selector.scores_.shape, selector.split_scores_.shape
    ((50,), (1, 50))
    >>> bool(relevant[selector.ranking_ == 1][0])  # the best one is relevant
    True
    >>> selector.transform(X).shape[1] == int(selector.support_.sum())
    True
    """

    __metadata_request__fit = {"groups": metadata_routing.UNUSED}

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit"]), None],
        "attribution": [StrOptions({"predecomp", "treeshap"})],
        "cv": ["cv_object"],
        "validation_fraction": [Interval(RealNotInt, 0, 1, closed="neither")],
        "threshold": [Real, str, callable],
        "max_features": [
            Interval(Integral, 0, None, closed="left"),
            Interval(RealNotInt, 0, 1, closed="right"),
            callable,
            None,
        ],
        "prefit": ["boolean"],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        estimator=None,
        *,
        attribution="predecomp",
        cv=None,
        validation_fraction=0.5,
        threshold=0.0,
        max_features=None,
        prefit=False,
        random_state=None,
        n_jobs=None,
        verbose=0,
    ):
        self.estimator = estimator
        self.attribution = attribution
        self.cv = cv
        self.validation_fraction = validation_fraction
        self.threshold = threshold
        self.max_features = max_features
        self.prefit = prefit
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    # -- fitting -----------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None, sample_weight=None, *, groups=None, **fit_params):
        """Fit the booster on each training part and score features on held-out rows.

        Parameters
        ----------
        X : array-like, sparse matrix or DataFrame of shape (n_samples, n_features)
            Features. pandas and polars frames reach the booster untouched
            (categorical columns, NaN).
        y : array-like of shape (n_samples,)
            Target: class labels for a classifier, numbers for a regressor.
        sample_weight : array-like of shape (n_samples,), default=None
            Row weights: passed to the booster's fit and used in the inner
            product (Eq. 21) on the held-out rows.
        groups : array-like of shape (n_samples,), default=None
            Group labels for a group-aware ``cv`` splitter; with ``cv=None``
            the held-out rows are whole groups (``GroupShuffleSplit``).
        **fit_params : dict
            Passed to the booster's ``fit`` (array-likes with one entry per
            row are split with the rows), or routed with metadata routing.

        Returns
        -------
        self : TreeInnerSelector
            The fitted selector.

        Raises
        ------
        ValueError
            If y has NaN or infinite values or does not suit the estimator,
            the rows cannot be split as asked, a held-out part holds a
            single class, or a prefit estimator saw a different number of
            features. Nothing fitted is left behind.
        TypeError
            If the estimator is not a supported booster.
        sklearn.exceptions.NotFittedError
            If ``prefit=True`` and the estimator is not fitted.

        References
        ----------
        Paper 000, Def. 4 and Eq. 21 (the score of each split).

        Examples
        --------
        >>> import numpy as np, xgboost as xgb
        >>> from skl_treeinner import TreeInnerSelector
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(300, 4)); y = X[:, 0] + rng.normal(size=300)
        >>> sel = TreeInnerSelector(xgb.XGBRegressor(n_estimators=20), cv=3)
        >>> sel = sel.fit(X, y, sample_weight=np.ones(300))
        >>> sel.split_scores_.shape, int(sel.ranking_[0])
        ((3, 4), 1)
        """
        for name in _FITTED:
            self.__dict__.pop(name, None)
        try:
            self._fit(X, y, sample_weight, groups, fit_params)
        except BaseException:
            for name in _FITTED:
                self.__dict__.pop(name, None)
            raise
        return self

    def _fit(self, X, y, sample_weight, groups, fit_params):
        if y is None:
            raise ValueError(
                f"This {type(self).__name__} estimator requires y to be passed, "
                "but the target y is None. TreeInner scores features against "
                "the target of the held-out rows."
            )
        frame = is_pandas_df(X) or is_polars_df(X)
        if frame:
            validate_data(self, X, skip_check_array=True, reset=True)
        else:
            X = validate_data(
                self,
                X,
                accept_sparse="csr",
                dtype=None,
                ensure_all_finite="allow-nan",
                reset=True,
            )
        y = column_or_1d(y, warn=True)
        check_consistent_length(X, y)
        if y.dtype.kind in "fc" and not np.all(np.isfinite(y)):
            bad = np.flatnonzero(~np.isfinite(y))
            raise ValueError(
                f"y contains {bad.size} NaN or infinite value(s) (first at rows "
                f"{bad[:5].tolist()}); drop those rows or impute the target "
                "before fitting."
            )
        weight = None
        if sample_weight is not None:
            weight = _check_sample_weight(
                sample_weight, X, dtype=np.float64, ensure_non_negative=True
            )

        routing = _routing_enabled()
        rng = check_random_state(self.random_state)
        split_seed, booster_seed = (int(s) for s in rng.randint(2**31 - 1, size=2))

        if self.estimator is None:
            classifier = type_of_target(y) in ("binary", "multiclass")
            base = default_estimator(classifier, booster_seed)
        else:
            base = self.estimator
            classifier = is_classifier(base)
        final = _check_supported(base)
        y_fit = _check_target(y, classifier, final)

        if self.prefit:
            scores, fitted = self._score_prefit(X, y, weight, base, final)
            split_scores = scores[None, :]
            estimators = [fitted]
        else:
            if classifier:  # 0..K-1, as XGBoost requires
                y_fit = np.unique(y_fit, return_inverse=True)[1].astype(np.int64)
            if routing:
                params = dict(fit_params)
                if groups is not None and self.cv is not None:
                    params["groups"] = groups
                routed = process_routing(
                    self, "fit", sample_weight=sample_weight, **params
                )
                booster_params = dict(routed.estimator.fit)
                split_params = dict(routed.splitter.split) if self.cv else {}
            else:
                booster_params = dict(fit_params)
                if sample_weight is not None:
                    booster_params[_weight_key(base, routing)] = weight
                split_params = {} if groups is None else {"groups": groups}
            splits = self._splits(
                X, y_fit, classifier, groups, split_params, split_seed
            )
            es_kind = reader_class(final)
            if not es_kind.early_stopping_rows_needed(final, booster_params):
                es_kind = None
            es_seeds = rng.randint(2**31 - 1, size=len(splits))
            jobs = [
                _carve_early_stopping(i, train, test, y_fit, classifier, es_kind, seed)
                for i, ((train, test), seed) in enumerate(
                    zip(splits, es_seeds, strict=True)
                )
            ]
            estimators, split_scores = self._run(
                base,
                X,
                y_fit,
                weight,
                jobs,
                booster_params,
                es_kind,
                routing,
            )

        self.estimators_ = estimators
        self.estimator_ = estimators[0]
        self.split_scores_ = split_scores
        self.scores_ = split_scores.sum(axis=0)
        order = np.argsort(-self.scores_, kind="mergesort")
        ranking = np.empty(order.size, dtype=np.int64)
        ranking[order] = np.arange(1, order.size + 1)
        self.ranking_ = ranking
        self.threshold_ = _threshold_value(self.scores_, self.threshold)
        support = self.scores_ > self.threshold_
        k = self._max_features(X)
        if k is not None:
            support[order[k:]] = False
        self.support_ = support

    def _splits(self, X, y, classifier, groups, split_params, seed):
        """Return the checked (train, test) index pairs."""
        n = y.shape[0]
        if self.cv is None:
            if groups is not None:
                cv = GroupShuffleSplit(
                    1, test_size=self.validation_fraction, random_state=seed
                )
                split_params = {"groups": groups}
            else:
                cls = StratifiedShuffleSplit if classifier else ShuffleSplit
                cv = cls(1, test_size=self.validation_fraction, random_state=seed)
            what = f"validation_fraction={self.validation_fraction}"
        elif isinstance(self.cv, Integral):
            cls = StratifiedKFold if classifier else KFold
            cv = cls(self.cv, shuffle=True, random_state=seed)
            what = f"cv={self.cv}"
        else:
            cv = check_cv(self.cv, y, classifier=classifier)
            what = f"cv={self.cv!r}"
        try:
            splits = [
                (np.asarray(train), np.asarray(test))
                for train, test in cv.split(X, y, **split_params)
            ]
        except ValueError as e:
            raise ValueError(
                f"Cannot split the {n} rows as {what} asks: {e} Pass more rows "
                "(at least a few per class and per split), or fewer splits."
            ) from e
        if not splits:
            raise ValueError(f"{what} produced no (train, test) split.")
        classes = np.unique(y) if classifier else None
        for i, (train, test) in enumerate(splits):
            if train.size == 0 or test.size == 0:
                raise ValueError(
                    f"Split {i} has {train.size} training and {test.size} held-out "
                    f"rows; each needs at least one. Pass more rows than the "
                    f"{n} given, or fewer splits."
                )
            if classifier:
                held = np.unique(y[test])
                if held.size < 2:
                    raise ValueError(
                        f"The held-out rows of split {i} hold a single class "
                        f"({held.tolist()}), so TreeInner cannot tell features "
                        "apart on them. Use a stratified split (cv=None or an int "
                        "cv stratify for classifiers) or more rows per class."
                    )
                missing = np.setdiff1d(classes, y[train])
                if missing.size:
                    raise ValueError(
                        f"The training rows of split {i} lack the classes (as "
                        f"encoded 0..K-1) {missing.tolist()}; the booster must "
                        "see every class. Use a stratified split or more rows "
                        "per class."
                    )
        return splits

    def _run(self, base, X, y, weight, jobs, booster_params, es_kind, routing):
        """Fit and score every split, in parallel if asked, in split order."""
        n_workers = min(effective_n_jobs(self.n_jobs), len(jobs))
        threads = max(1, cpu_count() // n_workers) if n_workers > 1 else None
        names_in = getattr(self, "feature_names_in_", None)
        # Unordered: the bar advances as soon as any split finishes; the
        # results are put back in split order below.
        parallel = Parallel(
            n_jobs=n_workers,
            return_as="generator_unordered" if n_workers > 1 else "generator",
        )
        inner_verbose = (
            self.verbose
            if self.verbose > 1 and self.attribution == "treeshap" and n_workers == 1
            else 0
        )
        results = parallel(
            delayed(_fit_and_score)(
                base,
                X,
                y,
                weight,
                job,
                booster_params,
                _weight_key(base, routing),
                es_kind,
                routing,
                self.attribution,
                threads,
                self.n_features_in_,
                names_in,
                inner_verbose,
            )
            for job in jobs
        )
        bar = progress(
            results,
            total=len(jobs),
            desc=f"{type(self).__name__}: fitting and scoring",
            verbose=self.verbose,
            unit="split",
        )
        done = {}
        for i, est, split_scores, seconds in bar:
            done[i] = (est, split_scores)
            if self.verbose > 1:
                train, es, test = jobs[i][1:]
                fitted_on = f"{train.size} rows" + (
                    f" (+{es.size} for early stopping)" if es is not None else ""
                )
                _write(
                    bar,
                    f"[{type(self).__name__}] split {i + 1}/{len(jobs)}: fitted on "
                    f"{fitted_on}, scored on {test.size} held-out rows, "
                    f"{seconds:.1f}s",
                )
        estimators = [done[i][0] for i in range(len(jobs))]
        scores = [done[i][1] for i in range(len(jobs))]
        return estimators, np.vstack(scores)

    def _score_prefit(self, X, y, weight, base, final):
        if self.cv is not None:
            raise ValueError(
                f"cv={self.cv!r} cannot be used with prefit=True: a prefit "
                "estimator is scored on all the rows given to fit. Set cv=None, "
                "or prefit=False to let the selector fit one model per split."
            )
        try:
            check_is_fitted(base)
        except NotFittedError as e:
            raise NotFittedError(
                f"prefit=True, but the {type(base).__name__} is not fitted. Fit "
                "it first on rows other than those you pass to "
                f"{type(self).__name__}.fit (TreeInner must score held-out rows), "
                "or set prefit=False to let the selector fit it."
            ) from e
        n_in = getattr(base, "n_features_in_", None)
        if n_in is not None and n_in != self.n_features_in_:
            raise ValueError(
                f"The prefit {type(base).__name__} was trained on {n_in} features, "
                f"but X has {self.n_features_in_}. Pass the columns it was trained "
                "on, in the same order."
            )
        fitted = copy.deepcopy(base)
        scores = _score(
            fitted,
            X,
            y,
            weight,
            self.attribution,
            self.n_features_in_,
            getattr(self, "feature_names_in_", None),
        )
        return scores, fitted

    def _max_features(self, X):
        n = self.n_features_in_
        k = self.max_features
        if k is None:
            return None
        if callable(k):
            k = k(X)
            if not isinstance(k, Integral) or not 0 <= k <= n:
                raise ValueError(
                    f"max_features(X) must return an int in [0, {n}], got {k!r}."
                )
            return int(k)
        if isinstance(k, Real) and not isinstance(k, Integral):
            return max(1, int(k * n))
        if k > n:
            raise ValueError(
                f"max_features={k} is larger than the {n} features of X; pass at "
                f"most {n}, a fraction in (0, 1], or None."
            )
        return int(k)

    # -- selection ---------------------------------------------------------------
    def _get_support_mask(self):
        check_is_fitted(self, "support_")
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
            (categorical columns stay categorical).

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
        >>> sel = TreeInnerSelector(est, threshold=-np.inf, max_features=2)
        >>> sel = sel.set_output(transform="pandas").fit(X, y)
        >>> out = sel.transform(X)
        >>> out.shape[1], "a" in out.columns
        (2, True)
        """
        dense = _get_output_config("transform", estimator=self)["dense"]
        if dense == "default" or not (is_pandas_df(X) or is_polars_df(X)):
            return super().transform(X)
        validate_data(self, X, skip_check_array=True, reset=False)
        mask = self.get_support()
        if not mask.any():
            warnings.warn(
                "No features were selected: either the data is too noisy or the "
                "selection test too strict.",
                UserWarning,
                stacklevel=2,
            )
        out = _safe_indexing(X, np.flatnonzero(mask), axis=1)
        if dense == "pandas" and is_polars_df(out):
            out = out.to_pandas()
        elif dense == "polars" and is_pandas_df(out):
            import polars as pl

            out = pl.from_pandas(out)
        return out

    # -- scikit-learn plumbing ---------------------------------------------------
    def get_metadata_routing(self):
        """Routing of fit metadata to the booster and the splitter.

        ``sample_weight`` is consumed by the selector itself (it weights the
        inner product) and routed to the booster's fit when the booster
        requests it; the default estimator requests it. ``groups`` go to the
        ``cv`` splitter.

        Returns
        -------
        routing : MetadataRouter
            The routing information.

        References
        ----------
        Paper 000, Eq. 21: the weights of the inner product.

        Examples
        --------
        >>> import sklearn, xgboost as xgb
        >>> from skl_treeinner import TreeInnerSelector
        >>> with sklearn.config_context(enable_metadata_routing=True):
        ...     est = xgb.XGBRegressor().set_fit_request(sample_weight=True)
        ...     sel = TreeInnerSelector(est).set_fit_request(sample_weight=True)
        ...     routing = sel.get_metadata_routing()
        >>> sorted(routing.consumes("fit", ["sample_weight", "groups"]))
        ['sample_weight']
        """
        if self.estimator is None:
            estimator = default_estimator(False).set_fit_request(sample_weight=True)
        else:
            estimator = self.estimator
        router = MetadataRouter(owner=self).add_self_request(self)
        router.add(
            estimator=estimator,
            method_mapping=MethodMapping().add(caller="fit", callee="fit"),
        )
        if self.cv is not None:
            router.add(
                splitter=check_cv(self.cv),
                method_mapping=MethodMapping().add(caller="fit", callee="split"),
            )
        return router

    def __sklearn_tags__(self):
        """Tags: NaN and sparse input as the booster allows, y required."""
        from sklearn.utils import get_tags

        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        if self.estimator is None:
            tags.input_tags.allow_nan = True
            tags.input_tags.sparse = True
        else:
            inner = get_tags(self.estimator).input_tags
            tags.input_tags.allow_nan = inner.allow_nan
            tags.input_tags.sparse = inner.sparse
            tags.input_tags.categorical = inner.categorical
        return tags


# -- helpers (module level so that joblib can pickle the jobs) --------------------
def _final_step(estimator):
    if isinstance(estimator, Pipeline):
        return estimator.steps[-1][1]
    return estimator


def _check_supported(estimator):
    """Return the booster at the end of ``estimator``; TypeError if unsupported."""
    final = _final_step(estimator)
    try:
        supported = reader_class(final) is not None
    except ImportError as e:  # a registered reader that is not installed
        raise TypeError(
            f"TreeInnerSelector cannot read {type(final).__qualname__} models in "
            f"this installation: {e}. Supported models: {SUPPORTED_MODELS}."
        ) from e
    if not supported:
        where = " at the end of the Pipeline" if final is not estimator else ""
        raise TypeError(
            f"TreeInnerSelector cannot score a {type(final).__module__}."
            f"{type(final).__qualname__}{where}: TreeInner reads the trees of a "
            f"gradient-boosted model. Pass one of: {SUPPORTED_MODELS}; or a "
            "Pipeline ending in one; or estimator=None for XGBoost."
        )
    return final


def _check_target(y, classifier: bool, final):
    """Refuse a target that does not suit the estimator, before any fit."""
    kind = type_of_target(y, input_name="y", raise_unknown=True)
    if classifier:
        if kind not in ("binary", "multiclass"):
            raise ValueError(
                f"{type(final).__name__} is a classifier, but y is a {kind} target "
                f"(e.g. {y[:3].tolist()}). Pass a regressor as estimator, or bin y "
                "into class labels."
            )
        if np.unique(y).size < 2:
            raise ValueError(
                f"y holds 1 class ({np.unique(y).tolist()}); a classifier needs "
                "at least two."
            )
    elif y.dtype.kind not in "biuf":
        raise ValueError(
            f"{type(final).__name__} is a regressor, but y has dtype {y.dtype} "
            f"(e.g. {y[:3].tolist()}). Pass numbers, or a classifier as estimator."
        )
    return y


def _weight_key(estimator, routing: bool) -> str:
    """Name the fit parameter under which the booster gets sample weights."""
    if isinstance(estimator, Pipeline) and not routing:
        return f"{estimator.steps[-1][0]}__sample_weight"
    return "sample_weight"


def _carve_early_stopping(i, train, test, y, classifier, es_kind, seed):
    """(split index, fit rows, early-stopping rows or None, held-out rows)."""
    if es_kind is None:
        return i, train, None, test
    try:
        fit_rows, es_rows = train_test_split(
            train,
            test_size=EARLY_STOPPING_FRACTION,
            stratify=y[train] if classifier else None,
            random_state=int(seed),
        )
    except ValueError as e:
        raise ValueError(
            f"Cannot set aside {EARLY_STOPPING_FRACTION:.0%} of the {train.size} "
            f"training rows of split {i} for early stopping: {e} Pass more rows, "
            "or turn early stopping off."
        ) from e
    if classifier:
        missing = np.setdiff1d(np.unique(y), y[fit_rows])
        if missing.size:
            raise ValueError(
                f"After setting aside early-stopping rows, the training rows of "
                f"split {i} lack classes {missing.tolist()}. Pass more rows per "
                "class, or turn early stopping off."
            )
    return i, np.sort(fit_rows), np.sort(es_rows), test


def _split_pipeline_params(pipe, params, routing):
    """Per-step fit parameters of a Pipeline fitted step by step."""
    names = [name for name, _ in pipe.steps]
    if routing:
        routed = process_routing(pipe, "fit", **params)
        per_step = {}
        for name, step in pipe.steps[:-1]:
            if step is None or step == "passthrough":
                continue
            per_step[name] = dict(routed[name].fit_transform)
        per_step[names[-1]] = dict(routed[names[-1]].fit)
        return per_step
    per_step = {name: {} for name in names}
    for key, value in params.items():
        name, sep, param = key.partition("__")
        if not sep or name not in per_step:
            raise ValueError(
                f"Fit parameter {key!r} is not of the form 'step__parameter' for "
                f"a step of the Pipeline {names}; prefix it with the step name."
            )
        per_step[name][param] = value
    return per_step


def _fit_estimator(est, X_fit, y_fit, params, es, routing):
    """Fit ``est``; ``es`` is (kind, X_es, y_es, w_es) or None."""
    if es is None:
        est.fit(X_fit, y_fit, **params)
        return
    kind, X_es, y_es, w_es = es
    if isinstance(est, Pipeline):
        # Fit the steps before the booster, then hand it the transformed
        # early-stopping rows, which Pipeline.fit cannot do.
        per_step = _split_pipeline_params(est, params, routing)
        for name, step in est.steps[:-1]:
            if step is None or step == "passthrough":
                continue
            X_fit = step.fit_transform(X_fit, y_fit, **per_step.get(name, {}))
            X_es = step.transform(X_es)
        final, params = est.steps[-1][1], per_step[est.steps[-1][0]]
    else:
        final = est
    es_params = kind.early_stopping_fit_params(
        final, X_es, y_es, sample_weight=w_es, fit_params=params
    )
    final.fit(X_fit, y_fit, **params, **es_params)


def _input_columns(pre, n_out, n_in, names_in):
    """Index of the input feature behind each column the booster sees."""
    try:
        names_out = [str(n) for n in pre.get_feature_names_out()]
    except (AttributeError, NotFittedError, ValueError, TypeError):
        names_out = None
    if names_out is None:
        if n_out == n_in:
            return np.arange(n_in)
        detail = f"{n_out} columns without names"
    else:
        names = (
            [str(n) for n in names_in]
            if names_in is not None
            else [f"x{i}" for i in range(n_in)]
        )
        position = {name: i for i, name in enumerate(names)}
        index = []
        for name in names_out:
            if name not in position:
                name = name.partition("__")[2]  # ColumnTransformer's prefix
            index.append(position.get(name, -1))
        index = np.asarray(index, dtype=np.int64)
        if (
            index.size == n_in
            and index.min(initial=0) >= 0
            and np.array_equal(np.sort(index), np.arange(n_in))
        ):
            return index
        detail = f"columns {names_out[:6]}{'...' if n_out > 6 else ''}"
    raise ValueError(
        f"The Pipeline's steps before the booster turn the {n_in} input features "
        f"into {detail}, which do not map one-to-one to the input features. "
        "TreeInnerSelector scores and selects input features, so those steps must "
        "keep one column per feature (imputers, scalers, OrdinalEncoder). Use the "
        "booster's native categorical support instead of one-hot encoding, or "
        "select on the transformed data."
    )


def _score(est, X, y, weight, attribution, n_in, names_in, verbose=0):
    """TreeInner of every input feature on the rows (X, y)."""
    if isinstance(est, Pipeline) and len(est.steps) > 1:
        pre, model = est[:-1], est.steps[-1][1]
        Xt = pre.transform(X)
        raw = tree_inner(
            model, Xt, y, attribution=attribution, sample_weight=weight, verbose=verbose
        )
        scores = np.zeros(n_in)
        scores[_input_columns(pre, raw.size, n_in, names_in)] = raw
        return scores
    model = _final_step(est)
    return tree_inner(
        model, X, y, attribution=attribution, sample_weight=weight, verbose=verbose
    )


def _write(bar, line: str) -> None:
    """Print ``line`` to stderr without breaking a tqdm bar in progress."""
    write = getattr(bar, "write", None)
    if write is not None:
        write(line, file=sys.stderr)
    else:
        print(line, file=sys.stderr, flush=True)


def _set_threads(est, threads):
    final = _final_step(est)
    params = final.get_params(deep=False)
    if "n_jobs" in params:
        current = params["n_jobs"]
        if current is None or current <= 0 or current > threads:
            final.set_params(n_jobs=threads)


def _fit_and_score(
    base,
    X,
    y,
    weight,
    job,
    booster_params,
    weight_key,
    es_kind,
    routing,
    attribution,
    threads,
    n_in,
    names_in,
    inner_verbose=0,
):
    """Fit a clone on one split's training rows and score its held-out rows.

    Returns the split's index, the fitted clone, its scores and the seconds
    it took.
    """
    start = time.perf_counter()
    index, train, es_rows, test = job
    est = clone(base)
    if threads is not None:
        _set_threads(est, threads)
    params = _check_method_params(X, booster_params, train)
    es = None
    if es_rows is not None:
        w_all = booster_params.get(weight_key)
        es = (
            es_kind,
            _safe_indexing(X, es_rows),
            y[es_rows],
            None if w_all is None else np.asarray(w_all)[es_rows],
        )
    w_test = None if weight is None else weight[test]
    with threadpool_limits(limits=threads):
        _fit_estimator(est, _safe_indexing(X, train), y[train], params, es, routing)
        scores = _score(
            est,
            _safe_indexing(X, test),
            y[test],
            w_test,
            attribution,
            n_in,
            names_in,
            inner_verbose,
        )
    return index, est, scores, time.perf_counter() - start


def _threshold_value(scores, threshold) -> float:
    """Read ``threshold`` as a number, as SelectFromModel does."""
    if callable(threshold):
        value = threshold(scores)
    elif isinstance(threshold, str):
        text = threshold.replace(" ", "")
        scale, star, reference = text.rpartition("*")
        references = {"mean": np.mean, "median": np.median}
        if reference not in references:
            raise ValueError(
                f"threshold={threshold!r} is not understood; use a number, "
                "'mean', 'median' or a scaled one such as '1.25*mean'."
            )
        try:
            factor = float(scale) if star else 1.0
        except ValueError as e:
            raise ValueError(
                f"threshold={threshold!r}: the scale {scale!r} is not a number; "
                "write it like '1.25*mean'."
            ) from e
        value = factor * references[reference](scores)
    else:
        value = threshold
    value = float(value)
    if np.isnan(value):
        raise ValueError(f"threshold evaluated to NaN from {threshold!r}.")
    return value
