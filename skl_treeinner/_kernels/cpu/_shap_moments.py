"""A unit's TreeSHAP on one leaf as its o bits change, compiled by numba.

Imported only by :mod:`skl_treeinner._kernels.cpu._permute_shap` (the column test's
resampling kernel for TreeSHAP). Leaf l, of value v and m distinct path
features with cover products z, adds to its feature k

    phi_k = v (o_k - z_k) sum_s W(s, m) [t^s] prod_{k' != k} (z_k' + o_k' t)

(:mod:`skl_treeinner._kernels.cpu._treeshap`). A unit U of the leaf's features B
has, for the o bits of a row,

    Q_U(t) = prod_{k' not in B} (z_k' + o_k' t),
    M_U[e] = sum_s W(s + e, m) Q_U[s]   (e < |B|),

and its TreeSHAP on the leaf when U's o bits are o~ (the others the row's) is

    sum_{k in B} v (o~_k - z_k) sum_e M_U[e] [t^e] R_k(t),
    R_k(t) = prod_{k' in B, k' != k} (z_k' + o~_k' t):

M_U (:func:`unit_moments`) once per row and leaf, then |B|^3 operations per
set of o bits (:func:`drawn_value`); |B| = 1 for a column, and then the
value is v (o~_k - z_k) M_U[0].
"""

from __future__ import annotations

from numba import njit

from ._tree_paths import times_factor

_jit = njit(nogil=True, cache=True)

#: The least constant factor z (o = 0) divided out of a leaf's product: below
#: it the product may have lost it to underflow (z = 5e-324 gives 0 for every
#: coefficient), so the other factors are multiplied again instead. The moments
#: are multiplied by (o~ - z) of a drawn bit, which need not be small; what a
#: divided factor can lose is under 1e-200 times the leaf's value.
MIN_DIVISOR = 1e-100


@_jit
def unit_moments(zz, j, m, pattern, bits, shapley, poly, work, out, o0):
    """out[o0:o0 + nb] = M_U for the o bits of ``pattern`` (module doc).

    ``bits`` (nb of them) are U's local features on leaf j, whose z are
    ``zz[j]``; ``poly[:m + 1]`` holds prod_k (z_k + o_k t) of the pattern
    (:func:`pattern_poly`), ``shapley[m, s]`` W(s, m); ``work`` is
    scratch of m + 1 floats. A constant factor of U too small to divide out
    (o = 0 where z < MIN_DIVISOR, zero included): the other factors are
    multiplied again.
    """
    b0, nb = 0, bits.shape[0]
    zero = False
    for q in range(nb):
        k = bits[b0 + q]
        if ((pattern >> k) & 1) == 0 and zz[j, k] < MIN_DIVISOR:
            zero = True
    if zero:
        work[0] = 1.0
        deg = 0
        for k in range(m):
            inside = False
            for q in range(nb):
                if bits[b0 + q] == k:
                    inside = True
            if inside:
                continue
            times_factor(work, deg, zz[j, k], (pattern >> k) & 1)
            deg += 1
    else:
        deg = m
        for s in range(m + 1):
            work[s] = poly[s]
        for q in range(nb):
            k = bits[b0 + q]
            if (pattern >> k) & 1:
                # Divide by (t + z_k), exact: from the top coefficient down.
                carry = 0.0
                for s in range(deg, 0, -1):
                    carry = work[s] - zz[j, k] * carry
                    work[s] = carry  # the quotient's t^(s-1), one place up
                for s in range(deg):
                    work[s] = work[s + 1]
            else:
                for s in range(deg):
                    work[s] = work[s] / zz[j, k]
            deg -= 1
    # M[e] = sum_s W(s + e, m) Q[s], e < nb.
    for e in range(nb):
        total = 0.0
        for s in range(deg + 1):
            total += shapley[m, s + e] * work[s]
        out[o0 + e] = total


@_jit
def pattern_poly(zz, j, m, pattern, poly):
    """poly[:m + 1] = prod_k (z_k + o_k t) of the o bits of ``pattern``, leaf j."""
    poly[0] = 1.0
    for k in range(m):
        times_factor(poly, k, zz[j, k], (pattern >> k) & 1)


@_jit
def drawn_value(v, zz, j, store, o0, bits, b0, nb, drawn, prod):
    """Return U's TreeSHAP on leaf j with o bits ``drawn``, M_U at ``store[o0:]``."""
    total = 0.0
    for q in range(nb):
        k = bits[b0 + q]
        # prod_{k' in B, k' != k} (z_k' + o~_k' t), degree < nb
        prod[0] = 1.0
        deg = 0
        for p in range(nb):
            if p == q:
                continue
            kp = bits[b0 + p]
            times_factor(prod, deg, zz[j, kp], (drawn >> kp) & 1)
            deg += 1
        dot = 0.0
        for e in range(deg + 1):
            dot += prod[e] * store[o0 + e]
        total += (((drawn >> k) & 1) - zz[j, k]) * dot
    return v * total
