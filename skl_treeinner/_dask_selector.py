"""TreeInnerSelector on Dask collections: split, fit and score on the cluster.

The in-memory selector indexes rows; a Dask collection has no cheap row index,
so the rows are *labelled* instead (:class:`_Codes`). Every row gets a fold, the
split that holds it out, drawn per partition from a generator seeded by
``(seed, partition number)`` and stratified by class within the partition, so
the folds are reproducible for the same data in the same partitions. Split j
fits on the rows whose fold is not j (``cv=None``: fold 0 is held out, fold 1
fitted on), less the rows it sets aside for early stopping, drawn for that
split from a generator seeded by the partition and j; it is fitted by the
booster's own Dask ``fit`` and scored on the rows of fold j.

The folds are never a collection of their own: every task that needs them (the
row count, the selection of a split's rows, the scoring) draws them again from
its partition of y and the partition's number, fixed when the graph is built.
A fold column filtered against X by Dask's own masks would not be safe:
dask-expr may move a filter below a ``map_partitions`` and so draw the folds of
X's rows and y's rows from different rows (measured: a filtered DataFrame gave
X and y parts of 204 and 220 rows). For the same reason X, y and the weights
of a DataFrame travel as one frame (``_dask._aligned``).

Only small things come to the client: the class labels, a table of rows per
split, role and class (checked as the in-memory splitters would), the fitted
models, and from the scoring pass, per split, the
:class:`~skl_treeinner._inference.Moments` of the per-row terms (count, sums,
squared deviations): the scores, their standard errors and p-values follow
exactly. The scoring pass reads every partition once and scores each row with
the model of its fold.
"""

from __future__ import annotations

import copy
import sys
import time
from numbers import Integral

import numpy as np
from sklearn.pipeline import Pipeline
from sklearn.utils import _safe_indexing
from sklearn.utils.validation import validate_data

from . import _crossfit, _inference
from ._crossfit import EARLY_STOPPING_FRACTION, MIN_SCORING_ROWS, MIN_SPLIT_ROWS
from ._dask import _aligned, _dask, _is_array, _partition_rows, _shared, _tree_reduce
from ._readers import default_estimator, read_model
from ._validation import target_is_classes

__all__ = ["dask_booster", "fit_dask", "is_dask_booster", "meta", "select_dask"]


def is_dask_booster(estimator) -> bool:
    """Whether ``estimator`` is fitted by Dask: XGBoost's or LightGBM's Dask models."""
    xgb_dask = sys.modules.get("xgboost.dask")
    if xgb_dask is not None and isinstance(estimator, xgb_dask.DaskScikitLearnBase):
        return True
    lgb_dask = sys.modules.get("lightgbm.dask")
    return lgb_dask is not None and isinstance(estimator, lgb_dask._DaskLGBMModel)


def dask_booster(classifier: bool, random_state):
    """Build the default booster for Dask input: the in-memory default's Dask twin."""
    import xgboost.dask as dxgb

    params = default_estimator(classifier, random_state).get_params()
    cls = dxgb.DaskXGBClassifier if classifier else dxgb.DaskXGBRegressor
    return cls(**params)


def meta(X):
    """Return an empty in-memory frame or array with X's columns (for checks)."""
    if _is_array(X):
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


def select_dask(X, mask):
    """Keep the columns of ``mask``, lazily (``transform`` of a Dask collection)."""
    columns = np.flatnonzero(mask)
    if _is_array(X):
        return X[:, columns]
    return X[[X.columns[i] for i in columns]]


# -- which rows ------------------------------------------------------------------
def _strata(values, stratify):
    if not stratify:
        return [np.arange(values.shape[0])]
    return [np.flatnonzero(values == v) for v in np.unique(values)]


def _share(rng, rows, fraction):
    """About ``fraction`` of ``rows``, drawn at random, rounded at random."""
    count = int(np.floor(fraction * rows.size + rng.random()))
    return rows[rng.permutation(rows.size)[:count]]


