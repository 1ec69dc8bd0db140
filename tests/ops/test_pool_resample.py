"""averagePool2d, l2Pool2d, maxPool2d and resample2d against float64 NumPy references, both layouts."""
import math

import numpy as np
import pytest

import webnn
from conftest import run

RNG = np.random.default_rng(5)
FLOATS = ["float32", "float16"]
ALL_TYPES = ["float32", "float16", "int32", "uint32", "int64", "uint64", "int8", "uint8"]
POOL_TYPES = {"averagePool2d": FLOATS, "l2Pool2d": FLOATS, "maxPool2d": ALL_TYPES}


def rand(dtype, shape, low=-4, high=4):
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        return RNG.integers(0 if dtype.kind == "u" else low, high + 1, size=shape).astype(dtype)
    return RNG.uniform(low, high, size=shape).astype(dtype)


def compute(context, op, x, **options):
    builder = webnn.MLGraphBuilder(context)
    operand = builder.input("x", {"dataType": x.dtype.name, "shape": list(x.shape)})
    return run(builder, {"y": getattr(builder, op)(operand, **options)}, {"x": x})["y"]


def check_close(actual, expected, dtype, atol=None):
    dtype = np.dtype(dtype)
    assert actual.dtype == dtype and actual.shape == expected.shape
    if dtype.kind in "iu":
        np.testing.assert_allclose(actual.astype(np.float64), expected, atol=atol or 0, rtol=0)
    else:
        tol = 3e-3 if dtype == np.float16 else 1e-5
        np.testing.assert_allclose(actual.astype(np.float64), expected, rtol=tol, atol=atol or tol)


def to_nhwc(x):
    return np.transpose(x, (0, 2, 3, 1))


def to_nchw(x):
    return np.transpose(x, (0, 3, 1, 2))


# ---------------------------------------------------------------- pooling
def pool_reference(op, x, window, padding, strides, dilations, out_size):
    """x is nchw; padding is [top, bottom, left, right]; windows skip positions outside x."""
    n, c, h, w = x.shape
    v = x.astype(np.float64)
    out = np.zeros((n, c) + tuple(out_size))
    for oy in range(out_size[0]):
        ys = [y for y in (oy * strides[0] - padding[0] + k * dilations[0] for k in range(window[0])) if 0 <= y < h]
        for ox in range(out_size[1]):
            xs = [x_ for x_ in (ox * strides[1] - padding[2] + k * dilations[1] for k in range(window[1]))
                  if 0 <= x_ < w]
            patch = v[:, :, ys][:, :, :, xs].reshape(n, c, -1)
            if patch.shape[-1] == 0:
                out[:, :, oy, ox] = 0  # max too, as WPT expects
            elif op == "averagePool2d":
                out[:, :, oy, ox] = patch.mean(axis=-1)
            elif op == "l2Pool2d":
                out[:, :, oy, ox] = np.sqrt((patch * patch).sum(axis=-1))
            else:
                out[:, :, oy, ox] = patch.max(axis=-1)
    return out


def output_size(size, window, pad_begin, pad_end, stride, dilation, ceil):
    span = size + pad_begin + pad_end - ((window - 1) * dilation + 1)
    return (math.ceil if ceil else math.floor)(span / stride) + 1


