"""The selector's fit on Dask collections: split, fit and score on the cluster.

The in-memory selector indexes rows; a Dask collection has no cheap row index,
so the rows are *labelled* instead (:class:`~._codes.Codes`). Every row gets a fold, the
split that holds it out, drawn per partition from a generator seeded by
``(seed, partition number)`` and stratified by class within the partition, so
the folds are reproducible for the same data in the same partitions. Split j
fits on the rows whose fold is not j (``cv=None``: fold 0 is held out, fold 1
fitted on), less the rows it sets aside for early stopping, drawn for that
split from a generator seeded by the partition and j; it is fitted by the
booster's own Dask ``fit`` and scored on the rows of fold j. With the test of
a column the folds are chained: split j fits on folds 0..j and is scored on
fold j + 1 (``Codes.training``).

The folds are never a collection of their own: every task that needs them (the
row count, the selection of a split's rows, the scoring) draws them again from
its partition of y and the partition's number, fixed when the graph is built.
A fold column filtered against X by Dask's own masks would not be safe:
dask-expr may move a filter below a ``map_partitions`` and so draw the folds of
X's rows and y's rows from different rows (docs/scaling-out.md has the case).
For the same reason X, y and the weights of a DataFrame travel as one frame
(:func:`~._collections.aligned`).

Only small things come to the client: the class labels, a table of rows per
split, role and class (checked as the in-memory splitters would), the fitted
models, and from the scoring pass, per split, the
:class:`~skl_treeinner._stats._inference.Moments` of the per-row terms (count, sums,
squared deviations): the scores, their standard errors and p-values follow
exactly. The scoring pass reads every partition once and scores each row with
the model of its fold.
"""

from __future__ import annotations

import copy
from numbers import Integral

import numpy as np
from sklearn.base import clone
from sklearn.pipeline import Pipeline
from sklearn.utils import _safe_indexing

from ..._readers import (
    default_library,
    engine_estimator_names,
    engine_estimators,
    engine_twin_name,
    read_model,
    reader_class,
)
from ..._stats import _inference
from ..._stats._dependence import MAX_CHECKED_ROWS, check_ordered_target
from ..._utils._progress import progress
from ..._utils._target_warnings import warn_integer_numbers
from ..._utils._validation import check_target_spread, record_columns
from .._base import CheckedInput, SplitRun, UnitTests
from .._plan import (
    EARLY_STOPPING_FRACTION,
    check_supported,
    final_step,
    make_fit_setup,
    resolve_estimator,
)
from ._codes import ROLES, Rows, check_rows, class_labels, summary
from ._collections import (
    aligned,
    dask_modules,
    is_array,
    partition_scored,
    row_partitions,
    shared_object,
    tree_reduce,
)
from ._curve import held_out_score, intercept_score
from ._fits import fit_all, fit_with_retries

__all__ = ["ENGINE", "DaskRun", "check_input", "meta"]

#: The registry's key for this engine's estimators (``Library.engines``).
ENGINE = "dask"


def meta(X):
    """Return an empty in-memory frame or array with X's columns (for checks)."""
    if is_array(X):
        if X.ndim != 2 or X.shape[1] != X.shape[1]:  # NaN: unknown columns
            raise ValueError(
                f"X must be a 2-D Dask array with known columns; got shape "
                f"{X.shape}. Use X.compute_chunk_sizes() or from_array."
            )
        return np.empty((0, X.shape[1]), dtype=X.dtype)
    if not hasattr(X, "columns"):
        raise ValueError(
            f"X must be a Dask array or DataFrame; got a {type(X).__name__}. "
            "Use series.to_frame() for a single feature."
        )
    return X._meta


