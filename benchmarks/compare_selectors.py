"""TreeInnerSelector against the feature selectors people use instead.

Every data set comes with the truth: a mask of the features the target depends
on. For each data set and replication (seed), the rows are split once,
stratified for classification, into a *selection* part (2/3) and a *test* part
(1/3). Every selector sees only the selection part. Then:

- ``auc``: ROC AUC of the selector's feature scores against the truth, where
  the selector gives scores (undefined when no feature is relevant, the null
  case);
- ``n_sel``, ``precision``, ``recall``, ``f1``: of the selected set against the
  truth (an empty selection has precision 0, as ``zero_division=0`` in
  scikit-learn), and ``n_false``, the number of selected irrelevant features,
  the one measure that means something in the null case;
- ``refit``: a booster with the same hyper-parameters, refit on the selected
  columns of the selection part, scored on the test part (R² for regression,
  ROC AUC for classification, one-vs-rest when multi-class). With no feature
  selected it predicts the selection part's mean (or class frequencies);
- ``time``: wall time of the selection, and its ratio to TreeInnerSelector's
  (defaults) on the same data in the same process, right before it.

The booster, wherever a selector needs one, is the default estimator of
TreeInnerSelector (XGBoost, 400 trees, eta 0.01, depth 4, half of the
features per tree, min_child_weight 1, lambda 1, hist, with 256 bins as
before issue 42), given ``n_jobs=1``;
every booster and BLAS runs on one thread (threadpoolctl), and ``--n-jobs``
runs cells (data set x seed) in parallel.

Selectors (``--selectors``):

- ``treeinner``: ``TreeInnerSelector(booster, random_state=seed)`` with the
  package's defaults, whatever they are when the program runs;
- ``treeinner-column``, ``treeinner-column-split``: the defaults with the
  test of a column (``test="column"``, issue 40; the default since), cross-
  fitted and with one split (``cv=None``); ``treeinner-model``: the defaults
  with the test of the model's use (``test="model"``, the default before);
  the variants below take the default test, whatever it is;
- ``treeinner-split``: one split (``cv=None``): half the rows fit, half
  scored, keep p < 0.05 (one-sided, ``pvalues_``) and score > 0;
  ``-zero``: score > 0 alone (``alpha=None``, the rule before issue 14);
  ``-a01``/``-a20``: p < 0.01 / p < 0.2;
- ``treeinner-cv5``: cross-fitted over 5 folds, p < 0.05, with the same
  ``-zero``, ``-a01``, ``-a20`` variants and ``-bh`` (Benjamini-Hochberg
  adjusted p-values below 0.05), and the selector's own ``control`` (issue
  26): ``-expected`` (at most one false pick expected), ``-holm``
  (family-wise), ``-fdr`` (false discovery rate), ``-perfeature``. These
  re-select from one fit per cv (``set_params(alpha=...)``) and report that
  fit's time;
- ``treeinner-cv5-es``, ``-col1``, ``-d2``, ``-lr05``: cv=5, p < 0.05, with
  the booster changed (``BOOSTER_VARIANTS``): early stopping on rows carved
  from each training part (up to 2000 trees, 50 rounds of patience), every
  feature for every tree (``colsample_bytree=1``, the paper's booster), 800
  trees of depth 2, learning rate 0.05;
- ``oracle``: a one-sided Wald test of the true model's form (OLS or logistic
  regression on every column, coefficient > 0 at 0.05), only on the data sets
  whose truth is linear in the columns (``paper-*``, ``semi-*``): the ceiling
  a model-agnostic selector can approach;
- ``gain-sfm``: ``SelectFromModel`` on the booster fitted to all selection
  rows, ``importance_type="total_gain"`` (in-sample TreeInner, Prop. 3),
  scikit-learn's default threshold ``"mean"``;
- ``shap-mean``: the booster fitted on half the rows, mean |TreeSHAP| on the
  other half (XGBoost's own ``pred_contribs``), keep features above the mean
  of the features' mean |SHAP| (SelectFromModel's default rule; no true
  number of relevant features is used);
- ``permutation``: ``sklearn.inspection.permutation_importance`` of the same
  half-fitted booster on the other half (5 repeats, R² or log loss), keep
  mean importance > 0 (the same zero cut-off as TreeInner, no multiplicity
  correction);
- ``rfecv``: ``RFECV`` on the booster's ``feature_importances_`` (gain),
  ``step=0.1`` (a tenth of the features per round), 3 folds, R² or log loss;
  scores are ``-ranking_``;
- ``boruta``: ``BorutaPy`` (package ``boruta``) with the same XGBoost booster
  and ``n_estimators=400`` fixed, ``perc=100, alpha=0.05, max_iter=100``;
  only confirmed features are selected; scores are ``-ranking_``;
- ``rfecv-cv5``: the same with 5 folds (issue 30's reference);
- ``probatus``: probatus ``ShapRFECV`` with the same booster, ``step=0.5``
  (half the features per round, for time), 3 folds, path-dependent TreeSHAP,
  ``num_features="best"``; the score of a feature is minus the size
  of the smallest feature set it survived into; ``probatus-1se``: the same
  fit, ``num_features="best_parsimonious"`` (the one-standard-error rule);
- ``treeinner-best``, ``treeinner-1se``: the selector's defaults with
  ``max_features="best"`` / ``"1se"`` (the refit curve over the features
  the test keeps; one fit, both rules read its curve, issue 30);
  ``-best-all``, ``-1se-all``: with ``alpha=None`` (the curve over every
  feature scoring above zero);
- ``arfs-leshy``, ``arfs-grootcv``: arfs's Leshy (SHAP importance, the same
  booster) and GrootCV (LightGBM), when they run;
- ``powershap``: powershap's ``PowerShap`` (SHAP values of each feature
  against a random uniform feature, over automatically chosen iterations,
  one-sided test at ``power_alpha=0.01``) with the same booster. powershap
  0.1.0 needs shap < 0.46, which cannot read XGBoost >= 3.1 models, so it runs
  in its own environment (see ``docs/selector-comparison.md``).

Families of columns (``family-onehot``, ``-lags``, ``-twins``, ``-null``;
issue 29): one-hot blocks, lag blocks and engineered twins whose members are
weak alone, and a null of families of 2 to 50 columns, with the selectors
that take the families (``treeinner-groups``, ``treeinner-any-member``,
``mlxtend-sfs``) and every other selector judged by families found and
irrelevant families picked: see ``compare_families.py``.

The figures (``img/compare-*.png``) are selector x data set heatmaps with the
numbers, coloured within each data set from worst to best: the default
beside its peers, and the ``treeinner-*`` variants on their own figure.

Wide data (``wide-few-*``, ``wide-null-*``; issue 26), run only when named in
``--datasets``: 2,000 rows of 1,000 Gaussian columns, y linear in 10 of them
(coefficients 0.1 to 0.5) or independent of X (``wide_selection.py``'s
generator; 300 x 100 with ``--smoke``).

Real targets (``real-*``): scikit-learn's bundled diabetes (regression),
breast cancer (binary) and wine (3 classes) with their real targets and 20
injected noise columns (7 permuted copies of real columns, 7 Gaussian, 6
integers with 50 to 500 levels); ``real-*-onehot``: the same with the dummies
of a 40-level noise categorical with Dirichlet(0.5) level frequencies (issue
40). No truth is known for the real columns, so
``n_false`` counts injected columns kept and ``recall`` the share of real
columns kept.

A selector whose package is missing is skipped, and one that raises is
recorded with its error; both are listed in the output.

Usage::

    python benchmarks/compare_selectors.py [--reps 5] [--datasets NAME ...]
        [--selectors NAME ...] [--n-jobs 1] [--out-dir docs] [--csv PATH]
        [--smoke]
    python benchmarks/compare_selectors.py --from-csv PATH [PATH ...] [--out-dir DIR]

It writes ``selector-comparison.md`` in ``--out-dir`` (the tables between the
``results`` markers; the rest of an existing page is kept) and
``img/compare-*.png``. ``--smoke`` runs one replication on small data with a
few fast selectors, into a temporary directory unless ``--out-dir`` is given,
never into ``docs/``. ``--from-csv`` redraws the page and plots from the rows
an earlier run saved with ``--csv`` (and its ``PATH.meta.json``); given several
files, from the rows of several runs together (each over its own data sets or
seeds: a (data set, seed, selector) row twice is an error), and the page names
every run's command and duration. Time ratios stay valid across runs since
each is taken within one run, on one data set and seed.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import sklearn
import xgboost as xgb
from compare_families import (
    GROUP_SELECTORS,
    clear_fits,
    family_datasets,
    family_metrics,
    family_tables,
    heatmaps,
)
from joblib import Parallel, delayed
from sklearn.feature_selection import RFECV, SelectFromModel
from sklearn.inspection import permutation_importance
from sklearn.metrics import r2_score, roc_auc_score
from sklearn.model_selection import train_test_split
from threadpoolctl import threadpool_limits

from skl_treeinner import TreeInnerSelector
from skl_treeinner import datasets as ds
from skl_treeinner._readers import default_estimator
from skl_treeinner._utils._validation import target_is_classes

DOCS = Path(__file__).resolve().parent.parent / "docs"
START, END = "<!-- results:start -->", "<!-- results:end -->"

TEST_FRACTION = 1 / 3

ALL_SELECTORS = [
    "treeinner",
    "treeinner-column",
    "treeinner-model",
    "treeinner-column-split",
    "treeinner-split",
    "treeinner-split-zero",
    "treeinner-split-a01",
    "treeinner-split-a20",
    "treeinner-cv5",
    "treeinner-cv5-zero",
    "treeinner-cv5-a01",
    "treeinner-cv5-a20",
    "treeinner-cv5-bh",
    "treeinner-cv5-expected",
    "treeinner-cv5-holm",
    "treeinner-cv5-fdr",
    "treeinner-cv5-es",
    "treeinner-cv5-col1",
    "treeinner-cv5-d2",
    "treeinner-cv5-lr05",
    "oracle",
    "gain-sfm",
    "shap-mean",
    "permutation",
    "rfecv",
    "rfecv-cv5",
    "boruta",
    "probatus",
    "probatus-1se",
    "treeinner-best",
    "treeinner-1se",
    "treeinner-best-all",
    "treeinner-1se-all",
    "arfs-leshy",
    "arfs-grootcv",
    "powershap",
    *GROUP_SELECTORS,
]
SMOKE_SELECTORS = [
    "treeinner",
    "treeinner-split-zero",
    "oracle",
    "gain-sfm",
    "permutation",
    "boruta",
]

#: Injected noise columns of the real data sets: permuted copies of real
#: columns, Gaussian columns, integer columns with 50 to 500 levels.
N_INJECTED = (7, 7, 6)
#: The real data sets (scikit-learn's bundled ones, real targets).
REAL = {
    "diabetes": "load_diabetes",
    "breast_cancer": "load_breast_cancer",
    "wine": "load_wine",
}


def load_real_with_noise(name, seed):
    """A real data set with its real target and 20 injected noise columns.

    Returns ``X, y, real`` where ``real`` is True for the data set's own
    columns (whether they matter is unknown) and False for the injected ones
    (which cannot matter: they are independent of y given nothing).
    """
    import sklearn.datasets

    X, y = getattr(sklearn.datasets, REAL[name])(return_X_y=True)
    rng = np.random.default_rng(seed)
    n, p = X.shape
    n_perm, n_gauss, n_int = N_INJECTED
    permuted = X[:, rng.choice(p, size=n_perm, replace=p < n_perm)].copy()
    for j in range(n_perm):
        permuted[:, j] = rng.permutation(permuted[:, j])
    gauss = rng.normal(size=(n, n_gauss))
    levels = rng.integers(50, 501, size=n_int)
    ints = rng.integers(0, levels, size=(n, n_int)).astype(float)
    X = np.hstack([X, permuted, gauss, ints])
    real = np.r_[np.ones(p, bool), np.zeros(n_perm + n_gauss + n_int, bool)]
    order = rng.permutation(X.shape[1])  # injected columns not all at the end
    return X[:, order], y, real[order]


#: Levels of the one-hot noise categorical of ``real-*-onehot`` (issue 40).
ONEHOT_LEVELS = 40


def load_real_with_onehot_noise(name, seed):
    """A real data set with the dummies of a rare-level noise categorical.

    The categorical has ``ONEHOT_LEVELS`` levels with Dirichlet(0.5)
    frequencies (a few common, many rare), independent of everything, one-hot
    encoded (levels not drawn have no column). Returns ``X, y, real`` as
    :func:`load_real_with_noise`.
    """
    import sklearn.datasets

    X, y = getattr(sklearn.datasets, REAL[name])(return_X_y=True)
    rng = np.random.default_rng(seed)
    n, p = X.shape
    freq = rng.dirichlet(np.full(ONEHOT_LEVELS, 0.5))
    codes = rng.choice(ONEHOT_LEVELS, size=n, p=freq)
    dummies = np.eye(ONEHOT_LEVELS)[codes][:, np.unique(codes)]
    X = np.hstack([X, dummies])
    real = np.r_[np.ones(p, bool), np.zeros(dummies.shape[1], bool)]
    return X, y, real


# -- data ------------------------------------------------------------------------
def _datasets(smoke):
    """Name -> callable(seed) returning (X, y, relevant), for those that exist."""
    out = {}
    n_paper = 400 if smoke else 2000
    for task in ("regression", "classification"):
        out[f"paper-{task}"] = lambda seed, task=task: ds.make_paper_simulation(
            task, n_paper, random_state=seed
        )
    if hasattr(ds, "load_semi_synthetic"):
        for name in ("breast_cancer", "diabetes", "digits", "wine"):
            out[f"semi-{name}"] = lambda seed, name=name: ds.load_semi_synthetic(
                name, random_state=seed
            )
        # The same protocol with a binary target (the paper's classification
        # version), under new names so that rows saved before stay valid.
        for name in ("breast_cancer", "diabetes", "digits", "wine"):
            out[f"semi-{name}-clf"] = lambda seed, name=name: ds.load_semi_synthetic(
                name, task="classification", random_state=seed
            )
    for name in REAL:
        out[f"real-{name}"] = lambda seed, name=name: load_real_with_noise(name, seed)
        out[f"real-{name}-onehot"] = lambda seed, name=name: (
            load_real_with_onehot_noise(name, seed)
        )
    # Wide data (issue 26): 1,000 Gaussian columns, y linear in 10 of them
    # (coefficients 0.1 to 0.5) or independent of X; ``wide_selection.py``'s
    # generator. Run only when named (``--datasets wide-...``): Boruta takes
    # minutes per cell there.
    from wide_selection import make_data

    n_wide, m_wide = (300, 100) if smoke else (2000, 1000)
    for task in ("regression", "classification"):
        for signal in ("few", "null"):
            out[f"wide-{signal}-{task}"] = lambda seed, task=task, signal=signal: (
                make_data(
                    n=n_wide,
                    m=m_wide,
                    task=task,
                    signal=signal,
                    correlated=False,
                    seed=seed,
                )
            )
    if hasattr(ds, "make_cardinality_simulation"):
        n_card = 1000 if smoke else 6000
        for case in ("null", "power"):
            out[f"cardinality-{case}"] = lambda seed, case=case: (
                ds.make_cardinality_simulation(
                    case, n_samples=n_card, random_state=seed
                )
            )
    out.update(family_datasets(smoke))
    return out


def _is_classification(y):
    # The selector's rule (by dtype): diabetes's whole-number float target is
    # a regression target, which type_of_target would call "multiclass".
    return target_is_classes(y)


def _booster(classification, seed):
    """TreeInnerSelector's default booster (see its docstring), on one thread.

    With XGBoost's 256 bins whatever the rows, as the pages' numbers were
    measured (before issue 42 the default's bins did not follow the rows).
    """
    return default_estimator(classification, seed).set_params(n_jobs=1)


def _scoring(classification):
    return "neg_log_loss" if classification else "r2"


# -- metrics ---------------------------------------------------------------------
def selection_metrics(relevant, support):
    """Precision, recall, F1 of a selected set and its number of false picks.

    Parameters
    ----------
    relevant : array-like of bool, shape (n_features,)
        The truth.
    support : array-like of bool, shape (n_features,)
        The selected features.

    Returns
    -------
    dict
        ``precision`` (0 for an empty selection), ``recall`` and ``f1`` (NaN
        when no feature is relevant), ``n_sel`` and ``n_false``.
    """
    relevant = np.asarray(relevant, dtype=bool)
    support = np.asarray(support, dtype=bool)
    tp = int(np.sum(relevant & support))
    n_sel, n_rel = int(support.sum()), int(relevant.sum())
    precision = tp / n_sel if n_sel else 0.0
    if n_rel == 0:
        recall = f1 = np.nan
    else:
        recall = tp / n_rel
        f1 = 2 * tp / (n_sel + n_rel)
    return {
        "n_sel": n_sel,
        "n_false": n_sel - tp,
        "precision": precision,
        "recall": recall,
        "f1": f1,
    }


def score_auc(relevant, scores):
    """ROC AUC of feature scores against the truth; NaN when undefined."""
    relevant = np.asarray(relevant, dtype=bool)
    if scores is None or relevant.all() or not relevant.any():
        return np.nan
    return float(roc_auc_score(relevant, np.asarray(scores, dtype=float)))


def refit_score(X_sel, y_sel, X_test, y_test, support, classification, seed):
    """Held-out score of the booster refit on the selected columns."""
    support = np.asarray(support, dtype=bool)
    if classification:
        classes = np.unique(y_sel)
        if support.any():
            model = _booster(True, seed).fit(X_sel[:, support], y_sel)
            proba = model.predict_proba(X_test[:, support])
        else:
            freq = np.array([np.mean(y_sel == c) for c in classes])
            proba = np.tile(freq, (len(y_test), 1))
        if classes.size == 2:
            return float(roc_auc_score(y_test, proba[:, 1]))
        return float(
            roc_auc_score(
                y_test, proba, multi_class="ovr", labels=np.arange(len(classes))
            )
        )
    if support.any():
        pred = (
            _booster(False, seed)
            .fit(X_sel[:, support], y_sel)
            .predict(X_test[:, support])
        )
    else:
        pred = np.full(len(y_test), np.mean(y_sel))
    return float(r2_score(y_test, pred))


# -- selectors: each returns (support, scores or None) ---------------------------
def _half_split(X, y, classification, seed):
    return train_test_split(
        X, y, test_size=0.5, random_state=seed, stratify=y if classification else None
    )


#: TreeInnerSelector fits of the current cell, by cv: the variants that only
#: change the cut-off (alpha, threshold) re-select from one fit, as
#: ``set_params`` allows, and report that fit's time.
_FITS: dict = {}


#: Booster settings tried for the selector's default, on top of the default
#: booster: early stopping on rows carved from each training part, every
#: feature for every tree (the paper's setting; the default draws half),
#: more shallower trees, a larger learning rate.
BOOSTER_VARIANTS = {
    None: {},
    "es": {"n_estimators": 2000, "early_stopping_rounds": 50},
    "col1": {"colsample_bytree": 1.0},
    "d2": {"max_depth": 2, "n_estimators": 800},
    "lr05": {"learning_rate": 0.05},
}


#: ``control`` of the selector (issue 26), re-selected from the cv=5 fit.
CONTROL_VARIANTS = {
    "expected": "expected_false",
    "holm": "family_wise",
    "fdr": "false_discovery",
    "perfeature": "per_feature",
}


def _treeinner(
    X,
    y,
    c,
    seed,
    smoke,
    cv=None,
    alpha=0.05,
    bh=False,
    booster=None,
    control=None,
    test="default",
):
    defaults = TreeInnerSelector().get_params()
    if cv == "default":
        cv = defaults["cv"]
    if alpha == "default":
        alpha = defaults["alpha"]
    if test == "default":
        test = defaults["test"]
    if (cv, booster, test) not in _FITS:
        start = time.perf_counter()
        est = _booster(c, seed).set_params(**BOOSTER_VARIANTS[booster])
        sel = TreeInnerSelector(est, cv=cv, random_state=seed, n_jobs=1, test=test)
        sel.fit(X, y)
        _FITS[cv, booster, test] = (sel, time.perf_counter() - start)
    sel, seconds = _FITS[cv, booster, test]
    if bh:
        from scipy.stats import false_discovery_control

        adjusted = false_discovery_control(sel.pvalues_, method="bh")
        return (adjusted < 0.05) & (sel.scores_ > 0), sel.scores_, seconds
    # The named variants test each feature at alpha (their meaning before
    # issue 26 made a correction the default); "treeinner" takes the defaults.
    if control == "default":
        control = defaults["control"]
    sel.set_params(alpha=alpha, control=control or "per_feature")
    return sel.get_support(), sel.scores_, seconds


def _linear_oracle(X, y, c, seed, smoke):
    """One-sided Wald tests of the true model's form (linear in the columns).

    OLS for regression, logistic regression for classification, on every
    column; a feature is selected when its coefficient is significantly
    positive at 0.05, the sign the generators give every relevant feature.
    Only for the data sets whose truth has this form (paper-*, semi-*).
    """
    from scipy import stats
    from sklearn.linear_model import LogisticRegression

    Z = (X - X.min(axis=0)) / np.where(np.ptp(X, axis=0) > 0, np.ptp(X, axis=0), 1)
    A = np.column_stack([np.ones(len(Z)), Z])
    if c:
        model = LogisticRegression(penalty=None, max_iter=5000).fit(Z, y)
        beta = np.r_[model.intercept_, model.coef_.ravel()]
        prob = model.predict_proba(Z)[:, 1]
        info = A.T @ (A * (prob * (1 - prob))[:, None])
        cov = np.linalg.pinv(info)
        t = beta / np.sqrt(np.maximum(np.diag(cov), 1e-300))
        p = stats.norm.sf(t)
    else:
        beta, *_ = np.linalg.lstsq(A, y, rcond=None)
        dof = len(y) - A.shape[1]
        sigma2 = np.sum((y - A @ beta) ** 2) / dof
        cov = sigma2 * np.linalg.pinv(A.T @ A)
        t = beta / np.sqrt(np.maximum(np.diag(cov), 1e-300))
        p = stats.t.sf(t, dof)
    return p[1:] < 0.05, t[1:]


def _powershap(X, y, c, seed, smoke):
    from powershap import PowerShap

    sel = PowerShap(
        model=_booster(c, seed), power_alpha=0.01, automatic=True, verbose=False
    )
    sel.fit(_frame(X), y)
    support = np.asarray(sel._get_support_mask(), dtype=bool)
    return support, None


def _gain_sfm(X, y, c, seed, smoke):
    model = _booster(c, seed).set_params(importance_type="total_gain")
    sfm = SelectFromModel(model, threshold="mean").fit(X, y)
    return sfm.get_support(), sfm.estimator_.feature_importances_


def _shap_mean(X, y, c, seed, smoke):
    X_fit, X_out, y_fit, _ = _half_split(X, y, c, seed)
    model = _booster(c, seed).fit(X_fit, y_fit)
    contribs = model.get_booster().predict(xgb.DMatrix(X_out), pred_contribs=True)
    # (rows, features + 1) or, multi-class, (rows, classes, features + 1).
    contribs = np.abs(contribs)
    if contribs.ndim == 3:
        contribs = contribs.sum(axis=1)
    scores = contribs[:, :-1].mean(axis=0)
    return scores > scores.mean(), scores


def _permutation(X, y, c, seed, smoke):
    X_fit, X_out, y_fit, y_out = _half_split(X, y, c, seed)
    model = _booster(c, seed).fit(X_fit, y_fit)
    result = permutation_importance(
        model,
        X_out,
        y_out,
        scoring=_scoring(c),
        n_repeats=5,
        random_state=seed,
        n_jobs=1,
    )
    scores = result.importances_mean
    return scores > 0, scores


def _treeinner_curve(X, y, c, seed, smoke, rule, alpha="default"):
    """The refit curve's k (issue 30): one fit per cv and alpha, both rules."""
    key = ("curve", alpha)
    if key not in _FITS:
        start = time.perf_counter()
        params = {} if alpha == "default" else {"alpha": alpha}
        sel = TreeInnerSelector(
            _booster(c, seed), max_features=rule, random_state=seed, n_jobs=1, **params
        ).fit(X, y)
        _FITS[key] = (sel, time.perf_counter() - start)
    sel, seconds = _FITS[key]
    sel.set_params(max_features=rule)  # both rules read the one curve
    return sel.get_support(), sel.scores_, seconds


def _rfecv(X, y, c, seed, smoke, cv=3):
    rfe = RFECV(_booster(c, seed), step=0.1, cv=cv, scoring=_scoring(c), n_jobs=1)
    rfe.fit(X, y)
    return rfe.support_, -rfe.ranking_.astype(float)


def _boruta(X, y, c, seed, smoke):
    from boruta import BorutaPy

    # boruta 0.4.3 runs unpatched on numpy 2 (older releases used np.int,
    # np.float and np.bool, removed in numpy 1.24); no shim needed.
    sel = BorutaPy(
        _booster(c, seed),
        n_estimators=400,
        perc=100,
        alpha=0.05,
        max_iter=6 if smoke else 100,
        random_state=seed,
        verbose=0,
    ).fit(X, y)
    return np.asarray(sel.support_, dtype=bool), -sel.ranking_.astype(float)


def _frame(X):
    return pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])


