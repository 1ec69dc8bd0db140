"""Element-wise binary ops (add, sub, mul, div, max, min, pow) and prelu against float64 / exact
integer NumPy references: every data type, broadcasting, rank 0, size-1 dims, NaN/Inf, integer
wrap-around and division by zero, plus their validation."""
import numpy as np
import pytest

import webnn
from conftest import run

ALL_TYPES = ["float32", "float16", "int32", "uint32", "int64", "uint64", "int8", "uint8"]
PRELU_TYPES = ["float32", "float16", "int64", "int32", "int8"]
# (a shape, b shape, output shape)
BROADCASTS = [
    ([], [], []),
    ([], [3], [3]),
    ([2, 3], [], [2, 3]),
    ([1, 1], [1], [1, 1]),
    ([2, 3], [3], [2, 3]),
    ([2, 1, 4], [3, 1], [2, 3, 4]),
    ([4, 1, 5], [1, 3, 1], [4, 3, 5]),
    ([1, 3, 1, 2, 1], [2, 1, 4, 2, 3], [2, 3, 4, 2, 3]),
]
FLOAT_SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 65504.0, 1e-6]
BAD = r"\[bad\]"


def sample(dtype, shape, seed=0):
    """Values of `dtype` with specials first: NaN/±Inf/±0 for floats, the extremes for integers."""
    dtype = np.dtype(dtype)
    rng = np.random.default_rng(seed)
    size = int(np.prod(shape, dtype=np.int64))
    if dtype.kind == "f":
        values = rng.uniform(-50, 50, size).astype(dtype)
        specials = np.array(FLOAT_SPECIALS, dtype=dtype)
    else:
        info = np.iinfo(dtype)
        values = rng.integers(info.min, info.max, size, dtype=dtype, endpoint=True)
        specials = np.array([v for v in (info.min, info.max, 0, 1, -1, 7) if info.min <= v <= info.max], dtype=dtype)
    specials = np.roll(specials, seed)
    n = min(size, len(specials))
    values[:n] = specials[:n]
    return values.reshape(shape)


def wrap(values, dtype):
    """Python integers reduced modulo 2^bits into `dtype` (two's complement)."""
    info = np.iinfo(dtype)
    span = 1 << info.bits
    return np.array([(int(v) - info.min) % span + info.min for v in values], dtype=dtype)


def int_div(a, b):
    if b == 0:
        return 0  # the implementation's definition
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def int_pow(a, b, bits):
    if b < 0:  # trunc(1 / a^-b)
        return 1 if a == 1 else (-1 if b % 2 else 1) if a == -1 else 0
    return pow(a, b, 1 << bits)


INT_REFERENCES = {
    "add": lambda a, b, bits: a + b,
    "sub": lambda a, b, bits: a - b,
    "mul": lambda a, b, bits: a * b,
    "div": lambda a, b, bits: int_div(a, b),
    "max": lambda a, b, bits: max(a, b),
    "min": lambda a, b, bits: min(a, b),
    "pow": int_pow,
    "prelu": lambda x, slope, bits: slope * x if x < 0 else x,
}


def float_max(a, b):
    """IEEE maximum: NaN propagates, -0 < +0."""
    return np.where(np.isnan(a) | np.isnan(b), np.nan, np.where(a == b, np.where(np.signbit(a), b, a), np.maximum(a, b)))


def float_min(a, b):
    return np.where(np.isnan(a) | np.isnan(b), np.nan, np.where(a == b, np.where(np.signbit(a), a, b), np.minimum(a, b)))


FLOAT_REFERENCES = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "max": float_max,
    "min": float_min,
    "pow": np.power,
    "prelu": lambda x, slope: np.where(x < 0, slope * x, x),
}
# Allowed error in units in the last place of the result; the others are exact (computed in
# float32 and rounded once).
ULPS = {"pow": 2}


def reference(op, a, b, out_shape):
    a64, b64 = np.broadcast_to(a, out_shape), np.broadcast_to(b, out_shape)
    if a.dtype.kind == "f":
        with np.errstate(all="ignore"):
            return FLOAT_REFERENCES[op](a64.astype(np.float64), b64.astype(np.float64)).astype(a.dtype)
    bits = a.dtype.itemsize * 8
    values = [INT_REFERENCES[op](int(x), int(y), bits) for x, y in zip(a64.flat, b64.flat)]
    return wrap(values, a.dtype).reshape(out_shape)


