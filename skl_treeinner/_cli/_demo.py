"""The demo: held-out TreeInner selection against in-sample gain, on known truth."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

__all__ = ["make_demo_data", "run_demo"]

#: Features in the demo data, of which ``N_RELEVANT`` drive the target.
N_FEATURES = 30
N_RELEVANT = 5
#: Standard deviation of the noise, in units of the signal's.
NOISE = 4.0
#: Folds of the cross-fitting (chained by the default test: ``CV - 1`` models).
CV = 5


def make_demo_data(n_samples: int, seed: int):
    """Few-valued relevant features among continuous noise.

    Parameters
    ----------
    n_samples : int
        Number of rows.
    seed : int
        Seeds the features, which of them are relevant and the noise.

    Returns
    -------
    X : ndarray of shape (n_samples, 30)
        Features. The 25 noise features are uniform on [0, 1), so each takes
        as many distinct values as there are rows; the 5 relevant ones are
        uniform on {0, 1}, {0, 1, 2} or {0, 1, 2, 3}.
    y : ndarray of shape (n_samples,)
        The sum of the relevant features, each scaled to [0, 1], plus
        Gaussian noise with ``NOISE`` times the signal's standard deviation.
    relevant : ndarray of shape (30,), bool
        True for the five features ``y`` depends on.

    Notes
    -----
    This is the setting of paper 000, Sec. 4.1, made starker: a tree can
    always find a split of a continuous noise feature that fits the training
    rows' noise, so in-sample gain rewards noise features, while a relevant
    feature with two values offers a single split. On held-out rows those
    noise splits do not help, and TreeInner scores them near or below zero.
    """
    rng = np.random.default_rng(seed)
    X = rng.random((n_samples, N_FEATURES))
    relevant = np.zeros(N_FEATURES, dtype=bool)
    chosen = np.sort(rng.choice(N_FEATURES, size=N_RELEVANT, replace=False))
    relevant[chosen] = True
    for k, j in enumerate(chosen):
        levels = 2 + k % 3
        X[:, j] = rng.integers(0, levels, size=n_samples)
        X[:, j] /= levels - 1
    signal = X[:, relevant].sum(axis=1)
    y = signal + rng.normal(scale=NOISE * signal.std(), size=n_samples)
    return X, y, relevant


def _booster(seed: int):
    from .._readers import make_estimator

    # Fewer, faster-learning trees than the paper's 400 x 0.01, and one thread
    # per model: the demo must stay quick on a small shared machine.
    return make_estimator(
        "xgboost",
        False,
        random_state=seed,
        n_estimators=300,
        learning_rate=0.02,
        n_jobs=1,
    )


def _precision_recall(selected, truth):
    n_selected = int(selected.sum())
    hits = int((selected & truth).sum())
    precision = hits / n_selected if n_selected else float("nan")
    return precision, hits / int(truth.sum())


def _print_methods(print_fn, n_samples, seed, seconds, rule) -> None:
    """Print the data's truth and what each method does (``rule``: the test's)."""
    print_fn(
        f"skl-treeinner demo: {n_samples} rows, {N_FEATURES} features, seed {seed}."
    )
    print_fn(
        f"Truth: y is the sum of {N_RELEVANT} features that take 2 to 4 values, "
        f"plus noise {NOISE:g} times as loud;"
    )
    print_fn(
        f"the other {N_FEATURES - N_RELEVANT} features are continuous noise, the "
        "kind in-sample gain rewards."
    )
    print_fn("")
    print_fn(
        f"held-out TreeInner: TreeInnerSelector splits the rows into {CV} folds "
        f"and fits XGBoost (300 trees,"
    )
    print_fn(
        f"  depth 4) on folds 1..j to score fold j+1 ({CV - 1} models, "
        f"{seconds:.1f}s); a feature's score sums"
    )
    print_fn(
        "  its TreeInner over those rows, and 'resampled' is the same with its "
        "values drawn from"
    )
    print_fn(
        "  other scored rows; both are sums over rows, so they have a standard "
        "error (s.e.). The"
    )
    print_fn(
        "  selector keeps the features that beat their resampled selves by more "
        "than chance allows:"
    )
    print_fn(f"  {rule}.")
    print_fn(
        "in-sample gain: SelectFromModel on the total gain of XGBoost fitted on all "
        "the rows;"
    )
    print_fn("  it selects the features above the mean gain.")
    print_fn("")


def _print_comparison(print_fn, rows) -> None:
    """Print each method's (name, AUC, support, precision, recall) against the truth."""
    print_fn(f"Against the truth ({N_RELEVANT} relevant features):")
    print_fn(
        f"{'':<20}  {'ROC AUC of ranks':>17}  {'selected':>8}  {'precision':>9}  "
        f"{'recall':>6}"
    )
    for name, auc, sup, prec, rec in rows:
        print_fn(
            f"{name:<20}  {auc:>17.3f}  {int(sup.sum()):>8}  {prec:>9.2f}  {rec:>6.2f}"
        )


