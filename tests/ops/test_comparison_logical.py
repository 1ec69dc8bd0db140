"""Ops with a uint8 0/1 result (equal, notEqual, greater, greaterOrEqual, lesser, lesserOrEqual,
logicalAnd, logicalOr, logicalXor, logicalNot, isNaN, isInfinite) and where, against NumPy
references: every allowed data type, broadcasting, rank 0, size-1 dims, NaN/Inf, plus validation."""
import numpy as np
import pytest

import webnn
from conftest import run

ALL_TYPES = ["float32", "float16", "int32", "uint32", "int64", "uint64", "int8", "uint8"]
BAD = r"\[bad\]"
COMPARISONS = {
    "equal": np.equal,
    "notEqual": np.not_equal,
    "greater": np.greater,
    "greaterOrEqual": np.greater_equal,
    "lesser": np.less,
    "lesserOrEqual": np.less_equal,
}
LOGICAL = {
    "logicalAnd": np.logical_and,
    "logicalOr": np.logical_or,
    "logicalXor": np.logical_xor,
}
BROADCASTS = [
    ([], [], []),
    ([], [4], [4]),
    ([1, 1], [1], [1, 1]),
    ([2, 3], [3], [2, 3]),
    ([2, 1, 4], [3, 1], [2, 3, 4]),
    ([1, 3, 1, 2, 1], [2, 1, 4, 2, 3], [2, 3, 4, 2, 3]),
]


def sample(dtype, shape, seed=0):
    """Small values of `dtype` (so that ties are frequent) with NaN/±Inf/±0 or the extremes first."""
    dtype = np.dtype(dtype)
    rng = np.random.default_rng(seed)
    size = int(np.prod(shape, dtype=np.int64))
    if dtype.kind == "f":
        values = rng.integers(-3, 4, size).astype(dtype)
        specials = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.5], dtype=dtype)
    else:
        info = np.iinfo(dtype)
        values = rng.integers(max(info.min, -3), 4, size).astype(dtype)
        specials = np.array([info.min, info.max, 0, info.max - 1], dtype=dtype)
    specials = np.roll(specials, seed)
    n = min(size, len(specials))
    values[:n] = specials[:n]
    return values.reshape(shape)


def declare(builder, dtype, shape, name):
    return builder.input(name, {"dataType": dtype, "shape": list(shape)})


def call(builder, op, *arrays):
    names = [f"x{i}" for i in range(len(arrays))]
    operands = [declare(builder, a.dtype.name, a.shape, n) for a, n in zip(arrays, names)]
    return run(builder, {"y": getattr(builder, op)(*operands)}, dict(zip(names, arrays)))["y"]


def assert_uint8(actual, expected):
    assert actual.dtype == np.uint8
    np.testing.assert_array_equal(actual, np.asarray(expected).astype(np.uint8))


# ---------------------------------------------------------------- comparisons
@pytest.mark.parametrize("dtype", ALL_TYPES)
@pytest.mark.parametrize("op", COMPARISONS)
def test_comparison_every_dtype(builder, op, dtype):
    a, b = sample(dtype, [4, 5], 0), sample(dtype, [4, 5], 1)
    a[0, :] = b[0, :]  # ties, NaN against NaN included
    assert_uint8(call(builder, op, a, b), COMPARISONS[op](a, b))


@pytest.mark.parametrize("a_shape,b_shape,out_shape", BROADCASTS)
@pytest.mark.parametrize("op", COMPARISONS)
def test_comparison_broadcasting(builder, op, a_shape, b_shape, out_shape):
    a, b = sample("float16", a_shape, 2), sample("float16", b_shape, 3)
    out = call(builder, op, a, b)
    assert list(out.shape) == out_shape
    assert_uint8(out, COMPARISONS[op](a, b))


@pytest.mark.parametrize("op", COMPARISONS)
def test_comparison_nan(builder, op):
    a = np.array([np.nan, np.nan, 1.0, -0.0], dtype=np.float32)
    b = np.array([np.nan, 1.0, np.nan, 0.0], dtype=np.float32)
    expected = {"notEqual": [1, 1, 1, 0], "greaterOrEqual": [0, 0, 0, 1], "lesserOrEqual": [0, 0, 0, 1],
                "equal": [0, 0, 0, 1]}.get(op, [0, 0, 0, 0])
    assert_uint8(call(builder, op, a, b), expected)


