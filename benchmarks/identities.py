"""Measure how exactly the identities hold, against each booster's own numbers.

For every supported library, objective (and, for XGBoost, tree method): the
largest deviation of in-sample TreeInner from the booster's total gain
(Prop. 3, l1-normalised) and of PreDecomp + bias from the raw margin
(Prop. 1). Tests assert the bounds; this prints the measured values.

    python benchmarks/identities.py                 # every library
    python benchmarks/identities.py --library lightgbm

CatBoost stores no split gains: its Prop. 3 reference is the gain of every
split recomputed from CatBoost's own leaf assignments and staged margins on
the training rows (``tests/unit/test_catboost.py::catboost_gain``).
"""

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

_TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path[:0] = [str(_TESTS), str(_TESTS / "unit")]  # conftest, test_catboost, ...
from conftest import OBJECTIVES, fit, l1, make_data, margin  # noqa: E402

from skl_treeinner import predecomp, tree_inner  # noqa: E402
from skl_treeinner._readers import read_model  # noqa: E402


def xgboost_models(X, y):
    for objective in sorted(OBJECTIVES):
        for method in ("exact", "hist", "approx"):
            model, target = fit(
                objective, X, y, tree_method=method, n_estimators=50, max_depth=5
            )
            yield f"{objective} {method}", model, X, target, margin


def lightgbm_models(X, y):
    from test_lightgbm import EXACT, train

    for objective in EXACT:
        for lam in (0.0, 1.0):
            model, target = train(objective, X, y, rounds=50, lambda_l2=lam)
            yield (
                f"{objective} lambda_l2={lam:g}",
                model,
                X,
                target,
                lambda m, X: m.predict(X, raw_score=True),
            )


def catboost_models(X, y):
    import catboost as cb
    from test_catboost import catboost_gain

    settings = {
        "iterations": 50,
        "depth": 5,
        "learning_rate": 0.2,
        "random_seed": 0,
        "thread_count": 1,
        "verbose": 0,
        "allow_writing_files": False,
    }
    raw = lambda m, X: m.predict(X, prediction_type="RawFormulaVal")  # noqa: E731
    binary, classes = (y > 0.5).astype(int), np.digitize(y, [0.0, 1.5])
    cases = [
        ("RMSE plain", cb.CatBoostRegressor, y, {}),
        ("RMSE ordered", cb.CatBoostRegressor, y, {"boosting_type": "Ordered"}),
        ("RMSE l2_leaf_reg=0", cb.CatBoostRegressor, y, {"l2_leaf_reg": 0}),
        (
            "Logloss Gradient",
            cb.CatBoostClassifier,
            binary,
            {"leaf_estimation_method": "Gradient"},
        ),
        (
            "MultiClass Gradient",
            cb.CatBoostClassifier,
            classes,
            {"leaf_estimation_method": "Gradient"},
        ),
    ]
    for name, cls, target, extra in cases:
        model = cls(**settings, **extra).fit(X, target)
        yield name, model, X, target, raw, catboost_gain


def _sklearn_models(family, kinds):
    def models(X, y):
        import test_sklearn_readers as sk

        X = np.nan_to_num(X) if family == "gb" else X
        rng = np.random.default_rng(0)
        for kind in kinds:
            target = sk.TARGETS[kind](y, rng)
            for lam in (0.0, 1.0) if family == "hgb" else (0.0,):
                extra = (
                    {"l2_regularization": lam, "max_iter": 50}
                    if family == "hgb"
                    else {"n_estimators": 50}
                )
                model = getattr(sk, family)(kind, **extra)
                model = model.fit(X, target)
                yield f"{kind} lambda={lam:g}", model, X, target, sk.raw_margin

    return models


LIBRARIES = {
    "xgboost": xgboost_models,
    "lightgbm": lightgbm_models,
    "catboost": catboost_models,
    "hgb": _sklearn_models(
        "hgb", ["squared_error", "poisson", "gamma", "binary", "multiclass"]
    ),
    "gb": _sklearn_models("gb", ["squared_error"]),
}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--library", choices=sorted(LIBRARIES), action="append")
    args = ap.parse_args(argv)
    X_all, y = make_data(n=600, nan_frac=0.1, seed=1)
    y = np.nan_to_num(y)
    print(f"{'library':<10}{'model':<34}{'Prop. 3 (l1)':>14}{'Prop. 1':>12}")
    worst = {}
    for library in args.library or LIBRARIES:
        for name, model, X, target, raw, *own_gain in LIBRARIES[library](X_all, y):
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # an IdentityWarning is a failure
                if own_gain:
                    gain = own_gain[0](model, X, target)
                else:
                    gain = read_model(model).total_gain()
                d3 = np.abs(l1(tree_inner(model, X, target)) - l1(gain)).max()
                values, bias = predecomp(model, X, return_bias=True)
            total = values.sum(axis=1) + bias
            d1 = np.abs(total - np.reshape(raw(model, X), total.shape)).max()
            w3, w1 = worst.get(library, (0.0, 0.0))
            worst[library] = max(w3, d3), max(w1, d1)
            print(f"{library:<10}{name:<34}{d3:>14.1e}{d1:>12.1e}")
    for library, (w3, w1) in worst.items():
        print(f"worst {library}: Prop. 3 {w3:.1e} (bound 1e-6), Prop. 1 {w1:.1e}")


if __name__ == "__main__":
    main()
