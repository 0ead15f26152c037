"""Which rows each split fits on, stops early on and scores (in memory).

The in-memory engine indexes rows: :func:`make_splits` turns ``cv`` into
checked (train, test) index pairs, :func:`make_jobs` carves early-stopping rows
out of each training part. The checks name the fix in their messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral

import numpy as np
from sklearn.model_selection import (
    GroupShuffleSplit,
    ShuffleSplit,
    StratifiedShuffleSplit,
    check_cv,
    train_test_split,
)

from .._plan import (
    EARLY_STOPPING_FRACTION,
    MIN_SCORING_ROWS,
    MIN_SPLIT_ROWS,
    int_splitter,
)

__all__ = [
    "chain",
    "SplitJob",
    "check_groups",
    "check_scoring_rows",
    "inner_splits",
    "make_jobs",
    "make_splits",
]


@dataclass(frozen=True)
class SplitJob:
    """The rows of one split."""

    #: Position of the split, 0-based.
    index: int
    #: Rows the booster is fitted on.
    train: np.ndarray
    #: Held-out rows the features are scored on.
    held_out: np.ndarray
    #: Rows set aside from ``train``'s part for early stopping, or ``None``.
    es_rows: np.ndarray | None = None


def make_splits(
    X,
    y,
    *,
    cv,
    validation_fraction,
    classifier,
    groups,
    split_params,
    seed,
    labels=None,
    chained=False,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Return the checked (train, test) index pairs of ``cv``.

    For a classifier, ``y`` holds class indices 0..K-1 and ``labels`` the
    class labels they stand for (named in messages). ``groups`` have passed
    :func:`check_groups`. ``chained`` (with an int ``cv``): the k folds in a
    row, split j fitted on folds 0..j and holding out fold j + 1
    (:func:`chain`).
    """
    n = y.shape[0]
    if cv is None:
        if groups is not None:
            splitter = GroupShuffleSplit(
                1, test_size=validation_fraction, random_state=seed
            )
            split_params = {"groups": groups}
        else:
            cls = StratifiedShuffleSplit if classifier else ShuffleSplit
            splitter = cls(1, test_size=validation_fraction, random_state=seed)
        what = f"validation_fraction={validation_fraction}"
    elif isinstance(cv, Integral):
        splitter = int_splitter(cv, classifier, grouped=groups is not None, seed=seed)
        if groups is not None:
            split_params = {"groups": groups}
        what = f"cv={cv}"
    else:
        splitter = check_cv(cv, y, classifier=classifier)
        what = f"cv={cv!r}"
    if classifier:
        _check_class_counts(y, labels, n, what)
    try:
        splits = [
            (np.asarray(train), np.asarray(test))
            for train, test in splitter.split(X, y, **split_params)
        ]
    except ValueError as e:
        if groups is None and "groups" in str(e):
            raise ValueError(
                f"{what} splits the rows by group, but no groups were given: pass "
                "them as fit(X, y, groups=...), one label per row."
            ) from e
        raise ValueError(
            f"Cannot split the {n} rows as {what} asks: {e} Pass more rows "
            "(at least a few per class and per split), or fewer splits."
        ) from e
    if chained and isinstance(cv, Integral):
        splits = chain(splits)
        what += " (chained)"
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
                    "apart on them. "
                    + (
                        "Pass more rows per class, or fewer splits."
                        if cv is None or isinstance(cv, Integral)
                        else "Use a stratified split (cv=None or an int cv, "
                        "which stratifies for classifiers) or more rows per class."
                    )
                )
            missing = np.setdiff1d(classes, y[train])
            if missing.size:
                raise ValueError(_missing_classes(i, missing, y, labels, cv, what))
    return splits


def _missing_classes(i, missing, y, labels, cv, what) -> str:
    """Say which classes a split's training rows lack, by label, and the fix."""
    counts = np.bincount(y.astype(np.int64))[missing]
    names = missing if labels is None else np.asarray(labels)[missing]
    rows = ", ".join(
        f"{name!r} ({count} rows)"
        for name, count in zip(names[:5].tolist(), counts[:5].tolist(), strict=True)
    )
    more = f" and {missing.size - 5} more" if missing.size > 5 else ""
    message = f"The training rows of split {i} lack the class(es) {rows}{more}; "
    if isinstance(cv, Integral):
        return message + (
            f"the booster must see every class. With {what} the first booster "
            f"fits on one fold of {cv}, and the stratified folds give a class "
            f"one row per fold only when it has at least {cv} rows. Drop or "
            "merge the rarest classes, or pass fewer splits (e.g. cv=3, or "
            "cv=None for one split of the rows in two)."
        )
    return message + (
        "the booster must see every class. Use a stratified split, fewer "
        "splits, or more rows per class."
    )


def chain(splits):
    """Chain k folds: split j is fitted on folds 0..j and holds out fold j + 1.

    Each fold is scored by a booster that saw no later fold, so the folds'
    tests form a martingale: a chance tie of a column to y that the
    boosters learn from the whole sample is met once per pair of folds,
    not twice as in symmetric cross-fitting (docs/core.md, "The test of a
    column"). k - 1 boosters, fitted on 1/k to (k-1)/k of the rows.
    """
    folds = [np.sort(test) for _, test in splits]
    return [
        (np.sort(np.concatenate(folds[: j + 1])), folds[j + 1])
        for j in range(len(folds) - 1)
    ]


