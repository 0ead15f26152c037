"""Recognise a prefit model scored on the rows it was trained on (Prop. 3).

On the rows a booster was fitted on, PreDecomp's TreeInner equals the
booster's total split gain, feature by feature (paper 000, Prop. 3; checked
for every library in ``tests/unit/test_total_gain.py``). Every split helped
those rows, so every column the model uses scores above zero with a tiny
p-value, a pure-noise column included. On other rows the two differ: the
held-out score of a split is its gain on new rows, which is smaller and often
negative. Equality within float rounding therefore says the rows are the
training rows, and the selector warns.

The check needs the booster's own gains (XGBoost, LightGBM, scikit-learn's
boosters; CatBoost stores none) and PreDecomp attributions; it recognises
the training rows only where Prop. 3 holds exactly (no row subsampling, the
training weights), and says nothing otherwise.
"""

from __future__ import annotations

import warnings

import numpy as np

from .._readers import read_model
from .._utils._validation import user_stacklevel
from ..exceptions import TrainingRowsWarning

__all__ = ["TOLERANCE", "warn_if_training_rows"]

#: Largest relative L1 distance between the scores and the total gain taken
#: for equality: float32 gains agree with in-sample TreeInner to 3e-7 and
#: closer, held-out scores differ from them by 0.07 and more
#: (``benchmarks/training_rows.py``; docs/how-it-works.md).
TOLERANCE = 1e-4


def training_rows_distance(estimator, scores) -> float | None:
    """Relative L1 distance of ``scores`` from the booster's total gain, or None.

    None where the booster stores no gains, made no split, or its columns
    are not the scored ones (a Pipeline's final step).
    """
    scores = np.asarray(scores, dtype=np.float64)
    try:
        with warnings.catch_warnings():  # the fit already said what it had to
            warnings.simplefilter("ignore")
            gain = read_model(estimator).total_gain()
    except (NotImplementedError, TypeError, ValueError):
        return None
    total = float(np.abs(gain).sum())
    if gain.shape != scores.shape or not total > 0:
        return None
    return float(np.abs(scores - gain).sum() / total)


def warn_if_training_rows(estimator, scores, attribution, X=None) -> None:
    """Warn when a prefit model is scored on its training rows.

    Its scores equal its total gain (PreDecomp, where Prop. 3 holds exactly),
    or, where the model stores its training rows' count at every node
    (LightGBM), ``X``'s rows reach every leaf of every tree exactly as often:
    the fingerprint that still holds where Prop. 3 is only approximate
    (LightGBM's categorical splits with ``cat_l2``).
    """
    evidence = None
    if attribution == "predecomp":
        distance = training_rows_distance(estimator, scores)
        if distance is not None and distance < TOLERANCE:
            evidence = (
                "their TreeInner scores equal its total split gain (paper 000, "
                f"Prop. 3; relative distance {distance:.1e})"
            )
    if evidence is None and X is not None and _same_leaf_counts(estimator, X):
        evidence = (
            "as many of them reach every leaf of every tree as of its training rows"
        )
    if evidence is None:
        return
    warnings.warn(
        "These rows look like the ones the prefit model was trained on: "
        f"{evidence}. On its training rows every split helps, so every column "
        "the model uses is kept, noise included. Pass rows the model never "
        "saw, or set prefit=False to let the selector hold rows out.",
        TrainingRowsWarning,
        stacklevel=user_stacklevel(),
    )


def _same_leaf_counts(estimator, X) -> bool:
    """Whether X's rows reach every leaf as often as the model's training rows did."""
    if hasattr(X, "dask") or not isinstance(getattr(X, "shape", (None,))[0], int):
        return False  # rows outside this process are not routed here
    try:
        with warnings.catch_warnings():  # the fit already said what it had to
            warnings.simplefilter("ignore")
            reader = read_model(estimator)
            counts = reader.training_row_counts()
            is_leaf = reader.ensemble.children_left < 0
            if counts is None or counts.shape != is_leaf.shape:
                return False
            if X.shape[0] != int(counts[0]):  # the rows that reached the first root
                return False
            leaves = reader.apply(reader.prepare_X(X))
    except (NotImplementedError, TypeError, ValueError):
        return False  # a Pipeline's final step, columns the model does not take
    reached = np.bincount(leaves.ravel(), minlength=is_leaf.size)
    return bool(np.array_equal(reached[is_leaf], counts[is_leaf]))
