"""Reductions (reduce*), argMin/argMax, softmax and cumulativeSum against float64 NumPy references."""
import numpy as np
import pytest

import webnn
from conftest import run

RNG = np.random.default_rng(7)
FLOATS = ["float32", "float16"]
WIDE_NUMERIC = FLOATS + ["int32", "uint32", "int64", "uint64"]
ALL_TYPES = WIDE_NUMERIC + ["int8", "uint8"]


def compute(builder, op, x, *args, **options):
    """Runs `op(input, *args, **options)` on array `x` (fed as a graph input)."""
    operand = builder.input("x", {"dataType": x.dtype.name, "shape": list(x.shape)})
    return run(builder, {"y": getattr(builder, op)(operand, *args, **options)}, {"x": x})["y"]


def random_array(dtype, shape, low=-4, high=4):
    dtype = np.dtype(dtype)
    if dtype.kind == "u":
        low = max(low, 0)
    if dtype.kind in "iu":
        return RNG.integers(low, high + 1, size=shape).astype(dtype)
    return RNG.uniform(low, high, size=shape).astype(dtype)


def check_close(actual, expected, dtype):
    dtype = np.dtype(dtype)
    assert actual.dtype == dtype
    assert actual.shape == np.shape(expected)
    if dtype.kind in "iu":
        np.testing.assert_array_equal(actual, expected)
    else:
        rtol = 2e-3 if dtype == np.float16 else 2e-6
        np.testing.assert_allclose(actual.astype(np.float64), expected, rtol=rtol, atol=rtol)


# ---------------------------------------------------------------- reductions
def _logsumexp(x, axis, keepdims):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


def reference(op, x, axes, keepdims):
    """float64 reference; integer inputs wrap in their own type."""
    axis = None if axes is None else tuple(axes)
    if x.dtype.kind in "iu":
        t = x.dtype
        with np.errstate(over="ignore"):
            f = {
                "reduceL1": lambda: np.sum(np.abs(x), axis=axis, keepdims=keepdims, dtype=t),
                "reduceSum": lambda: np.sum(x, axis=axis, keepdims=keepdims, dtype=t),
                "reduceSumSquare": lambda: np.sum(x * x, axis=axis, keepdims=keepdims, dtype=t),
                "reduceProduct": lambda: np.prod(x, axis=axis, keepdims=keepdims, dtype=t),
                "reduceMax": lambda: np.max(x, axis=axis, keepdims=keepdims),
                "reduceMin": lambda: np.min(x, axis=axis, keepdims=keepdims),
            }[op]
            return np.asarray(f(), dtype=t)
    v = x.astype(np.float64)
    if op == "reduceLogSumExp":
        if axis is None:
            axis = tuple(range(x.ndim))
        return _logsumexp(v, axis, keepdims)
    f = {
        "reduceL1": lambda: np.sum(np.abs(v), axis=axis, keepdims=keepdims),
        "reduceL2": lambda: np.sqrt(np.sum(v * v, axis=axis, keepdims=keepdims)),
        "reduceLogSum": lambda: np.log(np.sum(v, axis=axis, keepdims=keepdims)),
        "reduceMax": lambda: np.max(v, axis=axis, keepdims=keepdims),
        "reduceMean": lambda: np.mean(v, axis=axis, keepdims=keepdims),
        "reduceMin": lambda: np.min(v, axis=axis, keepdims=keepdims),
        "reduceProduct": lambda: np.prod(v, axis=axis, keepdims=keepdims),
        "reduceSum": lambda: np.sum(v, axis=axis, keepdims=keepdims),
        "reduceSumSquare": lambda: np.sum(v * v, axis=axis, keepdims=keepdims),
    }[op]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(f())


REDUCE_TYPES = {
    "reduceL1": WIDE_NUMERIC, "reduceL2": FLOATS, "reduceLogSum": FLOATS, "reduceLogSumExp": FLOATS,
    "reduceMax": ALL_TYPES, "reduceMean": FLOATS, "reduceMin": ALL_TYPES, "reduceProduct": WIDE_NUMERIC,
    "reduceSum": WIDE_NUMERIC, "reduceSumSquare": WIDE_NUMERIC,
}
# (shape, axes, keepDimensions): absent axes, empty axes, inner/outer/middle/mixed axes, size-1 dims, rank 0.
REDUCE_CASES = [
    ([], None, False), ([], [], True), ([5], None, False), ([5], [], False), ([2, 3, 4], None, True),
    ([2, 3, 4], [2], False), ([2, 3, 4], [0], True), ([2, 3, 4], [1], False), ([2, 3, 4], [0, 2], True),
    ([2, 1, 3, 1, 2], [1, 2], False), ([1, 1], None, False), ([3, 2, 2, 3], [2, 0], False),
]