# -- fitting -----------------------------------------------------------------------
def _check_estimator(base, prefit):
    if isinstance(base, Pipeline):
        raise TypeError(
            "TreeInnerSelector on Dask collections takes a Dask booster itself, "
            "not a Pipeline: put the preprocessing steps before the selector "
            "in your own Pipeline."
        )
    if prefit or engine_estimators(ENGINE, base) is not None:
        return
    name = type(base).__name__
    twin = engine_twin_name(ENGINE, base)
    fix = (
        f"Pass its Dask version with the same parameters: {twin}"
        f"(**{name.lower()}.get_params())"
        if twin is not None
        else f"Pass {engine_estimator_names(ENGINE)}"
    )
    raise TypeError(
        f"TreeInnerSelector got Dask collections and a {name}, which fits in "
        f"one process and would pull the data into it. {fix}, or "
        f"estimator=None ({default_library().label}'s Dask booster); or pass "
        "in-memory data. A model you fitted already can be scored with "
        "prefit=True."
    )


def _check_fit_params(fit_params, passed_on):
    for key, value in fit_params.items():
        if any(
            key.startswith(name) if name.endswith("_") else key == name
            for name in passed_on
        ):
            continue
        # Arrays and collections are per row; lists (callbacks) are not.
        dask_collection = getattr(value, "__dask_graph__", None) is not None
        if dask_collection or len(getattr(value, "shape", ())) >= 1:
            raise TypeError(
                f"Fit parameter {key!r} looks row-aligned; on Dask collections "
                "only sample_weight (and eval sets, passed on untouched) can be "
                "split with the rows. Pass it to the booster yourself, or "
                "compute a sample that fits in memory."
            )


# -- scoring -----------------------------------------------------------------------
def _partition_moments(X, y, w, codes, scoring):
    """Per split: the :class:`Moments` of the per-row terms of its held-out rows.

    ``scoring`` is ``(readers, attribution, feature_groups, role,
    resample_seed)``, the role ``"held-out"``, or ``"inner-held-out"`` for the refit
    curve's rankings. Per split, a list: the columns' moments and, with
    ``feature_groups``, the groups'; with ``resample_seed`` (the test of a
    column, its rows resampled within the partition) those of the tested
    differences, then those of the terms (:func:`partition_scored`).
    """
    readers, attribution, feature_groups, role, resample_seed = scoring
    out = []
    for j, reader in enumerate(readers):
        rows = np.flatnonzero(codes.role(j, role))  # none: moments are zeros
        w_rows = None if w is None else _safe_indexing(w, rows)
        X_rows, y_rows = _safe_indexing(X, rows), _safe_indexing(y, rows)
        seed = None
        if resample_seed is not None:  # per split, role and partition
            seed = [resample_seed, j, ROLES.index(role), codes.number]
        parts = partition_scored(
            reader, X_rows, y_rows, w_rows, attribution, feature_groups,
            resample_seed=seed,
        )  # fmt: skip
        sets = []
        for z, noise in zip(parts[::2], parts[1::2], strict=True):
            if w_rows is not None:  # rows of weight 0 are not scored (pool_rows)
                scored = np.asarray(w_rows) != 0
                z = z[scored]
                if noise is not None:
                    noise = tuple(part[scored] for part in noise)
            sets.append(_inference.moments(z, noise))
        out.append(sets)
    return out


def _add_moments(*parts):
    return [
        [_combine_all([p[j][i] for p in parts]) for i in range(len(parts[0][j]))]
        for j in range(len(parts[0]))
    ]


def _combine_all(sets):
    total = sets[0]
    for other in sets[1:]:
        total = _inference.combine_moments(total, other)
    return total


def _score(
    dask,
    estimators,
    rows,
    attribution,
    n_features_in,
    feature_groups,
    *,
    role="held-out",
    resample_seed=None,
):
    """Score every split on its held-out rows in one pass over the partitions.

    Returns, per split, the :class:`Moments` of the columns' terms and, with
    ``feature_groups``, of the groups' sums.
    """
    readers = [read_model(est) for est in estimators]
    for reader in readers:
        if reader.ensemble.n_features != n_features_in:
            raise ValueError(
                f"The booster has {reader.ensemble.n_features} features but X "
                f"has {n_features_in}."
            )
    scoring = (tuple(readers), attribution, feature_groups, role, resample_seed)
    shared = shared_object(dask, scoring)
    return tree_reduce(dask, rows.tasks(dask, _partition_moments, shared), _add_moments)