def assert_matches(actual, expected, ulps=0):
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    if expected.dtype.kind != "f":
        np.testing.assert_array_equal(actual, expected)
        return
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    same = (a == e) | (np.isnan(a) & np.isnan(e))
    with np.errstate(all="ignore"):
        close = np.abs(a - e) <= ulps * np.spacing(np.abs(expected)).astype(np.float64)
    bad = ~(same | close)
    assert not bad.any(), f"{int(bad.sum())} mismatches, first: actual {a[bad][0]!r} expected {e[bad][0]!r}"


def binary(builder, op, a, b, **options):
    x = builder.input("a", {"dataType": a.dtype.name, "shape": list(a.shape)})
    y = builder.input("b", {"dataType": b.dtype.name, "shape": list(b.shape)})
    return run(builder, {"out": getattr(builder, op)(x, y, **options)}, {"a": a, "b": b})["out"]


def operands(op, dtype, a_shape, b_shape):
    a, b = sample(dtype, a_shape, seed=0), sample(dtype, b_shape, seed=3)
    if op == "pow" and np.dtype(dtype).kind in "iu":  # small exponents keep results meaningful
        b = (np.arange(b.size) % 9 - (2 if np.dtype(dtype).kind == "i" else 0)).astype(dtype).reshape(b_shape)
        if b.size > 2:
            b.flat[-1] = 63  # wraps
    return a, b


# ---------------------------------------------------------------- numerics
@pytest.mark.parametrize("dtype", ALL_TYPES)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "max", "min", "pow"])
def test_binary_every_dtype(builder, op, dtype):
    a, b = operands(op, dtype, [3, 4], [3, 4])
    out = binary(builder, op, a, b)
    assert_matches(out, reference(op, a, b, [3, 4]), ULPS.get(op, 0))


@pytest.mark.parametrize("a_shape,b_shape,out_shape", BROADCASTS)
@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "uint8"])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "max", "min", "pow"])
def test_binary_broadcasting(builder, op, dtype, a_shape, b_shape, out_shape):
    a, b = operands(op, dtype, a_shape, b_shape)
    out = binary(builder, op, a, b)
    assert list(out.shape) == out_shape
    assert_matches(out, reference(op, a, b, out_shape), ULPS.get(op, 0))


@pytest.mark.parametrize("a_shape,b_shape", [
    ([70001], [70001]),        # one contiguous row split into parallel blocks
    ([3, 40000], [1, 40000]),  # rows longer than a block, b repeated
    ([40000, 3], [3]),         # many short rows
    ([2, 1, 33000], [5, 1]),   # b constant along long rows
])
def test_binary_large_blocks(builder, a_shape, b_shape):
    a, b = sample("float32", a_shape, 1), sample("float32", b_shape, 2)
    out_shape = list(np.broadcast_shapes(tuple(a_shape), tuple(b_shape)))
    for op in ("sub", "div"):
        assert_matches(binary(webnn.MLGraphBuilder(builder.context), op, a, b), reference(op, a, b, out_shape))
        assert_matches(binary(webnn.MLGraphBuilder(builder.context), op, b, a), reference(op, b, a, out_shape))


def test_integer_edge_cases(builder):
    a = np.array([-128, -128, 127, 5, -7, 7, 0, -128], dtype=np.int8)
    b = np.array([-1, 0, 1, 0, 2, -2, 0, 2], dtype=np.int8)
    np.testing.assert_array_equal(binary(builder, "div", a, b), [-128, 0, 127, 0, -3, -3, 0, -64])
    b2 = webnn.MLGraphBuilder(builder.context)
    np.testing.assert_array_equal(binary(b2, "add", a, np.full(8, 127, np.int8)), wrap([int(v) + 127 for v in a], np.int8))
    b3 = webnn.MLGraphBuilder(builder.context)
    base = np.array([2, -1, -1, 0, 3, 1, -2], dtype=np.int64)
    exponent = np.array([-1, -3, -2, -1, 39, -5, 63], dtype=np.int64)
    expected = np.array([0, -1, 1, 0, 3**39, 1, -(2**63)], dtype=np.int64)
    np.testing.assert_array_equal(binary(b3, "pow", base, exponent), expected)
    b4 = webnn.MLGraphBuilder(builder.context)
    u = np.array([0, 2**64 - 1, 7], dtype=np.uint64)
    expected = np.array([2**64 - 1, 2**64 - 2, 6], dtype=np.uint64)
    np.testing.assert_array_equal(binary(b4, "sub", u, np.array([1], np.uint64)), expected)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_max_min_signed_zero_and_nan(builder, dtype):
    a = np.array([-0.0, 0.0, np.nan, 1.0, -np.inf], dtype=dtype)
    b = np.array([0.0, -0.0, 1.0, np.nan, np.inf], dtype=dtype)
    hi = binary(builder, "max", a, b)
    lo = binary(webnn.MLGraphBuilder(builder.context), "min", a, b)
    assert not np.signbit(hi[:2]).any() and np.signbit(lo[:2]).all()
    assert np.isnan(hi[2:4]).all() and np.isnan(lo[2:4]).all()
    assert hi[4] == np.inf and lo[4] == -np.inf