class _Codes:
    """Which split holds out each row of one partition, and which rows stop early.

    ``fold[i]``: the split that scores row i (``cv=k``: k folds of about
    equal size; ``n_folds=None``: fold 0, about ``test_fraction`` of the rows,
    is held out and fold 1 fitted on). ``stopping(j)``: the rows split j sets
    aside from its training part for early stopping, about ``es_fraction`` of
    them, drawn for each split on its own (as the in-memory selector does).
    Every draw comes from a generator seeded by ``(seed, partition number)``
    (and the split), within each stratum (class, or all rows), with counts
    rounded at random so that every fold gets its share in expectation
    however small the partitions.
    """

    def __init__(
        self, y, number, *, seed, n_folds, test_fraction, es_fraction, stratify
    ):
        values = np.asarray(y)
        rng = np.random.default_rng([seed, number])
        self.fold = np.ones(values.shape[0], dtype=np.int64)
        for rows in _strata(values, stratify):
            rows = rows[rng.permutation(rows.size)]
            if n_folds:
                self.fold[rows] = (
                    np.arange(rows.size) + rng.integers(n_folds)
                ) % n_folds
            else:
                self.fold[_share(rng, rows, test_fraction)] = 0
        self._values, self._stratify = values, stratify
        self._seed, self._number, self._es_fraction = seed, number, es_fraction

    def stopping(self, j) -> np.ndarray:
        """Boolean mask of the rows split j stops early on."""
        mask = np.zeros(self.fold.shape[0], dtype=bool)
        if not self._es_fraction:
            return mask
        rng = np.random.default_rng([self._seed, self._number, j + 1])
        training = self.fold != j
        for rows in _strata(self._values, self._stratify):
            mask[_share(rng, rows[training[rows]], self._es_fraction)] = True
        return mask


class _Rows:
    """X, y and the weights as aligned partitions, and how to code their rows.

    ``labels``: the sorted class labels when y is encoded to 0..K-1 (a
    classifier the selector fits), else ``None``. ``draw``: the keyword
    arguments of :class:`_Codes` but the partition's number.
    """

    def __init__(self, X, y, w, *, labels, draw):
        self.X, self.y, self.w = X, y, w
        self.x_parts, self.y_parts, self.w_parts, _ = _aligned(X, y, w)
        self.labels, self.draw = labels, draw

    def tasks(self, dask, func, *args):
        """One delayed ``func(X, y, w, codes, *args)`` per partition.

        y is encoded and the codes drawn inside the task, from the partition
        and its number (see the module notes).
        """
        return [
            dask.delayed(_with_codes)(
                func, xp, yp, wp, i, self.labels, self.draw, *args
            )
            for i, (xp, yp, wp) in enumerate(
                zip(self.x_parts, self.y_parts, self.w_parts, strict=True)
            )
        ]


def _with_codes(func, X, y, w, number, labels, draw, *args):
    if len(y) != len(X) or (w is not None and len(w) != len(X)):
        raise ValueError(
            f"Partition {number} holds {len(X)} rows of X but {len(y)} of y"
            + ("" if w is None else f" and {len(w)} of sample_weight")
            + "; X, y and sample_weight must be partitioned alike (take them "
            "from one DataFrame, or rechunk the arrays alike)."
        )
    if labels is not None:
        index = np.searchsorted(labels, np.asarray(y)).astype(np.int64)
        if hasattr(y, "index"):  # a pandas Series keeps its index and name
            index = type(y)(index, index=y.index, name=y.name)
        y = index
    return func(X, y, w, _Codes(y, number, **draw), *args)


def _unique(*parts):
    """Sorted distinct labels of partitions of y; missing labels are refused."""
    values = [np.asarray(p) for p in parts]
    for v in values:
        if v.dtype.kind in "fc":
            missing = int(np.isnan(v).sum())
        elif v.dtype.kind == "O":
            import pandas as pd  # a Dask DataFrame's dependency

            missing = int(pd.isna(v).sum())
        else:
            missing = 0
        if missing:
            raise ValueError(
                f"y contains {missing} missing class label(s) (NaN or None); "
                "drop those rows or give them a label before fitting."
            )
    return np.unique(np.concatenate([np.unique(v) for v in values]))