# (input nchw shape, options): global default, window, strides, padding, dilations, ceil, outputSizes,
# padding larger than the window (windows entirely in padding).
POOL_CASES = [
    ([1, 2, 4, 5], {}),
    ([2, 3, 5, 5], {"windowDimensions": [3, 2]}),
    ([1, 2, 7, 7], {"windowDimensions": [3, 3], "strides": [2, 2]}),
    ([1, 1, 5, 6], {"windowDimensions": [2, 3], "padding": [1, 0, 2, 1]}),
    ([1, 2, 7, 7], {"windowDimensions": [3, 3], "dilations": [2, 3]}),
    ([1, 2, 7, 6], {"windowDimensions": [2, 2], "strides": [2, 2], "outputShapeRounding": "ceil"}),
    ([1, 2, 7, 7], {"windowDimensions": [4, 4], "padding": [1, 1, 1, 1], "strides": [2, 2], "outputSizes": [3, 3]}),
    ([1, 2, 7, 7], {"windowDimensions": [4, 4], "padding": [1, 1, 1, 1], "strides": [2, 2], "outputSizes": [4, 4],
                    "outputShapeRounding": "floor"}),
    ([1, 1, 2, 3], {"windowDimensions": [1, 1], "padding": [2, 3, 0, 1]}),
    ([1, 1, 1, 1], {}),
]


def pool_expected(op, x, options):
    n, c, h, w = x.shape
    window = options.get("windowDimensions", [h, w])
    padding = options.get("padding", [0, 0, 0, 0])
    strides = options.get("strides", [1, 1])
    dilations = options.get("dilations", [1, 1])
    if "outputSizes" in options:
        out_size = options["outputSizes"]
    else:
        ceil = options.get("outputShapeRounding") == "ceil"
        out_size = [output_size(h, window[0], padding[0], padding[1], strides[0], dilations[0], ceil),
                    output_size(w, window[1], padding[2], padding[3], strides[1], dilations[1], ceil)]
    return pool_reference(op, x, window, padding, strides, dilations, out_size)


@pytest.mark.parametrize("op", sorted(POOL_TYPES))
@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
def test_pool2d(context, op, layout):
    for dtype in POOL_TYPES[op]:
        for shape, options in POOL_CASES:
            x = rand(dtype, shape)
            expected = pool_expected(op, x, options)
            if layout == "nhwc":
                actual = to_nchw(compute(context, op, to_nhwc(x), layout="nhwc", **options))
            else:
                actual = compute(context, op, x, **options)
            check_close(np.ascontiguousarray(actual), expected, dtype)


def test_pool2d_average_excludes_padding_and_max_nan(context):
    x = np.arange(1, 10, dtype=np.float32).reshape(1, 1, 3, 3)
    actual = compute(context, "averagePool2d", x, windowDimensions=[2, 2], padding=[1, 0, 1, 0])
    np.testing.assert_allclose(actual[0, 0, 0], [1, 1.5, 2.5])  # the corner divides by 1, not 4
    y = np.array([[[[1, np.nan], [3, 4]]]], dtype=np.float32)
    assert np.isnan(compute(context, "maxPool2d", y)).all()
    assert np.isnan(compute(context, "averagePool2d", y)).all()


def test_pool2d_validation(context):
    def fails(op="averagePool2d", shape=(1, 2, 7, 7), dtype="float32", **options):
        b = webnn.MLGraphBuilder(context)
        x = b.input("x", {"dataType": dtype, "shape": list(shape)})
        with pytest.raises(TypeError, match=r"\[pool\]"):
            getattr(b, op)(x, label="pool", **options)

    for op in POOL_TYPES:
        fails(op, shape=(2, 7, 7))
        fails(op, windowDimensions=[4, 4], padding=[1, 1, 1, 1], strides=[2, 2], outputSizes=[3, 4])
        fails(op, windowDimensions=[4, 4], padding=[1, 1, 1, 1], strides=[2, 2], outputSizes=[2, 2])
        fails(op, outputSizes=[1])
        fails(op, outputSizes=[0, 0])
        fails(op, windowDimensions=[2])
        fails(op, windowDimensions=[0, 2])
        fails(op, windowDimensions=[8, 2])
        fails(op, windowDimensions=[2, 2], dilations=[7, 1])
        fails(op, padding=[0, 0])
        fails(op, strides=[1])
        fails(op, strides=[0, 1])
        fails(op, dilations=[1, 1, 1])
        fails(op, dilations=[1, 0])
        fails(op, windowDimensions=[1, 1], padding=[2**32 - 1, 0, 0, 0])
        fails(op, windowDimensions=[1, 1], padding=[0, 0, 0, 2**32 - 1])
        fails(op, windowDimensions=[2**32 - 1, 1], dilations=[2**32 - 1, 1])
        fails(op, layout="hwcn")
        fails(op, outputShapeRounding="round")
    fails("averagePool2d", dtype="int64")
    fails("l2Pool2d", dtype="uint8")
    b = webnn.MLGraphBuilder(context)
    other = webnn.MLGraphBuilder(context).input("x", {"dataType": "float32", "shape": [1, 1, 2, 2]})
    with pytest.raises(TypeError):
        b.max_pool2d(other)


