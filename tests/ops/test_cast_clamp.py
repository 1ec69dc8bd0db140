"""cast (all 8x8 data-type pairs) and clamp (every data type, MLNumber bounds) against exact
Python/NumPy references, plus their validation."""
import math

import numpy as np
import pytest

import webnn
from conftest import run

ALL_TYPES = ["float32", "float16", "int32", "uint32", "int64", "uint64", "int8", "uint8"]


def unary(builder, op, x, *args, **options):
    operand = builder.input("x", {"dataType": x.dtype.name, "shape": list(x.shape)})
    return run(builder, {"y": getattr(builder, op)(operand, *args, **options)}, {"x": x})["y"]


def sample(dtype, shape=(4, 1, 7)):
    """Values of `dtype` that exercise every conversion: extremes, wrap points, halves, specials."""
    dtype = np.dtype(dtype)
    size = int(np.prod(shape))
    if dtype.kind == "f":
        big = 65504.0 if dtype == np.float16 else 3.0e38
        values = [np.nan, np.inf, -np.inf, -0.0, 0.0, 0.5, -0.5, 1.5, -1.99, 127.5, 128.0, -129.0, 255.9,
                  256.0, 300.7, -40000.0, 65504.0, big, -big, 4294967296.0, 2.0**31, -(2.0**31) - 512,
                  2.0**63, -(2.0**63), 2.0**64, 1e-7]
    else:
        info = np.iinfo(dtype)
        values = [info.min, info.max, 0, 1, -1, 127, 128, -128, -129, 255, 256, 2**15, 65504, 65520, 2**24 + 1,
                  2**31 - 1, 2**31, 2**32 - 1, 2**32 + 5, 2**53 + 1, 2**63 - 1, -(2**63)]
        values = [v for v in values if info.min <= v <= info.max]
    values = (values * (size // len(values) + 1))[:size]
    with np.errstate(over="ignore"):
        return np.array(values, dtype=np.float64 if dtype.kind == "f" else object).astype(dtype).reshape(shape)


def round_int_to_float(n, to):
    """n rounded once (to nearest, ties to even) to `to`'s significand, or +-Infinity past its max."""
    digits = np.finfo(to).nmant + 1
    shift = max(abs(n).bit_length() - digits, 0)
    q, r = divmod(abs(n), 2**shift)
    if 2 * r > 2**shift or (2 * r == 2**shift and q % 2):
        q += 1
    value = float(q * 2**shift)
    value = math.inf if value > float(np.finfo(to).max) else value
    return -value if n < 0 else value


def reference_cast(x, to):
    """The documented cast() rules, element by element with exact Python numbers."""
    to = np.dtype(to)
    if to.kind == "f":
        if x.dtype.kind == "f":
            with np.errstate(over="ignore"):
                return x.astype(np.float64).astype(to)
        return np.array([round_int_to_float(int(v), to) for v in x.flat]).astype(to).reshape(x.shape)
    info = np.iinfo(to)
    out = []
    for v in x.flat:
        if x.dtype.kind == "f":
            f = float(v)
            n = 0 if math.isnan(f) else info.min if f == -math.inf else info.max if f == math.inf else math.trunc(f)
            out.append(min(max(n, info.min), info.max))  # saturate
        else:
            bits = int(v) % 2 ** (8 * to.itemsize)  # keep the low bits
            out.append(bits - 2 ** (8 * to.itemsize) if to.kind == "i" and bits > info.max else bits)
    return np.array(out, dtype=object).astype(to).reshape(x.shape)


@pytest.mark.parametrize("to", ALL_TYPES)
@pytest.mark.parametrize("source", ALL_TYPES)
def test_cast_pairs(builder, source, to):
    x = sample(source)
    out = unary(builder, "cast", x, to)
    expected = reference_cast(x, to)
    assert out.dtype == np.dtype(to) and out.shape == x.shape
    if np.dtype(to).kind == "f":
        np.testing.assert_array_equal(np.isnan(out), np.isnan(expected))
        np.testing.assert_array_equal(np.signbit(out), np.signbit(expected))  # -0 stays -0
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("shape", [[], [1], [1, 1, 1]])
def test_cast_scalars_and_unit_dims(builder, shape):
    x = np.full(shape, -7.75, dtype=np.float32)
    np.testing.assert_array_equal(unary(builder, "cast", x, "int8"), np.full(shape, -7, np.int8))


def test_cast_same_type_is_exact(builder):
    x = np.array([0x7E01, 0xFE00, 0x7C00, 0x8000], dtype=np.uint16).view(np.float16)  # NaN payloads, -0
    out = unary(builder, "cast", x, "float16")
    np.testing.assert_array_equal(out.view(np.uint16), x.view(np.uint16))


def test_cast_rounding(builder):
    # float32 -> float16 rounds to nearest even once; uint64 -> float32 rounds correctly.
    x = np.array([1 + 2**-11, 1 + 3 * 2**-11, 65519.0, 65520.0, 2**-25, 3 * 2**-26], dtype=np.float32)
    np.testing.assert_array_equal(unary(builder, "cast", x, "float16"),
                                  np.array([1.0, 1 + 2**-9, 65504, np.inf, 0, 2**-24], dtype=np.float16))
    big = np.array([2**64 - 1, 2**63 + 2**39 + 1, 2**24 + 1], dtype=np.uint64)
    out = unary(webnn.MLGraphBuilder(builder.context), "cast", big, "float32")
    np.testing.assert_array_equal(out, np.array([2.0**64, 2.0**63 + 2**40, 2.0**24], dtype=np.float32))


def test_cast_large_tensor(builder):
    x = np.arange(-50000, 50001, dtype=np.int32)
    np.testing.assert_array_equal(unary(builder, "cast", x, "int8"), x.astype(np.int8))


def test_cast_validation(context, builder):
    x = builder.input("x", {"dataType": "float32", "shape": [2]})
    assert builder.cast(x, "uint64").data_type == "uint64"
    assert builder.cast(x, data_type="int8").shape == [2]
    with pytest.raises(TypeError, match=r"\[bad\] cast: dataType"):
        builder.cast(x, "bool", label="bad")
    with pytest.raises(TypeError, match=r"\[bad\] cast: the argument 'dataType' is required"):
        builder.cast(x, label="bad")
    other = webnn.MLGraphBuilder(context).input("x", {"dataType": "float32", "shape": [2]})
    with pytest.raises(TypeError, match=r"\[bad\] cast: input is an MLOperand from another"):
        builder.cast(other, "int32", label="bad")
    limits = context.op_support_limits()["cast"]
    assert sorted(limits["input"]["dataTypes"]) == sorted(ALL_TYPES)
    assert sorted(limits["output"]["dataTypes"]) == sorted(ALL_TYPES)


# ---------------------------------------------------------------- clamp
def reference_clamp(x, lo, hi):
    """min(max(x, lo), hi) with exact Python numbers; None bounds do not clamp, NaN passes."""
    out = []
    for v in x.flat:
        v = float(v) if x.dtype.kind == "f" else int(v)
        if lo is not None and v < lo:
            v = lo
        if hi is not None and v > hi:
            v = hi
        out.append(v)
    return np.array(out, dtype=np.float64 if x.dtype.kind == "f" else object).astype(x.dtype).reshape(x.shape)


def cast_bound(value, dtype):
    """The spec's cast algorithm for an MLNumber bound (ints saturate, floats round to nearest)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        with np.errstate(over="ignore"):
            return float(np.array(value, dtype=np.float64).astype(dtype))
    info = np.iinfo(dtype)
    if isinstance(value, float):
        value = info.min if value == -math.inf else info.max if value == math.inf else value
        value = min(max(value, info.min), info.max)
        return int(round(value))  # Python rounds half to even
    return min(max(value, info.min), info.max)


BOUNDS = [(None, None), (-2, None), (None, 5), (-3, 100), (0.5, 0.5), (-1.5, 2.5), (math.nan, 7),
          (-math.inf, math.inf), (300, 300), (2**40, None), (None, -(2**40))]


@pytest.mark.parametrize("bounds", BOUNDS, ids=str)
@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_clamp(builder, dtype, bounds):
    lo, hi = bounds
    x = sample(dtype)
    options = {k: v for k, v in (("minValue", lo), ("maxValue", hi)) if v is not None}
    out = unary(builder, "clamp", x, options)
    expected = reference_clamp(x, cast_bound(lo, dtype), cast_bound(hi, dtype))
    assert out.dtype == x.dtype and out.shape == x.shape
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("shape", [[], [1], [1, 3, 1]])
def test_clamp_shapes(builder, shape):
    x = np.full(shape, 9.0, dtype=np.float16)
    np.testing.assert_array_equal(unary(builder, "clamp", x, min_value=0, max_value=6), np.full(shape, 6, np.float16))


def test_clamp_64bit_bounds_are_exact(builder):
    # Bounds that float64 cannot hold: they must not move by a rounding step.
    x = np.array([-(2**63), 2**63 - 1, 2**62 + 1, 0], dtype=np.int64)
    out = unary(builder, "clamp", x, min_value=2**62 + 1, max_value=2**63 - 2)
    np.testing.assert_array_equal(out, np.array([2**62 + 1, 2**63 - 2, 2**62 + 1, 2**62 + 1], dtype=np.int64))
    x = np.array([0, 2**64 - 1, 2**63], dtype=np.uint64)
    out = unary(webnn.MLGraphBuilder(builder.context), "clamp", x, min_value=2**63 + 1, max_value=2**64 - 3)
    np.testing.assert_array_equal(out, np.array([2**63 + 1, 2**64 - 3, 2**63 + 1], dtype=np.uint64))


def test_clamp_float16_bound_is_cast(builder):
    # 0.1 casts to float16 0.0999755859375, the nearest float16; x below it clamps to exactly that.
    x = np.array([0.0, 0.2], dtype=np.float16)
    np.testing.assert_array_equal(unary(builder, "clamp", x, min_value=0.1), np.array([0.1, 0.2], np.float16))


def test_clamp_large_tensor(builder):
    x = np.linspace(-5, 5, 100001, dtype=np.float32)
    np.testing.assert_array_equal(unary(builder, "clamp", x, min_value=-1, max_value=1), np.clip(x, -1, 1))


@pytest.mark.parametrize("dtype,lo,hi", [
    ("float32", 2, 1), ("float32", 1.0000001, 1.0), ("float16", 0.5, -0.5), ("int8", 5, -5), ("uint8", 3, 2),
    ("int64", 2**63 - 1, 2**63 - 2), ("uint64", 2**64 - 1, 2**64 - 2), ("float32", math.inf, 3),
])
def test_clamp_min_greater_than_max(builder, dtype, lo, hi):
    x = builder.input("x", {"dataType": dtype, "shape": [2]})
    with pytest.raises(TypeError, match=r"\[bad\] clamp: minValue .* is greater than maxValue"):
        builder.clamp(x, {"minValue": lo, "maxValue": hi, "label": "bad"})


@pytest.mark.parametrize("dtype,lo,hi", [
    ("int8", 500, 300),  # both saturate to 127
    ("uint8", -5, -1),  # both saturate to 0
    ("float16", 1.0001, 1.0),  # both cast to 1.0
    ("float32", 1 + 2**-30, 1.0),
    ("int32", 2.4, 2.4),  # both round to 2
    ("float32", math.nan, -5),
])
def test_clamp_bounds_equal_after_cast(builder, dtype, lo, hi):
    x = builder.input("x", {"dataType": dtype, "shape": [2]})
    assert builder.clamp(x, min_value=lo, max_value=hi).shape == [2]


def test_clamp_validation(context, builder):
    x = builder.input("x", {"dataType": "float32", "shape": [2]})
    with pytest.raises(TypeError, match=r"\[bad\] clamp: minValue must be a number"):
        builder.clamp(x, {"minValue": "1", "label": "bad"})
    other = webnn.MLGraphBuilder(context).input("x", {"dataType": "float32", "shape": [2]})
    with pytest.raises(TypeError, match=r"\[bad\] clamp: input is an MLOperand from another"):
        builder.clamp(other, label="bad")
    limits = context.op_support_limits()["clamp"]
    assert sorted(limits["input"]["dataTypes"]) == sorted(ALL_TYPES)
    for rank in range(9):
        assert builder.clamp(builder.input(f"r{rank}", {"dataType": "int8", "shape": [1] * rank})).shape == [1] * rank
