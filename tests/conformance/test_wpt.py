"""The W3C web-platform-tests WebNN conformance corpus, run with WPT's own tolerances.

The corpus is data in ``../shared/conformance/wpt`` (see its README). When that folder is absent
these tests skip; they never fail for that reason.
"""
import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

import webnn

CORPUS = Path(os.environ.get("WEBNN_WPT_DIR", Path(__file__).resolve().parents[3] / "shared" / "conformance" / "wpt"))

# Tests this implementation knowingly fails, with the reason (reported in the issue notes).
KNOWN_FAILURES = {}


def _load_cases():
    if not CORPUS.is_dir():
        return [pytest.param(None, id="wpt-corpus-absent",
                             marks=pytest.mark.skip(reason=f"WPT corpus not found at {CORPUS}"))]
    cases = []
    for path in sorted(CORPUS.glob("*.json")):
        data = json.loads(path.read_text())
        for index, test in enumerate(data["tests"]):
            test_id = f"{path.stem}::{index}::{test['name']}"
            marks = []
            if test["name"] in KNOWN_FAILURES:
                marks.append(pytest.mark.xfail(reason=KNOWN_FAILURES[test["name"]], strict=True))
            cases.append(pytest.param(test, id=test_id, marks=marks))
    return cases


def _to_array(data, descriptor):
    dtype = webnn.numpy_dtype(descriptor["dataType"])  # int4/uint4 are held as int8/uint8
    shape = descriptor["shape"]
    def value(v):
        if isinstance(v, str):
            return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}.get(v, v)
        return v

    if not isinstance(data, list):  # WPT's fill form
        v = value(data)
        return np.full(shape, int(v) if dtype.kind in "iu" else v, dtype=dtype if dtype.kind in "iu" else np.float64).astype(dtype)
    values = [value(v) for v in data]
    if dtype.kind in "iu":
        return np.array([int(v) for v in values], dtype=dtype).reshape(shape)
    with np.errstate(over="ignore"):  # beyond the type's range rounds to infinity, as a JS typed array does
        return np.array(values, dtype=np.float64).astype(dtype).reshape(shape)


def _f32_bits(x):
    a = np.abs(x.astype(np.float32)).view(np.uint32).astype(np.int64)
    return np.where(x < 0, -a, a)


def _distance(actual, expected, metric, dtype):
    if metric == "ATOL":
        return np.abs(actual.astype(np.float64) - expected.astype(np.float64))
    if dtype == "float32":
        return np.abs(_f32_bits(actual) - _f32_bits(expected)).astype(np.float64)
    if dtype == "float16":
        a = actual.astype(np.float16).view(np.uint16).astype(np.int64)
        e = expected.astype(np.float16).view(np.uint16).astype(np.int64)
        both_zero = ((a & 0x7FFF) == 0) & ((e & 0x7FFF) == 0)
        return np.where(both_zero, 0, np.abs(a - e)).astype(np.float64)
    return np.abs(actual.astype(object) - expected.astype(object)).astype(np.float64)


def _exact_bits(test):
    """Whether WPT checks this test's values bit for bit (the sign of zero too) before its tolerance:
    cast_rounding's Object.is check and cast_storage's raw-bit comparison, as their notes say."""
    note = test.get("tolerance_note", "")
    return "Object.is" in note or "bits exactly" in note


def _check_exact_bits(name, actual, expected):
    """Same bits, except that any NaN matches a NaN expectation. (WPT's float16 ULP step would also
    want a NaN's bits to be 0x7C01, its own toHalf(NaN), a signalling NaN no conversion produces; a
    NaN here only has to be a NaN.)"""
    a, e = actual.reshape(-1), expected.reshape(-1)
    same = a.view(f"u{a.itemsize}") == e.view(f"u{e.itemsize}")
    if a.dtype.kind == "f":
        same |= np.isnan(a) & np.isnan(e)
    if not same.all():
        i = int(np.argmax(~same))
        raise AssertionError(f"{name}: {int((~same).sum())} of {a.size} elements differ in their bits; first at "
                             f"{i}: actual {a[i]!r}, expected {e[i]!r}")


