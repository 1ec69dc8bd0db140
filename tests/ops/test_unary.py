"""Element-wise unary ops (abs, ceil, cos, erf, exp, floor, identity, log, neg, reciprocal,
roundEven, sign, sin, sqrt, tan) against float64 NumPy references, plus their validation."""
import math

import numpy as np
import pytest

import webnn
from conftest import run

ALL_TYPES = ["float32", "float16", "int32", "uint32", "int64", "uint64", "int8", "uint8"]
FLOATS = ["float32", "float16"]
SIGNED = ["float32", "float16", "int32", "int64", "int8"]
SHAPES = [[], [1], [2, 1, 3], [4, 1, 5], [1, 2, 1, 2, 1, 3]]

_erf = np.vectorize(math.erf, otypes=[np.float64])

# op -> (allowed dtypes, float64 reference, max error in units of the output's epsilon)
FLOAT_OPS = {
    "abs": (SIGNED, np.abs, 0),
    "ceil": (FLOATS, np.ceil, 0),
    "cos": (FLOATS, np.cos, 2),
    "erf": (FLOATS, _erf, 2),
    "exp": (FLOATS, np.exp, 2),
    "floor": (FLOATS, np.floor, 0),
    "log": (FLOATS, np.log, 2),
    "neg": (SIGNED, np.negative, 0),
    "reciprocal": (FLOATS, np.reciprocal, 1),
    "roundEven": (FLOATS, np.round, 0),  # numpy rounds half to even
    "sign": (SIGNED, np.sign, 0),
    "sin": (FLOATS, np.sin, 2),
    "sqrt": (FLOATS, np.sqrt, 1),
    "tan": (FLOATS, np.tan, 2),
}
INT_OPS = ["abs", "neg", "sign"]

SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.5, 1.0, -1.0]


def unary(builder, op, x, *args, **options):
    """Runs `op(input, *args, **options)` on `x` fed as a graph input."""
    operand = builder.input("x", {"dataType": x.dtype.name, "shape": list(x.shape)})
    return run(builder, {"y": getattr(builder, op)(operand, *args, **options)}, {"x": x})["y"]


def float_sample(dtype, shape, low=-8.0, high=8.0, seed=0):
    rng = np.random.default_rng(seed)
    size = int(np.prod(shape, dtype=np.int64))
    values = rng.uniform(low, high, size)
    values[: min(size, len(SPECIALS))] = SPECIALS[: min(size, len(SPECIALS))]
    return values.astype(dtype).reshape(shape)


def assert_close(actual, expected, dtype, ulps):
    """`actual` (of `dtype`) within `ulps` epsilons (relative, plus a denormal floor) of the float64
    `expected`; NaN and infinities exactly."""
    assert actual.dtype == np.dtype(dtype)
    assert actual.shape == expected.shape
    a = actual.astype(np.float64)
    info = np.finfo(dtype)
    finite = np.isfinite(expected)
    np.testing.assert_array_equal(a[~finite], expected[~finite])
    tolerance = (ulps + 0.5) * float(info.eps) * np.abs(expected[finite]) + float(info.tiny)
    assert np.all(np.abs(a[finite] - expected[finite]) <= tolerance), (a[finite], expected[finite])


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", list(FLOAT_OPS))
def test_float_ops(builder, op, dtype, shape):
    x = float_sample(dtype, shape, seed=len(shape))
    if op in ("log", "sqrt"):
        x = np.abs(x) if len(shape) % 2 else x  # NaN for negative inputs is covered too
    _, reference, ulps = FLOAT_OPS[op]
    with np.errstate(all="ignore"):
        expected = reference(x.astype(np.float64))
    actual = unary(builder, op, x)
    if ulps == 0:
        np.testing.assert_array_equal(actual, expected.astype(dtype))
    else:
        assert_close(actual, expected, dtype, ulps)


def test_round_even_ties(builder):
    x = np.array([-3.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 4.5, 1e8 + 0.0, 8388609.0], dtype=np.float32)
    np.testing.assert_array_equal(unary(builder, "roundEven", x), [-4, -2, -2, -0, 0, 2, 2, 4, 4, 1e8, 8388609])


def test_sign_specials(builder):
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45], dtype=np.float32)
    out = unary(builder, "sign", x)
    np.testing.assert_array_equal(out, [np.nan, 1, -1, 0, 0, 1, -1])
    assert np.signbit(out[4])  # zeros keep their sign


@pytest.mark.parametrize("op", ["sin", "cos", "tan", "exp"])
def test_large_arguments(builder, op):
    # Accurate range reduction for the trigonometric functions; exp overflows to Infinity and
    # underflows to 0.
    x = np.array([1e4, -1e4, 3e5, 100.0, -120.0], dtype=np.float32)
    with np.errstate(over="ignore"):
        expected = FLOAT_OPS[op][1](x.astype(np.float64))
        if op == "exp":
            expected = expected.astype(np.float32).astype(np.float64)
    assert_close(unary(builder, op, x), expected, "float32", 2)