def _probatus(X, y, c, seed, smoke, num_features="best"):
    from probatus.feature_elimination import ShapRFECV

    frame = _frame(X)
    if ("probatus", num_features) in _FITS:  # best_parsimonious re-selects
        sel, report, seconds = _FITS["probatus", num_features]
        return _probatus_support(sel, report, frame, num_features) + (seconds,)
    start = time.perf_counter()
    sel = ShapRFECV(
        _booster(c, seed),
        step=0.5,
        cv=3,
        scoring="roc_auc" if c and np.unique(y).size == 2 else _scoring(c),
        n_jobs=1,
        verbose=0,
        random_state=seed,
    )
    # Path-dependent TreeSHAP, as shap-mean; probatus's default (interventional,
    # 100 background rows) made this selector alone take minutes per data set.
    report = sel.fit_compute(frame, y, feature_perturbation="tree_path_dependent")
    seconds = time.perf_counter() - start
    for rule in ("best", "best_parsimonious"):
        _FITS["probatus", rule] = (sel, report, seconds)
    return _probatus_support(sel, report, frame, num_features) + (seconds,)


def _probatus_support(sel, report, frame, num_features):
    kept = set(sel.get_reduced_features_set(num_features=num_features))
    smallest = {}
    for n, names in zip(report["num_features"], report["features_set"], strict=True):
        for name in names:
            smallest[name] = min(smallest.get(name, np.inf), n)
    support = np.array([name in kept for name in frame.columns])
    scores = -np.array([smallest.get(name, np.inf) for name in frame.columns])
    return support, scores


