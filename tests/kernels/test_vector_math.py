"""The vector kernels at every ISA level.

* The transcendental ops (the AVX levels run vector_math.h, the ref level the C library) against
  float64 NumPy over the whole float range: float32 sampled at every exponent with random mantissas,
  float16 exhaustively. Errors are measured with WPT's metrics and must stay within WPT's
  tolerances; NaN and +-Infinity must match exactly.
* Every other element-wise, unary, cast, clamp and data-movement kernel, on inputs long enough for
  full vectors and tails and with every broadcast pattern, must give the ref level's results bit for
  bit (NaN payloads aside).

The level is fixed per process, so each level runs this file as a script in a subprocess.
"""
import argparse
import functools
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

LEVELS = ["ref", "avx2", "avx512"]

_erf = np.vectorize(math.erf, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def _sigmoid(x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


# op -> (float64 reference, metric, float32 tolerance, float16 tolerance): WPT's values
OPS = {
    "exp": (np.exp, "ULP", 32, 1),
    "log": (np.log, "ATOL", 1 / 1024, 1 / 1024),
    "tanh": (np.tanh, "ULP", 16, 16),
    "sigmoid": (_sigmoid, "ULP", 34, 10),
    "erf": (_erf, "ATOL", 1 / 1024, 1 / 512),
    "gelu": (lambda x: 0.5 * x * _erfc(-x / math.sqrt(2)), "ULP", 18, 18),
    "sin": (np.sin, "ATOL", 1 / 1024, 1 / 512),
    "cos": (np.cos, "ATOL", 1 / 1024, 1 / 512),
    "tan": (np.tan, "ATOL", 1 / 1024, 1 / 512),
    "softplus": (lambda x: np.logaddexp(0, x), "ULP", 18, 18),
    "elu": (lambda x: np.where(x > 0, x, np.expm1(x)), "ULP", 18, 18),
}
# Where |tan| >= 2^12 an absolute tolerance of 1/1024 asks for the correctly rounded float32 (its
# ulp is 1/2048 there): the poles are held to a relative 4 ulp instead.
TAN_POLE = 2.0 ** 12
TAN_POLE_ULP = 4
# float16 results are float32 results rounded once more, so near a float16 rounding boundary they may
# land on the other neighbour of the exact value: where the float16 spacing exceeds an absolute
# tolerance (|log x| >= 2, say), that faithful rounding passes too.


def float32_sample(per_exponent=256, seed=0):
    """Every sign and exponent (denormals included) with random mantissas, plus the specials."""
    rng = np.random.default_rng(seed)
    exponents = np.repeat(np.arange(255, dtype=np.uint32), per_exponent)
    bits = (exponents << 23) | rng.integers(0, 1 << 23, exponents.size, dtype=np.uint32)
    bits = np.concatenate([bits, bits | np.uint32(0x80000000)])
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 3.4028235e38, -3.4028235e38],
                        dtype=np.float32)
    return np.concatenate([bits.view(np.float32), specials])


def float16_sample():
    return np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)


def _ordered_bits(x, dtype):
    """WPT's ULP coordinates: the magnitude's bits, negated for negative values."""
    if dtype == "float16":
        return x.view(np.uint16).astype(np.int64)  # WPT compares float16 raw bits
    magnitude = np.abs(x).view(np.uint32).astype(np.int64)
    return np.where(np.signbit(x), -magnitude, magnitude)


def distances(actual, expected64, metric, dtype):
    """Per-element WPT distance of `actual` (of `dtype`) to the float64 expectation; -1 where they
    are equal (JS ===)."""
    expected = expected64.astype(dtype)
    if metric == "ATOL":
        d = np.abs(actual.astype(np.float64) - expected64)
    else:
        d = np.abs(_ordered_bits(actual, dtype) - _ordered_bits(expected, dtype)).astype(np.float64)
        if dtype == "float16":
            d[(actual == 0) & (expected == 0)] = 0
    equal = actual.astype(np.float64) == expected.astype(np.float64)
    return np.where(equal, -1.0, d)