def test_pool2d_shapes(context):
    b = webnn.MLGraphBuilder(context)
    x = b.input("x", {"dataType": "float16", "shape": [1, 7, 7, 3]})
    options = {"windowDimensions": [4, 4], "padding": [1, 1, 1, 1], "strides": [2, 2], "layout": "nhwc"}
    assert b.average_pool2d(x, **options).shape == [1, 3, 3, 3]
    assert b.l2_pool2d(x, outputShapeRounding="ceil", **options).shape == [1, 4, 4, 3]
    assert b.max_pool2d(x, outputSizes=[4, 4], **options).shape == [1, 4, 4, 3]
    assert b.max_pool2d(x, outputSizes=[3, 3], outputShapeRounding="ceil", **options).shape == [1, 3, 3, 3]
    limits = context.op_support_limits()
    assert sorted(limits["averagePool2d"]["input"]["dataTypes"]) == sorted(FLOATS)
    assert sorted(limits["maxPool2d"]["input"]["dataTypes"]) == sorted(ALL_TYPES)
    assert limits["l2Pool2d"]["output"]["rankRange"] == {"min": 4, "max": 4}


# ---------------------------------------------------------------- resample2d
def axis_map(in_size, out_size, scale, linear):
    """Half-pixel coordinates clamped to the input; nearest rounds half down."""
    u = np.clip((np.arange(out_size) + 0.5) / scale - 0.5, 0, in_size - 1)
    if not linear:
        return np.ceil(u - 0.5).astype(int), None, None
    lower = np.floor(u)
    return lower.astype(int), np.ceil(u).astype(int), u - lower


def resample_reference(x, mode, axes, out_sizes, scales):
    v = x.astype(np.float64)
    for axis, out_size, scale in zip(axes, out_sizes, scales):
        first, second, t = axis_map(x.shape[axis], out_size, scale, mode == "linear")
        if second is None:
            v = np.take(v, first, axis=axis)
        else:
            shape = [1] * v.ndim
            shape[axis] = -1
            t = t.reshape(shape)
            v = np.take(v, first, axis=axis) * (1 - t) + np.take(v, second, axis=axis) * t
    return v


RESAMPLE_CASES = [
    ([1, 2, 4, 4], {"scales": [2.0, 2.0]}),
    ([1, 2, 4, 4], {"sizes": [8, 8]}),
    ([2, 1, 3, 5], {"scales": [1.5, 0.6]}),          # maps with 4/3 and 3/5: the sizes' ratio
    ([2, 1, 3, 5], {"sizes": [7, 2]}),
    ([1, 3, 5, 2], {"sizes": [2, 4], "axes": [1, 2]}),
    ([3, 4, 2, 2], {"scales": [0.5, 1.25], "axes": [0, 1]}),
    ([2, 3, 2, 5], {"scales": [2.0, 0.5], "axes": [3, 2]}),
    ([2, 3, 2, 5], {"sizes": [3, 4], "axes": [0, 3]}),
    ([1, 1, 1, 1], {"sizes": [3, 2]}),
    ([1, 2, 3, 3], {}),
]


