"""Work in progress (issue 30, branch issue-30-wip): the refit curve's pure parts.

How many features does a model need: a curve of the refit booster's held-out
score against the number k of best-ranked candidates, and the k that
``max_features="best"`` or ``"1se"`` keeps. This module holds the parts that
need no booster: the grid of k (dense where curves bend, for small k) and the
choice of k from a curve. The honest curve itself (for every outer split, a
ranking from that split's training rows alone, then refits of the top k) is
to come in the in-memory engine; see the session note of 2026-11-26.
"""

from __future__ import annotations

import numpy as np

__all__ = ["CURVE_RULES", "choose_k", "k_grid"]

#: The rules ``max_features`` may name to choose k from a fitted curve.
CURVE_RULES = ("best", "1se")


def k_grid(n_candidates: int, *, dense: int = 10, step: float = 1.3) -> np.ndarray:
    """Return the numbers of features a curve is evaluated at.

    Every k from 0 (the intercept alone) to ``dense``, then a geometric grid
    of ratio ``step`` up to ``n_candidates``, which is always included.

    Examples
    --------
    >>> k_grid(25).tolist()
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 17, 22, 25]
    >>> k_grid(3).tolist()
    [0, 1, 2, 3]
    """
    n = int(n_candidates)
    ks = list(range(0, min(n, dense) + 1))
    k = dense
    while k < n:
        k = min(n, max(k + 1, int(round(k * step))))
        ks.append(k)
    return np.asarray(sorted(set(ks)), dtype=np.int64)


def choose_k(n_features, mean, se, rule: str) -> int:
    """Return the k a rule keeps, from a curve's mean scores and standard errors.

    ``"best"``: the k of the highest mean (the smallest such k on ties);
    ``"1se"``: the smallest k whose mean is within one standard error of the
    best mean (Breiman et al.'s one-standard-error rule).

    Examples
    --------
    >>> choose_k([0, 1, 2, 4], [0.0, 0.5, 0.58, 0.6], [0.01, 0.03, 0.03, 0.03], "best")
    4
    >>> choose_k([0, 1, 2, 4], [0.0, 0.5, 0.58, 0.6], [0.01, 0.03, 0.03, 0.03], "1se")
    2
    """
    ks = np.asarray(n_features)
    mean = np.asarray(mean, dtype=np.float64)
    se = np.asarray(se, dtype=np.float64)
    best = int(np.argmax(mean))  # the first of equal maxima: the smallest k
    if rule == "best":
        return int(ks[best])
    if rule == "1se":
        within = np.flatnonzero(mean >= mean[best] - se[best])
        return int(ks[within.min()])
    raise ValueError(f"rule={rule!r} is not one of {CURVE_RULES}.")
