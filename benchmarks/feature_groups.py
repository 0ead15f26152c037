"""Which group test: power at equal error, on families of 2 to 50 columns.

Every design is :func:`skl_treeinner.datasets.make_feature_families` data
(two relevant and two irrelevant families, or the null's 15 families of 2 to
50 columns), fitted once per seed with ``TreeInnerSelector(feature_groups=
the families, random_state=seed)`` and the default booster and folds. From
that one fit, every rule keeps or drops each family:

- ``sum``, ``simes``, ``cauchy``, ``sum+simes``: the selector's group tests
  (``set_params(group_test=...)`` re-selects without refitting), the
  selector's default ``control`` over the families;
- ``columns``: the selector without groups (per-column tests, default
  control over the columns): a family counts as kept when any member is;
- ``any-member``: a family is kept when any member's own p-value is below
  0.05 (the rule "keep the family if a member passes alone").

Reported per design and rule: relevant families found, irrelevant families
picked (share of families), and under the null the share of families with
p < 0.05 (before the correction for the number of families) with its
binomial standard error.

Usage::

    python benchmarks/feature_groups.py [--seeds 10] [--n-jobs 2] [--designs NAME ...]
        [--cv 5] [--csv PATH]
    python benchmarks/feature_groups.py --overhead [--n-samples 1000] [--repeats 5]
    python benchmarks/feature_groups.py --fresh-rows [--seeds 4]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from threadpoolctl import threadpool_limits

from skl_treeinner import TreeInnerSelector
from skl_treeinner._readers import default_estimator
from skl_treeinner._stats._cutoff import adjusted_pvalues
from skl_treeinner.datasets import make_feature_families

METHODS = ("sum", "simes", "cauchy", "sum+simes")
RULES = (*METHODS, "columns", "any-member")

#: name: (kind, keyword arguments of make_feature_families)
DESIGNS = {
    "onehot-2": ("onehot", {"size": 2, "effect": 0.2}),
    "onehot-12": ("onehot", {"effect": 0.3}),
    "onehot-50": ("onehot", {"size": 50, "effect": 0.35}),
    "onehot-12-strong": ("onehot", {"effect": 0.6}),
    "lags-2": ("lags", {"size": 2, "effect": 0.25}),
    "lags-8": ("lags", {"effect": 0.3}),
    "lags-20": ("lags", {"size": 20, "effect": 0.3}),
    "lags-8-strong": ("lags", {"effect": 0.6}),
    "independent-8": ("lags", {"phi": 0.0, "effect": 0.3}),
    "independent-8-strong": ("lags", {"phi": 0.0, "effect": 0.6}),
    "twins": ("twins", {"effect": 0.25}),
    "twins-strong": ("twins", {"effect": 0.5}),
    "null": ("null", {}),
}


def run(design, seed, n_samples, cv=5):
    kind, kwargs = DESIGNS[design]
    X, y, relevant, groups = make_feature_families(
        kind, n_samples, random_state=seed, **kwargs
    )
    start = time.perf_counter()
    with threadpool_limits(1):
        est = default_estimator(False, seed).set_params(n_jobs=1)
        sel = TreeInnerSelector(est, cv=cv, feature_groups=groups, random_state=seed)
        sel.fit(X, y)
    seconds = time.perf_counter() - start
    names = list(sel.groups_)
    is_relevant = np.array([relevant[sel.groups_[g][0]] for g in names])
    rows = []
    p_cols = sel.pvalues_
    kept_cols = (sel.scores_ > 0) & (
        adjusted_pvalues(p_cols, sel.control, sel.alpha) < sel.alpha
    )
    for method in METHODS:
        sel.set_params(group_test=method)
        p = sel.group_pvalues_
        kept = sel.support_[[sel.groups_[g][0] for g in names]]
        rows += [
            (method, g, r, float(pv), bool(k))
            for g, r, pv, k in zip(names, is_relevant, p, kept, strict=True)
        ]
    for g, r in zip(names, is_relevant, strict=True):
        cols = sel.groups_[g]
        least = float(p_cols[cols].min())
        rows.append(("columns", g, r, least, bool(kept_cols[cols].any())))
        rows.append(("any-member", g, r, least, least < 0.05))
    return pd.DataFrame(
        [
            {
                "design": design,
                "seed": seed,
                "rule": rule,
                "family": g,
                "relevant": bool(r),
                "size": len(sel.groups_[g]),
                "p": pv,
                "kept": k,
                "seconds": seconds,
            }
            for rule, g, r, pv, k in rows
        ]
    )


def summarize(frame):
    out = []
    for (design, rule), part in frame.groupby(["design", "rule"], sort=False):
        rel, irr = part[part.relevant], part[~part.relevant]
        row = {"design": design, "rule": rule}
        if len(rel):
            row["found"] = rel.kept.mean()
        row["picked"] = irr.kept.mean()
        if design == "null":
            share = (irr.p < 0.05).mean() if rule != "columns" else np.nan
            row["p<0.05"] = share
            row["se"] = np.sqrt(share * (1 - share) / len(irr))
        out.append(row)
    return pd.DataFrame(out)


def overhead(n_samples, repeats):
    """Median fit time with and without feature_groups, fits alternated."""
    X, y, _, groups = make_feature_families(
        "onehot", n_samples, size=12, n_relevant=4, n_irrelevant=4, random_state=0
    )
    times = {"columns": [], "groups": []}
    for _ in range(repeats):
        for name, fg in (("columns", None), ("groups", groups)):
            start = time.perf_counter()
            TreeInnerSelector(feature_groups=fg, random_state=0).fit(X, y)
            times[name].append(time.perf_counter() - start)
    plain, grouped = (float(np.median(times[k])) for k in ("columns", "groups"))
    print(
        f"{n_samples} rows x {X.shape[1]} columns in {len(groups)} groups, default "
        f"selector: {plain:.2f} s without groups, {grouped:.2f} s with "
        f"({100 * (grouped / plain - 1):+.1f} %), median of {repeats}"
    )


def fresh_rows(seeds, n_fresh=60000):
    """Mean t of rare noise dummies' TreeInner on fresh rows, given the model.

    A 50-level relevant categorical (one-hot, effect 0.5) beside a 50-level
    noise categorical (one-hot), 1,000 rows of which the booster is fitted on
    500 (the default's settings, or lambda 0, or learning rate 0.1, or a
    numeric signal instead), and the noise dummies' per-row terms on
    ``n_fresh`` new rows of the same distribution: their mean over its
    standard error, averaged over the dummies. Negative is what TreeInner
    promises for noise; positive means the noise dummies help on new rows.
    """
    from skl_treeinner import tree_inner

    settings = {
        "default (lambda 1, eta 0.01)": ({}, "onehot"),
        "lambda 0": ({"reg_lambda": 0.0}, "onehot"),
        "learning rate 0.1": ({"learning_rate": 0.1}, "onehot"),
        "numeric signal": ({}, "numeric"),
    }
    for name, (params, signal) in settings.items():
        out = []
        for seed in range(seeds):
            rng = np.random.default_rng(seed)
            n = 1000 + n_fresh
            if signal == "onehot":
                codes = rng.integers(50, size=n)
                effect = rng.standard_normal(50)
                effect = (effect - effect.mean()) / effect.std()
                S, s = np.eye(50)[codes], effect[codes]
            else:
                S = rng.standard_normal((n, 3))
                s = S.sum(axis=1) / np.sqrt(3)
            noise = np.eye(50)[rng.integers(50, size=n)]
            X = np.hstack([S, noise])
            y = 0.5 * s + rng.standard_normal(n)
            est = default_estimator(False, seed).set_params(**params)
            est.fit(X[:500], y[:500])
            z = tree_inner(est, X[1000:], y[1000:], per_sample=True)[:, S.shape[1] :]
            m, se = z.mean(axis=0), z.std(axis=0) / np.sqrt(z.shape[0])
            used = se > 0
            out.append(float(np.mean(m[used] / se[used])))
        print(f"{name:<30} mean t of the noise dummies per seed: {np.round(out, 2)}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--n-samples", type=int, default=1000)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument(
        "--cv", type=int, default=5, help="folds (1: one 50/50 split, cv=None)"
    )
    parser.add_argument("--designs", nargs="+", default=list(DESIGNS))
    parser.add_argument("--csv")
    parser.add_argument(
        "--overhead",
        action="store_true",
        help="time the selector with and without groups instead",
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--fresh-rows",
        action="store_true",
        help="measure rare noise dummies' TreeInner on fresh rows instead",
    )
    args = parser.parse_args(argv)
    if args.fresh_rows:
        fresh_rows(args.seeds)
        return
    if args.overhead:
        overhead(args.n_samples, args.repeats)
        return
    start = time.perf_counter()
    parts = Parallel(n_jobs=args.n_jobs)(
        delayed(run)(d, s, args.n_samples, None if args.cv == 1 else args.cv)
        for d in args.designs
        for s in range(args.seeds)
    )
    frame = pd.concat(parts, ignore_index=True)
    if args.csv:
        frame.to_csv(args.csv, index=False)
    table = summarize(frame)
    with pd.option_context("display.width", 200, "display.max_rows", 500):
        print(table.round(3).to_string(index=False))
    print(f"{len(parts)} fits, {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