def _arfs_leshy(X, y, c, seed, smoke):
    from arfs.feature_selection import Leshy

    sel = Leshy(
        _booster(c, seed),
        n_estimators=400,
        importance="shap",
        max_iter=20 if smoke else 100,
        random_state=seed,
        verbose=0,
    ).fit(_frame(X), y)
    return np.asarray(sel.support_, dtype=bool), -np.asarray(sel.ranking_, float)


def _arfs_grootcv(X, y, c, seed, smoke):
    from arfs.feature_selection import GrootCV

    objective = ("binary" if np.unique(y).size == 2 else "multiclass") if c else "rmse"
    sel = GrootCV(objective=objective, n_folds=3, n_iter=3, silent=True)
    sel.fit(_frame(X), y)
    return np.asarray(sel.support_, dtype=bool), None


SELECTORS = {
    "treeinner": lambda *a: _treeinner(
        *a, cv="default", alpha="default", control="default"
    ),
    "treeinner-column": lambda *a: _treeinner(
        *a, cv="default", alpha="default", control="default", test="column"
    ),
    "treeinner-model": lambda *a: _treeinner(
        *a, cv="default", alpha="default", control="default", test="model"
    ),
    "treeinner-column-split": lambda *a: _treeinner(
        *a, alpha="default", control="default", test="column"
    ),
    "treeinner-split": _treeinner,
    "treeinner-split-zero": lambda *a: _treeinner(*a, alpha=None),
    "treeinner-split-a01": lambda *a: _treeinner(*a, alpha=0.01),
    "treeinner-split-a20": lambda *a: _treeinner(*a, alpha=0.2),
    "treeinner-cv5": lambda *a: _treeinner(*a, cv=5),
    "treeinner-cv5-zero": lambda *a: _treeinner(*a, cv=5, alpha=None),
    "treeinner-cv5-a01": lambda *a: _treeinner(*a, cv=5, alpha=0.01),
    "treeinner-cv5-a20": lambda *a: _treeinner(*a, cv=5, alpha=0.2),
    "treeinner-cv5-bh": lambda *a: _treeinner(*a, cv=5, bh=True),
    **{
        f"treeinner-cv5-{name}": lambda *a, control=control: _treeinner(
            *a, cv=5, control=control
        )
        for name, control in CONTROL_VARIANTS.items()
    },
    **{
        f"treeinner-cv5-{key}": lambda *a, key=key: _treeinner(*a, cv=5, booster=key)
        for key in BOOSTER_VARIANTS
        if key is not None
    },
    "oracle": _linear_oracle,
    "gain-sfm": _gain_sfm,
    "shap-mean": _shap_mean,
    "permutation": _permutation,
    "rfecv": _rfecv,
    "rfecv-cv5": lambda *a: _rfecv(*a, cv=5),
    "boruta": _boruta,
    "probatus": _probatus,
    "probatus-1se": lambda *a: _probatus(*a, num_features="best_parsimonious"),
    "treeinner-best": lambda *a: _treeinner_curve(*a, "best"),
    "treeinner-1se": lambda *a: _treeinner_curve(*a, "1se"),
    "treeinner-best-all": lambda *a: _treeinner_curve(*a, "best", alpha=None),
    "treeinner-1se-all": lambda *a: _treeinner_curve(*a, "1se", alpha=None),
    "arfs-leshy": _arfs_leshy,
    "arfs-grootcv": _arfs_grootcv,
    "powershap": _powershap,
    **GROUP_SELECTORS,
}