def test_comparison_64bit_exact(builder):
    a = np.array([2**63 - 1, -(2**63), 2**53 + 1], dtype=np.int64)
    b = np.array([2**63 - 2, -(2**63) + 1, 2**53], dtype=np.int64)
    assert_uint8(call(builder, "greater", a, b), [1, 0, 1])
    u = np.array([2**64 - 1, 2**63], dtype=np.uint64)
    assert_uint8(call(webnn.MLGraphBuilder(builder.context), "lesser", u, u - np.uint64(1)), [0, 0])


# ---------------------------------------------------------------- logical ops
@pytest.mark.parametrize("a_shape,b_shape,out_shape", BROADCASTS)
@pytest.mark.parametrize("op", LOGICAL)
def test_logical_binary(builder, op, a_shape, b_shape, out_shape):
    rng = np.random.default_rng(4)
    a = rng.choice(np.array([0, 1, 2, 255], np.uint8), a_shape).astype(np.uint8)
    b = rng.choice(np.array([0, 1, 128], np.uint8), b_shape).astype(np.uint8)
    out = call(builder, op, a, b)
    assert list(out.shape) == out_shape
    assert_uint8(out, LOGICAL[op](a, b))


@pytest.mark.parametrize("shape", [[], [1], [3, 1, 4]])
def test_logical_not(builder, shape):
    a = (np.arange(int(np.prod(shape))) * 37 % 5).astype(np.uint8).reshape(shape)
    assert_uint8(call(builder, "logicalNot", a), a == 0)


def test_logical_large(builder):
    a = (np.arange(100003) % 3).astype(np.uint8)
    b = (np.arange(100003) % 2).astype(np.uint8)
    assert_uint8(call(builder, "logicalXor", a, b), np.logical_xor(a, b))


# ---------------------------------------------------------------- isNaN / isInfinite
@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("shape", [[], [1, 1], [2, 3, 4]])
@pytest.mark.parametrize("op,reference", [("isNaN", np.isnan), ("isInfinite", np.isinf)])
def test_float_class(builder, op, reference, dtype, shape):
    a = sample(dtype, shape, 0)
    if a.size > 6:
        a.flat[6] = np.finfo(dtype).max
        a.flat[7] = np.finfo(dtype).smallest_subnormal
    out = call(builder, op, a)
    assert list(out.shape) == shape
    assert_uint8(out, reference(a))


# ---------------------------------------------------------------- where
@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_where_every_dtype(builder, dtype):
    condition = np.array([[0, 1, 2], [255, 0, 0]], np.uint8)
    t, f = sample(dtype, [2, 3], 0), sample(dtype, [2, 3], 3)
    out = call(builder, "where", condition, t, f)
    expected = np.where(condition != 0, t, f)
    bits = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[out.dtype.itemsize]
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out.view(bits), expected.view(bits))  # bit-exact: NaN, -0


@pytest.mark.parametrize("shapes,out_shape", [
    (([], [], []), []),
    (([3], [], []), [3]),
    (([], [2, 1], [3]), [2, 3]),
    (([1, 1], [1], [1, 1, 1]), [1, 1, 1]),
    (([2, 1, 4], [3, 1], [1]), [2, 3, 4]),
    (([4], [2, 1], [3, 1, 1]), [3, 2, 4]),
    (([5, 1, 2, 1, 1], [1, 3, 1, 4, 1], [2, 1, 6]), [5, 3, 2, 4, 6]),
])
def test_where_broadcasting(builder, shapes, out_shape):
    rng = np.random.default_rng(5)
    condition = rng.integers(0, 3, shapes[0]).astype(np.uint8)
    t, f = sample("float32", shapes[1], 1), sample("float32", shapes[2], 2)
    out = call(builder, "where", condition, t, f)
    assert list(out.shape) == out_shape
    np.testing.assert_array_equal(out, np.where(condition != 0, t, f))


def test_where_large(builder):
    condition = (np.arange(3 * 40000) % 3 == 0).astype(np.uint8).reshape(3, 40000)
    t = np.arange(40000, dtype=np.int64)
    f = np.array([-1, -2, -3], dtype=np.int64).reshape(3, 1)
    np.testing.assert_array_equal(call(builder, "where", condition, t, f), np.where(condition != 0, t, f))


