"""What the selector decides before any engine runs, and what the engines share.

:class:`SelectionPlan` is what :meth:`TreeInnerSelector.fit
<skl_treeinner.TreeInnerSelector.fit>` hands to an engine (``_engines``): the
data, the booster to fit, the seeds. The helpers below resolve what every
engine needs to fit a booster: the booster itself (:func:`resolve_estimator`),
which step of a Pipeline it is, whether it is a classifier and supported, what
an int ``cv`` stands for, and its fit parameters with metadata routing resolved
(:func:`make_fit_setup`, :func:`route_fit_metadata`). Library knowledge (how a
booster is told to stop early) comes from the reader registry, never from here.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from numbers import Integral

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.base import is_classifier as sklearn_is_classifier
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import (
    GroupKFold,
    KFold,
    StratifiedGroupKFold,
    StratifiedKFold,
)
from sklearn.pipeline import Pipeline
from sklearn.utils import check_random_state
from sklearn.utils.metadata_routing import process_routing
from sklearn.utils.validation import check_is_fitted

from .._readers import SUPPORTED_MODELS, ModelReader, reader_class
from .._stats._cutoff import resolve_max_features
from .._stats._feature_groups import resolve_feature_groups
from .._utils._validation import target_is_classes

__all__ = [
    "resolve_groups",
    "EARLY_STOPPING_FRACTION",
    "MIN_SCORING_ROWS",
    "MIN_SPLIT_ROWS",
    "FitSetup",
    "SelectionPlan",
    "check_prefit",
    "check_supported",
    "early_stopping_reader",
    "final_step",
    "int_splitter",
    "is_classifier",
    "make_fit_setup",
    "route_fit_metadata",
    "pipeline_step_params",
    "repeat_plans",
    "resolve_estimator",
    "selection_seeds",
    "weight_key_of",
]

#: Fraction of each training part set aside for early stopping, when the
#: booster is configured to stop early and needs rows to stop on.
EARLY_STOPPING_FRACTION = 0.1

#: Fewest held-out rows the scores may come from, over all splits. A score is
#: a sum over these rows: from one or two its sign is the noise of their
#: residuals, and its standard error (the spread of the per-row terms) needs
#: several. Five refuses the degenerate cases while letting small data
#: through: scikit-learn's estimator checks fit on 10 to 20 rows. Scores from
#: few rows are weak; their standard errors and p-values say so.
MIN_SCORING_ROWS = 5
#: Fewest held-out rows of a single split (its own score is one of
#: ``split_scores_``): under cross-fitting the rows of all splits are pooled
#: for the test, so one split may score on as few as this.
MIN_SPLIT_ROWS = 2


@dataclass(frozen=True)
class FitSetup:
    """What every split shares: the booster, the rows, and how to fit and score."""

    #: The unfitted booster (or Pipeline ending in one), cloned per split.
    estimator: object
    #: All rows, as given to ``fit``.
    X: object
    #: The target the booster is fitted on (classes encoded 0..K-1).
    y: np.ndarray
    #: Weights of the inner product on the held-out rows, or ``None``.
    sample_weight: np.ndarray | None
    #: The booster's fit parameters, one entry per row where they are
    #: row-aligned (split with the rows); routing already resolved.
    fit_params: dict
    #: The key of ``fit_params`` that holds the booster's sample weights.
    weight_key: str
    #: The reader class that hands early-stopping rows to the library, or None.
    es_reader: type[ModelReader] | None
    #: For a Pipeline that stops early: the fit parameters of each step.
    step_params: dict | None
    #: ``"predecomp"`` or ``"treeshap"``.
    attribution: str
    #: Number and names of the input features (scores are mapped back to them).
    n_features_in: int
    feature_names_in: np.ndarray | None
    #: The feature groups (:class:`~skl_treeinner._stats._feature_groups.FeatureGroups`)
    #: whose sums are tested too, or ``None``.
    feature_groups: object = None
    #: Threads per booster when splits run in parallel, else ``None``.
    threads: int | None = None
    #: Verbosity of each split's own scoring (TreeSHAP progress).
    verbose: int = 0
    #: Seeds the test of a column's draws (with each split's index); None
    #: for the test of the model's use (``test="model"``).
    resample_seed: int | None = None


@dataclass(frozen=True)
class SelectionPlan:
    """What :meth:`TreeInnerSelector.fit` decides once and hands to an engine.

    Plain values only: the data untouched, the selector's settings resolved,
    the seeds. The engine checks the data its own way and supplies the hooks
    of the one selection flow (:mod:`skl_treeinner._engines._flow`), which
    returns the fitted statistics; the selector stores them.
    """

    #: The data and metadata given to ``fit``, untouched.
    X: object
    y: object
    sample_weight: object
    groups: object
    fit_params: dict
    #: The booster (or Pipeline ending in one) to fit on every split, or to
    #: score with ``prefit``; ``None`` for the engine's default, which the
    #: engine builds after its own checks (:func:`resolve_estimator`).
    estimator: object
    #: Seeds of the folds (or the held-out part) and of the default booster.
    split_seed: int
    booster_seed: int
    #: Draws one seed per split (its early-stopping rows), after those two.
    rng: np.random.RandomState
    #: The selector's class name, for messages and progress bars.
    name: str = "TreeInnerSelector"
    #: The selector's parameters that the fit reads, as given.
    cv: object = 5
    validation_fraction: float = 0.5
    attribution: str = "predecomp"
    #: ``"column"`` or ``"model"``: what the test asks (the selector's ``test``).
    test: str = "column"
    #: How many times the selection is repeated on the same rows, each repeat
    #: with its own seeds (:func:`repeat_plans`), their tests combined.
    n_repeats: int = 1

    prefit: bool = False
    feature_groups: dict | None = None
    max_features: object = None
    scoring: object = None
    n_jobs: int | None = None
    verbose: int = 0
    #: With metadata routing enabled, the selector's routing of ``fit``'s
    #: metadata (scikit-learn's ``MetadataRouter``: to the booster and the
    #: splitter), applied once the data are checked (:func:`make_fit_setup`);
    #: ``None`` without routing (the checked weights then reach the booster).
    router: object = None
    #: With ``max_features="best"``/``"1se"``: ``candidates(fitted,
    #: groups)``, the units (features, or feature ``groups``) that pass the
    #: selector's cut-off on one split's fitted statistics, in the order of
    #: the test (the refit curve's ranking,
    #: :mod:`skl_treeinner._stats._refit_curve`); a pure function of those
    #: values. Else ``None``.
    candidates: object = None

    @property
    def curve(self) -> bool:
        """Whether the fit computes the refit curve (``cv_results_``)."""
        return self.candidates is not None

    @property
    def chained(self) -> bool:
        """Whether an int ``cv`` chains its folds (the test of a column does)."""
        return self.test == "column" and isinstance(self.cv, Integral)


# -- what to fit -------------------------------------------------------------------
def final_step(estimator):
    """Return the booster at the end of ``estimator`` (itself if no Pipeline)."""
    if isinstance(estimator, Pipeline):
        return estimator.steps[-1][1]
    return estimator


def is_classifier(estimator) -> bool:
    """Whether ``estimator`` (or the booster ending its Pipeline) is a classifier.

    scikit-learn's ``is_classifier`` reads estimator tags, which XGBoost before
    2.1.4 does not declare; its classifiers still derive from ClassifierMixin.
    """
    if sklearn_is_classifier(estimator):
        return True
    final = final_step(estimator)
    return isinstance(final, ClassifierMixin) or (
        getattr(final, "_estimator_type", None) == "classifier"
    )


def resolve_estimator(plan: SelectionPlan, default) -> tuple[object, bool]:
    """Return the booster a plan fits and whether it is a classifier.

    The given estimator, or ``default(classifier, plan.booster_seed,
    n_rows)`` (an engine's
    :meth:`~skl_treeinner._engines._base.Engine.default_estimator`; ``n_rows``
    is X's number of rows where its shape holds it, else None), a classifier
    when y's dtype holds class labels (the selector's one task rule,
    :func:`~skl_treeinner._utils._validation.target_is_classes`).
    """
    if plan.estimator is None:
        classifier = plan.y is not None and target_is_classes(plan.y)
        return default(classifier, plan.booster_seed, known_rows(plan.X)), classifier
    return plan.estimator, is_classifier(plan.estimator)


def known_rows(X) -> int | None:
    """X's number of rows where known without computing (a Dask one may not be)."""
    shape = getattr(X, "shape", None)
    if shape is None:
        return len(X) if isinstance(X, list | tuple) else None
    return int(shape[0]) if isinstance(shape[0], Integral) else None


