"""Activations (elu, gelu, hardSigmoid, hardSwish, leakyRelu, linear, relu, sigmoid, softplus,
softsign, tanh) against float64 NumPy references, plus their options and validation."""
import math

import numpy as np
import pytest

import webnn
from conftest import run

ALL_TYPES = ["float32", "float16", "int32", "uint32", "int64", "uint64", "int8", "uint8"]
FLOATS = ["float32", "float16"]
SHAPES = [[], [1, 1], [3, 1, 5], [2, 1, 2, 1, 3]]
SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, -3.0, 3.0, 1e-3, -1e-3, 20.0, -20.0, 100.0, -100.0]

_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def _gelu(x, p):
    return 0.5 * x * _erfc(-x / math.sqrt(2))


def _hard_swish(x, p):
    return np.where(x <= -3, 0.0, np.where(x >= 3, x, x * (x + 3) / 6))


def _softsign(x, p):
    return np.where(np.isinf(x), np.sign(x), x / (1 + np.abs(x)))


# op -> (float64 reference(x, options), default options, allowed error in epsilons of the result)
ACTIVATIONS = {
    "elu": (lambda x, p: np.where(x > 0, x, p["alpha"] * np.expm1(x)), {"alpha": 1.0}, 2),
    "gelu": (_gelu, {}, 2),
    "hardSigmoid": (lambda x, p: np.clip(p["alpha"] * x + p["beta"], 0, 1), {"alpha": 0.2, "beta": 0.5}, 2),
    "hardSwish": (_hard_swish, {}, 3),
    "leakyRelu": (lambda x, p: np.where(x >= 0, x, p["alpha"] * x), {"alpha": 0.01}, 1),
    "linear": (lambda x, p: p["alpha"] * x + p["beta"], {"alpha": 1.0, "beta": 0.0}, 2),
    "relu": (lambda x, p: np.where(np.isnan(x), x, np.maximum(x, 0)), {}, 0),
    "sigmoid": (lambda x, p: 1 / (1 + np.exp(-x)), {}, 3),
    "softplus": (lambda x, p: np.logaddexp(0, x), {}, 3),
    "softsign": (_softsign, {}, 2),
    "tanh": (lambda x, p: np.tanh(x), {}, 2),
}
OPTIONS = {  # non-default options, per op
    "elu": [{"alpha": 0.5}, {"alpha": 2.75}],
    "hardSigmoid": [{"alpha": 0.3, "beta": 0.1}, {"alpha": -1.5, "beta": 0.0}],
    "leakyRelu": [{"alpha": 0.2}, {"alpha": -0.5}],
    "linear": [{"alpha": -2.5, "beta": 0.75}, {"alpha": 0.1}, {"beta": -3.0}],
}


def unary(builder, op, x, **options):
    operand = builder.input("x", {"dataType": x.dtype.name, "shape": list(x.shape)})
    return run(builder, {"y": getattr(builder, op)(operand, **options)}, {"x": x})["y"]


def float_sample(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    size = int(np.prod(shape, dtype=np.int64))
    values = rng.uniform(-6, 6, size)
    values[: min(size, len(SPECIALS))] = SPECIALS[: min(size, len(SPECIALS))]
    return values.astype(dtype).reshape(shape)


def check(builder, op, dtype, shape, options):
    x = float_sample(dtype, shape, seed=len(shape))
    reference, defaults, ulps = ACTIVATIONS[op]
    # CR-scalars: alpha and beta are cast to the input's data type.
    params = {k: float(np.array(v, dtype=dtype)) for k, v in dict(defaults, **options).items()}
    x64 = x.astype(np.float64)
    with np.errstate(all="ignore"):
        expected = reference(x64, params)
    actual = unary(builder, op, x, **options)
    assert actual.dtype == np.dtype(dtype) and actual.shape == x.shape
    a = actual.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(a), np.isnan(expected))
    finite = np.isfinite(expected)
    np.testing.assert_array_equal(a[~finite], expected[~finite])
    # Relative to the result, or to the terms of alpha * x + beta where they cancel.
    info = np.finfo(dtype)
    scale = np.abs(expected)
    if op in ("linear", "hardSigmoid"):
        scale = np.abs(params["alpha"] * x64) + abs(params["beta"])
    tolerance = (ulps + 0.5) * float(info.eps) * scale[finite] + float(info.tiny)
    assert np.all(np.abs(a[finite] - expected[finite]) <= tolerance), (x[finite], a[finite], expected[finite])


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", list(ACTIVATIONS))
def test_activation_defaults(builder, op, dtype, shape):
    check(builder, op, dtype, shape, {})


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op,options", [(op, o) for op, opts in OPTIONS.items() for o in opts])
def test_activation_options(builder, op, options, dtype):
    check(builder, op, dtype, [4, 5], options)