def measure():
    """{op: {dtype: {"max": worst distance, "x": its input, "specials": mismatching NaN/Inf count}}}
    at this process's ISA level."""
    import webnn

    context = webnn.ml.create_context()
    samples = {"float32": float32_sample(), "float16": float16_sample()}
    results = {}
    for op, (reference, metric, _, _) in OPS.items():
        results[op] = {}
        for dtype, x in samples.items():
            builder = webnn.MLGraphBuilder(context)
            operand = builder.input("x", {"dataType": dtype, "shape": [x.size]})
            actual = builder.build({"y": getattr(builder, op)(operand)}).compute({"x": x})["y"]
            expected = reference(x.astype(np.float64))
            nonfinite = ~np.isfinite(expected.astype(dtype))
            specials = int(np.sum(nonfinite & ~((actual == expected.astype(dtype)) |
                                               (np.isnan(actual) & np.isnan(expected)))))
            d = distances(actual, expected, metric, dtype)
            d[nonfinite] = -1
            if metric == "ATOL" and dtype == "float16":
                spacing = np.spacing(np.abs(expected.astype(dtype))).astype(np.float64)
                d[np.abs(actual.astype(np.float64) - expected) < spacing] = -1
            if op == "tan":  # the poles: relative error instead (see TAN_POLE)
                pole = np.abs(expected) >= TAN_POLE
                ulp = distances(actual, expected, "ULP", dtype)
                d[pole] = np.where(ulp[pole] <= TAN_POLE_ULP, -1, ulp[pole])
            worst = int(np.argmax(d))
            results[op][dtype] = {"max": max(0.0, float(d[worst])), "x": float(x[worst]), "specials": specials}
    return results


# ---- the other kernels: bit-exact against the ref level

TYPES = ["float32", "float16", "int32", "uint32", "int64", "uint64", "int8", "uint8"]
BROADCASTS = [([37, 53], [53]), ([53], [37, 53]), ([37, 53], [37, 1]), ([37, 1], [37, 53]), ([37, 53], [37, 53]),
              ([5, 1, 19], [1, 7, 19]), ([], [40])]
BINARY = ["add", "sub", "mul", "div", "max", "min", "pow", "prelu", "equal", "notEqual", "greater",
          "greaterOrEqual", "lesser", "lesserOrEqual", "logicalAnd", "logicalOr", "logicalXor"]
UNARY = [("abs", {}), ("ceil", {}), ("floor", {}), ("neg", {}), ("reciprocal", {}), ("roundEven", {}),
         ("sign", {}), ("sqrt", {}), ("relu", {}), ("leakyRelu", {"alpha": 0.37}),
         ("linear", {"alpha": 0.3, "beta": -1.7}),
         ("hardSigmoid", {"alpha": 0.7, "beta": 0.1}), ("hardSwish", {}), ("softsign", {}), ("identity", {}),
         ("logicalNot", {}), ("isNaN", {}), ("isInfinite", {})]
TRANSPOSES = [([45, 70], [1, 0]), ([5, 33, 40], [0, 2, 1]), ([5, 33, 40], [2, 0, 1]), ([5, 33, 40], [1, 0, 2]),
              ([5, 33, 40, 3], [3, 1, 2, 0]), ([5, 33, 40, 3], [0, 3, 1, 2])]


def kernel_cases():
    """(name, build(builder, input) -> output, {input name: (dtype, shape)}) for every case."""
    cases = []
    for dtype in TYPES:
        for op in BINARY:
            for a, b in BROADCASTS:
                cases.append((f"{op} {dtype} {a} {b}", lambda g, x, op=op: getattr(g, op)(x("a"), x("b")),
                              {"a": (dtype, a), "b": (dtype, b)}))
        for op, options in UNARY:
            cases.append((f"{op} {dtype}", lambda g, x, op=op, o=options: getattr(g, op)(x("a"), **o),
                          {"a": (dtype, [3, 67])}))
        for c, v in (([37, 53], [53]), ([37, 1], [1, 53])):
            cases.append((f"where {dtype} {c} {v}", lambda g, x: g.where(x("c"), x("a"), x("b")),
                          {"c": ("uint8", c), "a": (dtype, c), "b": (dtype, v)}))
        low = 3 if dtype.startswith("u") else -3
        cases.append((f"clamp {dtype}", lambda g, x, low=low: g.clamp(x("a"), minValue=low, maxValue=5),
                      {"a": (dtype, [131])}))
        for to in TYPES:
            cases.append((f"cast {dtype} {to}", lambda g, x, to=to: g.cast(x("a"), to), {"a": (dtype, [131])}))
        for shape, permutation in TRANSPOSES:
            cases.append((f"transpose {dtype} {shape} {permutation}",
                          lambda g, x, p=permutation: g.transpose(x("a"), permutation=p), {"a": (dtype, shape)}))
        cases.append((f"expand {dtype}", lambda g, x: g.expand(x("a"), [37, 70]), {"a": (dtype, [37, 1])}))
        cases.append((f"pad {dtype}", lambda g, x: g.pad(x("a"), [2, 3], [4, 1], mode="reflection"),
                      {"a": (dtype, [9, 21])}))
    return cases


