"""Standard errors and a one-sided test for held-out TreeInner scores.

A held-out score is a sum over rows, ``score_k = Σ_i z_ik``, where ``z_ik`` is
row i's term of Eq. 21 (``tree_inner(..., per_sample=True)``). Given the
fitted model, held-out rows are independent draws, so the ``z_·k`` are
independent too: the standard error of the score is ``sqrt(m) · sd(z_·k)``
over the ``m`` scored rows, and ``t_k = score_k / se_k`` tests
H0: E[z_k] ≤ 0, "feature k does not help the model on new rows", against
E[z_k] > 0 with Student's t on ``m - 1`` degrees of freedom.

Under cross-fitting every row is scored by the model that never saw it and
the rows of all splits are pooled, as in double machine learning
(Chernozhukov et al., 2018): the spread is taken around the pooled mean, which
also absorbs the differences between the splits' models. A row scored by
several splits (repeated or overlapping splitters) enters once, with the sum
of its terms, so that the pooled rows stay independent.

Why a plain t-test: the ``z`` are heavy-tailed and skewed (a few rows carry
large residuals), so its calibration was measured rather than assumed
(``benchmarks/calibration.py``; numbers in ``docs/user-guide.md``): on
held-out terms of fitted default boosters, centred at zero (the boundary of
H0), the share of p < 0.05 averaged 0.049-0.054 over features for 30 to 3000
rows; single features with the most skewed terms reached 0.07 at 1000 rows
or more and up to 0.13 at 30-100 rows. Under the null of the tests (y
independent of X) a noise feature's expected term is below zero and the
share was about 0.01. The normal distribution instead of Student's t was
no better (0.055-0.060 at 30 rows).
"""

from __future__ import annotations

import numpy as np
from scipy import stats

__all__ = ["pool_rows", "one_sided_test", "ScoreTest"]


class ScoreTest:
    """The score, its standard error and the one-sided p-value of every feature.

    Attributes
    ----------
    scores : ndarray of shape (n_features,)
    se : ndarray of shape (n_features,)
    pvalues : ndarray of shape (n_features,)
    n_rows : int
        The number of independent rows the statistics come from.
    """

    __slots__ = ("scores", "se", "pvalues", "n_rows")

    def __init__(self, scores, se, pvalues, n_rows):
        self.scores, self.se, self.pvalues, self.n_rows = scores, se, pvalues, n_rows


def pool_rows(n_samples, tests, contributions, sample_weight=None):
    """Pool the per-row contributions of every split into one row per scored row.

    Parameters
    ----------
    n_samples : int
        Rows of the data the splits index.
    tests : list of ndarray of int
        The held-out rows of each split.
    contributions : list of ndarray of shape (len(test), n_features)
        Each split's per-row contributions on its held-out rows.
    sample_weight : ndarray of shape (n_samples,) or None
        The rows' weights; rows of weight 0 carry no information and are
        left out.

    Returns
    -------
    z : ndarray of shape (n_scored, n_features)
        One row per row scored at least once, holding the sum of its
        contributions over the splits that scored it.
    weights : ndarray of shape (n_scored,) or None
        Their weights.
    """
    n_features = contributions[0].shape[1]
    total = np.zeros((n_samples, n_features))
    scored = np.zeros(n_samples, dtype=bool)
    for test, z in zip(tests, contributions, strict=True):
        np.add.at(total, test, z)  # a splitter may repeat a row within a split
        scored[test] = True
    if sample_weight is None:
        return total[scored], None
    sample_weight = np.asarray(sample_weight, dtype=np.float64)
    scored &= sample_weight != 0
    return total[scored], sample_weight[scored]


def one_sided_test(z, weights=None) -> ScoreTest:
    """Test H0: E[z_k] ≤ 0 for every column k of the per-row contributions.

    Parameters
    ----------
    z : ndarray of shape (m, n_features)
        Independent rows (:func:`pool_rows`); each already carries its
        weight, ``z_ik = w_i · ζ_ik``.
    weights : ndarray of shape (m,) or None
        Frequency weights, as scikit-learn reads ``sample_weight``: a row of
        weight 2 counts as two rows with the same ``ζ``, so the test gives
        the same answer as on the data with that row repeated. ``None``: 1.

    Returns
    -------
    ScoreTest
        ``scores`` = column sums; ``se`` = ``sqrt(W) · sd`` with ``W`` the
        sum of the weights (``m`` unweighted) and ``sd`` the weighted
        standard deviation of ``ζ`` (``W - 1`` in its denominator);
        ``pvalues`` = P(T > score / se) for T ~ Student's t with ``W - 1``
        degrees of freedom. A column with no spread (every row the same
        value, e.g. a feature no tree splits on) gets p = 1 when its score
        is ≤ 0 and p = 0 above.

    Raises
    ------
    ValueError
        If ``W`` < 2: too few rows (or weights too small) for a spread.
    """
    z = np.asarray(z, dtype=np.float64)
    if weights is None:
        total_weight = float(z.shape[0])
        zeta, w = z, None
    else:
        w = np.asarray(weights, dtype=np.float64)
        total_weight = float(w.sum())
        zeta = z / w[:, None]
    if total_weight < 2:
        raise ValueError(
            f"A standard error of the scores needs at least 2 scored rows, and "
            f"the held-out rows here count as {total_weight:g}. sample_weight is "
            "read as frequency weights (a weight of 2 counts as two rows, as in "
            "scikit-learn): rescale weights that sum to 1 so that they average 1 "
            "(w / w.mean()), or score on more rows."
        )
    scores = z.sum(axis=0)
    mean = scores / total_weight
    squares = (zeta - mean) ** 2
    if w is not None:
        squares *= w[:, None]
    variance = squares.sum(axis=0) / (total_weight - 1)
    se = np.sqrt(total_weight * variance)
    # Spreads at float rounding of the scale of the terms are no spread.
    scale = np.abs(zeta).max(axis=0)
    flat = se <= 1e-12 * np.sqrt(total_weight) * np.where(scale > 0, scale, 1.0)
    t = scores / np.where(flat, 1.0, se)
    pvalues = stats.t.sf(np.where(flat, 0.0, t), df=total_weight - 1)
    pvalues[flat] = np.where(scores[flat] > 0, 0.0, 1.0)
    se[flat] = 0.0
    return ScoreTest(scores, se, pvalues, total_weight)