def test_alpha_is_cast_to_float16(builder):
    # alpha = 1 + 3 * 2^-12 rounds to 1 + 2^-10 in float16: 1000 * that = 1000.9765625 -> 1001,
    # where a float32 alpha would give 1000.73 -> 1000.5.
    x = np.array([1000.0], dtype=np.float16)
    out = unary(builder, "linear", x, alpha=1 + 3 * 2**-12)
    np.testing.assert_array_equal(out, np.array([1001.0], dtype=np.float16))


@pytest.mark.parametrize("op", ["sigmoid", "softplus", "gelu", "softsign", "tanh", "elu", "hardSwish"])
def test_extreme_inputs(builder, op):
    # No overflow in the stable forms: sigmoid tails, softplus of large x, gelu of negative x.
    x = np.array([-90.0, -30.0, 30.0, 90.0, -10.0, 1e30, -1e30], dtype=np.float32)
    with np.errstate(all="ignore"):
        expected = ACTIVATIONS[op][0](x.astype(np.float64), {"alpha": 1.0}).astype(np.float32)
    np.testing.assert_allclose(unary(builder, op, x), expected, rtol=4e-7, atol=1e-44)


@pytest.mark.parametrize("dtype", ["int32", "int64", "int8"])
def test_relu_integers(builder, dtype):
    info = np.iinfo(dtype)
    x = np.array([info.min, -1, 0, 1, info.max, -5], dtype=dtype).reshape(2, 3)
    out = unary(builder, "relu", x)
    assert out.dtype == x.dtype
    np.testing.assert_array_equal(out, np.maximum(x, 0))


def test_large_tensor(builder):
    x = np.linspace(-10, 10, 70001, dtype=np.float32)
    out = unary(builder, "tanh", x)
    np.testing.assert_allclose(out, np.tanh(x.astype(np.float64)), rtol=3e-7, atol=1e-30)


# ---------------------------------------------------------------- validation
ALLOWED = {op: FLOATS for op in ACTIVATIONS}
ALLOWED["relu"] = ["float32", "float16", "int32", "int64", "int8"]


@pytest.mark.parametrize("op", list(ACTIVATIONS))
def test_support_limits(context, op):
    limits = context.op_support_limits()[op]
    assert set(limits) == {"input", "output"}
    for member in ("input", "output"):
        assert sorted(limits[member]["dataTypes"]) == sorted(ALLOWED[op])


def test_option_defaults_reported():
    infos = {i["name"]: i for i in webnn._core.op_infos()}
    for op, (_, defaults, _) in ACTIVATIONS.items():
        reported = {o["name"]: o["default"] for o in infos[op]["options"]}
        assert reported == defaults, op
        assert all(o["kind"] == "double" for o in infos[op]["options"])


@pytest.mark.parametrize("op", list(ACTIVATIONS))
def test_unsupported_types(builder, op):
    for dtype in ALL_TYPES:
        x = builder.input(f"x_{dtype}", {"dataType": dtype, "shape": [2, 1]})
        if dtype in ALLOWED[op]:
            y = getattr(builder, op)(x)
            assert y.data_type == dtype and y.shape == [2, 1]
        else:
            with pytest.raises(TypeError, match=r"\[bad\] " + op + ": input has unsupported data type"):
                getattr(builder, op)(x, label="bad")


@pytest.mark.parametrize("op,name", [("elu", "alpha"), ("hardSigmoid", "alpha"), ("hardSigmoid", "beta"),
                                     ("leakyRelu", "alpha"), ("linear", "alpha"), ("linear", "beta")])
def test_non_finite_or_non_number_option(builder, op, name):
    x = builder.input("x", {"dataType": "float32", "shape": [2]})
    for value in (math.nan, math.inf, -math.inf):
        with pytest.raises(TypeError, match=r"\[bad\] " + op + ": " + name + " must be finite"):
            getattr(builder, op)(x, {name: value, "label": "bad"})
    with pytest.raises(TypeError, match=r"\[bad\]"):
        getattr(builder, op)(x, {name: "1", "label": "bad"})
    # Beyond float32 but finite: a double option accepts it; the cast to float32 gives Infinity.
    getattr(builder, op)(x, {name: 1e300})


def test_unknown_option_and_other_builder(context, builder):
    x = builder.input("x", {"dataType": "float32", "shape": [2]})
    with pytest.raises(TypeError, match="unknown option"):
        builder.gelu(x, {"alpha": 1.0})
    other = webnn.MLGraphBuilder(context).input("x", {"dataType": "float32", "shape": [2]})
    for op in ACTIVATIONS:
        with pytest.raises(TypeError, match=r"\[bad\] " + op + ": input is an MLOperand from another"):
            getattr(builder, op)(other, label="bad")