def kernel_input(dtype, shape, rng):
    """Random values, half of them from a few specials (so that operands often meet equal ones)."""
    size = int(np.prod(shape, dtype=np.int64))
    if dtype.startswith("float"):
        values = rng.uniform(-10, 10, size)
        specials = [np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.5, -2.5, 3.0, 1e-40, 7e4]
    else:
        info = np.iinfo(dtype)
        values = rng.integers(info.min, info.max, size, dtype=dtype, endpoint=True)
        specials = [info.min, info.max, 0, 1, 2, 3] + ([-1, -3] if info.min else [])
    pick = rng.random(size) < 0.5
    values[pick] = rng.choice(np.array(specials, dtype=values.dtype), int(pick.sum()))
    return values.astype(dtype).reshape(shape)


def run_kernel_cases(path):
    """Saves every case's output (or nothing where the op rejects the data type) to `path`."""
    import webnn

    context = webnn.ml.create_context()
    outputs = {}
    for i, (_, build, inputs) in enumerate(kernel_cases()):
        rng = np.random.default_rng(i)
        feeds = {k: kernel_input(dtype, shape, rng) for k, (dtype, shape) in inputs.items()}
        if "c" in feeds:
            feeds["c"] %= 3
        builder = webnn.MLGraphBuilder(context)
        operands = {k: builder.input(k, {"dataType": dtype, "shape": shape}) for k, (dtype, shape) in inputs.items()}
        try:
            graph = builder.build({"y": build(builder, operands.__getitem__)})
        except TypeError:
            continue
        outputs[str(i)] = graph.compute(feeds)["y"]
    np.savez(path, **outputs)


@functools.lru_cache(maxsize=None)
def level_results(level, directory):
    """Runs this file at `level`: (transcendental errors, the kernel outputs' .npz path)."""
    path = os.path.join(directory, f"{level}.npz")
    env = dict(os.environ, WEBNN_CPU_ISA=level)
    child = subprocess.run([sys.executable, __file__, path], env=env, capture_output=True, text=True, timeout=300)
    assert child.returncode == 0, child.stdout + child.stderr
    return json.loads(child.stdout), path


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    import webnn

    directory = str(tmp_path_factory.mktemp("vector_kernels"))

    def get(level):
        if LEVELS.index(level) > LEVELS.index(webnn._core.detected_isa()):
            pytest.skip(f"this CPU does not support {level}")
        return level_results(level, directory)

    return get


@pytest.mark.parametrize("level", LEVELS)
def test_transcendentals_within_wpt_tolerances(results, level):
    errors, _ = results(level)
    failures = []
    for op, (_, metric, f32_tolerance, f16_tolerance) in OPS.items():
        for dtype, tolerance in (("float32", f32_tolerance), ("float16", f16_tolerance)):
            r = errors[op][dtype]
            if r["specials"] or r["max"] > tolerance:
                failures.append(f"{op} {dtype}: {metric} {r['max']:.3g} > {tolerance:.3g} at x={r['x']!r}, "
                                f"{r['specials']} NaN/Infinity mismatches")
    assert not failures, f"[{level}] " + "; ".join(failures)


@pytest.mark.parametrize("level", ["avx2", "avx512"])
def test_kernels_match_ref_level(results, level):
    expected, actual = np.load(results("ref")[1]), np.load(results(level)[1])
    assert sorted(expected.files) == sorted(actual.files)
    names = [name for name, _, _ in kernel_cases()]
    mismatches = []
    for key in expected.files:
        e, a = expected[key], actual[key]
        same = e.dtype == a.dtype and e.shape == a.shape
        if same and e.dtype.kind == "f":
            nan = np.isnan(e)
            same = np.array_equal(nan, np.isnan(a)) and np.array_equal(e[~nan].view(np.uint8), a[~nan].view(np.uint8))
        elif same:
            same = np.array_equal(e, a)
        if not same:
            mismatches.append(names[int(key)])
    assert not mismatches, f"[{level}] differs from ref: {mismatches[:10]}"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Runs the kernel cases at the level WEBNN_CPU_ISA forces.")
    parser.add_argument("output", help="the .npz file for the outputs")
    run_kernel_cases(parser.parse_args().output)
    with np.errstate(all="ignore"):
        print(json.dumps(measure()))
