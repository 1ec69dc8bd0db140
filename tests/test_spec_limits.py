"""The spec's newest validation rules: element-count limit (#926), concat/split counts (#933),
conv2d output channels a multiple of groups (#932), rank 5 for comparison, logical, isNaN,
isInfinite and prelu. Each error is a TypeError whose message names the op's label."""
import numpy as np
import pytest

import webnn

LIMIT = 2**31 - 1


def f32(shape):
    return {"dataType": "float32", "shape": list(shape)}


def refused(call, *fragments):
    with pytest.raises(TypeError) as info:
        call()
    for fragment in fragments:
        assert fragment in str(info.value), str(info.value)


def test_element_count_limit(builder):
    refused(lambda: builder.input("big", f32([65536, 32768])), "2^31-1 elements")
    refused(lambda: builder.input("wide", f32([LIMIT + 1])))
    builder.input("edge", f32([LIMIT]))  # exactly the limit is valid
    x = builder.input("x", f32([65536, 1]))
    refused(lambda: builder.expand(x, [65536, 32768], label="ex"), "[ex]", "2^31-1 elements")
    refused(lambda: builder.tile(x, [1, 32768], label="ti"), "[ti]")
    refused(lambda: builder.pad(x, [0, 0], [0, 32767], label="pa"), "[pa]")
    a = builder.input("a", f32([65536, 1]))
    b = builder.input("b", f32([1, 32768]))
    refused(lambda: builder.matmul(a, b, label="mm"), "[mm]")
    refused(lambda: builder.add(a, b, label="bc"), "[bc]")
    halves = [builder.input(f"h{i}", f32([LIMIT // 2 + 1])) for i in range(2)]
    refused(lambda: builder.concat(halves, 0, label="cc"), "[cc]")


def test_concat_and_split_counts(builder):
    s = builder.input("s", f32([1]))
    refused(lambda: builder.concat([s] * 8193, 0, label="cat"), "[cat]", "8192")
    assert builder.concat([s] * 8192, 0).shape == [8192]
    wide = builder.input("wide", f32([8193]))
    refused(lambda: builder.split(wide, 8193, label="sp"), "[sp]", "8192")
    refused(lambda: builder.split(wide, [1] * 8193, label="sl"), "[sl]", "8192")
    assert len(builder.split(builder.input("w2", f32([8192])), 8192)) == 8192


def test_conv2d_output_channels_multiple_of_groups(builder):
    x = builder.input("x", f32([1, 4, 5, 5]))
    bad = builder.constant(f32([6, 1, 3, 3]), np.zeros((6, 1, 3, 3), np.float32))
    refused(lambda: builder.conv2d(x, bad, groups=4, label="cv"), "[cv]", "multiple of groups")
    good = builder.constant(f32([8, 1, 3, 3]), np.zeros((8, 1, 3, 3), np.float32))
    assert builder.conv2d(x, good, groups=4).shape == [1, 8, 3, 3]


RANK5 = [1, 2, 1, 3, 2]


@pytest.mark.parametrize("op,reference", [
    ("equal", np.equal), ("not_equal", np.not_equal), ("greater", np.greater), ("greater_or_equal", np.greater_equal),
    ("lesser", np.less), ("lesser_or_equal", np.less_equal)])
def test_comparisons_at_rank_5(context, op, reference):
    rng = np.random.default_rng(0)
    a, b = rng.integers(-2, 3, RANK5).astype(np.float32), rng.integers(-2, 3, [2, 1, 3, 1]).astype(np.float32)
    builder = webnn.MLGraphBuilder(context)
    y = getattr(builder, op)(builder.input("a", f32(RANK5)), builder.input("b", f32([2, 1, 3, 1])))
    out = builder.build({"y": y}).compute({"a": a, "b": b})["y"]
    np.testing.assert_array_equal(out, reference(a, b).astype(np.uint8))


@pytest.mark.parametrize("op,reference", [("logical_and", np.logical_and), ("logical_or", np.logical_or),
                                          ("logical_xor", np.logical_xor)])
def test_logical_at_rank_5(context, op, reference):
    rng = np.random.default_rng(1)
    a, b = rng.integers(0, 3, RANK5).astype(np.uint8), rng.integers(0, 2, RANK5).astype(np.uint8)
    builder = webnn.MLGraphBuilder(context)
    u8 = {"dataType": "uint8", "shape": RANK5}
    y = getattr(builder, op)(builder.input("a", u8), builder.input("b", u8))
    not_a = builder.logical_not(builder.input("c", u8))
    out = builder.build({"y": y, "n": not_a}).compute({"a": a, "b": b, "c": a})
    np.testing.assert_array_equal(out["y"], reference(a, b).astype(np.uint8))
    np.testing.assert_array_equal(out["n"], np.logical_not(a).astype(np.uint8))


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_is_nan_is_infinite_and_prelu_at_rank_5(context, dtype):
    x = np.array([np.nan, np.inf, -np.inf, -2.0, 0.0, 3.5] * 2, dtype).reshape(RANK5)
    slope = np.full([2, 1, 1], 0.25, dtype)
    builder = webnn.MLGraphBuilder(context)
    desc = {"dataType": dtype, "shape": RANK5}
    xin = builder.input("x", desc)
    graph = builder.build({"nan": builder.is_nan(xin), "inf": builder.is_infinite(xin),
                           "prelu": builder.prelu(xin, builder.constant(slope))})
    out = graph.compute({"x": x})
    np.testing.assert_array_equal(out["nan"], np.isnan(x).astype(np.uint8))
    np.testing.assert_array_equal(out["inf"], np.isinf(x).astype(np.uint8))
    expected = np.where(x < 0, x * slope, x)
    np.testing.assert_array_equal(out["prelu"], expected.astype(dtype))


def test_op_support_limits_report_rank_5(context):
    limits = context.op_support_limits()
    for op, member in [("equal", "a"), ("logicalAnd", "a"), ("logicalNot", "a"), ("isNaN", "a"),
                       ("isInfinite", "a"), ("prelu", "input"), ("prelu", "slope")]:
        assert limits[op][member]["rankRange"]["max"] >= 5, (op, member)