def _target_spread(dask, y, w):
    """(Σ w |y - mean|, mean, Σ w) of a Dask target, on the cluster (y only)."""
    y = y.astype("float64")
    w = y * 0 + 1 if w is None else w
    total, weighted = (float(v) for v in dask.compute(w.sum(), (w * y).sum()))
    if total <= 0:
        return 0.0, 0.0, total
    center = weighted / total
    spread = float(dask.compute((w * abs(y - center)).sum())[0])
    return spread, center, total


def _head(dask, y):
    """Return the first rows' targets, in memory, for the order check.

    Partitions are computed in order until :data:`MAX_CHECKED_ROWS` rows are
    in: one partition for most data, whatever its chunk sizes are known or not.
    """
    parts, _ = row_partitions(y, "y")
    head, rows = [], 0
    for part in parts:
        values = np.asarray(dask.compute(part)[0]).ravel()
        head.append(values)
        rows += values.size
        if rows >= MAX_CHECKED_ROWS:
            break
    return np.concatenate(head)[:MAX_CHECKED_ROWS]


def check_input(plan, default) -> CheckedInput:
    """Check a plan of Dask collections before anything is computed or fitted.

    ``default(classifier, seed, n_rows)`` builds the default booster when
    the plan names none.
    """
    dask_modules("TreeInnerSelector on Dask collections")  # installed, or say how
    X, y, sample_weight, cv = plan.X, plan.y, plan.sample_weight, plan.cv
    if y is None:
        raise ValueError(
            "TreeInnerSelector requires y: TreeInner scores features against the "
            "target of the held-out rows."
        )
    if plan.groups is not None:
        raise TypeError(
            "groups are not supported with Dask collections yet. Keep the rows "
            "of a group in one partition and drop groups (the test then counts "
            "rows), or compute a sample that fits in memory."
        )
    if not plan.prefit and not (cv is None or isinstance(cv, Integral)):
        raise TypeError(
            f"On Dask collections cv must be an int (k folds) or None (one "
            f"held-out part); got {cv!r}. Splitters index rows in memory; for "
            "time-ordered splits (TimeSeriesSplit) or groups, compute the rows "
            "into memory."
        )
    if not plan.prefit and isinstance(cv, Integral) and cv < 2:
        raise ValueError(f"cv={cv} must be at least 2 folds.")
    _, n_features_in, names = record_columns(plan.name, meta(X), skip_check_array=True)
    aligned(X, y, sample_weight)  # the partitions must match before anything
    if getattr(y, "ndim", 1) != 1:
        raise ValueError(
            f"y must be 1-D (a Dask array of one dimension or a Series); got "
            f"shape {y.shape}."
        )
    base, classifier = resolve_estimator(plan, default)
    if plan.estimator is None and not classifier:
        warn_integer_numbers(y)  # as in memory: a price or a count, said once
    _check_estimator(base, plan.prefit)
    check_supported(base)
    if not plan.prefit:  # what the booster's fit would refuse, refused first
        reader_class(base).prepare_estimator(clone(base), meta(X))
    if not classifier and getattr(y.dtype, "kind", "O") not in "biuf":
        raise ValueError(
            f"A regressor cannot fit y of dtype {y.dtype}: pass numbers, or a "
            "classifier for class labels."
        )
    return CheckedInput(base, classifier, n_features_in, names, None)