@pytest.mark.parametrize("dtype", PRELU_TYPES)
@pytest.mark.parametrize("x_shape,slope_shape,out_shape", [
    ([], [], []),
    ([2, 3], [3], [2, 3]),
    ([3], [2, 3], [2, 3]),          # the slope may widen the output
    ([1, 4, 1], [3, 1, 1], [3, 4, 1]),
    ([2, 3, 4, 5], [1], [2, 3, 4, 5]),
])
def test_prelu(builder, dtype, x_shape, slope_shape, out_shape):
    x, slope = sample(dtype, x_shape, 0), sample(dtype, slope_shape, 5)
    xi = builder.input("x", {"dataType": dtype, "shape": x_shape})
    si = builder.input("slope", {"dataType": dtype, "shape": slope_shape})
    out = run(builder, {"y": builder.prelu(xi, si)}, {"x": x, "slope": slope})["y"]
    assert list(out.shape) == out_shape
    assert_matches(out, reference("prelu", x, slope, out_shape))


def test_constant_operands(builder):
    a = builder.constant({"dataType": "float32", "shape": [2, 2]}, np.array([[1, 2], [3, 4]], np.float32))
    b = builder.constant("float32", 10.0)
    out = run(builder, {"y": builder.sub(b, a, label="s")})["y"]
    np.testing.assert_array_equal(out, [[9, 8], [7, 6]])


# ---------------------------------------------------------------- validation
def declare(builder, dtype, shape, name):
    return builder.input(name, {"dataType": dtype, "shape": shape})


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "max", "min", "pow", "prelu"])
def test_dtype_mismatch(builder, op):
    a = declare(builder, "float32", [2], "a")
    b = declare(builder, "float16", [2], "b")
    with pytest.raises(TypeError, match=BAD):
        getattr(builder, op)(a, b, label="bad")


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "max", "min", "pow", "prelu"])
@pytest.mark.parametrize("a_shape,b_shape", [([2], [3]), ([2, 3], [3, 2]), ([4, 2, 3], [3, 1]), ([3, 1], [1, 2, 4])])
def test_not_broadcastable(builder, op, a_shape, b_shape):
    a = declare(builder, "float32", a_shape, "a")
    b = declare(builder, "float32", b_shape, "b")
    with pytest.raises(TypeError, match=BAD):
        getattr(builder, op)(a, b, label="bad")
    with pytest.raises(TypeError, match=BAD):
        getattr(builder, op)(b, a, label="bad")


@pytest.mark.parametrize("op", ["add", "pow", "prelu"])
def test_broadcast_too_large(builder, op):
    a = declare(builder, "float32", [65536, 1], "a")
    b = declare(builder, "float32", [1, 65536], "b")
    with pytest.raises(TypeError, match=BAD):
        getattr(builder, op)(a, b, label="bad")


@pytest.mark.parametrize("op", ["sub", "max", "prelu"])
def test_operand_from_another_builder(context, builder, op):
    other = webnn.MLGraphBuilder(context)
    mine = declare(builder, "float32", [2], "a")
    theirs = declare(other, "float32", [2], "a")
    with pytest.raises(TypeError):
        getattr(builder, op)(mine, theirs, label="bad")
    with pytest.raises(TypeError):
        getattr(builder, op)(theirs, mine, label="bad")


@pytest.mark.parametrize("dtype", ["uint8", "uint32", "uint64"])
def test_prelu_unsupported_dtype(builder, dtype):
    x = declare(builder, dtype, [2], "x")
    slope = declare(builder, dtype, [2], "s")
    with pytest.raises(TypeError, match=BAD):
        builder.prelu(x, slope, label="bad")


def test_output_descriptors(builder):
    a = declare(builder, "int64", [2, 1, 3], "a")
    b = declare(builder, "int64", [4, 1], "b")
    for op in ("add", "sub", "mul", "div", "max", "min", "pow", "prelu"):
        out = getattr(builder, op)(a, b)
        assert out.data_type == "int64" and list(out.shape) == [2, 4, 3]
