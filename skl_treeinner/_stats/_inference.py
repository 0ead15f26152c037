"""Standard errors and a one-sided test for held-out TreeInner scores.

A held-out score is a sum over rows, ``score_k = Σ_i z_ik`` (Eq. 21, per row:
``tree_inner(..., per_sample=True)``); given the fitted model the rows are
independent draws, so ``se_k = sqrt(m) · sd(z_·k)`` over the ``m`` units
(rows, groups or blocks; a row's weight is part of its draw), floored by the
target's own noise (:func:`~skl_treeinner._scoring._noise.row_noise`), and
``t_k = score_k / se_k`` tests H0: E[z_k] ≤ 0 with Student's t on ``m - 1``
degrees of freedom. Under cross-fitting the rows of all splits are pooled,
a row scored by several splits once. Why this test, and how it is
calibrated: docs/core.md, "Per-row terms and the test".
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy import stats

__all__ = [
    "Moments",
    "combine_moments",
    "combine_repeats",
    "moments",
    "one_sided_test",
    "pool_noise",
    "pool_rows",
    "ScoreTest",
    "score_test",
]


class ScoreTest:
    """The score, its standard error and the one-sided p-value of every feature.

    Attributes
    ----------
    scores : ndarray of shape (n_features,)
    se : ndarray of shape (n_features,)
    pvalues : ndarray of shape (n_features,)
    n_rows : int
        The number of independent units (rows, or groups) the statistics
        come from.
    """

    __slots__ = ("scores", "se", "pvalues", "n_rows")

    def __init__(self, scores, se, pvalues, n_rows):
        self.scores, self.se, self.pvalues, self.n_rows = scores, se, pvalues, n_rows


def pool_noise(n_samples, tests, noise, sample_weight=None):
    """Floor of the pooled score's variance: the target's noise in its terms.

    ``noise`` holds each split's :func:`~skl_treeinner._scoring._noise.row_noise` on
    its held-out rows (or None where the loss has no model of it). A row
    scored by several splits enters once, as in :func:`pool_rows`, and its
    terms share its target, so their standard deviations add (exact for
    affine losses and slopes of one sign, an upper bound otherwise). Rows of
    weight 0 are left out. Returns ``Σ_i a2v_ik · Σ resid2 / Σ var`` per
    feature, or None if any split has no noise model.
    """
    if any(part is None for part in noise):
        return None
    keep = None if sample_weight is None else np.asarray(sample_weight) != 0
    sd = np.zeros((n_samples, noise[0][0].shape[1]))
    resid2 = var = 0.0
    for test, (a2v, r2, v) in zip(tests, noise, strict=True):
        scored = slice(None) if keep is None else keep[test]
        np.add.at(sd, test[scored], np.sqrt(a2v[scored]))
        resid2 += float(np.sum(r2[scored]))
        var += float(np.sum(v[scored]))
    if var <= 0:
        return None
    return (sd**2).sum(axis=0) * (resid2 / var)


def pool_rows(n_samples, tests, contributions, sample_weight=None, groups=None):
    """Pool the per-row contributions of every split into independent units.

    Parameters
    ----------
    n_samples : int
        Rows of the data the splits index.
    tests : list of ndarray of int
        The held-out rows of each split.
    contributions : list of ndarray of shape (len(test), n_features)
        Each split's per-row contributions on its held-out rows (weights
        included).
    sample_weight : ndarray of shape (n_samples,) or None
        The rows' weights; rows of weight 0 are not scored and are left out.
    groups : array-like of shape (n_samples,) or None
        Group labels: the rows of a group are pooled into one unit.

    Returns
    -------
    ndarray of shape (n_units, n_features)
        One row per row (or group) scored at least once, holding the sum of
        its contributions over the splits that scored it.
    """
    n_features = contributions[0].shape[1]
    total = np.zeros((n_samples, n_features))
    scored = np.zeros(n_samples, dtype=bool)
    for test, z in zip(tests, contributions, strict=True):
        np.add.at(total, test, z)  # a splitter may repeat a row within a split
        scored[test] = True
    if sample_weight is not None:
        scored &= np.asarray(sample_weight) != 0
    if groups is None:
        return total[scored]
    _, unit = np.unique(np.asarray(groups)[scored], return_inverse=True)
    pooled = np.zeros((unit.max(initial=-1) + 1, n_features))
    np.add.at(pooled, unit, total[scored])
    return pooled


class Moments(NamedTuple):
    """What the test needs of a set of units, per feature; sets add exactly.

    Per-unit terms never have to be in one place: each partition of the rows
    (a Dask partition, a split) reduces its units to these, and
    :func:`combine_moments` adds two sets (Chan, Golub and LeVeque's pairwise
    update of the sum of squared deviations, as stable as the two-pass sum).
    """

    #: Number of units.
    n: int
    #: Sum of the terms, per feature (the score).
    total: np.ndarray
    #: Sum of squared deviations from the mean, per feature.
    m2: np.ndarray
    #: Largest absolute term, per feature (the scale of "no spread").
    peak: np.ndarray
    #: The target's noise (:func:`~skl_treeinner._scoring._noise.row_noise`): the
    #: sums of the rows' ``a2v`` (per feature), ``resid2`` and ``var``; None
    #: where the loss has no model of it.
    noise: tuple | None = None

    @property
    def noise_variance(self):
        """The floor Σ_i a2v_ik · Σ resid2 / Σ var of the score's variance, or None."""
        if self.noise is None or self.noise[2] <= 0:
            return None
        a2v, resid2, var = self.noise
        return a2v * (resid2 / var)


