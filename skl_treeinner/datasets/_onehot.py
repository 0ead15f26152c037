"""A one-hot encoded categorical with rare levels that drives y, beside a noise one.

The most common input a selector gets: two categoricals with
skewed level frequencies, each one-hot encoded (levels never drawn have no
column, as ``pandas.get_dummies`` gives), beside numeric columns. A split on
a rare dummy of the noise categorical isolates a few training rows, which
can help an underfit booster on new rows whichever column made the split:
the test of the model's use (``test="model"``) keeps such dummies, the test
of the column (``TreeInnerSelector``'s default, ``test="column"``) should not.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

from ._checks import check_int, check_n_samples, check_task

__all__ = ["make_rare_levels"]


def make_rare_levels(
    n_samples=3000, *, levels=50, task="regression", random_state=None
):
    """Draw a relevant and a noise categorical with rare levels, one-hot encoded.

    Each categorical has ``levels`` levels with frequencies drawn from a
    Dirichlet(0.5) distribution, so that a few levels are common and many
    are rare; the first drives y through one effect per level (standard
    normal), the second is independent of everything. Four standard normal
    columns come first, of which the first two are relevant (coefficients 1
    and 0.5). Regression: y = signal + N(0, 1); classification:
    P(y = 1) = expit(signal).

    Parameters
    ----------
    n_samples : int, default=3000
    levels : int, default=50
        Levels of each categorical (at least 2).
    task : {"regression", "classification"}, default="regression"
    random_state : int, RandomState instance or None, default=None

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        ``x0..x3``, the relevant categorical's dummies, then the noise
        categorical's; levels that were not drawn have no column.
    y : ndarray of shape (n_samples,)
    relevant : ndarray of shape (n_features,), bool
        ``x0``, ``x1`` and the relevant categorical's dummies.
    noise_dummies : ndarray of shape (n_features,), bool
        The noise categorical's dummies.

    Examples
    --------
    >>> from skl_treeinner.datasets import make_rare_levels
    >>> X, y, relevant, noise = make_rare_levels(500, levels=10, random_state=0)
    >>> X.shape[0], int(relevant[:4].sum()), bool((relevant & noise).any())
    (500, 2, False)
    """
    check_task(task)
    n = check_n_samples(n_samples, minimum=2)
    levels = check_int("levels", levels, minimum=2)
    rng = check_random_state(random_state)
    numeric = rng.standard_normal((n, 4))
    blocks = []
    for _ in range(2):
        codes = rng.choice(levels, size=n, p=rng.dirichlet(np.full(levels, 0.5)))
        blocks.append(codes)
    effect = rng.standard_normal(levels)
    signal = effect[blocks[0]] + numeric[:, 0] + 0.5 * numeric[:, 1]
    if task == "regression":
        y = signal + rng.standard_normal(n)
    else:
        y = (rng.random(n) < 1.0 / (1.0 + np.exp(-signal))).astype(np.int64)
    dummies = [np.eye(levels)[codes][:, np.unique(codes)] for codes in blocks]
    X = np.hstack([numeric, *dummies])
    relevant = np.zeros(X.shape[1], dtype=bool)
    relevant[:2] = True
    relevant[4 : 4 + dummies[0].shape[1]] = True
    noise = np.zeros(X.shape[1], dtype=bool)
    noise[4 + dummies[0].shape[1] :] = True
    return X, y, relevant, noise