def _class_labels(dask, y):
    """Return y's sorted class labels: unique per partition, merged on workers."""
    parts = y.to_delayed()
    parts = parts.ravel() if _is_array(y) else parts
    return _tree_reduce(dask, [dask.delayed(_unique)(p) for p in parts], _unique)


def _partition_summary(X, y, w, codes, n_classes, n_splits):
    """Rows per split, role and class; scored rows of nonzero weight; bad values.

    Roles: 0 held out, 1 fitted on, 2 set aside for early stopping. Rows of a
    fold beyond ``n_splits`` (``cv=None``'s training fold) are only fitted on.
    """
    y = np.asarray(y)
    cls = y.astype(np.int64) if n_classes > 1 else np.zeros(y.shape[0], np.int64)
    counts = np.zeros((n_splits, 3, n_classes), dtype=np.int64)
    for j in range(n_splits):
        role = np.where(codes.fold == j, 0, np.where(codes.stopping(j), 2, 1))
        np.add.at(counts[j], (role, cls), 1)
    bad_y = int(np.count_nonzero(~np.isfinite(y))) if y.dtype.kind in "fc" else 0
    held = codes.fold < n_splits
    if w is None:
        return counts, int(held.sum()), bad_y, 0
    w = np.asarray(w, dtype=np.float64)
    bad_w = int(np.count_nonzero(~np.isfinite(w) | (w < 0)))
    return counts, int((held & (w != 0)).sum()), bad_y, bad_w


def _add_summaries(*parts):
    return tuple(np.sum([p[i] for p in parts], axis=0) for i in range(len(parts[0])))


def _check_rows(counts, scored, *, labels, what, prefit=False):
    """Refuse splits the in-memory selector would refuse, from the row table.

    ``counts`` has shape (n_splits, 3, n_classes): rows per split, role (held
    out, fitted on, stopping early) and class; ``scored``: held-out rows of
    nonzero weight, over all splits.
    """
    classifier = labels is not None
    if classifier:
        single = np.flatnonzero(counts[0].sum(axis=0) < 2)
        if single.size:
            raise ValueError(
                f"Cannot split the rows as {what} asks: class(es) "
                f"{labels[single][:5].tolist()} have fewer than 2 rows, and "
                "every class needs a row to fit on and one to score on. Drop or "
                "merge the rarest classes."
            )
    for j, (test, fit, _) in enumerate(counts):
        if test.sum() < MIN_SPLIT_ROWS:
            raise ValueError(
                f"Split {j} would score on {int(test.sum())} held-out row(s); "
                f"each split needs at least {MIN_SPLIT_ROWS}. Pass more rows, a "
                "larger validation_fraction, or fewer splits."
            )
        if prefit:  # nothing is fitted: only the held-out rows count
            continue
        if fit.sum() == 0:
            raise ValueError(
                f"Split {j} has no rows to fit on; pass more rows or fewer splits."
            )
        if not classifier:
            continue
        if np.count_nonzero(test) < 2:
            raise ValueError(
                f"The held-out rows of split {j} hold a single class, so "
                "TreeInner cannot tell features apart on them. Pass more rows "
                "per class, or fewer splits."
            )
        missing = np.flatnonzero(fit == 0)
        if missing.size:
            raise ValueError(
                f"The training rows of split {j} lack the classes "
                f"{labels[missing][:5].tolist()}; the booster must see every "
                "class. Pass more rows per class, fewer splits, or turn early "
                "stopping off."
            )
    if scored < MIN_SCORING_ROWS:
        raise ValueError(
            f"The scores would come from {scored} held-out row(s) of nonzero "
            f"weight; TreeInner needs at least {MIN_SCORING_ROWS}. Pass more "
            "rows, a larger validation_fraction, or fewer rows of zero weight."
        )


