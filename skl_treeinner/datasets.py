"""Data sets with a known ground truth, to check feature selection against.

The generators return the features, the target and a boolean mask of the
features the target truly depends on, so that any score of the features can be
judged by how well it ranks the relevant ones first (ROC AUC of the scores
against the mask, as in paper 000, Sec. 4).
"""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

__all__ = ["make_paper_simulation"]

_TASKS = ("regression", "classification")


def make_paper_simulation(task="regression", n_samples=2000, random_state=None):
    """Make the simulated data of paper 000 (Sec. 4.1) as its published code does.

    Fifty independent discrete features; feature ``j`` (0-based) is uniform on
    {0, 1, ..., j + 1}, so the noise features (most of them) take many more
    distinct values than the relevant ones, the case where in-sample
    split-gain importance is biased toward noise. Five relevant features
    are drawn at random from the first ten. Every feature is min-max scaled
    to [0, 1], and with ``m`` the mean of the five scaled relevant features:

    - ``task="classification"``: ``P(y = 1 | x) = exp(m) / (exp(m) + exp(-m))``,
      that is ``sigmoid(2 m)``;
    - ``task="regression"``: ``y = m + eps`` with
      ``eps ~ Normal(0, sd = 100 * Var(m))``.

    Parameters
    ----------
    task : {"regression", "classification"}, default="regression"
        Which target to generate.
    n_samples : int, default=2000
        Number of rows. The paper uses 1000 to fit and 1000 to score on.
    random_state : int, RandomState instance or None, default=None
        Seeds the features, the choice of relevant features and the target.

    Returns
    -------
    X : ndarray of shape (n_samples, 50), float64
        Scaled features, each in [0, 1].
    y : ndarray of shape (n_samples,)
        Float64 target for regression, int64 labels in {0, 1} for
        classification.
    relevant : ndarray of shape (50,), bool
        True for the five features the target depends on.

    Raises
    ------
    ValueError
        If ``task`` is not one of the two tasks or ``n_samples < 2``.

    Notes
    -----
    This follows the authors' code (``04_generate_all_simulation_data.ipynb``
    of https://github.com/nalzok/TreeInner), which differs from the paper's
    text in two ways we keep: the noise's *standard deviation* is
    ``100 * Var(m)`` (the text says variance, and the noise is far louder
    than the text suggests), and the features are min-max scaled before ``m``
    is taken (the text divides by j).

    Two deliberate differences from the code, both immaterial:

    - Scaling. The code fits ``MinMaxScaler`` on the training half and applies
      it to both halves. Here every feature is divided by its known range
      ``j + 1`` (its minimum is 0). The two agree whenever the training rows
      contain each feature's smallest and largest value, which with 1000
      rows fails with probability below 1e-8 per data set. Scaling by the
      known range makes the rows exchangeable, so any split of the
      returned rows into training and scoring parts reproduces the paper's
      setting.
    - ``Var(m)`` is the sample variance of ``m`` (``np.var``, ddof=0) over all
      ``n_samples`` rows, where the code takes it separately over each half
      of 1000 rows.

    Random numbers come from :func:`sklearn.utils.check_random_state`, so the
    data differ from the authors' files for the same seed.

    References
    ----------
    Y. Sun, "Individualized and Global Feature Attributions for Gradient
    Boosted Trees in the Presence of ℓ2 Regularization", AISTATS 2023,
    Sec. 4.1 ("Simulated Dataset") and Table 4. The design is from
    X. Li et al., "A Debiased MDI Feature Importance Measure for Random
    Forests", NeurIPS 2019.

    Examples
    --------
    >>> from skl_treeinner.datasets import make_paper_simulation
    >>> X, y, relevant = make_paper_simulation("classification", random_state=0)
    >>> X.shape, y.shape, int(relevant.sum()), bool(relevant[10:].any())
    ((2000, 50), (2000,), 5, False)
    >>> sorted(set(y.tolist()))
    [0, 1]
    >>> float(X.min()), float(X.max())
    (0.0, 1.0)
    """
    if task not in _TASKS:
        raise ValueError(
            f"task={task!r} is not supported; choose one of {list(_TASKS)}."
        )
    n_samples = int(n_samples)
    if n_samples < 2:
        raise ValueError(
            f"n_samples={n_samples} is too small; the noise level needs the "
            "variance of the signal over at least 2 rows."
        )
    rng = check_random_state(random_state)
    n_features, n_relevant, pool = 50, 5, 10
    levels = np.arange(n_features) + 2  # feature j takes j + 2 values
    X = np.floor(rng.random_sample((n_samples, n_features)) * levels)
    X /= levels - 1  # min-max scaling by the known range {0, ..., j + 1}
    relevant = np.zeros(n_features, dtype=bool)
    relevant[rng.choice(pool, size=n_relevant, replace=False)] = True
    m = X[:, relevant].mean(axis=1)
    if task == "classification":
        p = 1.0 / (1.0 + np.exp(-2.0 * m))
        y = (rng.random_sample(n_samples) < p).astype(np.int64)
    else:
        y = m + rng.normal(0.0, 100.0 * np.var(m), size=n_samples)
    return X, y, relevant