def check_supported(estimator):
    """Return the booster at the end of ``estimator``; TypeError if unsupported."""
    final = final_step(estimator)
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


def check_prefit(name, n_features_in, base) -> None:
    """Check that a prefit ``base`` can be scored by the selector ``name`` on X.

    ``n_features_in``: the number of X's columns.
    """
    try:
        check_is_fitted(base)
    except NotFittedError as e:
        raise NotFittedError(
            f"prefit=True, but the {type(base).__name__} is not fitted. Fit "
            "it first on rows other than those you pass to "
            f"{name}.fit (TreeInner must score held-out rows), "
            "or set prefit=False to let the selector fit it."
        ) from e
    n_in = getattr(base, "n_features_in_", None)
    if n_in is not None and n_in != n_features_in:
        raise ValueError(
            f"The prefit {type(base).__name__} was trained on {n_in} features, "
            f"but X has {n_features_in}. Pass the columns it was trained "
            "on, in the same order."
        )


def weight_key_of(estimator, routing: bool) -> str:
    """Name the fit parameter under which the booster gets sample weights."""
    if isinstance(estimator, Pipeline) and not routing:
        return f"{estimator.steps[-1][0]}__sample_weight"
    return "sample_weight"


def early_stopping_reader(final, fit_params) -> type[ModelReader] | None:
    """Return the reader that hands early-stopping rows to ``final``, or None."""
    reader = reader_class(final)
    return reader if reader.early_stopping_rows_needed(final, fit_params) else None