# ---------------------------------------------------------------- validation
@pytest.mark.parametrize("op", list(COMPARISONS) + list(LOGICAL))
def test_binary_dtype_mismatch(builder, op):
    a = declare(builder, "uint8", [2], "a")
    b = declare(builder, "int8", [2], "b")
    with pytest.raises(TypeError, match=BAD):
        getattr(builder, op)(a, b, label="bad")


@pytest.mark.parametrize("op", list(COMPARISONS) + list(LOGICAL))
@pytest.mark.parametrize("a_shape,b_shape", [([2], [3]), ([2, 3], [3, 2]), ([3, 1], [1, 2, 4])])
def test_binary_not_broadcastable(builder, op, a_shape, b_shape):
    a = declare(builder, "uint8", a_shape, "a")
    b = declare(builder, "uint8", b_shape, "b")
    with pytest.raises(TypeError, match=BAD):
        getattr(builder, op)(a, b, label="bad")
    with pytest.raises(TypeError, match=BAD):
        getattr(builder, op)(b, a, label="bad")


@pytest.mark.parametrize("dtype", [t for t in ALL_TYPES if t != "uint8"])
@pytest.mark.parametrize("op", list(LOGICAL) + ["logicalNot"])
def test_logical_requires_uint8(builder, op, dtype):
    operands = [declare(builder, dtype, [2], n) for n in ("a", "b")[: 1 if op == "logicalNot" else 2]]
    with pytest.raises(TypeError, match=BAD):
        getattr(builder, op)(*operands, label="bad")


@pytest.mark.parametrize("dtype", [t for t in ALL_TYPES if not t.startswith("float")])
@pytest.mark.parametrize("op", ["isNaN", "isInfinite"])
def test_float_class_requires_float(builder, op, dtype):
    with pytest.raises(TypeError, match=BAD):
        getattr(builder, op)(declare(builder, dtype, [2], "a"), label="bad")


@pytest.mark.parametrize("dtype", [t for t in ALL_TYPES if t != "uint8"])
def test_where_condition_must_be_uint8(builder, dtype):
    condition = declare(builder, dtype, [2], "c")
    t = declare(builder, "float32", [2], "t")
    with pytest.raises(TypeError, match=BAD):
        builder.where(condition, t, t, label="bad")


def test_where_value_dtype_mismatch(builder):
    condition = declare(builder, "uint8", [2], "c")
    t = declare(builder, "float32", [2], "t")
    f = declare(builder, "float16", [2], "f")
    with pytest.raises(TypeError, match=BAD):
        builder.where(condition, t, f, label="bad")


@pytest.mark.parametrize("shapes", [([2], [3], [1]), ([1], [2], [3]), ([3], [2, 1], [2, 2]), ([2, 1, 1], [4, 1], [3, 5])])
def test_where_not_broadcastable(builder, shapes):
    c, t, f = (declare(builder, d, s, n) for d, s, n in zip(["uint8", "int8", "int8"], shapes, "ctf"))
    with pytest.raises(TypeError, match=BAD):
        builder.where(c, t, f, label="bad")


def test_where_too_large(builder):
    c = declare(builder, "uint8", [65536, 1], "c")
    t = declare(builder, "uint8", [1, 65536], "t")
    with pytest.raises(TypeError, match=BAD):
        builder.where(c, t, t, label="bad")


def test_operand_from_another_builder(context, builder):
    other = webnn.MLGraphBuilder(context)
    mine = declare(builder, "uint8", [2], "a")
    theirs = declare(other, "uint8", [2], "a")
    for op in ("equal", "logicalAnd"):
        with pytest.raises(TypeError):
            getattr(builder, op)(mine, theirs)
    for args in ((theirs, mine, mine), (mine, theirs, mine), (mine, mine, theirs)):
        with pytest.raises(TypeError):
            builder.where(*args)
    with pytest.raises(TypeError):
        builder.logical_not(theirs)


def test_output_descriptors(builder):
    a = declare(builder, "float16", [2, 1, 3], "a")
    b = declare(builder, "float16", [4, 1], "b")
    for op in COMPARISONS:
        out = getattr(builder, op)(a, b)
        assert out.data_type == "uint8" and list(out.shape) == [2, 4, 3]
    for op in ("isNaN", "isInfinite"):
        out = getattr(builder, op)(a)
        assert out.data_type == "uint8" and list(out.shape) == [2, 1, 3]
    c = declare(builder, "uint8", [5, 1, 1, 1], "c")
    out = builder.where(c, a, b)
    assert out.data_type == "float16" and list(out.shape) == [5, 2, 4, 3]