def _check(name, actual, expected_entry, tolerance, exact_bits=False):
    descriptor = expected_entry["descriptor"]
    expected = _to_array(expected_entry["data"], descriptor)
    assert actual.dtype == webnn.numpy_dtype(descriptor["dataType"]), f"{name}: dtype {actual.dtype}"
    assert list(actual.shape) == list(descriptor["shape"]), f"{name}: shape {list(actual.shape)}"
    if exact_bits:
        _check_exact_bits(name, actual, expected)
    a, e = actual.reshape(-1), expected.reshape(-1)
    if not isinstance(expected_entry["data"], list):  # WPT's fill form compares the first 1000
        a, e = a[:1000], e[:1000]
    equal = a == e
    if a.dtype.kind == "f":
        equal |= np.isnan(a) & np.isnan(e)  # NaN expectations match NaN (WPT canonicalizes NaN)
    distance = _distance(a, e, tolerance["metric"], descriptor["dataType"])
    bad = ~equal & ~(distance <= tolerance["value"])
    if bad.any():
        i = int(np.argmax(bad))
        raise AssertionError(f"{name}: {int(bad.sum())} of {a.size} elements out of tolerance "
                             f"({tolerance['metric']} {tolerance['value']}); first at {i}: "
                             f"actual {a[i]!r}, expected {e[i]!r}, distance {distance[i]}")


def run_wpt_test(context, test):
    graph_spec = test["graph"]
    builder = webnn.MLGraphBuilder(context)
    operands, feeds = {}, {}
    for name, entry in graph_spec["inputs"].items():
        array = _to_array(entry["data"], entry["descriptor"])
        if entry.get("constant"):
            operands[name] = builder.constant(entry["descriptor"], array)
        else:
            operands[name] = builder.input(name, entry["descriptor"])
            feeds[name] = array

    def resolve(value):
        if isinstance(value, str) and value in operands:
            return operands[value]
        if isinstance(value, list) and value and all(isinstance(v, str) and v in operands for v in value):
            return [operands[v] for v in value]
        if isinstance(value, str) and value in ("NaN", "Infinity", "-Infinity"):
            return float(value.replace("Infinity", "inf"))
        return value

    for op in graph_spec["operators"]:
        args = []
        for argument in op["arguments"]:
            (key, value), = argument.items()
            if key == "options":
                args.append({k: resolve(v) for k, v in value.items()})
            else:
                args.append(resolve(value))
        result = getattr(builder, op["name"])(*args)
        outs = op["outputs"]
        if isinstance(outs, str):
            operands[outs] = result
        else:
            for out_name, operand in zip(outs, result):
                operands[out_name] = operand
    outputs = {name: operands[name] for name in graph_spec["expectedOutputs"]}
    graph = builder.build(outputs)
    return graph.compute(feeds)


@pytest.mark.parametrize("test", _load_cases())
def test_wpt_conformance(context, test):
    results = run_wpt_test(context, test)
    for name, expected in test["graph"]["expectedOutputs"].items():
        _check(name, results[name], expected, test["tolerance"], _exact_bits(test))


def test_exact_bit_check_tells_the_sign_of_zero_and_accepts_any_nan():
    expected = {"data": [-0.0, 0.0, "NaN", 1.5], "descriptor": {"shape": [4], "dataType": "float16"}}
    tolerance = {"metric": "ULP", "value": 0}
    nan = np.array([0x7E00], np.uint16).view(np.float16)[0]
    _check("out", np.array([-0.0, 0.0, nan, 1.5], np.float16), expected, tolerance, exact_bits=True)
    with pytest.raises(AssertionError, match="differ in their bits"):
        _check("out", np.array([0.0, 0.0, nan, 1.5], np.float16), expected, tolerance, exact_bits=True)
    _check("out", np.array([0.0, 0.0, nan, 1.5], np.float16), expected, tolerance)  # the plain ULP rule: -0 == +0


def test_fill_form_compares_the_first_thousand_elements():
    expected = {"data": 2.0, "descriptor": {"shape": [1200], "dataType": "float32"}}
    actual = np.full(1200, 2.0, np.float32)
    actual[1100] = 5.0  # beyond WPT's first 1000: not compared
    _check("out", actual, expected, {"metric": "ULP", "value": 0})
    actual[10] = 5.0
    with pytest.raises(AssertionError, match="out of tolerance"):
        _check("out", actual, expected, {"metric": "ULP", "value": 0})