def resample_expected(x, options, mode):
    axes = options.get("axes", [2, 3])
    if "sizes" in options:
        sizes = options["sizes"]
    else:
        given = [float(np.float32(s)) for s in options.get("scales", [1.0, 1.0])]
        sizes = [math.floor(x.shape[a] * s) for a, s in zip(axes, given)]
    # The spec maps coordinates with outputSize / inputSize, not with the given scales.
    scales = [s / x.shape[a] for s, a in zip(sizes, axes)]
    return resample_reference(x, mode, axes, sizes, scales)


@pytest.mark.parametrize("mode", ["nearest-neighbor", "linear"])
def test_resample2d(context, mode):
    for dtype in ["float32", "float16", "int8", "uint8"]:
        for shape, options in RESAMPLE_CASES:
            x = rand(dtype, shape, -100, 100)
            expected = resample_expected(x, options, mode)
            if np.dtype(dtype).kind in "iu":
                expected = np.rint(expected)
            actual = compute(context, "resample2d", x, mode=mode, **options)
            check_close(actual, expected, dtype, atol=1 if np.dtype(dtype).kind in "iu" and mode == "linear" else None)


@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
def test_resample2d_worked_examples(context, layout):
    row = np.array([0, 1, 2, 3], dtype=np.float32)
    x = np.tile(row, (4, 1)).reshape(1, 1, 4, 4)
    options = {"mode": "linear", "sizes": [8, 8]}
    if layout == "nhwc":
        actual = to_nchw(compute(context, "resample2d", to_nhwc(x), axes=[1, 2], **options))
    else:
        actual = compute(context, "resample2d", x, **options)
    np.testing.assert_allclose(actual[0, 0, 0], [0, 0.25, 0.75, 1.25, 1.75, 2.25, 2.75, 3])
    # Nearest rounds half down: 2 -> 3 along one axis gives [a, a, b].
    y = np.array([[[[1, 2]]]], dtype=np.float32)
    np.testing.assert_array_equal(compute(context, "resample2d", y, scales=[1.0, 1.5]), [[[[1, 1, 2]]]])
    # scales 1.5 on 3 elements gives 4 outputs, mapped with 4 / 3 (not 1.5): [10, 20, 20, 30].
    z = np.array([[[[10, 20, 30]]]], dtype=np.float32)
    np.testing.assert_array_equal(compute(context, "resample2d", z, scales=[1.0, 1.5]), [[[[10, 20, 20, 30]]]])
    np.testing.assert_allclose(compute(context, "resample2d", z, mode="linear", scales=[1.0, 1.5]),
                               [[[[10, 16.25, 23.75, 30]]]])


def test_resample2d_validation(context):
    def fails(shape=(1, 2, 4, 4), dtype="float32", **options):
        b = webnn.MLGraphBuilder(context)
        x = b.input("x", {"dataType": dtype, "shape": list(shape)})
        with pytest.raises(TypeError, match=r"\[rs\]"):
            b.resample2d(x, label="rs", **options)

    fails(scales=[2.0])
    fails(scales=[2.0, 2.0, 2.0])
    fails(scales=[0.0, 2.0])
    fails(scales=[2.0, -1.0])
    fails(scales=[0.1, 1.0])  # floor(4 * 0.1) == 0
    fails(scales=[1e30, 1.0])
    fails(sizes=[4])
    fails(sizes=[0, 4])
    fails(axes=[2])
    fails(axes=[1, 2, 3])
    fails(axes=[2, 2])
    fails(axes=[3, 4])
    fails(mode="cubic")
    fails(shape=(2, 4, 4))
    fails(dtype="int32")
    fails(dtype="uint32")
    b = webnn.MLGraphBuilder(context)
    with pytest.raises(TypeError):
        b.resample2d(b.input("x", {"dataType": "float32", "shape": [1, 1, 2, 2]}), sizes=[-1, 2])
    limits = context.op_support_limits()
    assert sorted(limits["resample2d"]["input"]["dataTypes"]) == ["float16", "float32", "int8", "uint8"]