#: Data sets whose truth is linear in the (scaled) columns, for ``oracle``.
ORACLE_DATASETS = ("paper-", "semi-")


# -- one cell: a data set and a seed ----------------------------------------------
def try_selector(selector, *args):
    """Run one selector, ``selector(*args)``, timed; a failure becomes a status.

    Returns ``(status, support, scores, seconds, error)``: status ``"ok"``, or
    ``"missing"`` (its package is not installed) or ``"error"`` with the
    exception and where it was raised, and ``None`` for the rest. The seconds
    are those the selector reports (a fit shared by several cut-offs) or the
    call's own.
    """
    start = time.perf_counter()
    try:
        support, scores, *seconds = selector(*args)
    except ImportError as e:
        return "missing", None, None, None, str(e)
    except Exception as e:
        last = traceback.extract_tb(e.__traceback__)[-1]
        where = f"{Path(last.filename).name}:{last.lineno}"
        return "error", None, None, None, f"{type(e).__name__}: {e} ({where})"
    seconds = seconds[0] if seconds else time.perf_counter() - start
    return "ok", support, scores, seconds, ""


def run_cell(name, make, seed, selectors, smoke):
    """Run every selector on one (data set, seed); return result rows."""
    X, y, relevant, *families = make(seed)
    groups = families[0] if families else None  # family-* data sets
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    c = _is_classification(y)
    X_sel, X_test, y_sel, y_test = train_test_split(
        X,
        y,
        test_size=TEST_FRACTION,
        random_state=seed,
        stratify=y if c else None,
    )
    rows = []
    _FITS.clear()
    clear_fits()
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for sel_name in selectors:
            if sel_name == "oracle" and not name.startswith(ORACLE_DATASETS):
                continue
            if sel_name in GROUP_SELECTORS and groups is None:
                continue  # they need families
            row = {"dataset": name, "seed": seed, "selector": sel_name}
            args = (X_sel, y_sel, c, seed, smoke)
            if sel_name in GROUP_SELECTORS:
                status, support, scores, seconds, error = try_selector(
                    GROUP_SELECTORS[sel_name], *args, groups, _booster(c, seed)
                )
            else:
                status, support, scores, seconds, error = try_selector(
                    SELECTORS[sel_name], *args
                )
            if status != "ok":
                rows.append({**row, "status": status, "error": error})
                continue
            row["time"] = seconds
            row.update(selection_metrics(relevant, support))
            if groups is not None:
                row.update(family_metrics(groups, relevant, support))
            row["auc"] = score_auc(relevant, scores)
            row["refit"] = refit_score(X_sel, y_sel, X_test, y_test, support, c, seed)
            rows.append({**row, "status": "ok", "error": ""})
    return rows