class DaskRun(SplitRun):
    """Splits drawn per partition, fitted by the booster's own Dask ``fit``.

    See the module notes. Everything that computes only to check (the rows
    per split, role and class, the target's spread and order) runs when
    the run is made, before any fit.
    """

    def __init__(self, plan, checked, fgroups):
        self.dask, _ = dask_modules("TreeInnerSelector on Dask collections")
        self.plan, self.checked, self.fgroups = plan, checked, fgroups
        # A prefit classifier maps labels with its own classes_ (the reader does).
        labels = None
        if checked.classifier and not plan.prefit:
            labels = class_labels(self.dask, plan.y)
            if len(labels) < 2:
                raise ValueError(
                    f"y holds a single class ({labels.tolist()}); a classifier "
                    "needs two."
                )
        self.labels = None if labels is None else np.asarray(labels)
        self.fit_kwargs = {"plan_params": {}, "es_reader": None, "weighted": False}
        if plan.prefit:
            self.n_splits, what = 1, "prefit=True"
            draw = {"n_folds": None, "held_out_fraction": 1.0}
        else:
            self.n_splits, what, draw = self._fit_setup()
        es_reader = self.fit_kwargs["es_reader"]
        draw.update(
            seed=plan.split_seed,
            es_fraction=EARLY_STOPPING_FRACTION if es_reader is not None else 0.0,
            stratify=labels is not None,
        )
        self.rows = Rows(plan.X, plan.y, plan.sample_weight, labels=labels, draw=draw)
        self._check_rows(what)

    def _fit_setup(self):
        """Set what every split's fit is given; return (n_splits, what, draw)."""
        plan, base = self.plan, self.checked.estimator
        setup, _ = make_fit_setup(
            plan,
            base,
            plan.X,
            plan.y,
            plan.sample_weight,
            n_features_in=self.checked.n_features_in,
            feature_names_in=self.checked.feature_names_in,
        )
        plan_params = dict(setup.fit_params)
        # The booster gets the weights when it asks for them (always, without
        # metadata routing); they are split with the rows in _fit_split.
        weighted = plan_params.pop(setup.weight_key, None) is not None
        entry = engine_estimators(ENGINE, base)
        _check_fit_params(plan_params, entry.passed_on)
        es_reader = setup.es_reader
        if es_reader is not None and entry.no_early_stopping:
            raise ValueError(
                f"{entry.no_early_stopping}. Turn early stopping off, or use "
                f"{engine_estimator_names(ENGINE, early_stopping=True)}."
            )
        self.fit_kwargs = {
            "plan_params": plan_params,
            "es_reader": es_reader,
            "weighted": weighted,
            "feature_names": self.checked.feature_names_in,
        }
        if plan.cv is None:
            what = f"validation_fraction={plan.validation_fraction}"
            return (
                1,
                what,
                {"n_folds": None, "held_out_fraction": plan.validation_fraction},
            )
        n_splits = int(plan.cv)
        draw = {"n_folds": n_splits, "held_out_fraction": plan.validation_fraction}
        if plan.chained:  # fold j + 1 held out by split j, fitted on folds 0..j
            draw["chained"] = True
            return n_splits - 1, f"cv={plan.cv} (chained)", draw
        return n_splits, f"cv={plan.cv}", draw

    def _check_rows(self, what):
        """Count the rows per split, role and class; check the target on the cluster."""
        dask, plan, labels = self.dask, self.plan, self.labels
        n_classes = 1 if labels is None else len(labels)
        counts, scored, bad_y, bad_w = summary(
            dask, self.rows, n_classes, self.n_splits
        )
        if bad_y:
            raise ValueError(
                f"y contains {bad_y} NaN or infinite value(s); drop those rows or "
                "impute the target before fitting."
            )
        if bad_w:
            raise ValueError(
                f"sample_weight contains {bad_w} negative, NaN or infinite "
                "value(s); weights must be finite and non-negative."
            )
        check_rows(counts, int(scored), labels=labels, what=what, prefit=plan.prefit)
        if not self.checked.classifier and not plan.prefit:
            final = final_step(self.checked.estimator)
            reader = reader_class(final)
            spread, center, total = _target_spread(dask, plan.y, plan.sample_weight)
            check_target_spread(
                spread,
                reader.max_target_spread,
                type(final).__name__,
                center,
                spread / total if total > 0 else None,
                reader.target_offset_limit(final),
            )
        check_ordered_target(
            _head(dask, plan.y),
            classifier=self.checked.classifier,
            folds=(
                "the test counts held-out rows as independent draws"
                if plan.prefit
                else f"{what} draws every row's fold at random"
            ),
            fix=(
                "Dask collections take neither time-ordered splitters nor blocks "
                "of consecutive rows as the test's units yet: compute the rows "
                "into memory (a prefit model then counts blocks)."
                if plan.prefit
                else "Dask collections take no time-ordered splitter yet (the test "
                "would need blocks of consecutive rows across partitions): compute "
                "the rows into memory and pass cv=TimeSeriesSplit(n_splits=5, "
                "gap=...)."
            ),
        )

    def _fit(self, j, **how):
        """Fit a fresh clone on split j's (inner) training rows, with retries."""
        return fit_with_retries(
            self.dask,
            self.checked.estimator,
            self.rows,
            j,
            self.plan.name,
            **self.fit_kwargs,
            **how,
        )

    def _score(self, estimators, role="held-out"):
        return _score(
            self.dask,
            estimators,
            self.rows,
            self.plan.attribution,
            self.checked.n_features_in,
            self.fgroups,
            role=role,
            resample_seed=self.plan.split_seed if self.plan.test == "column" else None,
        )

    def fit_and_score(self):
        """Fit every split on the cluster, then score all in one pass."""
        plan = self.plan
        if plan.prefit:
            estimators = [copy.deepcopy(self.checked.estimator)]
        else:
            estimators = fit_all(
                self._fit, self.n_splits, name=plan.name, verbose=plan.verbose
            )
        return estimators, self._score(estimators)

    def test(self, scored):
        """Test the moments of all splits' held-out rows, combined."""
        pooled = [_combine_all(list(sets)) for sets in zip(*scored, strict=True)]
        tests = _moments_tests(pooled, self.fgroups)
        width = 1 if self.fgroups is None else 2
        terms = width if len(scored[0]) > width else 0  # the column test's terms
        split_scores = np.vstack([sets[terms].total for sets in scored])
        return tests._replace(split_scores=split_scores)

    def rankings(self):
        """Fit on half of each split's training rows, test on the other half."""
        name, verbose = self.plan.name, self.plan.verbose
        rankers = [
            self._fit(j, inner=True)
            for j in progress(
                range(self.n_splits),
                desc=f"{name}: refit curve's rankings",
                verbose=verbose,
                unit="split",
            )
        ]
        scored = self._score(rankers, "inner-held-out")
        return [_moments_tests(sets, self.fgroups) for sets in scored]

    def refit_scores(self, points, scoring):
        """Refit on the cluster, one after the other; predict held-out partitions."""
        scores = []
        for j, columns in progress(
            points,
            desc=f"{self.plan.name}: refit curve",
            verbose=self.plan.verbose,
            unit="refit",
        ):
            if not columns:
                scores.append(intercept_score(self.dask, self.rows, j, scoring))
                continue
            est = self._fit(j, columns=np.asarray(columns, dtype=np.int64))
            scores.append(
                held_out_score(self.dask, est, self.rows, j, columns, scoring)
            )
        return np.asarray(scores, dtype=np.float64)


def _at_scale_of(tested, terms):
    """Return the tested differences' moments at the terms' size as their scale."""
    return tested._replace(peak=np.maximum(tested.peak, terms.peak))


def _moments_tests(sets, fgroups) -> UnitTests:
    """Test rows' moments (the columns', and the groups' where ``fgroups``).

    ``split_scores`` is of these rows as one split.
    """
    width = 1 if fgroups is None else 2
    if len(sets) == width:
        test = _inference.score_test(sets[0])
        group_test = None if fgroups is None else _inference.score_test(sets[1])
        return UnitTests(test, group_test, test.scores[None, :], test.scores, "rows")
    # The test of a column: the differences' moments, then the terms'; a
    # spread at float rounding of the terms' size is no spread.
    tested, terms = sets[:width], sets[width:]
    test = _inference.score_test(_at_scale_of(tested[0], terms[0]))
    group_test = None
    if fgroups is not None:
        group_test = _inference.score_test(_at_scale_of(tested[1], terms[1]))
    scores = np.asarray(terms[0].total, dtype=np.float64)
    null = scores - np.asarray(tested[0].total)
    return UnitTests(test, group_test, scores[None, :], scores, "rows", null)