def run_demo(
    n_samples: int = 2000,
    seed: int = 0,
    print_fn: Callable[[str], object] = print,
) -> dict:
    """Select features with held-out TreeInner and with gain; compare with the truth.

    On :func:`make_demo_data`, a :class:`~skl_treeinner.TreeInnerSelector`
    fits XGBoost over ``CV`` chained folds and keeps the features whose summed
    held-out score is significantly above its resampled self (the selector's
    defaults: the test of the column, and a one-sided p-value below
    min(0.05, 1/30), so that on average at most one feature with no effect is
    kept); :class:`~sklearn.feature_selection.SelectFromModel`
    keeps the features whose in-sample total gain, from XGBoost fitted on all
    the rows, is above the mean. Prints a ranked table of every feature and,
    for both methods, the ROC AUC of its ranking against the truth (the
    selector's ``ranking_``, by its test; gain's order) and the
    precision and recall of the selected set.

    Parameters
    ----------
    n_samples : int, default=2000
        Number of rows.
    seed : int, default=0
        Seeds the data, the folds and the boosters.
    print_fn : callable, default=print
        Called with each line of the report.

    Returns
    -------
    result : dict
        ``scores``, ``split_scores``, ``scores_se``, ``pvalues``, ``gain``
        (arrays), ``relevant``,
        ``support``, ``gain_support`` (boolean masks), ``auc_tree_inner``,
        ``auc_gain``, ``precision_tree_inner``, ``recall_tree_inner``,
        ``precision_gain``, ``recall_gain`` and ``seconds``.
    """
    from sklearn.feature_selection import SelectFromModel
    from sklearn.metrics import roc_auc_score

    from .._selection._selector import TreeInnerSelector
    from .._stats._cutoff import describe_rule
    from .._stats._report import format_table, score_table

    X, y, truth = make_demo_data(n_samples, seed)
    start = time.perf_counter()
    selector = TreeInnerSelector(_booster(seed), cv=CV, random_state=seed).fit(X, y)
    seconds = time.perf_counter() - start
    gain_model = _booster(seed).set_params(importance_type="total_gain")
    by_gain = SelectFromModel(gain_model, threshold="mean").fit(X, y)
    gain = by_gain.estimator_.feature_importances_.astype(float)
    gain_support = by_gain.get_support()

    scores, split_scores = selector.scores_, selector.split_scores_
    support = selector.support_
    gain_rank = np.empty(gain.size, dtype=np.int64)
    gain_rank[np.argsort(-gain, kind="mergesort")] = np.arange(1, gain.size + 1)
    # the selector ranks by its test (ranking_), gain by its score
    auc_inner = float(roc_auc_score(truth, -selector.ranking_))
    auc_gain = float(roc_auc_score(truth, gain))
    prec_inner, rec_inner = _precision_recall(support, truth)
    prec_gain, rec_gain = _precision_recall(gain_support, truth)

    rule = describe_rule(selector.control, selector.alpha, X.shape[1])
    _print_methods(print_fn, n_samples, seed, seconds, rule)
    table = format_table(
        score_table(selector),
        extra=[
            ("gain rank", gain_rank),
            ("by gain", np.where(gain_support, "yes", "-")),
            ("relevant", np.where(truth, "RELEVANT", "")),
        ],
    )
    for line in table.splitlines():
        print_fn(line)
    print_fn("")
    _print_comparison(
        print_fn,
        [
            ("held-out TreeInner", auc_inner, support, prec_inner, rec_inner),
            ("in-sample gain", auc_gain, gain_support, prec_gain, rec_gain),
        ],
    )
    return {
        "scores": scores,
        "split_scores": split_scores,
        "scores_se": selector.scores_se_,
        "pvalues": selector.pvalues_,
        "gain": gain,
        "relevant": truth,
        "support": support,
        "gain_support": gain_support,
        "auc_tree_inner": auc_inner,
        "auc_gain": auc_gain,
        "precision_tree_inner": prec_inner,
        "recall_tree_inner": rec_inner,
        "precision_gain": prec_gain,
        "recall_gain": rec_gain,
        "seconds": seconds,
    }
