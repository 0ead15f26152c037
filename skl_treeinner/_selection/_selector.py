"""TreeInnerSelector: keep the features whose TreeInner score on held-out rows is high.

The estimator: its parameters, the plan its ``fit`` decides once
(:class:`~skl_treeinner._engines._plan.SelectionPlan`: the booster, its kind, the
seeds) and hands to the engine of the data (``_engines``: in memory, Dask),
which checks, fits and scores the splits and returns the fitted statistics.
Which features are kept, given them, is in ``_selection`` and ``_cutoff``
(pure functions, so that ``set_params(threshold=...)`` re-selects without
refitting). Nothing here knows a boosting library (the reader registry's job)
or an engine (the dispatch's).
"""

from __future__ import annotations

import os
from numbers import Integral

from sklearn.base import (
    BaseEstimator,
    MetaEstimatorMixin,
    _fit_context,
)
from sklearn.feature_selection import SelectorMixin
from sklearn.utils import metadata_routing
from sklearn.utils._param_validation import (
    HasMethods,
    Interval,
    InvalidParameterError,
    RealNotInt,
    StrOptions,
)

from .._engines._plan import EARLY_STOPPING_FRACTION
from .._stats import _cutoff
from .._stats._feature_groups import GROUP_TESTS
from ._cache import fit_selection_cached
from ._metadata_routing import SklearnPlumbingMixin
from ._parameter_hints import N_JOBS_CONSTRAINTS, with_hint
from ._support import SelectionMixin

__all__ = ["EARLY_STOPPING_FRACTION", "TreeInnerSelector"]

# Fitted attributes stored by fit (threshold_ and support_ are derived).
_FITTED = (
    "estimator_",
    "estimators_",
    "scores_",
    "scores_se_",
    "null_scores_",
    "pvalues_",
    "n_scored_rows_",
    "test_units_",
    "split_scores_",
    "ranking_",
    "max_features_",
    "_fitted_max_features",
    "n_features_in_",
    "feature_names_in_",
    "groups_",
    "group_scores_",
    "group_scores_se_",
    "group_null_scores_",
    "_group_sum_pvalues",
    "_feature_groups",
    "_repeat_statistics",
    "cv_results_",
)