# -- reporting -------------------------------------------------------------------
def _mean_se(values):
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    if values.size == 0:
        return np.nan, np.nan
    se = values.std(ddof=1) / np.sqrt(values.size) if values.size > 1 else np.nan
    return values.mean(), se


def summarize(results):
    """Per (data set, selector): means, standard errors and the time ratio."""
    ok = results[results["status"] == "ok"]
    # Time ratios are to TreeInnerSelector's defaults ("treeinner"), or, in
    # runs without that row, to its one-split fit ("treeinner-split").
    present = set(ok["selector"])
    name = "treeinner" if "treeinner" in present else "treeinner-split"
    base = ok[ok["selector"] == name].set_index(["dataset", "seed"])["time"]
    out = []
    for (dataset, selector), group in ok.groupby(["dataset", "selector"], sort=False):
        row = {"dataset": dataset, "selector": selector, "reps": len(group)}
        for col in ("auc", "n_sel", "n_false", "precision", "recall", "f1", "refit"):
            row[col], row[f"{col}_se"] = _mean_se(group[col])
        for col in ("fam_found", "fam_false"):
            if col in group:
                row[col], row[f"{col}_se"] = _mean_se(group[col])
        row["time"] = group["time"].mean()
        ti = base.reindex(
            list(zip(group["dataset"], group["seed"], strict=True))
        ).to_numpy()
        # Ratio of the summed times over the same seeds: exactly 1 for itself.
        row["time_ratio"] = (
            group["time"].sum() / np.nansum(ti) if np.isfinite(ti).any() else np.nan
        )
        out.append(row)
    return pd.DataFrame(out)