# -- fitting -----------------------------------------------------------------------
def _check_estimator(base, prefit):
    if isinstance(base, Pipeline):
        raise TypeError(
            "TreeInnerSelector on Dask collections takes a Dask booster itself, "
            "not a Pipeline: put the preprocessing steps before the selector "
            "in your own Pipeline."
        )
    if prefit or is_dask_booster(base):
        return
    name = type(base).__name__
    twins = {
        "XGBRegressor": "xgboost.dask.DaskXGBRegressor",
        "XGBClassifier": "xgboost.dask.DaskXGBClassifier",
        "LGBMRegressor": "lightgbm.DaskLGBMRegressor",
        "LGBMClassifier": "lightgbm.DaskLGBMClassifier",
    }
    fix = (
        f"Pass its Dask version with the same parameters: {twins[name]}"
        f"(**{name.lower()}.get_params())"
        if name in twins
        else "Pass xgboost.dask.DaskXGBRegressor/DaskXGBClassifier or "
        "lightgbm.DaskLGBMRegressor/DaskLGBMClassifier"
    )
    raise TypeError(
        f"TreeInnerSelector got Dask collections and a {name}, which fits in "
        f"one process and would pull the data into it. {fix}, or "
        "estimator=None (XGBoost's Dask booster); or pass in-memory data. A "
        "model you fitted already can be scored with prefit=True."
    )


def _check_fit_params(fit_params):
    for key, value in fit_params.items():
        if key.startswith("eval_") or key == "sample_weight_eval_set":
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


def _take(X, y, w, codes, j, stop):
    """Take the rows of a partition that split j fits on, or stops early on."""
    stopping = codes.stopping(j)
    rows = np.flatnonzero((codes.fold != j) & (stopping if stop else ~stopping))
    take = None if w is None else _safe_indexing(w, rows)
    return _safe_indexing(X, rows), _safe_indexing(y, rows), take


def _meta_of(obj, encoded=False):
    """Return an empty in-memory object of a collection's kind (``_collection``)."""
    if encoded:  # y as class indices
        if _is_array(obj):
            return np.empty(0, dtype=np.int64)
        return obj._meta.astype(np.int64)
    if _is_array(obj):
        return np.empty((0, *obj.shape[1:]), dtype=obj.dtype)
    return obj._meta


def _collection(parts, like):
    """Build a lazy collection of ``like``'s kind from parts of unknown length."""
    if isinstance(like, np.ndarray):
        import dask.array as da

        shape = (np.nan, *like.shape[1:])
        return da.concatenate(
            [da.from_delayed(p, shape=shape, dtype=like.dtype) for p in parts]
        )
    import dask.dataframe as dd

    return dd.from_delayed(parts, meta=like, verify_meta=False)


def _rows_of(dask, rows, j, stop):
    """Lazy X, y and weights of split j's fitting or early-stopping rows."""
    taken = rows.tasks(dask, _take, j, stop)
    X = _collection([t[0] for t in taken], _meta_of(rows.X))
    y = _collection([t[1] for t in taken], _meta_of(rows.y, rows.labels is not None))
    w = None if rows.w is None else _collection([t[2] for t in taken], _meta_of(rows.w))
    return X, y, w


def _fit_split(dask, est, rows, j, *, plan_params, es_reader, weighted):
    """Fit ``est`` with its own Dask ``fit`` on split j's rows (all lazy)."""
    X, y, w = _rows_of(dask, rows, j, False)
    params = dict(plan_params)
    if weighted:
        params["sample_weight"] = w
    if es_reader is not None:
        X_es, y_es, w_es = _rows_of(dask, rows, j, True)
        params.update(
            es_reader.early_stopping_fit_params(
                est,
                X_es,
                y_es,
                sample_weight=w_es if weighted else None,
                fit_params=params,
            )
        )
    est.fit(X, y, **params)
    return est