def pipeline_step_params(pipe, params, routing: bool) -> dict:
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


def make_fit_setup(
    plan: SelectionPlan,
    base,
    X,
    y,
    weight,
    *,
    n_features_in,
    feature_names_in,
    groups=None,
    feature_groups=None,
):
    """Return what every split shares (:class:`FitSetup`) and the splitter's params.

    ``weight`` is the checked weights (the booster gets them without
    metadata routing; with it, ``plan.router`` routes what ``fit`` was
    given to the booster and the splitter); ``groups`` the row groups the
    splitter takes; ``feature_groups`` the resolved groups whose sums every
    split also scores, or None.
    """
    routing = plan.router is not None
    weight_key = weight_key_of(base, routing)
    if routing:
        booster_params, split_params = route_fit_metadata(
            plan.router,
            cv=plan.cv,
            sample_weight=plan.sample_weight,
            groups=groups,
            fit_params=plan.fit_params,
        )
    else:
        booster_params = dict(plan.fit_params)
        if plan.sample_weight is not None:
            booster_params[weight_key] = weight
        split_params = {} if groups is None else {"groups": groups}
    final = final_step(base)
    if final is base:  # X reaches the booster as given
        X = reader_class(final).fit_input(X)
    early_stopping = early_stopping_reader(final, booster_params)
    step_params = None
    if early_stopping is not None and final is not base:
        step_params = pipeline_step_params(base, booster_params, routing)
    setup = FitSetup(
        estimator=base,
        X=X,
        y=y,
        sample_weight=weight,
        fit_params=booster_params,
        weight_key=weight_key,
        es_reader=early_stopping,
        step_params=step_params,
        attribution=plan.attribution,
        n_features_in=n_features_in,
        feature_names_in=feature_names_in,
        feature_groups=feature_groups,
        resample_seed=plan.split_seed if plan.test == "column" else None,
    )
    return setup, split_params


def route_fit_metadata(router, *, cv, sample_weight, groups, fit_params):
    """Route ``fit``'s metadata once: ``(booster's params, splitter's params)``.

    ``router`` is the selector's ``get_metadata_routing()``; ``groups`` go
    to the splitter when there is one (``cv`` not None).
    """
    params = dict(fit_params)
    if groups is not None and cv is not None:
        params["groups"] = groups
    routed = process_routing(router, "fit", sample_weight=sample_weight, **params)
    return dict(routed.estimator.fit), dict(routed.splitter.split) if cv else {}


def selection_seeds(random_state):
    """Return ``(split_seed, booster_seed, rng)``, drawn from ``random_state`` in order.

    The selector's ``fit`` seeds its folds and its default booster with these;
    the command line seeds the booster it builds with the same
    ``booster_seed``, so that the two give the same scores for one seed.
    """
    rng = check_random_state(random_state)
    split_seed, booster_seed = (int(s) for s in rng.randint(2**31 - 1, size=2))
    return split_seed, booster_seed, rng


def repeat_plans(plan: SelectionPlan) -> list[SelectionPlan]:
    """Return the plan of every repeat: the plan itself, then its repeats' own.

    Repeat r > 0 draws its folds (or held-out part), its default booster's
    seed, its early-stopping rows and its draws from a seed of its own,
    ``(split_seed, r)``; a splitter or a list of splits given as ``cv`` is
    used as given by every repeat (its rows are the user's to choose), so
    that only the seeds vary there. One repeat is the plan as it is.
    """
    plans = [plan]
    for r in range(1, plan.n_repeats):
        rng = np.random.RandomState([plan.split_seed, r])
        split_seed, booster_seed = (int(s) for s in rng.randint(2**31 - 1, size=2))
        plans.append(
            dataclasses.replace(
                plan, split_seed=split_seed, booster_seed=booster_seed, rng=rng
            )
        )
    return plans


def int_splitter(k, classifier, *, grouped, seed=None):
    """Return the splitter an int ``cv`` stands for.

    ``StratifiedKFold`` for classifiers, ``KFold`` otherwise, shuffled and
    seeded; with groups, their group-aware versions (``StratifiedGroupKFold``,
    ``GroupKFold``), so that no group is both fitted and scored.
    """
    if grouped:
        cls = StratifiedGroupKFold if classifier else GroupKFold
    else:
        cls = StratifiedKFold if classifier else KFold
    return cls(k, shuffle=True, random_state=seed)


def resolve_groups(plan: SelectionPlan, n_features_in, feature_names_in):
    """Return the plan's ``feature_groups`` over X's columns, or None.

    Called by the selection flow once X's columns are known, before any
    fit: bad groups, and an int ``max_features`` above the number of
    groups it then counts, fail there.
    """
    groups = resolve_feature_groups(
        plan.feature_groups, n_features_in, feature_names_in
    )
    count = plan.max_features
    if groups is not None and count is not None and not callable(count):
        resolve_max_features(count, groups.n_groups, unit="feature groups")
    return groups