def _nanmean(values):
    values = np.asarray(values, dtype=float)
    return np.nanmean(values) if np.isfinite(values).any() else np.nan


def _fmt(mean, se, digits=3):
    if np.isnan(mean):
        return "n/a"
    if np.isnan(se):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ± {se:.{digits}f}"


def markdown_tables(summary, results, selectors):
    """The tables: an overview, then one per data set."""
    order = {s: i for i, s in enumerate(selectors)}
    summary = summary.assign(_o=summary["selector"].map(order)).sort_values(
        "_o", kind="mergesort"
    )
    # Refit scores are R² on some data sets and ROC AUC on others: average
    # each selector's rank (1 = best mean refit score) rather than the scores.
    rank = summary.groupby("dataset")["refit"].rank(ascending=False, method="average")
    summary = summary.assign(refit_rank=rank)
    # The family data sets have a table of their own (families found and
    # picked), and the selectors that need families run only there.
    families = summary["dataset"].str.startswith("family-")
    overview = summary[~families]
    lines = ["### Overview (over data sets, of the per-data-set means)", ""]
    lines += [
        "Known truth (`paper-*`, `semi-*`, `cardinality-*`): F1 and false picks. "
        "Real targets (`real-*`, 20 injected noise columns each): the share of "
        "the injected columns kept and of the data set's own columns kept. The "
        "refit rank is over every data set the selector ran on; `oracle` runs "
        "only where the truth is linear (`paper-*`, `semi-*`), so its F1 is "
        "comparable in the semi-synthetic column only. The `family-*` data sets "
        "are in their own table below.",
        "",
        "| selector | mean AUC | mean F1 | mean F1 (semi-*) "
        "| false picks (null case) | noise kept (real-*) | own columns kept "
        "(real-*) | refit score: mean rank | time ratio (geometric mean) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    n_injected = sum(N_INJECTED)
    for selector, g in overview.groupby("selector", sort=False):
        real = g["dataset"].str.startswith("real-")
        semi = g["dataset"].str.startswith("semi-")
        null = g[g["dataset"].str.endswith("-null")]["n_false"]
        ratio = g["time_ratio"].to_numpy(dtype=float)
        lines.append(
            f"| {selector} | {_nanmean(g['auc'][~real]):.3f} "
            f"| {_nanmean(g['f1'][~real]):.3f} | {_nanmean(g['f1'][semi]):.3f} "
            f"| {null.mean() if len(null) else np.nan:.2f} "
            f"| {_nanmean(g['n_false'][real]) / n_injected:.3f} "
            f"| {_nanmean(g['recall'][real]):.3f} "
            f"| {g['refit_rank'].mean():.2f} "
            f"| {np.exp(np.nanmean(np.log(ratio))):.2f} |"
        )
    lines.append("")
    for dataset, g in summary.groupby("dataset", sort=False):
        lines += [
            f"### {dataset} ({int(g['reps'].max())} reps)",
            "",
            "| selector | AUC | selected | false | precision | recall | F1 | refit "
            "| time (s) | time ratio |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for _, r in g.iterrows():
            lines.append(
                f"| {r['selector']} | {_fmt(r['auc'], r['auc_se'])} "
                f"| {_fmt(r['n_sel'], r['n_sel_se'], 1)} "
                f"| {_fmt(r['n_false'], r['n_false_se'], 1)} "
                f"| {_fmt(r['precision'], r['precision_se'])} "
                f"| {_fmt(r['recall'], r['recall_se'])} "
                f"| {_fmt(r['f1'], r['f1_se'])} "
                f"| {_fmt(r['refit'], r['refit_se'])} "
                f"| {r['time']:.2f} | {r['time_ratio']:.2f} |"
            )
        lines.append("")
    lines += family_tables(summary, selectors)
    bad = results[results["status"] != "ok"].drop_duplicates(["selector", "error"])
    if len(bad):
        lines += ["### Selectors that did not run", ""]
        for _, r in bad.iterrows():
            error = re.sub(r"\s+", " ", str(r["error"]))[:400]
            lines.append(f"- `{r['selector']}` ({r['status']}): `{error}`")
        lines.append("")
    return "\n".join(lines)


#: TreeInnerSelector's default and the selectors people use instead; every
#: other ``treeinner-*`` row is a variant, drawn on a figure of its own.
PEERS = (
    "treeinner",
    "treeinner-groups",
    "oracle",
    "gain-sfm",
    "shap-mean",
    "permutation",
    "rfecv",
    "rfecv-cv5",
    "boruta",
    "probatus",
    "probatus-1se",
    "treeinner-best",
    "treeinner-1se",
    "treeinner-best-all",
    "treeinner-1se-all",
    "arfs-leshy",
    "arfs-grootcv",
    "powershap",
    "treeinner-any-member",
    "mlxtend-sfs",
)


def plots(summary, img_dir, selectors):
    """Write the heatmaps: compare-<metric>.png, -variants.png, compare-families.png."""
    return heatmaps(summary, img_dir, selectors, PEERS)


def write_page(path, tables, header):
    """Put the tables between the markers of the page, keeping the rest."""
    block = f"{START}\n{header}\n\n{tables}\n{END}"
    if path.exists():
        text = path.read_text()
        if START in text and END in text:
            before, _, rest = text.partition(START)
            _, _, after = rest.partition(END)
            path.write_text(before + block + after)
            return
    path.write_text(f"# Feature selectors compared\n\n{block}\n")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=None, help="seeds (default 5)")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--datasets", nargs="+", default=None)
    parser.add_argument("--selectors", nargs="+", default=None)
    parser.add_argument("--n-jobs", type=int, default=1, help="cells in parallel")
    parser.add_argument("--out-dir", type=Path, default=None)
    parser.add_argument("--csv", type=Path, default=None, help="raw rows to CSV")
    parser.add_argument(
        "--from-csv",
        type=Path,
        nargs="+",
        default=None,
        metavar="PATH",
        help="render the page and plots from the rows (and PATH.meta.json) of "
        "earlier runs' --csv, without running anything; several files are merged",
    )
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args(argv)
    if args.from_csv is not None:
        try:
            results, meta = load_runs(args.from_csv)
        except ValueError as e:
            parser.error(str(e))
        selectors = [s for s in ALL_SELECTORS if s in set(results["selector"])]
        report(results, selectors, args.out_dir or DOCS, meta)
        return

    available = _datasets(args.smoke)
    if args.smoke:
        reps = args.reps or 1
        names = args.datasets or [
            n for n in ("paper-regression", "cardinality-null") if n in available
        ]
        selectors = args.selectors or SMOKE_SELECTORS
        out_dir = args.out_dir or Path(tempfile.mkdtemp(prefix="compare-smoke-"))
        if out_dir.resolve() == DOCS.resolve():
            parser.error("--smoke never writes into docs/; pass another --out-dir")
    else:
        reps = args.reps or 5
        names = args.datasets or [n for n in available if not n.startswith("wide-")]
        selectors = args.selectors or ALL_SELECTORS
        out_dir = args.out_dir or DOCS
    unknown = [n for n in names if n not in available] + [
        s for s in selectors if s not in SELECTORS
    ]
    if unknown:
        parser.error(
            f"unknown data sets or selectors {unknown}; data sets: "
            f"{list(available)}, selectors: {list(SELECTORS)}"
        )
    if "treeinner" not in selectors:
        selectors = ["treeinner", *selectors]  # the time ratios need it
    seeds = range(args.first_seed, args.first_seed + reps)
    print(f"data sets {names}\nselectors {selectors}\nseeds {list(seeds)}", flush=True)

    start = time.perf_counter()
    cells = [(n, s) for s in seeds for n in names]
    rows = []
    for i, chunk in enumerate(
        Parallel(n_jobs=args.n_jobs, return_as="generator_unordered")(
            delayed(run_cell)(n, available[n], s, selectors, args.smoke)
            for n, s in cells
        )
    ):
        rows.extend(chunk)
        print(
            f"[{time.perf_counter() - start:7.1f}s] cell {i + 1}/{len(cells)}: "
            f"{chunk[0]['dataset']} seed {chunk[0]['seed']}",
            flush=True,
        )
        if args.csv:  # after every cell, so that a cut-off run keeps its rows
            pd.DataFrame(rows).to_csv(args.csv, index=False)
    elapsed = time.perf_counter() - start
    results = pd.DataFrame(rows)
    for col in (
        "time",
        "auc",
        "n_sel",
        "n_false",
        "precision",
        "recall",
        "f1",
        "refit",
    ):
        if col not in results:
            results[col] = np.nan
    command = "python benchmarks/compare_selectors.py " + " ".join(
        sys.argv[1:] if argv is None else argv
    )
    meta = {
        "command": command.strip(),
        "elapsed_s": round(elapsed, 1),
        "n_jobs": args.n_jobs,
        "seeds": [seeds.start, seeds.stop - 1],
        "machine": platform.machine(),
        "versions": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "scikit-learn": sklearn.__version__,
            "xgboost": xgb.__version__,
            "pandas": pd.__version__,
        },
    }
    if args.csv:
        Path(f"{args.csv}.meta.json").write_text(json.dumps(meta, indent=1))
    report(results, selectors, out_dir, meta)


