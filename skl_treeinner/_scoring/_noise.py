"""The noise floor: how much of each row's term is the target's own noise.

Role: the target's noise in the terms, given the rows' features, for the
test's model-based floor on their spread (``pool_noise`` and ``score_test`` in
:mod:`skl_treeinner._stats._inference` pool it). Given x_i (and the model), the
only chance left in a row's term z_ik is y_i's:

- :func:`row_noise`, :func:`row_noise_sums`: its variance per row, of the
  columns or of sums of them (a Pipeline's input columns, feature groups);
- :func:`terms_and_noise`: the rows' terms and their noise in one pass where
  the attribution allows;
- :func:`noise_targets`, :func:`noise_of_channels`: the targets at which the
  column test needs the terms, and the noise of terms known there.
"""

from __future__ import annotations

import numpy as np

from ._sums import final_margins, row_terms, treeshap_terms_of

__all__ = [
    "has_row_noise",
    "noise_of_channels",
    "noise_targets",
    "row_noise",
    "row_noise_sums",
    "terms_and_noise",
]


def terms_and_noise(reader, X, n, y, w, *, attribution, sums, verbose=0):
    """Each row's terms (:func:`row_terms`) and :func:`row_noise_sums` of them.

    The noise of an affine loss needs the terms at y + 1 too; with TreeSHAP
    both come from one pass over the patterns (two residual channels). Other
    cases (PreDecomp, whose passes share nothing; a K-class softmax, whose K
    label passes would hold K term arrays at once) take one pass per target,
    as :func:`row_noise_sums` does alone.
    """
    objective = reader.ensemble.objective
    if attribution == "treeshap" and objective.affine_in_target:
        y1 = np.asarray(y, dtype=np.float64) + 1.0
        z, at_y1 = treeshap_terms_of(
            reader, X, [y, y1], w, per_sample=True, verbose=verbose
        )
    else:
        z = row_terms(reader, X, n, y, w, attribution=attribution, verbose=verbose)
        at_y1 = None
    noise = row_noise_sums(
        reader, X, n, y, w, attribution=attribution, terms=z, sums=sums, at_y1=at_y1
    )
    return z, noise


def has_row_noise(objective) -> bool:
    """Whether :func:`row_noise` has a model of the target's noise for a loss."""
    return objective.affine_in_target or objective.is_classifier


def row_noise(reader, X, n, y, w, *, attribution, terms):
    """Give the target's own noise in each row's term z_ik, given its features.

    Given x_i (and the model), the only chance left in z_ik is y_i's. Where the
    loss gradient is affine in y (``Objective.affine_in_target``: squared
    error, Poisson, gamma, Tweedie, log-loss), so is z_ik, with slope
    a_ik = z_ik(y_i + 1) - z_ik(y_i), and Var(z_ik | x_i) = a_ik² φ V(μ_i),
    with the loss's variance function V at the prediction μ_i and one
    dispersion φ for all rows, estimated by Σ (y_i - μ_i)² / Σ V(μ_i) over
    the scored rows (pooled, so that a rare large residual counts for every
    row; about 1 for 0/1 labels and a calibrated model). For other
    classifiers, with the model's probabilities p_ic of the labels c,

        Var(z_ik | x_i) = Σ_c p_ic z_ik(c)² - (Σ_c p_ic z_ik(c))²,

    where z_ik(c) is the term had the row's label been c (one pass of
    :func:`row_terms` per label). ``terms`` are the rows' own terms
    (:func:`row_terms` at y), which the caller has computed already.

    Returns
    -------
    (a2v, resid2, var) or None
        Per row: ``a2v`` of shape (n, n_features), ``resid2`` and ``var`` of
        shape (n,), such that Σ_i Var(z_ik | x_i) ≈ Σ_i a2v_ik · Σ_i resid2_i
        / Σ_i var_i: ``a2v = a² V``, ``resid2 = (y - μ)²``, ``var = V`` for
        affine losses, and the variance itself with ``resid2 = var = 1`` for
        the others. None for losses with neither (Huber, Fair, pseudo-Huber,
        squared log error).
    """
    return row_noise_sums(
        reader, X, n, y, w, attribution=attribution, terms=terms, sums=(None,)
    )[0]


