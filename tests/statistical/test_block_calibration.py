"""Blocks of ordered rows as the test's units: calibrated where rows are not.

Simulated on terms shaped like a noise column's in a persistent series
(products of two AR(phi) series): with blocks the share of p < 0.05 stays
near 0.05, with rows as units it does not (moved from
tests/unit/test_dependence.py, which holds the checks themselves).
"""

import numpy as np
import pytest
from scipy.signal import lfilter

from skl_treeinner._stats._dependence import (
    block_sums,
)
from skl_treeinner._stats._inference import one_sided_test


# -- blocks ----------------------------------------------------------------------------
def _ar(rng, phi, n, k):
    e = rng.standard_normal((k, n + 300)) * np.sqrt(1 - phi**2)
    e[:, 0] = rng.standard_normal(k)
    return lfilter([1.0], [1.0, -phi], e, axis=1)[:, 300:]


@pytest.mark.parametrize("phi", [0.6, 0.9, 0.95])
def test_blocks_are_calibrated_where_rows_are_not(phi):
    # Terms of a noise column in a persistent series: its attribution and the
    # residual are both persistent, and independent (mean 0, H0's boundary).
    rng = np.random.default_rng(int(phi * 100))
    n, fits = 1000, 600
    z = _ar(rng, phi, n, fits) * _ar(rng, phi, n, fits)
    blocks = np.array([one_sided_test(block_sums(zi[:, None])).pvalues[0] for zi in z])
    rows = one_sided_test(z.T).pvalues
    assert 0.025 <= np.mean(blocks < 0.05) <= 0.085
    assert np.mean(blocks < 0.01) <= 0.025
    assert np.mean(rows < 0.05) > 0.09  # the same data: rows as units fail