@pytest.mark.parametrize("dtype", ["int32", "int64", "int8"])
@pytest.mark.parametrize("op", INT_OPS)
def test_integer_ops(builder, op, dtype):
    info = np.iinfo(dtype)
    x = np.array([info.min, info.min + 1, -7, -1, 0, 1, 7, info.max], dtype=dtype).reshape(2, 1, 4)
    expected = {"abs": np.abs, "neg": np.negative, "sign": np.sign}[op](x)  # numpy wraps like the spec's ints
    if op != "sign":
        assert expected.flat[0] == info.min  # abs/neg of the minimum wrap to itself
    out = unary(builder, op, x)
    assert out.dtype == x.dtype
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("shape", [[], [1, 1], [3, 1, 2]])
@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_identity(builder, dtype, shape):
    size = int(np.prod(shape, dtype=np.int64))
    if dtype.startswith("float"):
        x = float_sample(dtype, shape)
    else:
        info = np.iinfo(dtype)
        x = np.resize(np.array([info.min, info.max, 0, 1, 5], dtype=dtype), size).reshape(shape)
    out = unary(builder, "identity", x)
    bits = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[x.dtype.itemsize]
    np.testing.assert_array_equal(out.view(bits), x.view(bits))


def test_identity_exposes_inputs_and_constants(builder):
    x = builder.input("x", {"dataType": "int64", "shape": [2]})
    c = builder.constant({"dataType": "uint64", "shape": [2]}, np.array([2**64 - 1, 3], np.uint64))
    out = run(builder, {"a": builder.identity(x), "b": builder.identity(c)},
              {"x": np.array([-2**63, 2**63 - 1], np.int64)})
    np.testing.assert_array_equal(out["a"], np.array([-2**63, 2**63 - 1], np.int64))
    np.testing.assert_array_equal(out["b"], np.array([2**64 - 1, 3], np.uint64))


def test_chained_ops_large(builder):
    # Crosses the parallel grain; each op reads the previous op's output.
    x = np.linspace(0.5, 4, 100003, dtype=np.float32)
    operand = builder.input("x", {"dataType": "float32", "shape": [x.size]})
    y = builder.sqrt(builder.exp(builder.neg(builder.log(operand))))
    out = run(builder, {"y": y}, {"x": x})["y"]
    assert_close(out, np.sqrt(1.0 / x.astype(np.float64)), "float32", 6)


# ---------------------------------------------------------------- validation
ALLOWED = dict({op: types for op, (types, _, _) in FLOAT_OPS.items()}, identity=ALL_TYPES)


@pytest.mark.parametrize("op", list(ALLOWED))
def test_support_limits(context, op):
    limits = context.op_support_limits()[op]
    assert set(limits) == {"input", "output"}
    for member in ("input", "output"):
        assert sorted(limits[member]["dataTypes"]) == sorted(ALLOWED[op])
        assert limits[member]["rankRange"]["min"] == 0


@pytest.mark.parametrize("op", list(ALLOWED))
def test_unsupported_types(builder, op):
    for dtype in ALL_TYPES:
        x = builder.input(f"x_{dtype}", {"dataType": dtype, "shape": [2]})
        if dtype in ALLOWED[op]:
            y = getattr(builder, op)(x, label="ok")
            assert y.data_type == dtype and y.shape == [2]
        else:
            with pytest.raises(TypeError, match=r"\[bad\] " + op + ": input has unsupported data type"):
                getattr(builder, op)(x, label="bad")


@pytest.mark.parametrize("op", ["abs", "exp", "identity"])
def test_ranks_keep_shape(builder, op):
    for rank in range(0, 9):
        shape = [1 + (i % 3) for i in range(rank)]
        y = getattr(builder, op)(builder.input(f"x{rank}", {"dataType": "float32", "shape": shape}))
        assert y.shape == shape and y.data_type == "float32"


def test_operand_from_another_builder(context, builder):
    other = webnn.MLGraphBuilder(context).input("x", {"dataType": "float32", "shape": [2]})
    for op in ALLOWED:
        with pytest.raises(TypeError, match=r"\[bad\]"):
            getattr(builder, op)(other, label="bad")


def test_camel_case_and_options(builder):
    x = builder.input("x", {"dataType": "float32", "shape": [2]})
    assert builder.roundEven is not None and builder.round_even(x, {"label": "r"}).shape == [2]
    with pytest.raises(TypeError, match="unknown option"):
        builder.abs(x, {"alpha": 1.0})