def moments(z, noise=None) -> Moments:
    """Reduce units ``z`` of shape (m, n_features) to their :class:`Moments`.

    ``noise`` is the rows' :func:`~skl_treeinner._scoring._noise.row_noise`, if any.
    """
    z = np.asarray(z, dtype=np.float64)
    m = z.shape[0]
    if noise is not None:
        a2v, resid2, var = noise
        noise = (np.asarray(a2v).sum(axis=0), float(np.sum(resid2)), float(np.sum(var)))
    if m == 0:
        zero = np.zeros(z.shape[1])
        return Moments(0, zero, zero.copy(), zero.copy(), noise)
    total = z.sum(axis=0)
    m2 = ((z - total / m) ** 2).sum(axis=0)
    return Moments(m, total, m2, np.abs(z).max(axis=0), noise)


def _add_noise(a, b):
    if a is None or b is None:
        return None
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


def combine_moments(a: Moments, b: Moments) -> Moments:
    """Return the :class:`Moments` of the union of two disjoint sets of units."""
    noise = _add_noise(a.noise, b.noise)
    if a.n == 0:
        return b._replace(noise=noise)
    if b.n == 0:
        return a._replace(noise=noise)
    n = a.n + b.n
    delta = b.total / b.n - a.total / a.n
    m2 = a.m2 + b.m2 + delta**2 * (a.n * b.n / n)
    return Moments(n, a.total + b.total, m2, np.maximum(a.peak, b.peak), noise)


def one_sided_test(z, noise_variance=None, scale=None) -> ScoreTest:
    """Test H0: E[z_k] ≤ 0 for every column k of the per-unit contributions.

    Parameters
    ----------
    z : ndarray of shape (m, n_features)
        Independent units (:func:`pool_rows`), m ≥ 2.
    noise_variance : ndarray of shape (n_features,) or None
        The target's noise in the score (:func:`pool_noise`): the floor of
        the score's variance.
    scale : ndarray of shape (n_features,) or None
        The size of the terms ``z`` are differences of, where they are
        (the test of a column): a spread at float rounding of it is no
        spread. None: the largest ``|z|``.

    Returns
    -------
    ScoreTest
        ``scores`` = column sums; ``se`` = ``sqrt(m) · std(z, ddof=1)``, or
        the square root of ``noise_variance`` where larger;
        ``pvalues`` = P(T > score / se) for T ~ Student's t with m - 1
        degrees of freedom. A column with no spread (every unit the same
        value, e.g. a feature no tree splits on) gives no evidence either
        way: p = 1.

    Raises
    ------
    ValueError
        If m < 2.
    """
    units = moments(z)
    if scale is not None:
        units = units._replace(peak=np.maximum(units.peak, scale))
    if noise_variance is not None:
        units = units._replace(noise=(np.asarray(noise_variance), 1.0, 1))
    return score_test(units)


def score_test(units: Moments) -> ScoreTest:
    """:func:`one_sided_test` from the units' :class:`Moments` alone.

    Parameters
    ----------
    units : Moments
        Of m ≥ 2 independent units (added over partitions of the rows with
        :func:`combine_moments`).

    Returns
    -------
    ScoreTest
        As :func:`one_sided_test` on the units themselves.

    Raises
    ------
    ValueError
        If m < 2.
    """
    m = units.n
    if m < 2:
        raise ValueError(
            f"A standard error of the scores needs at least 2 scored rows (of "
            f"nonzero weight, or groups); got {m}. Score on more rows."
        )
    scores = np.asarray(units.total, dtype=np.float64)
    se = np.sqrt(m) * np.sqrt(np.maximum(units.m2, 0.0) / (m - 1))
    floor = units.noise_variance
    if floor is not None:
        se = np.maximum(se, np.sqrt(np.maximum(floor, 0.0)))
    # Spreads at float rounding of the scale of the terms are no spread.
    scale = units.peak
    flat = se <= 1e-12 * np.sqrt(m) * scale
    return _t_test(scores, se, flat, m)


def _t_test(scores, se, flat, m) -> ScoreTest:
    """One-sided Student's t of ``scores / se`` on ``m - 1`` degrees of freedom.

    Units with no spread (``flat``) give no evidence either way: p = 1 and a
    standard error of 0.
    """
    t = scores / np.where(flat, 1.0, se)
    pvalues = stats.t.sf(np.where(flat, 0.0, t), df=m - 1)
    pvalues[flat] = 1.0
    return ScoreTest(scores, np.where(flat, 0.0, se), pvalues, m)


def combine_repeats(tests) -> ScoreTest:
    """Test the mean score of repeated selections, valid whatever ties the repeats.

    ``tests`` are the :class:`ScoreTest` of R repeats of the selection on the
    same rows (other folds, booster seeds and draws), each a valid test of
    its own units. The repeats share the data, so their scores are
    dependent in ways the rows cannot measure: a pair of rows fitted and
    scored in turn by different repeats meets twice, the shared chance that
    symmetric cross-fitting suffers (docs/core.md). So the mean score is
    divided by the mean standard error: ``t = mean_r T_r / mean_r se_r``.
    Its standard error can only be smaller, since sd(Σ T_r) ≤ Σ sd(T_r)
    under any dependence, so the test keeps its level (conservatively,
    where the repeats differ). Student's t with the fewest units of any
    repeat, less one, as degrees of freedom.

    Returns the combined :class:`ScoreTest`: mean scores, mean standard
    errors, the p-values of their ratio (1 where no repeat has any spread),
    and the fewest units. One test is returned as it is.
    """
    tests = list(tests)
    if len(tests) == 1:
        return tests[0]
    scores = np.mean([t.scores for t in tests], axis=0)
    se = np.mean([t.se for t in tests], axis=0)
    m = min(t.n_rows for t in tests)
    return _t_test(scores, se, se <= 0, m)  # se 0: no repeat had any spread
