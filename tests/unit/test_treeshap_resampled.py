"""The TreeSHAP resampling kernel's algebra: a unit's value as its o bits change.

The kernel (``_numba_permute_shap``) computes, once per row and leaf, moments
of the row's o bits outside a unit (``_kernels.cpu._shap_moments.unit_moments``) and
then the unit's TreeSHAP on the leaf for any o bits of the unit
(``drawn_value``). Both must equal the leaf's Shapley values evaluated
directly for the changed pattern (``_kernels.cpu._treeshap._pattern_values``,
checked against the libraries' TreeSHAP elsewhere), including covers of zero or
too small to divide out (a factor multiplied again) and units of several
features.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("numba")

from skl_treeinner._kernels.cpu import _shap_moments as sm  # noqa: E402
from skl_treeinner._kernels.cpu import _treeshap as ts  # noqa: E402


@st.composite
def leaves(draw):
    m = draw(st.integers(1, 14))
    z = np.array(
        draw(
            st.lists(
                st.one_of(
                    st.just(0.0), st.just(5e-324), st.just(1.0), st.floats(0.0, 1.0)
                ),
                min_size=m,
                max_size=m,
            )
        )
    )
    pattern = draw(st.integers(0, (1 << m) - 1))
    size = draw(st.integers(1, min(m, 4)))
    bits = np.array(draw(st.permutations(range(m)))[:size], dtype=np.int64)
    drawn_bits = draw(st.integers(0, (1 << size) - 1))
    v = draw(st.floats(-5.0, 5.0))
    return m, z, pattern, bits, drawn_bits, v


@settings(max_examples=300, deadline=None)
@given(leaves())
def test_a_units_value_for_changed_bits_equals_the_leafs_shapley_values(leaf):
    m, z, pattern, bits, drawn_bits, v = leaf
    # The pattern with the unit's bits replaced by the drawn ones.
    mask = 0
    drawn = pattern
    for q, k in enumerate(bits):
        mask |= 1 << int(k)
        if (drawn_bits >> q) & 1:
            drawn |= 1 << int(k)
        else:
            drawn &= ~(1 << int(k))
    weights = np.zeros((ts.MAX_PATH_FEATURES + 1, ts.MAX_PATH_FEATURES + 1))
    weights[m, :m] = ts._shapley_weights(m)
    poly = np.empty(m + 1)
    sm.pattern_poly(z[None, :], 0, m, pattern, poly)
    moments = np.empty(bits.size)
    work = np.empty(m + 1)
    sm.unit_moments(z[None, :], 0, m, pattern, bits, weights, poly, work, moments, 0)
    prod = np.empty(m + 1)
    got = sm.drawn_value(v, z[None, :], 0, moments, 0, bits, 0, bits.size, drawn, prod)
    expect = np.empty(m)
    ts._pattern_values(
        v, z, m, drawn, weights[m], np.empty(m + 1), np.empty(m + 1), expect
    )
    want = expect[bits].sum()
    assert got == pytest.approx(want, rel=1e-9, abs=1e-12 * (1 + abs(v)))
    # The row's own bits give the row's own values.
    own = sm.drawn_value(v, z[None, :], 0, moments, 0, bits, 0, bits.size, pattern,
                         prod)  # fmt: skip
    ts._pattern_values(
        v, z, m, pattern, weights[m], np.empty(m + 1), np.empty(m + 1), expect
    )
    assert own == pytest.approx(expect[bits].sum(), rel=1e-9, abs=1e-12 * (1 + abs(v)))