# -- scoring -----------------------------------------------------------------------
def _partition_moments(X, y, w, codes, readers, what):
    """Per split: the :class:`Moments` of the per-row terms of its held-out rows."""
    fold = codes.fold
    out = []
    for j, reader in enumerate(readers):
        rows = np.flatnonzero(fold == j)  # none: moments of no rows are zeros
        w_rows = None if w is None else _safe_indexing(w, rows)
        z = _partition_rows(
            reader,
            _safe_indexing(X, rows),
            _safe_indexing(y, rows),
            w_rows,
            what,
        )
        if w_rows is not None:  # rows of weight 0 are not scored (pool_rows)
            z = z[np.asarray(w_rows) != 0]
        out.append(_inference.moments(z))
    return out


def _add_moments(*parts):
    return [_combine_all([p[j] for p in parts]) for j in range(len(parts[0]))]


def _combine_all(sets):
    total = sets[0]
    for other in sets[1:]:
        total = _inference.combine_moments(total, other)
    return total


def _score(dask, estimators, rows, attribution, n_features_in):
    """Score every split on its held-out rows in one pass over the partitions."""
    readers = [read_model(est) for est in estimators]
    for reader in readers:
        if reader.ensemble.n_features != n_features_in:
            raise ValueError(
                f"The booster has {reader.ensemble.n_features} features but X "
                f"has {n_features_in}."
            )
    what = "treeshap" if attribution == "treeshap" else "per_sample"
    shared = _shared(dask, tuple(readers))
    return _tree_reduce(
        dask, rows.tasks(dask, _partition_moments, shared, what), _add_moments
    )