class TreeInnerSelector(
    SklearnPlumbingMixin,
    SelectionMixin,
    SelectorMixin,
    MetaEstimatorMixin,
    BaseEstimator,
):
    """Select features by their TreeInner score on rows the booster never saw.

    A gradient-boosted tree model is fitted on part of the rows, and every
    feature is scored with :func:`~skl_treeinner.tree_inner` on the other
    part: the inner product, tree by tree, of the feature's attribution with
    the residual the tree was fitting (paper 000, Def. 4, Eq. 21). On the
    training rows that is the booster's total gain (Prop. 3), which rewards the
    features the model overfits to; on held-out rows a feature the model only
    overfits to scores negative in expectation.

    The held-out score is a sum over rows, so it has a standard error, and
    the selector tests every feature: by default it keeps the features whose
    score is significantly above the same models' score with the feature's
    values drawn from other held-out rows (one-sided p-value below
    ``alpha``), i.e. those that tell something about y (``test``).

    Parameters
    ----------
    estimator : estimator or None, default=None
        The booster to fit: an XGBoost, LightGBM or scikit-learn
        (HistGradientBoosting / GradientBoosting) regressor or classifier, or
        a :class:`~sklearn.pipeline.Pipeline` ending in one whose earlier steps
        keep one column per input feature (imputers, scalers, column-wise
        encoders) or expand one into columns of its own (``OneHotEncoder``,
        ``SplineTransformer``, a ``ColumnTransformer`` of them): see
        *Pipelines* in the Notes. It is cloned and never modified. ``None``
        uses XGBoost with the paper's standard hyper-parameters and half of
        the features per tree: ``XGBClassifier`` when ``y`` holds class labels,
        ``XGBRegressor`` otherwise, with ``n_estimators=400,
        learning_rate=0.01, max_depth=4, colsample_bytree=0.5,
        min_child_weight=1, reg_lambda=1, tree_method="hist",
        enable_categorical=True`` and a seed drawn from ``random_state``
        (the user guide says why half of the features); in memory below 4,096
        rows ``max_bin`` is one bin per 16 rows, at least 16 (XGBoost
        evaluates every bin at every node, however few the rows).
        The dtype of ``y`` decides (the command line uses the same rule):
        integer, boolean, string and categorical targets are class labels,
        float targets are numbers even when every value is whole. Pass
        ``y.astype(float)`` or a regressor to fit integers as numbers (with
        more than 20 distinct integers the default warns), a classifier to
        fit float labels as classes (a float 0/1 target warns).
    attribution : {"predecomp", "treeshap"}, default="predecomp"
        Per-tree attribution in the inner product: PreDecomp (Def. 1) or each
        tree's own TreeSHAP (much slower). See :func:`tree_inner`.
    test : {"column", "model"}, default="column"
        What the test of each feature asks.

        - ``"column"``: does the column tell anything about y? H0: the column
          is independent of y and of the other columns. Each held-out row's
          term is compared with the same model's term for the same row with
          the column's value drawn from another held-out row (three draws),
          and the per-row differences are tested (a holdout randomization
          test). A noise column scores as much as its resampled self,
          whatever the model does with it. A column that carries another
          column's information (a near copy of a relevant column) is not
          independent of the others, so it can be kept, as in Boruta's
          all-relevant sense. The draws are uniform over the held-out rows,
          whatever their weights. A feature group's own test (``"sum"``)
          resamples its members together; the members' p-values that
          ``"simes"``, ``"cauchy"`` and ``"sum+simes"`` combine are their own
          tests, each resampled alone. As with either test, a feature is
          kept only if its score also passes ``threshold``.
        - ``"model"``: does *this* model's use of the column help on new rows?
          H0: its expected held-out term is ≤ 0 given the fitted models (with
          an int ``cv`` the folds are symmetric). A split on a rare noise
          dummy can help an underfit model on new rows, so this test keeps
          such columns; use it to audit a fitted model (``prefit=True``), not
          to decide what the data holds.

        With an int ``cv`` the folds are chained (see ``cv``). docs/core.md,
        "The test of a column", says why and what it costs.
    cv : int, cross-validation generator, iterable or None, default=5
        Cross-fitting: every split's test rows are scored by the model
        fitted on its training rows, and the scores are summed over splits,
        so every row is scored once and the test uses all of them. An int
        ``k`` means ``StratifiedKFold(k, shuffle=True)`` for classifiers and
        ``KFold(k, shuffle=True)`` otherwise, seeded from ``random_state``
        (with ``groups``: ``StratifiedGroupKFold`` and ``GroupKFold``); a
        splitter receives ``groups``; an iterable yields ``(train, test)``
        index arrays. ``None``: one split, ``validation_fraction`` of the rows
        held out (stratified for classifiers; grouped when ``groups`` is
        given), about five times faster (the user guide compares the two).
        With ``test="column"`` the k folds of an int are *chained*: split j
        is fitted on folds 1..j and scores fold j + 1 (k - 1 boosters; the
        first fold is only fitted on), so that every fold is scored by
        boosters that saw no later fold and a chance tie of a column to y in
        the whole sample is not counted twice (docs/core.md, "The test of a
        column"); a splitter or iterable is used as given.
    n_repeats : int, default=1
        Repeat the selection this many times on the same rows, each repeat
        with folds (or held-out part), default booster seed and draws of its
        own, and combine the repeats' tests: a feature's test reads the mean
        of the repeats' tested scores over the mean of their standard errors,
        which holds its level whatever ties the repeats (the mean score's
        standard error can only be smaller). More repeats make the selection
        depend less on ``random_state`` (``selection_frequency_`` says how
        often one repeat alone keeps each feature) at one selection's cost
        each. A splitter or iterable ``cv`` is used as given by every repeat
        (only the seeds vary); a given estimator keeps its own seed. The
        refit curve is drawn on the first repeat's splits.
    validation_fraction : float in (0, 1), default=0.5
        Fraction of the rows held out for scoring when ``cv=None``.
    alpha : float in (0, 1) or None, default=0.05
        Significance level of the one-sided test of each feature (H0: its
        expected held-out contribution is ≤ 0; see ``pvalues_``): a feature is
        kept when its p-value is below ``alpha`` *and* its tested score passes
        ``threshold``. ``None`` turns the test off and selects on
        ``threshold`` alone (``alpha=None, threshold=0, test="model"`` is the
        rule of the earliest versions: score > 0).
        Which error this level bounds is ``control``'s choice. Changing it
        with ``set_params`` re-selects without refitting.
    control : {"per_feature", "expected_false", "family_wise", \
"false_discovery"}, default="expected_false"
        The error ``alpha`` bounds, among the features with no effect on new
        rows, when many features are tested (``pvalues_adjusted_``):

        - ``"expected_false"`` (default): on average at most one of them is
          kept, whatever the number of features: each is tested at
          ``min(alpha, 1/n_features)``, so nothing changes up to ``1/alpha``
          features (20 at the default) and from 1,000 columns a feature needs
          p < 0.001;
        - ``"per_feature"``: each of them is kept with probability at most
          ``alpha``; with m of them about ``alpha · m`` are kept, so from
          1,000 columns dozens (no correction for the number of features;
          the earlier default);
        - ``"family_wise"``: the probability of keeping any of them is at most
          ``alpha`` (Holm's step-down, valid under any dependence);
        - ``"false_discovery"``: their expected share among the kept features
          is at most ``alpha`` (Benjamini-Hochberg, which assumes the
          p-values are independent or positively dependent).

        With the default, ``alpha`` matters only where it is below
        ``1/n_features``; to trade noise for recall on many columns, change
        ``control``. The default was chosen by measurement (docs/how-it-works.md,
        "Many columns"). The corrections hold if each
        p-value of a feature with no effect is valid at the small level it
        is compared with (about ``1/n_features``): exactly so with one split
        (``cv=None``); under cross-fitting the folds share the sample's chance
        and the columns every model uses pass a little more often than
        that (docs/how-it-works.md, "Many columns").
        Changing it with ``set_params`` re-selects without refitting.
    threshold : float, str or callable, default=0.0
        Features whose tested score is strictly greater are kept (and, with
        ``alpha``, pass the test). The tested score is the number the test
        reads: ``scores_ - null_scores_`` with ``test="column"`` (how far a
        feature's score is above its score with its values resampled),
        ``scores_`` with ``test="model"``; so a feature that passes the test
        is never dropped by the default 0. A string is ``"mean"``,
        ``"median"`` or a scaled one such as ``"1.25*mean"`` of the tested
        scores, as in :class:`~sklearn.feature_selection.SelectFromModel`; a
        callable receives them and returns the threshold.
    max_features : int, float, callable, "best", "1se" or None, default=None
        Keep at most this many of the features that pass the test and the
        threshold, the best by the test first (``ranking_``): an int ≥ 1, a
        fraction of the features in (0, 1] (at least one), or a callable on
        X returning an int. ``"best"`` or
        ``"1se"``: k from a **refit curve** (``cv_results_``): per split,
        the features above ``threshold`` are ranked by the test on its
        training rows alone, and the booster refitted on the top k is scored
        (``scoring``) on its held-out rows; ``"best"`` takes the k of the
        highest mean score, ``"1se"`` the smallest k within one standard
        error of it, and the k best of the features passing the test on
        all rows are kept. User guide, "How many features". Not with
        ``prefit``.
    feature_groups : dict or None, default=None
        Families of columns to keep or drop as one (the dummies of a
        one-hot encoded categorical, the lags of one series, a column and its
        engineered twins): ``{name: [columns]}``, columns by name when X has
        string column names, else (or also) by index. Every column in no
        group is a group of its own, named by its column. Each group is
        scored (the sum of its members' scores: TreeInner adds over
        features, Eq. 21), tested (``group_test``) and selected as one, and
        ``get_support()`` never splits a group. The cut-off acts on groups:
        ``alpha`` and ``control`` on ``group_pvalues_`` over the number of
        groups, ``threshold`` on the groups' tested scores
        (``group_scores_ - group_null_scores_`` with ``test="column"``,
        ``group_scores_`` with ``test="model"``; ``"mean"`` is the groups'
        mean), ``max_features`` counts groups, the best by their test first
        (a fraction of the groups; a callable returns a number of groups).
        ``scores_``, ``pvalues_`` and ``ranking_`` stay per column, as
        without groups. A column in two groups, a column X
        lacks or an empty group is an error before any fit. An int is a
        position even when X's column labels are ints. Changing it after
        ``fit`` needs a new ``fit`` (the group sums need the held-out rows'
        per-row terms, which are as large as X and are not kept).
    group_test : {"sum+simes", "sum", "simes", "cauchy"}, default="sum+simes"
        How a group of several columns is tested (H0: the group does not
        help the model on new rows):

        - ``"sum"``: the one-sided t-test of the sum of the members' per-row
          terms, the group's own held-out score, with its standard error
          from the same rows (and the target's noise in the sum as its floor);
        - ``"simes"``: Simes' combination of the members' own ``pvalues_``;
        - ``"cauchy"``: their Cauchy combination (ACAT);
        - ``"sum+simes"`` (default): Simes' combination of the sum test's
          and the members' Simes p-value.

        Chosen by measurement (docs/how-it-works.md, "Feature groups").
        ``set_params`` re-selects.
    scoring : str, callable or None, default=None
        The refit curve's score (``max_features="best"``/``"1se"``), as
        scikit-learn's ``scoring``: a scorer name or a callable
        ``scorer(estimator, X, y)``, higher is better, in the user's class
        labels. None: R² for a regressor, minus the log loss (over every
        class) for a classifier. Not used otherwise.
    prefit : bool, default=False
        Whether ``estimator`` is already fitted. Then ``fit(X, y)`` scores it on
        all the given rows, which must be rows it was not trained on
        (``cv`` and ``validation_fraction`` are not used).
    random_state : int, RandomState instance or None, default=None
        Seeds the held-out split, the folds of an int ``cv``, the rows set
        aside for early stopping and the default estimator. A given
        estimator's own seed is left as it is.
    n_jobs : int or None, default=None
        Splits fitted at once. ``None``: the thread policy decides. Splits run
        in threads, as many at once as there are splits and cores, and each
        booster gets its share of the cores. A single split's booster gets every
        core not busy with other programs. An int: that many joblib workers
        (joblib's default backend), each booster ``cores // workers``
        threads. The cores are those OpenMP may use here (``OMP_NUM_THREADS``,
        threadpoolctl and joblib's limits in its workers count), and a lower
        thread count set on the booster is kept. Results do not depend on
        ``n_jobs``. Not used on Dask collections, where the cluster's workers
        fit each booster. See "On a busy machine" in the performance docs.
    verbose : int, default=0
        1: a progress bar over the splits on stderr (tqdm when installed,
        otherwise a few plain lines), advancing as splits finish, also with
        ``n_jobs > 1``. 2 and above: also one line per split (rows fitted and
        scored, seconds) and, with ``attribution="treeshap"`` and the splits
        run one after the other, progress over each model's trees.
    memory : str, joblib.Memory or None, default=None
        Keeps fitted selections on disk (a folder, or a ``joblib.Memory``) and
        reuses one for a fit of the same data, booster, seeds and fitting
        parameters, whatever ``alpha``, ``control``, ``threshold``, an int
        ``max_features``, ``n_jobs`` or ``verbose``: a ``GridSearchCV`` over
        those settings then fits one selection per fold, not one per candidate
        and fold (it clones the selector for every candidate). Needs an int
        ``random_state`` (with ``None`` every fit draws its own seeds, and a
        warning says the cache is not used); data in memory only. The key
        hashes the data on every fit (joblib's hashing, fast beside a fit).
        As ``Pipeline(memory=...)``, nothing is cleared for you.

    Attributes
    ----------
    estimator_ : estimator
        The fitted booster (or pipeline) of the single split, or of the first
        split under ``cv``; the estimator itself (a deep copy) with
        ``prefit=True``.
    estimators_ : list of estimators
        One fitted estimator per split (of every repeat, in turn).
    scores_ : ndarray of shape (n_features,)
        TreeInner score of each input feature, summed over splits (and over
        classes for multi-class models); with ``n_repeats`` > 1, the mean of
        the repeats' sums.
    scores_se_ : ndarray of shape (n_features,)
        Standard error of ``scores_``: ``sqrt(m) · std(z_·k)`` over the
        ``m`` scored rows, where ``z_ik`` is row i's term of the score
        (``tree_inner(..., per_sample=True)``, its weight included), pooled
        over the splits (a row scored by several splits enters once, with the
        sum of its terms; with ``groups``, a group enters once, with the sum
        of its rows'), or, where larger, the target's own noise in the terms:
        given a row's features only its target is left to chance, with the
        loss's variance function at the prediction and a dispersion pooled
        over the scored rows (squared error, log-loss, Poisson, gamma,
        Tweedie), or the model's label probabilities (other classifiers).
        Without that floor a
        column split on by few rows passed as noise when the rare class
        missed them. It does not depend on the scale of ``sample_weight``.
        With ``test="column"``, the same of ``scores_ - null_scores_``, from
        each unit's differences of its terms and their resampled mean. With
        ``n_repeats`` > 1, the mean of the repeats' standard errors: at least
        the standard error of the mean score, whatever ties the repeats.
    null_scores_ : ndarray of shape (n_features,)
        With ``test="column"`` (the default): each feature's score with its
        values drawn from other held-out rows (the mean over draws; summed
        over splits): what the models' use of a column that tells nothing
        about y scores.
    pvalues_ : ndarray of shape (n_features,)
        One-sided p-value of each feature, against Student's t with ``m - 1``
        degrees of freedom. With ``test="column"`` (the default): H0 "the
        feature is independent of y and of the other features", from
        ``t = (scores_ - null_scores_) / scores_se_``. With ``test="model"``:
        H0 "its expected contribution on a new row is ≤ 0" against "> 0",
        from ``t = scores_ / scores_se_``.
        How it is calibrated where y is independent of X, and at H0's
        boundary, is measured in docs/how-it-works.md ("How the selector
        decides", "Many columns").
    pvalues_adjusted_ : ndarray of shape (n_features,)
        ``pvalues_`` adjusted for the number of features as ``control`` asks
        (derived: ``set_params(control=...)`` takes effect without
        refitting); a feature passes the test when it is below ``alpha``.
    n_scored_rows_ : int
        ``m``: the number of independent units the test counts: the distinct
        held-out rows of nonzero weight, or, when ``groups`` were given, the
        groups they belong to, or the blocks of consecutive rows
        (``test_units_``); with ``n_repeats`` > 1, the fewest of any repeat.
    test_units_ : {"rows", "groups", "blocks"}
        What the test counts as independent: held-out rows; the ``groups``
        given to ``fit``; or, when the splits keep time order (``cv`` a
        ``TimeSeriesSplit``, walk-forward or purged folds: each split holds
        out one run of consecutive rows that its training rows do not touch)
        or a prefit model scores rows that look ordered, up to 20 blocks of
        consecutive held-out rows, each five autocorrelation times of the
        terms and at least 10 rows long where the series allows two, whose
        sums are nearly independent when the rows depend on their neighbours
        only (the user guide's "Time series and panels").
    groups_ : dict
        With ``feature_groups``: ``{name: column indices}`` of every group,
        singletons included, in the order of each group's first column
        (not the order of ``feature_groups``). Every ``group_*`` array
        follows this order: ``dict(zip(selector.groups_,
        selector.group_pvalues_))`` labels one.
    group_scores_ : ndarray of shape (n_groups,)
        With ``feature_groups``: each group's score, the sum of its members'
        ``scores_``.
    group_null_scores_ : ndarray of shape (n_groups,)
        With ``feature_groups`` and ``test="column"``: each group's score
        with its members resampled together (as ``null_scores_``).
    group_scores_se_ : ndarray of shape (n_groups,)
        With ``feature_groups``: the standard error of ``group_scores_``,
        from the per-unit sums of the members' terms, as ``scores_se_``;
        with ``test="column"``, of ``group_scores_ - group_null_scores_``.
    group_pvalues_ : ndarray of shape (n_groups,)
        With ``feature_groups``: the one-sided p-value of each group by
        ``group_test`` (derived; a group of one column has that column's
        p-value).
    group_pvalues_adjusted_ : ndarray of shape (n_groups,)
        ``group_pvalues_`` adjusted for the number of groups as ``control``
        asks (derived).
    group_support_ : ndarray of shape (n_groups,), bool
        The kept groups (derived).
    split_scores_ : ndarray of shape (n_splits, n_features)
        The score of each split, on its own held-out rows (with
        ``n_repeats`` > 1, every repeat's splits in turn).
    selection_frequency_ : ndarray of shape (n_features,)
        With ``n_repeats`` > 1: the share of the repeats that keep each
        feature on their own statistics, by the current cut-off (derived).
        The selection tests the repeats' mean instead; for the features with
        no effect, the sum of these shares has at most the expectation
        ``control`` promises for one selection. With one repeat, ``support_``
        as 0.0 or 1.0.
    ranking_ : ndarray of shape (n_features,)
        Rank of each feature by the test, 1 for the best: the smallest
        ``pvalues_`` first; p-values that tie (0 or 1 in floating point far
        in the tails, or features no tree uses) by the larger t statistic,
        the tested score (see ``threshold``) over ``scores_se_``; then in
        column order. ``max_features``, the refit curve, ``plot_scores`` and
        the command line's table follow it.
    support_ : ndarray of shape (n_features,), bool
        The selected features. Derived from the fitted statistics and the
        current ``alpha``, ``control``, ``threshold`` and ``max_features``:
        ``set_params(alpha=..., control=..., threshold=...)`` re-selects without
        refitting, as ``SelectFromModel`` does for its threshold, and so does
        a numeric ``max_features`` (which ``SelectFromModel`` fixes at fit).
    threshold_ : float
        The threshold the tested scores are compared with (derived likewise;
        see ``threshold``).
    max_features_ : int or None
        ``max_features`` as a count of features at fit time (a callable is
        evaluated on the X given to ``fit``; None for ``"best"``/``"1se"``,
        whose k is read off ``cv_results_``); a numeric ``max_features`` set
        later takes effect without changing it.
    cv_results_ : dict of ndarray
        With ``max_features="best"``/``"1se"`` at fit: the refit curve, with
        RFECV's keys: ``n_features`` (the grid of k: every k to 10, then
        steps of about 30 % up to the number of candidates; k counts feature
        groups with ``feature_groups``; 0 is the intercept alone),
        ``mean_test_score``, ``std_test_score`` and ``split{i}_test_score``.
        ``set_params(max_features=...)`` to the other rule or a number
        re-selects from it without refitting.
    n_features_ : int
        The number of features kept (of feature groups, with
        ``feature_groups``): the count of ``support_`` (derived).
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
    *How it decides.* Each split's booster is fitted on its training rows
    (less the rows it stops early on, never the scored ones) and scores
    every feature on its held-out rows. With the default ``test="column"``,
    each held-out row's term of a column is compared with the same model's
    term for that row with the column's value drawn from other held-out
    rows; the per-row differences of all splits are pooled, and
    ``pvalues_`` test whether their mean exceeds 0, that is whether the
    column tells the model anything about y beyond chance (the units are
    rows, ``groups`` or blocks of ordered rows: ``test_units_``).
    ``scores_`` and ``scores_se_`` are the held-out TreeInner scores and
    their standard errors. A feature is kept when its adjusted p-value is
    below ``alpha`` and its score above ``threshold``, at most
    ``max_features`` of them. ``test="model"`` asks instead whether *these*
    fitted models use the feature to good effect on new rows, an audit of
    the models rather than a question about the data.

    Details are in the docs: the user
    guide's "How the selector decides" (the test, weights, the noise floor),
    "Many columns" (``control``), "Feature groups" (``group_test``; a
    Pipeline's expanded columns), "How many features: the refit curve",
    "Early stopping" and "Multi-class models" (labels are encoded 0..K-1, so
    ``estimators_`` predict encoded labels); "Scaling out with Dask" for
    Dask collections (a Dask booster, ``cv`` an int or None, no ``groups``).

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
    >>> selector.scores_.shape, selector.split_scores_.shape  # 5 folds chained
    ((50,), (4, 50))
    >>> bool((selector.pvalues_[selector.support_] < 0.05).all())
    True
    >>> bool(relevant[selector.ranking_ == 1][0])  # the best one is relevant
    True
    >>> selector.transform(X).shape[1] == int(selector.support_.sum())
    True
    """

    __metadata_request__fit = {"groups": metadata_routing.UNUSED}

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit"]), None],
        "attribution": [StrOptions({"predecomp", "treeshap"})],
        "test": [StrOptions({"column", "model"})],
        "cv": ["cv_object"],
        "n_repeats": [Interval(Integral, 1, None, closed="left")],
        "validation_fraction": [Interval(RealNotInt, 0, 1, closed="neither")],
        "alpha": _cutoff.ALPHA_CONSTRAINTS,
        "control": _cutoff.CONTROL_CONSTRAINTS,
        "threshold": _cutoff.THRESHOLD_CONSTRAINTS,
        "max_features": _cutoff.MAX_FEATURES_CONSTRAINTS,
        "feature_groups": [dict, None],
        "group_test": [StrOptions(set(GROUP_TESTS))],
        "scoring": [str, callable, None],
        "prefit": ["boolean"],
        "random_state": ["random_state"],
        "n_jobs": N_JOBS_CONSTRAINTS,
        "verbose": ["verbose"],
        "memory": [None, str, os.PathLike, HasMethods(["cache"])],
    }

    def __init__(
        self,
        estimator=None,
        *,
        attribution="predecomp",
        test="column",
        cv=5,
        n_repeats=1,
        validation_fraction=0.5,
        alpha=0.05,
        control="expected_false",
        threshold=0.0,
        max_features=None,
        feature_groups=None,
        group_test="sum+simes",
        scoring=None,
        prefit=False,
        random_state=None,
        n_jobs=None,
        verbose=0,
        memory=None,
    ):
        self.estimator = estimator
        self.attribution = attribution
        self.test = test
        self.cv = cv
        self.n_repeats = n_repeats
        self.validation_fraction = validation_fraction
        self.alpha = alpha
        self.control = control
        self.threshold = threshold
        self.max_features = max_features
        self.feature_groups = feature_groups
        self.group_test = group_test
        self.scoring = scoring
        self.prefit = prefit
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.memory = memory

    # -- fitting -----------------------------------------------------------------
    def _validate_params(self):
        # scikit-learn's message, and what to pass instead where users trip.
        try:
            super()._validate_params()
        except InvalidParameterError as e:
            raise with_hint(e, self.get_params(deep=False)) from None

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None, sample_weight=None, *, groups=None, **fit_params):
        """Fit the booster on each training part and score features on held-out rows.

        Parameters
        ----------
        X : array-like, sparse matrix or DataFrame of shape (n_samples, n_features)
            Features. pandas and polars frames reach the booster untouched
            (categorical columns, NaN). A Dask array or DataFrame is split,
            fitted and scored on the cluster (see Notes).
        y : array-like of shape (n_samples,)
            Target: class labels for a classifier, numbers for a regressor.
        sample_weight : array-like of shape (n_samples,), default=None
            Row weights: passed to the booster's fit and used in the inner
            product (Eq. 21) on the held-out rows.
        groups : array-like of shape (n_samples,), default=None
            Group labels. Whole groups are held out: an int ``cv`` becomes
            ``GroupKFold`` (``StratifiedGroupKFold`` for classifiers),
            ``cv=None`` ``GroupShuffleSplit``, and a splitter receives them.
            Rows of a group are not independent, so the test counts groups,
            not rows (each with the sum of its rows' terms).
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
            If the estimator is not a supported booster, or, on Dask
            collections, not a Dask booster (or ``cv`` is a splitter, or
            ``groups`` are given).
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
        >>> sel.split_scores_.shape, int(sel.ranking_[0])  # 3 folds chained
        ((2, 4), 1)
        """
        for name in _FITTED:
            self.__dict__.pop(name, None)
        try:
            # The engine of the data (in memory, Dask) checks, fits and scores
            # the plan; only its fitted statistics are stored.
            plan = self._plan(X, y, sample_weight, groups=groups, fit_params=fit_params)
            # A cut-off that cannot apply to X fails before the cross-fit runs.
            _cutoff.check_cutoff(self.threshold, self.max_features, X)
            self._store(fit_selection_cached(self.memory, plan, self.random_state), X)
        except BaseException:
            for name in _FITTED:
                self.__dict__.pop(name, None)
            raise
        return self