def reduce_input(op, dtype, shape):
    if op == "reduceLogSum":  # keep the sums positive
        return random_array(dtype, shape, 0.5, 3)
    if op == "reduceProduct":
        return random_array(dtype, shape, 1, 2) if np.dtype(dtype).kind in "iu" else random_array(dtype, shape, 0.5, 1.5)
    return random_array(dtype, shape)


@pytest.mark.parametrize("op", sorted(REDUCE_TYPES))
def test_reduce_every_type_and_axes(context, op):
    for dtype in REDUCE_TYPES[op]:
        for shape, axes, keep in REDUCE_CASES:
            x = reduce_input(op, dtype, shape)
            options = {"keepDimensions": keep}
            if axes is not None:
                options["axes"] = axes
            actual = compute(webnn.MLGraphBuilder(context), op, x, **options)
            check_close(actual, reference(op, x, axes, keep), dtype)


def test_reduce_default_keep_dimensions_is_false(builder):
    x = random_array("float32", [2, 3])
    assert compute(builder, "reduce_sum", x).shape == ()


@pytest.mark.parametrize("op", ["reduceSum", "reduceL1", "reduceSumSquare", "reduceProduct"])
def test_reduce_integer_wraps(context, op):
    for dtype in ["int32", "uint32", "int64", "uint64"]:
        info = np.iinfo(dtype)
        x = np.array([[info.max, info.max // 3 + 1, 7], [info.min, info.max, 3]], dtype=dtype)
        actual = compute(webnn.MLGraphBuilder(context), op, x, axes=[1])
        check_close(actual, reference(op, x, [1], False), dtype)


def test_reduce_large_full_and_inner_block(context):
    # A full reduction over many elements splits the reduced range; sums accumulate in double.
    x = np.full([1 << 18], 0.1, dtype=np.float32)
    actual = compute(webnn.MLGraphBuilder(context), "reduceSum", x)
    assert actual == np.float32(np.sum(x.astype(np.float64)))
    y = random_array("float32", [3000, 70])
    actual = compute(webnn.MLGraphBuilder(context), "reduceMean", y, axes=[0])
    check_close(actual, reference("reduceMean", y, [0], False), "float32")
    z = random_array("float16", [2, 70000])
    actual = compute(webnn.MLGraphBuilder(context), "reduceL2", z, axes=[1], keepDimensions=True)
    check_close(actual, reference("reduceL2", z, [1], True), "float16")


def test_reduce_nan_and_infinity(context):
    x = np.array([[1, np.nan, 3], [1, 2, np.inf], [-np.inf, -np.inf, -np.inf]], dtype=np.float32)
    for op in ["reduceMax", "reduceMin", "reduceSum", "reduceLogSumExp", "reduceMean"]:
        actual = compute(webnn.MLGraphBuilder(context), op, x, axes=[1])
        expected = reference(op, x, [1], False)
        np.testing.assert_array_equal(np.isnan(actual), np.isnan(expected), err_msg=op)
        finite = ~np.isnan(expected)
        np.testing.assert_allclose(actual[finite], expected[finite], rtol=1e-6, err_msg=op)


def test_reduce_empty_axes_is_elementwise(builder):
    x = np.array([[-2, 0.5], [3, -1]], dtype=np.float32)
    with np.errstate(invalid="ignore"):
        expected = np.log(x)
    actual = compute(builder, "reduce_log_sum", x, axes=[])
    np.testing.assert_allclose(actual, expected)


# ---------------------------------------------------------------- argMin / argMax
@pytest.mark.parametrize("op", ["argMax", "argMin"])
def test_arg_min_max(context, op):
    ref = np.argmax if op == "argMax" else np.argmin
    for dtype in ALL_TYPES:
        for shape, axis in [([5], 0), ([2, 3, 4], 0), ([2, 3, 4], 1), ([2, 3, 4], 2), ([1, 4, 1], 1), ([3, 1], 1)]:
            x = random_array(dtype, shape, 0, 3)  # small range: ties, resolved to the first index
            for keep in (False, True):
                for out_type in ("int32", "int64"):
                    actual = compute(webnn.MLGraphBuilder(context), op, x, axis, keepDimensions=keep,
                                     outputDataType=out_type)
                    expected = ref(x, axis=axis)
                    if keep:
                        expected = np.expand_dims(expected, axis)
                    check_close(actual, expected.astype(out_type), out_type)


def test_arg_min_max_defaults_and_nan(builder):
    x = np.array([[1, np.nan, 5, np.nan], [-np.inf, 2, np.inf, 2]], dtype=np.float32)
    a = builder.input("x", {"dataType": "float32", "shape": [2, 4]})
    outputs = {"max": builder.arg_max(a, 1), "min": builder.argMin(a, 1)}
    results = run(builder, outputs, {"x": x})
    assert results["max"].dtype == np.int32 and results["max"].shape == (2,)
    np.testing.assert_array_equal(results["max"], [1, 2])  # the first NaN wins
    np.testing.assert_array_equal(results["min"], [1, 0])


# ---------------------------------------------------------------- softmax
def softmax_reference(x, axis):
    v = x.astype(np.float64)
    e = np.exp(v - np.max(v, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def test_softmax(context):
    for dtype in FLOATS:
        for shape, axis in [([6], 0), ([4, 6], 1), ([4, 6], 0), ([2, 3, 4], 1), ([3, 4, 1, 1], 1), ([1, 1], 0)]:
            x = random_array(dtype, shape, -10, 10)
            actual = compute(webnn.MLGraphBuilder(context), "softmax", x, axis)
            check_close(actual, softmax_reference(x, axis), dtype)


def test_softmax_extremes(builder):
    x = np.array([[1000, 0, -1000], [np.inf, 1, 2], [np.nan, 1, 2]], dtype=np.float32)
    actual = compute(builder, "softmax", x, 1)
    np.testing.assert_allclose(actual[0], [1, 0, 0])
    assert np.isnan(actual[1:]).all()


def test_softmax_rows_in_blocks_stay_apart(context):
    # Last-axis rows run in blocks of 16 (each pass over the whole block): rows with NaN, inf, -inf
    # and huge values among ordinary ones, across block boundaries, affect only themselves.
    for shape in ([37, 21], [40, 128], [17, 5]):
        x = random_array("float32", shape, -10, 10)
        x[3, 2], x[15, 0], x[16, 1], x[-1, -1] = np.nan, np.inf, -np.inf, 3e38
        x[5, :] = -np.inf
        actual = compute(webnn.MLGraphBuilder(context), "softmax", x, 1)
        with np.errstate(invalid="ignore"):
            want = softmax_reference(x, 1)
        assert np.isnan(actual[[3, 5, 15]]).all()
        keep = np.ones(shape[0], bool)
        keep[[3, 5, 15]] = False
        check_close(actual[keep], want[keep], "float32")


# ---------------------------------------------------------------- cumulativeSum
def cumsum_reference(x, axis, exclusive, reversed_):
    v = x if x.dtype.kind in "iu" else x.astype(np.float64)
    if reversed_:
        v = np.flip(v, axis)
    with np.errstate(over="ignore"):
        out = np.cumsum(v, axis=axis, dtype=v.dtype)
    if exclusive:
        out = out - v if x.dtype.kind not in "iu" else (out - v).astype(x.dtype)
    if reversed_:
        out = np.flip(out, axis)
    return out


def test_cumulative_sum(context):
    for dtype in WIDE_NUMERIC:
        for shape, axis in [([4], 0), ([2, 3, 4], 0), ([2, 3, 4], 1), ([2, 3, 4], 2), ([1, 5, 1], 1)]:
            x = random_array(dtype, shape, 0, 5)
            for exclusive in (False, True):
                for reversed_ in (False, True):
                    actual = compute(webnn.MLGraphBuilder(context), "cumulativeSum", x, axis,
                                     exclusive=exclusive, reversed=reversed_)
                    check_close(actual, cumsum_reference(x, axis, exclusive, reversed_), dtype)


def test_cumulative_sum_example_and_wrap(context):
    x = np.array([1, 2, 3, 4], dtype=np.float32)
    expected = {(False, False): [1, 3, 6, 10], (True, False): [0, 1, 3, 6],
                (False, True): [10, 9, 7, 4], (True, True): [9, 7, 4, 0]}
    for (exclusive, reversed_), values in expected.items():
        actual = compute(webnn.MLGraphBuilder(context), "cumulative_sum", x, 0, exclusive=exclusive, reversed=reversed_)
        np.testing.assert_array_equal(actual, values)
    big = np.array([2**31 - 1, 1, 5], dtype=np.int32)
    np.testing.assert_array_equal(compute(webnn.MLGraphBuilder(context), "cumulativeSum", big, 0),
                                  np.array([2**31 - 1, -2**31, -2**31 + 5], dtype=np.int32))


def test_cumulative_sum_axis_wraps_modulo_2_32(builder):
    # axis has no [EnforceRange]: 2^32 + 1 is axis 1.
    x = random_array("float32", [2, 3])
    np.testing.assert_allclose(compute(builder, "cumulativeSum", x, 2**32 + 1), np.cumsum(x, axis=1), rtol=1e-6)


def test_axis_ops_tile_a_large_inner_dim(context):
    # Inner extents wider than one tile (with a remainder) run as several parallel tiles.
    x = random_array("float32", [2, 100, 1000])
    argmax = compute(webnn.MLGraphBuilder(context), "argMax", x, 1)
    np.testing.assert_array_equal(argmax, np.argmax(x, axis=1))
    check_close(compute(webnn.MLGraphBuilder(context), "softmax", x, 1), softmax_reference(x, 1), "float32")
    actual = compute(webnn.MLGraphBuilder(context), "cumulativeSum", x, 1, reversed=True)
    check_close(actual, cumsum_reference(x, 1, False, True), "float32")


# ---------------------------------------------------------------- validation
def _input(builder, dtype="float32", shape=(2, 3, 4)):
    return builder.input("x", {"dataType": dtype, "shape": list(shape)})


@pytest.mark.parametrize("op", sorted(REDUCE_TYPES))
def test_reduce_validation(context, op):
    def fails(dtype="float32", shape=(2, 3, 4), **options):
        b = webnn.MLGraphBuilder(context)
        with pytest.raises(TypeError, match=r"\[bad\]"):
            getattr(b, op)(_input(b, dtype, shape), label="bad", **options)

    fails(axes=[3])
    fails(axes=[0, 0])
    fails(axes=[1, 2, 1])
    fails(shape=[], axes=[0])
    for dtype in set(ALL_TYPES) - set(REDUCE_TYPES[op]):
        fails(dtype=dtype)
    b = webnn.MLGraphBuilder(context)
    with pytest.raises(TypeError):
        getattr(b, op)(_input(b), axes=[-1])


def test_reduce_support_limits(context):
    limits = context.op_support_limits()
    for op, types in REDUCE_TYPES.items():
        assert sorted(limits[op]["input"]["dataTypes"]) == sorted(types), op
        assert limits[op]["input"]["rankRange"]["min"] == 0
    assert sorted(limits["argMax"]["output"]["dataTypes"]) == ["int32", "int64"]
    assert limits["argMin"]["input"]["rankRange"]["min"] == 1
    assert sorted(limits["cumulativeSum"]["input"]["dataTypes"]) == sorted(WIDE_NUMERIC)
    assert sorted(limits["softmax"]["input"]["dataTypes"]) == sorted(FLOATS)


def test_axis_op_validation(context):
    def fails(op, *args, dtype="float32", shape=(2, 3), **options):
        b = webnn.MLGraphBuilder(context)
        with pytest.raises(TypeError, match=r"\[bad\]"):
            getattr(b, op)(_input(b, dtype, shape), *args, label="bad", **options)

    for op in ("argMax", "argMin"):
        fails(op, 2)
        fails(op, 0, shape=[])
        fails(op, 0, outputDataType="float32")
        fails(op, 0, outputDataType="uint32")
    fails("softmax", 2)
    fails("softmax", 0, shape=[])
    fails("softmax", 0, dtype="int32")
    fails("cumulativeSum", 2)
    fails("cumulativeSum", 0, shape=[])
    fails("cumulativeSum", 0, dtype="int8")
    b = webnn.MLGraphBuilder(context)
    with pytest.raises(TypeError):
        b.softmax(_input(b), 2**32)  # [EnforceRange]
    other = webnn.MLGraphBuilder(context)
    with pytest.raises(TypeError):
        webnn.MLGraphBuilder(context).reduce_sum(_input(other))