def fit_dask(selector, X, y, sample_weight, groups, fit_params):
    """Fit ``selector`` on Dask collections; return its fitted attributes.

    See the module notes. Sets ``n_features_in_`` (and ``feature_names_in_``)
    on ``selector`` as scikit-learn's checks do; everything else is returned,
    so that nothing is half set when a step fails.
    """
    dask, _ = _dask("TreeInnerSelector on Dask collections")
    from sklearn.utils import check_random_state

    if y is None:
        raise ValueError(
            "TreeInnerSelector requires y: TreeInner scores features against the "
            "target of the held-out rows."
        )
    if groups is not None:
        raise TypeError(
            "groups are not supported with Dask collections yet. Keep the rows "
            "of a group in one partition and drop groups (the test then counts "
            "rows), or compute a sample that fits in memory."
        )
    cv = selector.cv
    if not selector.prefit and not (cv is None or isinstance(cv, Integral)):
        raise TypeError(
            f"On Dask collections cv must be an int (k folds) or None (one "
            f"held-out part); got {cv!r}. Splitters index rows in memory."
        )
    if not selector.prefit and isinstance(cv, Integral) and cv < 2:
        raise ValueError(f"cv={cv} must be at least 2 folds.")
    validate_data(selector, meta(X), skip_check_array=True, reset=True)
    _aligned(X, y, sample_weight)  # the partitions must match before anything
    if getattr(y, "ndim", 1) != 1:
        raise ValueError(
            f"y must be 1-D (a Dask array of one dimension or a Series); got "
            f"shape {y.shape}."
        )
    rng = check_random_state(selector.random_state)
    split_seed, booster_seed = (int(s) for s in rng.randint(2**31 - 1, size=2))
    if selector.estimator is None:
        classifier = target_is_classes(y)
        base = dask_booster(classifier, booster_seed)
    else:
        base = selector.estimator
        classifier = _crossfit.is_classifier(base)
    _check_estimator(base, selector.prefit)
    _crossfit.check_supported(base)
    if not classifier and getattr(y.dtype, "kind", "O") not in "biuf":
        raise ValueError(
            f"A regressor cannot fit y of dtype {y.dtype}: pass numbers, or a "
            "classifier for class labels."
        )
    # A prefit classifier maps labels with its own classes_ (the reader does).
    encode = classifier and not selector.prefit
    labels = _class_labels(dask, y) if encode else None
    n_classes = 1 if labels is None else len(labels)
    if encode and n_classes < 2:
        raise ValueError(
            f"y holds a single class ({labels.tolist()}); a classifier needs two."
        )

    booster_weighted, es_reader, plan_params = False, None, {}
    if selector.prefit:
        from ._validation import check_prefit

        check_prefit(selector, base)
        n_splits, what = 1, "prefit=True"
        draw = {"n_folds": None, "test_fraction": 1.0}
    else:
        plan, _ = _crossfit.make_plan(
            selector,
            base,
            X,
            y,
            sample_weight,
            sample_weight=sample_weight,
            groups=None,
            fit_params=fit_params,
        )
        plan_params = dict(plan.fit_params)
        # The booster gets the weights when it asks for them (always, without
        # metadata routing); they are split with the rows in _fit_split.
        booster_weighted = plan_params.pop(plan.weight_key, None) is not None
        _check_fit_params(plan_params)
        es_reader = plan.es_reader
        lgb_dask = sys.modules.get("lightgbm.dask")
        if (
            es_reader is not None
            and lgb_dask is not None
            and isinstance(base, lgb_dask._DaskLGBMModel)
        ):
            raise ValueError(
                "LightGBM's Dask estimators cannot stop early (LightGBM issues "
                "#4189 and #6351: training hangs when workers stop at different "
                "rounds). Turn early stopping off, or use "
                "xgboost.dask.DaskXGBRegressor/DaskXGBClassifier."
            )
        holdout = cv is None
        n_splits = 1 if holdout else int(cv)
        what = (
            f"validation_fraction={selector.validation_fraction}"
            if holdout
            else f"cv={cv}"
        )
        draw = {
            "n_folds": None if holdout else n_splits,
            "test_fraction": selector.validation_fraction,
        }
    draw.update(
        seed=split_seed,
        es_fraction=EARLY_STOPPING_FRACTION if es_reader is not None else 0.0,
        stratify=encode,
    )
    rows = _Rows(X, y, sample_weight, labels=labels, draw=draw)

    counts, scored, bad_y, bad_w = _tree_reduce(
        dask,
        rows.tasks(dask, _partition_summary, n_classes, n_splits),
        _add_summaries,
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
    _check_rows(
        counts,
        int(scored),
        labels=labels,
        what=what,
        prefit=selector.prefit,
    )

    if selector.prefit:
        estimators = [copy.deepcopy(base)]
    else:
        estimators = _fit_all(
            dask,
            selector,
            base,
            rows,
            n_splits,
            plan_params=plan_params,
            es_reader=es_reader,
            weighted=booster_weighted,
        )
    per_split = _score(
        dask, estimators, rows, selector.attribution, selector.n_features_in_
    )
    test = _inference.score_test(_combine_all(per_split))
    return {
        "estimators_": estimators,
        "estimator_": estimators[0],
        "split_scores_": np.vstack([m.total for m in per_split]),
        "scores_": test.scores,
        "scores_se_": test.se,
        "pvalues_": test.pvalues,
        "n_scored_rows_": test.n_rows,
    }


def _fit_all(dask, selector, base, rows, n_splits, **split_kwargs):
    """Fit a clone of ``base`` per split, one after the other, on the cluster."""
    from sklearn.base import clone

    from ._progress import progress

    name = type(selector).__name__
    estimators = []
    bar = progress(
        range(n_splits),
        total=n_splits,
        desc=f"{name}: fitting on the cluster",
        verbose=selector.verbose,
        unit="split",
    )
    for j in bar:
        start = time.perf_counter()
        estimators.append(_fit_split(dask, clone(base), rows, j, **split_kwargs))
        if j == 0:
            # A model the readers refuse (an objective, dart) fails here,
            # before the other splits are fitted.
            read_model(estimators[0])
        if selector.verbose > 1:
            _crossfit._write(
                bar,
                f"[{name}] split {j + 1}/{n_splits}: fitted on the cluster in "
                f"{time.perf_counter() - start:.1f}s",
            )
    return estimators
