"""The UBJSON decoder agrees with XGBoost's own JSON of the same model."""

import json
import struct

import numpy as np
import pandas as pd
import pytest
import xgboost as xgb
from conftest import fit

from skl_treeinner._readers import _ubjson


def same(a, b, path="$"):
    if isinstance(b, dict):
        assert isinstance(a, dict) and a.keys() == b.keys(), path
        for k in b:
            same(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, np.ndarray):
        # JSON prints float32 with up to 9 significant digits
        np.testing.assert_allclose(a, np.asarray(b, dtype=a.dtype), rtol=1e-7)
    elif isinstance(b, list):
        assert len(a) == len(b), path
        for i, (x, z) in enumerate(zip(a, b, strict=True)):
            same(x, z, f"{path}[{i}]")
    else:
        assert a == b or (isinstance(b, float) and np.isclose(a, b)), path


def assert_same_as_json(booster):
    decoded = _ubjson.loads(bytes(booster.save_raw("ubj")))
    same(decoded, json.loads(booster.save_raw("json")))


@pytest.mark.parametrize("objective", ["reg:squarederror", "multi:softprob"])
def test_decoder_matches_json(objective, data):
    X, y = data
    model, _ = fit(objective, X, y, n_estimators=5)
    assert_same_as_json(model.get_booster())


def test_decoder_matches_json_with_categories_and_names():
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {"x": rng.normal(size=200), "c": pd.Categorical(rng.choice(list("abcde"), 200))}
    )
    y = df["x"] + (df["c"] == "b") * 3
    model = xgb.XGBRegressor(
        n_estimators=4, tree_method="hist", enable_categorical=True, max_cat_to_onehot=1
    ).fit(df, y)
    assert_same_as_json(model.get_booster())


def test_decoder_grammar():
    # Hand-built document: untyped array with mixed values, count-less
    # containers, no-op markers, high-precision numbers and chars.
    first = b"i\x01a[TFZND" + struct.pack(">d", 1.5) + b"Hi\x032.5Cx]"
    second = b"i\x01b[$l#i\x02" + struct.pack(">ii", -1, 7)
    doc = b"{" + first + second + b"}"
    out = _ubjson.loads(doc)
    assert out["a"] == [True, False, None, 1.5, 2.5, "x"]
    assert out["b"].dtype == np.int32 and out["b"].tolist() == [-1, 7]
    # no-op markers anywhere between values, also right before the end
    assert _ubjson.loads(b"{NNi\x01aU\x01N}") == {"a": 1}


@pytest.mark.parametrize(
    ("doc", "match"),
    [
        (b"[", "truncated"),
        (b"i\x01i\x02", "trailing"),
        (b"X", "invalid UBJSON marker"),
        (b"[$l]", "without a count"),
        (b"Sd", "length marker"),
    ],
)
def test_decoder_rejects_malformed(doc, match):
    with pytest.raises(ValueError, match=match):
        _ubjson.loads(doc)
