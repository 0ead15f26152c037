"""How the selector's rules behave on wide data: per-feature tests or a guarantee.

Issue 26. The selector tests every feature at ``alpha``; from a thousand
columns a per-feature level keeps dozens of columns that do nothing. This
program fits the default ``TreeInnerSelector`` once per data set and seed,
stores what every rule needs (each feature's p-value and score, the truth, how
often the fitted boosters split on the feature), and then applies selection
rules to the stored p-values, nothing refitted:

- ``per-feature``: p < 0.05 (the default before issue 26);
- ``bonferroni``, ``holm``: family-wise error rate 0.05;
- ``budget``: p < min(0.05, 1/m), at most one false pick expected (the
  per-family error rate, PFER ≤ 1);
- ``bh``: Benjamini-Hochberg at 0.05 (scipy's ``false_discovery_control``);
- ``storey``: BH at 0.05 / π̂0, π̂0 from the share of p > 0.5;
- ``screen-bh``: only p ≤ 0.5 are kept as candidates and BH runs on their
  conditional p-values p / 0.5 (Zhao, Small and Su, 2019: valid where the
  null p-values are uniformly conservative, as an overfitted column's are);
- ``screen-budget``: the same screen, then at most one false pick expected
  among the candidates (p / 0.5 < min(0.05, 1/m')).

Data sets (``--suite``): n rows (2000) of m Gaussian columns (``--columns``,
e.g. 100, 1000, 5000), independent or correlated (AR(1) over the columns,
ρ = 0.5); regression (y = Xβ + unit noise) or classification (y ~ Bernoulli of
the logistic of 2·Xβ); ``few``: 10 relevant columns with coefficients 0.1 to
0.5 (the issue's example), ``many``: 50 relevant columns with coefficients
0.05 to 0.15, ``null``: y independent of X.

Usage::

    python benchmarks/wide_selection.py --columns 1000 --seeds 2 \
        [--out benchmarks/results/wide.jsonl]   # fit, append one line per fit
    python benchmarks/wide_selection.py --rules benchmarks/results/wide.jsonl
    python benchmarks/wide_selection.py --smoke  # seconds (the script tests)

The ``--rules`` report has, per data set and rule, the mean number of
relevant and of noise columns kept and the F1 of the selection; and, over the
noise columns of every fit, the share of p < 0.05 by how often the boosters
split on the column (the calibration question of issue 26).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import where_time_goes
from scipy.stats import false_discovery_control

ALPHA = 0.05
SCREEN = 0.5


# -- data ------------------------------------------------------------------------
def make_data(*, n, m, task, signal, correlated, seed):
    """Return X (n, m), y and the mask of relevant columns."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, m))
    if correlated:  # AR(1) over the columns: neighbours share rho
        rho = 0.5
        for j in range(1, m):
            X[:, j] = rho * X[:, j - 1] + np.sqrt(1 - rho**2) * X[:, j]
    relevant = np.zeros(m, dtype=bool)
    if signal == "null":
        eta = np.zeros(n)
    else:
        k, low, high = (10, 0.1, 0.5) if signal == "few" else (50, 0.05, 0.15)
        k = min(k, m // 2)
        # Spread over the columns, so that correlated noise sits beside each.
        columns = np.linspace(0, m - 1, k + 2).astype(int)[1:-1]
        relevant[columns] = True
        beta = np.linspace(low, high, k)
        eta = X[:, columns] @ beta
    if task == "regression":
        y = eta + rng.normal(size=n)
    else:
        y = (rng.random(n) < 1 / (1 + np.exp(-2 * eta))).astype(np.int64)
    return X, y, relevant


def datasets(columns, suite):
    """The (name, settings) of every data set of a suite at ``columns`` columns."""
    out = []
    for task in ("regression", "classification"):
        for signal in suite:
            for correlated in (False, True) if signal != "null" else (False,):
                name = (
                    f"{task[:3]}-{signal}-{'corr' if correlated else 'ind'}-{columns}"
                )
                out.append(
                    (
                        name,
                        {
                            "m": columns,
                            "task": task,
                            "signal": signal,
                            "correlated": correlated,
                        },
                    )
                )
    return out


# -- fitting ---------------------------------------------------------------------
def usage(estimators, m):
    """Splits on each column, summed over the fitted boosters."""
    counts = np.zeros(m)
    for est in estimators:
        weights = est.get_booster().get_score(importance_type="weight")
        for name, count in weights.items():
            counts[int(name[1:])] += count
    return counts


def fit_one(name, settings, seed, *, n, cv, spec=None):
    """Fit the default selector (``spec``: other settings) on one data set.

    Returns a JSON-able record.
    """
    from skl_treeinner import TreeInnerSelector

    X, y, relevant = make_data(n=n, seed=seed, **settings)
    start = time.perf_counter()
    split = None if cv == 1 else cv  # --cv 1: one split, as the command line
    params = {"cv": split, "random_state": seed, **(spec or {})}
    selector = TreeInnerSelector(**params).fit(X, y)
    seconds = time.perf_counter() - start
    return {
        "dataset": name,
        "seed": seed,
        "n": n,
        "cv": (spec or {}).get("cv", cv),
        "selector": spec or {},
        **settings,
        "seconds": seconds,
        "pvalues": selector.pvalues_.tolist(),
        "scores": selector.scores_.tolist(),
        "relevant": relevant.tolist(),
        "splits": usage(selector.estimators_, settings["m"]).tolist(),
        "n_scored_rows": int(selector.n_scored_rows_),
    }


# -- rules -----------------------------------------------------------------------
def _bh(p, alpha):
    if p.size == 0:
        return np.zeros(0, dtype=bool)
    return false_discovery_control(p) < alpha


def rule_masks(p, scores):
    """Selection of every rule from p-values (and score > 0, as the selector)."""
    m = p.size
    positive = scores > 0
    order = np.argsort(p, kind="mergesort")
    holm = np.zeros(m, dtype=bool)
    for i, j in enumerate(order):  # step-down: stop at the first failure
        if p[j] >= ALPHA / (m - i):
            break
        holm[j] = True
    screened = p <= SCREEN
    conditional = p[screened] / SCREEN
    screen_bh = np.zeros(m, dtype=bool)
    screen_bh[screened] = _bh(conditional, ALPHA)
    screen_budget = np.zeros(m, dtype=bool)
    budget_m = max(int(screened.sum()), 1)
    screen_budget[screened] = conditional < min(ALPHA, 1 / budget_m)
    pi0 = min(1.0, max((p > SCREEN).sum(), 1) / (m * (1 - SCREEN)))
    masks = {
        "per-feature": p < ALPHA,
        "bonferroni": p < ALPHA / m,
        "holm": holm,
        "budget": p < min(ALPHA, 1 / m),
        "bh": _bh(p, ALPHA),
        "storey": _bh(p, ALPHA / pi0),
        "screen-bh": screen_bh,
        "screen-budget": screen_budget,
    }
    return {rule: mask & positive for rule, mask in masks.items()}


def report(records, out=sys.stdout):
    """Print, per data set and rule, relevant and noise columns kept and F1."""
    by_set = {}
    for r in records:
        by_set.setdefault(r["dataset"], []).append(r)
    rules = list(rule_masks(np.array([0.5]), np.array([1.0])))
    print(
        "| data set | fits | seconds | "
        + " | ".join(f"{rule}: rel / noise / F1" for rule in rules)
        + " |",
        file=out,
    )
    print("|---" * (3 + len(rules)) + "|", file=out)
    for name, rows in sorted(by_set.items()):
        cells = []
        for rule in rules:
            kept_rel, kept_noise, f1 = [], [], []
            for r in rows:
                truth = np.asarray(r["relevant"])
                mask = rule_masks(np.asarray(r["pvalues"]), np.asarray(r["scores"]))[
                    rule
                ]
                tp = int((mask & truth).sum())
                fp = int((mask & ~truth).sum())
                kept_rel.append(tp)
                kept_noise.append(fp)
                n_true = int(truth.sum())
                f1.append(2 * tp / (mask.sum() + n_true) if n_true else np.nan)
            f1_text = "–" if np.all(np.isnan(f1)) else f"{np.nanmean(f1):.2f}"
            cells.append(
                f"{np.mean(kept_rel):.1f} / {np.mean(kept_noise):.1f} / {f1_text}"
            )
        seconds = np.mean([r["seconds"] for r in rows])
        print(
            f"| {name} | {len(rows)} | {seconds:.0f} | " + " | ".join(cells) + " |",
            file=out,
        )
    # The tail the corrections rely on: noise p-values below 1/m and 0.05/m
    # per fit (valid p-values give at most m0/m <= 1 and 0.05 on average).
    print("\nNoise p-values in the tail, per fit (mean, and the largest fit)", file=out)
    print("| data set | cv | fits | below 1/m | below 0.05/m |", file=out)
    print("|---|---|---|---|---|", file=out)
    by_cv = {}
    for r in records:
        by_cv.setdefault((r["dataset"], r.get("cv")), []).append(r)
    for (name, cv), rows in sorted(by_cv.items(), key=lambda kv: str(kv[0])):
        counts = []
        for r in rows:
            p = np.asarray(r["pvalues"])[~np.asarray(r["relevant"])]
            m = len(r["pvalues"])
            counts.append(((p < 1 / m).sum(), (p < ALPHA / m).sum()))
        counts = np.asarray(counts)
        print(
            f"| {name} | {cv} | {len(rows)} | {counts[:, 0].mean():.2f} "
            f"(max {counts[:, 0].max()}) | {counts[:, 1].mean():.2f} "
            f"(max {counts[:, 1].max()}) |",
            file=out,
        )
    # Calibration by usage: the null share of p < 0.05 by splits on the column.
    p_noise, splits = [], []
    for r in records:
        truth = np.asarray(r["relevant"])
        independent = not r["correlated"]
        if not independent:
            continue  # correlated noise may carry a relevant neighbour's signal
        p_noise.append(np.asarray(r["pvalues"])[~truth])
        splits.append(np.asarray(r["splits"])[~truth])
    if not p_noise:
        return
    p_noise, splits = np.concatenate(p_noise), np.concatenate(splits)
    print(
        "\nNoise columns (independent data sets): share of p < 0.05 by splits", file=out
    )
    print(
        "| splits on the column | columns | share p < 0.05 | share p > 0.5 |", file=out
    )
    print("|---|---|---|---|", file=out)
    edges = [0, 1, 3, 10, 30, 100, np.inf]
    for low, high in zip(edges[:-1], edges[1:], strict=True):
        inside = (splits >= low) & (splits < high)
        if not inside.any():
            continue
        label = f"{low:g} to {high - 1:g}" if np.isfinite(high) else f"{low:g} or more"
        share_low = np.mean(p_noise[inside] < ALPHA)
        share_high = np.mean(p_noise[inside] > SCREEN)
        print(
            f"| {label} | {int(inside.sum())} | {share_low:.3f} | {share_high:.3f} |",
            file=out,
        )
    print(
        f"| all | {p_noise.size} | {np.mean(p_noise < ALPHA):.3f} | "
        f"{np.mean(p_noise > SCREEN):.3f} |",
        file=out,
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--columns", type=int, nargs="+", default=[1000])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--cv", type=int, default=5, help="folds; 1: one 50/50 split")
    parser.add_argument(
        "--suite",
        nargs="+",
        default=["few", "many", "null"],
        choices=["few", "many", "null"],
    )
    parser.add_argument("--tasks", nargs="+", default=["regression", "classification"])
    parser.add_argument(
        "--out", type=Path, default=Path("benchmarks/results/wide.jsonl")
    )
    parser.add_argument("--rules", type=Path, nargs="+")
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument(
        "--selector", default="",
        help="key=value,... for the selector (n_repeats, cv, and the default "
        "booster's n_estimators and learning_rate)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if args.rules:
        records = [
            json.loads(line)
            for path in args.rules
            for line in path.read_text().splitlines()
        ]
        report(records)
        return
    if args.smoke:
        import tempfile

        args.columns, args.seeds, args.rows, args.cv = [40], 1, 300, 2
        args.suite = ["few", "null"]
        args.out = Path(tempfile.mkdtemp()) / "wide.jsonl"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    spec = where_time_goes.selector_spec(args.selector)
    records = []
    for columns in args.columns:
        for name, settings in datasets(columns, args.suite):
            if settings["task"] not in args.tasks:
                continue
            for seed in range(args.first_seed, args.first_seed + args.seeds):
                record = fit_one(
                    name, settings, seed, n=args.rows, cv=args.cv, spec=spec
                )
                records.append(record)
                with args.out.open("a") as f:
                    f.write(json.dumps(record) + "\n")
                print(
                    f"{name} seed {seed}: {record['seconds']:.1f}s",
                    file=sys.stderr,
                    flush=True,
                )
    report(records)


if __name__ == "__main__":
    main()