def row_noise_sums(reader, X, n, y, w, *, attribution, terms, sums, at_y1=None):
    """:func:`row_noise` of sums of columns, one per entry of ``sums``.

    ``at_y1``: the row terms at y + 1 of an affine loss, where the caller
    has them (:func:`terms_and_noise`).

    Each entry is None (the columns themselves) or a
    :class:`~skl_treeinner._stats._feature_groups.ColumnSums` (a pipeline's output
    columns added into its input columns, columns into feature groups). The
    terms share the row's target, so the noise of a sum is that of the summed
    slopes (or of the summed terms per label), not the sum of the members'
    noise: exact, from the same one extra pass.

    Returns
    -------
    list
        One :func:`row_noise` result per entry of ``sums``, ``a2v`` of the
        entry's columns (all None for losses without a noise model).
    """
    objective = reader.ensemble.objective
    if not has_row_noise(objective):
        return [None] * len(sums)

    def summed(values, into):
        return values if into is None else into(values)

    if objective.affine_in_target:
        y = np.asarray(y, dtype=np.float64)
        if at_y1 is None:
            at_y1 = row_terms(reader, X, n, y + 1.0, w, attribution=attribution)
        slope = at_y1 - terms
        mean = objective.mean(final_margins(reader, X, n))
        var = objective.variance(mean)
        return [
            (summed(slope, into) ** 2 * var[:, None], (y - mean) ** 2, var)
            for into in sums
        ]
    prob = objective.class_probabilities(final_margins(reader, X, n))
    first = [0.0] * len(sums)
    second = [0.0] * len(sums)
    for c in range(prob.shape[1]):
        label = np.full(n, c, dtype=np.asarray(y).dtype)
        z = row_terms(reader, X, n, label, w, attribution=attribution)
        for j, into in enumerate(sums):
            zj = summed(z, into)
            first[j] = first[j] + prob[:, c, None] * zj**2
            second[j] = second[j] + prob[:, c, None] * zj
    return [
        (np.maximum(a - b**2, 0.0), np.ones(n), np.ones(n))
        for a, b in zip(first, second, strict=True)
    ]


def noise_targets(ens, y):
    """y, then the targets at which the terms' noise floor needs the terms.

    ``[y, y + 1]`` where the loss is affine in y (the slope), ``[y, 0, 1,
    ..., K - 1]`` (each class label) for other classifiers, ``[y]`` where the
    loss has no noise model (:func:`row_noise`).
    """
    y = np.asarray(y, dtype=np.float64)
    objective = ens.objective
    if objective.affine_in_target:
        return [y, y + 1.0]
    if objective.is_classifier:
        k = objective.class_probabilities(np.zeros((1, ens.n_outputs))).shape[1]
        return [y] + [np.full(y.shape, float(c)) for c in range(k)]
    return [y]


def noise_of_channels(objective, margins, ys, terms_at):
    """Return the noise floor's ``(a2v, resid2, var)`` of terms known at ``ys``.

    ``margins`` are the rows' final margins
    (:func:`~skl_treeinner._scoring._sums.final_margins`); ``terms_at[c]`` (n, m)
    are terms at target ``ys[c]`` as :func:`noise_targets` chose them; the
    result is as :func:`row_noise`'s, or None
    without a model.
    """
    if len(ys) == 1:
        return None
    n = margins.shape[0]
    if objective.affine_in_target:
        mean = objective.mean(margins)
        var = objective.variance(mean)
        slope = terms_at[1] - terms_at[0]
        return slope**2 * var[:, None], (ys[0] - mean) ** 2, var
    prob = objective.class_probabilities(margins)
    first = sum(prob[:, c, None] * z**2 for c, z in enumerate(terms_at[1:]))
    second = sum(prob[:, c, None] * z for c, z in enumerate(terms_at[1:]))
    return np.maximum(first - second**2, 0.0), np.ones(n), np.ones(n)