def _check_class_counts(y, labels, n, what) -> None:
    """Refuse classes with a single row: none can be both fitted and scored."""
    counts = np.bincount(y.astype(np.int64))
    single = np.flatnonzero(counts < 2)
    if single.size == 0:
        return
    names = single if labels is None else np.asarray(labels)[single]
    names = names[:5].tolist()
    more = f" and {single.size - 5} more" if single.size > 5 else ""
    raise ValueError(
        f"Cannot split the {n} rows as {what} asks: class(es) {names}{more} have "
        "a single row, and every class needs a row to fit on and one to score "
        "on. Drop or merge the rarest classes; if y is a numeric target, fit it "
        "as one: y.astype(float) or a regressor (--task regression on the "
        "command line)."
    )


def check_groups(groups, n_samples: int) -> None:
    """Refuse ``groups`` that are not one label per row."""
    if groups is not None and len(groups) != n_samples:
        raise ValueError(
            f"groups has {len(groups)} entries but X has {n_samples} rows; pass "
            "one group label per row of X."
        )


def check_scoring_rows(tests, sample_weight=None) -> None:
    """Refuse held-out rows too few for the scores and their test.

    ``tests`` are the held-out rows of each split (a prefit model's: all of
    them). Every split needs ``MIN_SPLIT_ROWS`` rows, and all splits together
    ``MIN_SCORING_ROWS`` distinct rows of nonzero weight (rows of weight 0 are
    not scored).
    """
    fix = "Pass more rows, a larger validation_fraction, or fewer splits"
    for i, test in enumerate(tests):
        if test.size < MIN_SPLIT_ROWS:
            raise ValueError(
                f"Split {i} would score on {test.size} held-out row(s); each "
                f"split needs at least {MIN_SPLIT_ROWS}. {fix}."
            )
    scored = np.unique(np.concatenate(tests))
    if sample_weight is not None:
        scored = scored[np.asarray(sample_weight)[scored] != 0]
    if scored.size < MIN_SCORING_ROWS:
        raise ValueError(
            f"The scores would come from {scored.size} held-out row(s) of nonzero "
            f"weight; TreeInner needs at least {MIN_SCORING_ROWS} (a score is a "
            "sum over them, and too few leave only the noise of their residuals "
            f"and no standard error). {fix}, or fewer rows of zero weight."
        )


def make_jobs(splits, *, y, classifier, es_reader, seeds) -> list[SplitJob]:
    """One job per split, with early-stopping rows carved out of its training part.

    With ``es_reader`` (the plan's reader, or None for no early stopping),
    ``EARLY_STOPPING_FRACTION`` of each training part, stratified for
    classifiers and seeded by that split's ``seeds`` entry, stops the booster.
    """
    jobs = []
    for i, ((train, test), seed) in enumerate(zip(splits, seeds, strict=True)):
        if es_reader is None:
            jobs.append(SplitJob(i, train, test))
            continue
        try:
            fit_rows, es_rows = train_test_split(
                train,
                test_size=EARLY_STOPPING_FRACTION,
                stratify=y[train] if classifier else None,
                random_state=int(seed),
            )
        except ValueError as e:
            raise ValueError(
                f"Cannot set aside {EARLY_STOPPING_FRACTION:.0%} of the "
                f"{train.size} training rows of split {i} for early stopping: "
                f"{e} Pass more rows, or turn early stopping off."
            ) from e
        if classifier:
            missing = np.setdiff1d(np.unique(y), y[fit_rows])
            if missing.size:
                raise ValueError(
                    f"After setting aside early-stopping rows, the training rows "
                    f"of split {i} lack classes {missing.tolist()}. Pass more "
                    "rows per class, or turn early stopping off."
                )
        jobs.append(SplitJob(i, np.sort(fit_rows), test, np.sort(es_rows)))
    return jobs


def inner_splits(jobs, *, y, classifier, labels, groups, ordered, seed):
    """Split each job's training rows in two: fitted on, and ranked on.

    The refit curve's ranking of split i (:mod:`skl_treeinner._stats._refit_curve`)
    comes from these halves of split i's training rows alone: by group where
    ``groups`` are given, earlier rows fitted and later rows ranked where
    the splits keep time order (``ordered``), else stratified for
    classifiers. Returns one (fit rows, ranked rows) pair per job, as row
    indices of the whole data.
    """
    pairs = []
    for job in jobs:
        train = job.train
        if job.es_rows is not None:  # the early-stopping rows are training rows
            train = np.concatenate([train, job.es_rows])
        train = np.sort(train)  # in time order, for ordered splits
        if ordered:
            half = train.size // 2
            pairs.append((train[:half], train[half:]))
            continue
        try:
            ((inner_fit, inner_test),) = make_splits(
                np.zeros((train.size, 1)),
                y[train],
                cv=None,
                validation_fraction=0.5,
                classifier=classifier,
                groups=None if groups is None else np.asarray(groups)[train],
                split_params={},
                seed=int(seed) + job.index,
                labels=labels,
            )
        except ValueError as e:
            raise ValueError(
                "The refit curve (max_features='best' or '1se') ranks the "
                f"features of split {job.index + 1} on half of its "
                f"{train.size} training rows and cannot split them: {e}"
            ) from e
        pairs.append((train[inner_fit], train[inner_test]))
    return pairs