def load_runs(paths):
    """Rows and settings of one or several runs saved with ``--csv``.

    Returns the rows concatenated and a list of the runs' settings (their
    ``PATH.meta.json``), in the order given. Raises ValueError when two runs
    hold the same (data set, seed, selector): the time ratios pair each
    selector with ``treeinner`` on the same data set and seed.
    """
    frames, metas = [], []
    for path in paths:
        frames.append(pd.read_csv(path, keep_default_na=False, na_values=[""]))
        metas.append(json.loads(Path(f"{path}.meta.json").read_text()))
    results = pd.concat(frames, ignore_index=True)
    dup = results.duplicated(["dataset", "seed", "selector"], keep=False)
    if dup.any():
        first = results.loc[dup, ["dataset", "seed", "selector"]].iloc[0].tolist()
        raise ValueError(
            f"{int(dup.sum())} rows appear in more than one run, e.g. {first}; "
            "merge only runs over different data sets or seeds"
        )
    return results, metas


def _header(metas):
    """The page's "Generated by" line, for one run or several."""
    if isinstance(metas, dict):
        metas = [metas]

    def env(meta):
        versions = ", ".join(f"{k} {v}" for k, v in meta["versions"].items())
        return (
            f"{meta['n_jobs']} cell(s) in parallel, one thread each) on "
            f"{meta['machine']}, {versions}"
        )

    def seeds(meta):
        first, last = meta["seeds"]
        return f"{first}..{last}"

    first = metas[0]
    if len(metas) == 1:
        return (
            f"Generated by `{first['command']}` in {first['elapsed_s'] / 60:.1f} min "
            f"({env(first)}. Mean ± standard error over seeds {seeds(first)}."
        )
    runs = [
        f"`{m['command']}` in {m['elapsed_s'] / 60:.1f} min"
        + ("" if env(m) == env(first) else f" ({env(m)}")
        + ("" if seeds(m) == seeds(first) else f", seeds {seeds(m)}")
        for m in metas
    ]
    same_seeds = len({seeds(m) for m in metas}) == 1
    return (
        f"Generated from the rows of {len(metas)} runs: "
        f"{', then '.join(runs)} (unless said otherwise, {env(first)}. "
        "Mean ± standard error over "
        + (f"seeds {seeds(first)}." if same_seeds else "each run's seeds.")
    )


def report(results, selectors, out_dir, meta):
    """Write the page's tables and the plots; print the tables."""
    order = {n: i for i, n in enumerate(_datasets(smoke=False))}
    results = results.sort_values(
        ["dataset", "seed"],
        key=lambda c: c.map(order) if c.name == "dataset" else c,
        kind="mergesort",
    ).reset_index(drop=True)
    summary = summarize(results)
    tables = markdown_tables(summary, results, selectors)
    header = _header(meta)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_page(out_dir / "selector-comparison.md", tables, header)
    plots(summary, out_dir / "img", selectors)
    print(tables)
    skipped = results[results["status"] != "ok"]
    for (selector, status), g in skipped.groupby(["selector", "status"]):
        print(f"skipped {selector} ({status}): {g['error'].iloc[0][:200]}")
    metas = [meta] if isinstance(meta, dict) else meta
    took = " + ".join(f"{m['elapsed_s']:.1f}s" for m in metas)
    print(f"wrote {out_dir / 'selector-comparison.md'} ({took} run)")


if __name__ == "__main__":
    main()
