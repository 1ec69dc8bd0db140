"""conv2d and matmul against float64 NumPy, and their validation rules."""
import numpy as np
import pytest

import webnn

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("isa_sweep", Path(__file__).parents[1] / "kernels" / "isa_sweep.py")
_isa_sweep = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_isa_sweep)
conv_reference = _isa_sweep.conv_reference  # the float64 NCHW/OIHW reference shared with the ISA sweep

FILTER_LAYOUT_PERMS = {"oihw": (0, 1, 2, 3), "hwio": (2, 3, 1, 0), "ohwi": (0, 2, 3, 1), "ihwo": (1, 2, 3, 0)}


def _tolerance(dtype):
    return (1e-5, 1e-5) if dtype == "float32" else (2e-2, 2e-2)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("input_layout", ["nchw", "nhwc"])
@pytest.mark.parametrize("filter_layout", ["oihw", "hwio", "ohwi", "ihwo"])
def test_conv2d_layouts_and_options(context, dtype, input_layout, filter_layout):
    rng = np.random.default_rng(7)
    n, c, h, w, o, kh, kw, groups = 2, 4, 7, 6, 6, 3, 2, 2
    strides, dilations, padding = [2, 1], [1, 2], [1, 0, 2, 1]
    x = rng.standard_normal((n, c, h, w)).astype(dtype)
    f = rng.standard_normal((o, c // groups, kh, kw)).astype(dtype)
    bias = rng.standard_normal(o).astype(dtype)
    ref = conv_reference(x.astype(np.float64), f.astype(np.float64), bias.astype(np.float64), strides, dilations,
                         padding, groups)
    xin = x if input_layout == "nchw" else x.transpose(0, 2, 3, 1).copy()
    fin = f.transpose(FILTER_LAYOUT_PERMS[filter_layout]).copy()
    builder = webnn.MLGraphBuilder(context)
    y = builder.conv2d(builder.input("x", data_type=dtype, shape=xin.shape), builder.constant(fin),
                       padding=padding, strides=strides, dilations=dilations, groups=groups,
                       input_layout=input_layout, filter_layout=filter_layout, bias=builder.constant(bias))
    out = builder.build({"y": y}).compute({"x": xin})["y"]
    assert out.dtype == np.dtype(dtype)
    if input_layout == "nhwc":
        out = out.transpose(0, 3, 1, 2)
    rtol, atol = _tolerance(dtype)
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=rtol, atol=atol * np.abs(ref).max())


# The indirect GEMM (NHWC, and NCHW k x k through NHWC): filter rows whose taps are read as
# one run where they lie inside the image and tap by tap at the borders, strides, dilations, groups,
# a batch, pixel counts that leave ragged tiles, and more output channels than one filter chunk.
@pytest.mark.parametrize("input_layout", ["nchw", "nhwc"])
@pytest.mark.parametrize("case", [
    # n, c, h, w, o, kh, kw, groups, strides, dilations, padding
    (1, 3, 23, 19, 16, 7, 7, 1, [2, 2], [1, 1], [3, 3, 3, 3]),    # a stem: 3 channels, stride 2
    (2, 5, 9, 11, 19, 3, 3, 1, [1, 1], [1, 1], [1, 1, 1, 1]),
    (1, 6, 10, 10, 8, 3, 3, 2, [1, 2], [1, 1], [0, 2, 1, 0]),     # groups: tap by tap
    (1, 4, 12, 13, 7, 3, 2, 1, [1, 1], [2, 3], [2, 2, 3, 3]),     # dilated
    (1, 16, 5, 5, 40, 5, 5, 1, [1, 1], [1, 1], [0, 0, 0, 0]),     # no padding: every row one run
    (1, 130, 6, 6, 130, 3, 3, 1, [1, 1], [1, 1], [1, 1, 1, 1]),   # ragged channel and pixel tiles
    (1, 512, 3, 3, 48, 3, 3, 1, [1, 1], [1, 1], [1, 1, 1, 1]),    # a filter panel larger than a chunk
    (2, 8, 7, 5, 6, 1, 1, 2, [1, 1], [1, 1], [0, 0, 0, 0]),       # pointwise: input pixel q for pixel q
    (1, 12, 9, 9, 20, 1, 1, 1, [2, 2], [1, 1], [0, 0, 0, 0]),     # 1x1, stride 2
    (1, 4, 5, 6, 9, 1, 1, 1, [1, 1], [1, 1], [1, 0, 0, 1]),       # 1x1 with padding
])
def test_conv2d_indirect_gemm(context, input_layout, case):
    n, c, h, w, o, kh, kw, groups, strides, dilations, padding = case
    rng = np.random.default_rng(11)
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    f = (rng.standard_normal((o, c // groups, kh, kw)) / np.sqrt(c // groups * kh * kw)).astype(np.float32)
    bias = rng.standard_normal(o).astype(np.float32)
    ref = conv_reference(x.astype(np.float64), f.astype(np.float64), bias.astype(np.float64), strides, dilations,
                         padding, groups)
    xin = x if input_layout == "nchw" else x.transpose(0, 2, 3, 1).copy()
    fin = f if input_layout == "nchw" else f.transpose(0, 2, 3, 1).copy()
    builder = webnn.MLGraphBuilder(context)
    y = builder.conv2d(builder.input("x", data_type="float32", shape=xin.shape), builder.constant(fin),
                       padding=padding, strides=strides, dilations=dilations, groups=groups,
                       input_layout=input_layout, filter_layout="oihw" if input_layout == "nchw" else "ohwi",
                       bias=builder.constant(bias))
    out = builder.build({"y": builder.relu(y)}).compute({"x": xin})["y"]
    if input_layout == "nhwc":
        out = out.transpose(0, 3, 1, 2)
    np.testing.assert_allclose(out, np.maximum(ref, 0), rtol=1e-5, atol=1e-5 * np.abs(ref).max())


def test_conv2d_defaults_depthwise_and_size_one(context):
    rng = np.random.default_rng(8)
    for (n, c, h, w, o, k, groups) in [(1, 1, 1, 1, 1, 1, 1), (1, 5, 4, 4, 5, 3, 5), (3, 2, 5, 5, 1, 5, 1)]:
        x = rng.standard_normal((n, c, h, w)).astype(np.float32)
        f = rng.standard_normal((o, c // groups, k, k)).astype(np.float32)
        builder = webnn.MLGraphBuilder(context)
        pad = (k - 1) // 2 if h >= k else 0
        y = builder.conv2d(builder.input("x", data_type="float32", shape=x.shape),
                           builder.input("f", data_type="float32", shape=f.shape), groups=groups,
                           padding=[pad] * 4)
        out = builder.build({"y": y}).compute({"x": x, "f": f})["y"]
        ref = conv_reference(x.astype(np.float64), f.astype(np.float64), None, [1, 1], [1, 1], [pad] * 4, groups)
        np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


def test_conv2d_propagates_nan_and_inf(context):
    x = np.array([np.nan, np.inf, 1, -np.inf], np.float32).reshape(1, 1, 2, 2)
    builder = webnn.MLGraphBuilder(context)
    y = builder.conv2d(builder.input("x", data_type="float32", shape=[1, 1, 2, 2]),
                       builder.constant(np.ones((1, 1, 1, 1), np.float32)))
    out = builder.build({"y": y}).compute({"x": x})["y"].ravel()
    assert np.isnan(out[0]) and out[1] == np.inf and out[2] == 1 and out[3] == -np.inf


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("a_shape,b_shape", [
    ([1, 1], [1, 1]), ([3, 4], [4, 5]), ([2, 3, 4], [4, 5]), ([2, 1, 3, 4], [5, 4, 2]), ([1, 2, 3], [4, 3, 1]),
    ([7, 300], [300, 9]),
])
def test_matmul_broadcast_batches(context, dtype, a_shape, b_shape):
    rng = np.random.default_rng(9)
    a = rng.standard_normal(a_shape).astype(dtype)
    b = rng.standard_normal(b_shape).astype(dtype)
    builder = webnn.MLGraphBuilder(context)
    c = builder.matmul(builder.input("a", data_type=dtype, shape=a_shape),
                       builder.input("b", data_type=dtype, shape=b_shape))
    ref = np.matmul(a.astype(np.float64), b.astype(np.float64))
    assert c.shape == list(ref.shape)
    out = builder.build({"c": c}).compute({"a": a, "b": b})["c"]
    rtol, atol = _tolerance(dtype)
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=rtol, atol=atol * max(1, np.abs(ref).max()))


def test_matmul_inf_and_nan(context):
    a = np.array([[np.inf, 1], [np.nan, 0]], np.float32)
    b = np.array([[1, 0], [0, 1]], np.float32)
    builder = webnn.MLGraphBuilder(context)
    c = builder.matmul(builder.input("a", data_type="float32", shape=[2, 2]), builder.constant(b))
    out = builder.build({"c": c}).compute({"a": a})["c"]
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(out, a @ b)


def _conv_inputs(builder, x_shape=(1, 4, 5, 5), f_shape=(2, 4, 3, 3), dtype="float32", f_dtype=None):
    x = builder.input("x", data_type=dtype, shape=list(x_shape))
    f = builder.input("f", data_type=f_dtype or dtype, shape=list(f_shape))
    return x, f


CONV2D_INVALID = [
    ({"x_shape": (4, 5, 5)}, {}),
    ({"dtype": "int32"}, {}),
    ({"f_shape": (2, 4, 3)}, {}),
    ({"f_dtype": "float16"}, {}),
    ({}, {"padding": [1, 1, 1]}),
    ({}, {"strides": [1]}),
    ({}, {"strides": [0, 1]}),
    ({}, {"dilations": [1, 1, 1]}),
    ({}, {"dilations": [1, 0]}),
    ({}, {"groups": 3}),
    ({}, {"groups": 0}),
    ({"f_shape": (2, 2, 3, 3)}, {}),
    ({"f_shape": (3, 2, 3, 3)}, {"groups": 2}),
    ({}, {"dilations": [4294967295, 1]}),
    ({"f_shape": (2, 4, 6, 3)}, {}),
    ({}, {"padding": [-1, 0, 0, 0]}),
    ({}, {"input_layout": "nwhc"}),
    ({}, {"filter_layout": "oihw2"}),
]


@pytest.mark.parametrize("inputs,options", CONV2D_INVALID)
def test_conv2d_invalid(context, inputs, options):
    builder = webnn.MLGraphBuilder(context)
    x, f = _conv_inputs(builder, **inputs)
    with pytest.raises(TypeError, match=r"\[bad conv\]"):
        builder.conv2d(x, f, label="bad conv", **options)


@pytest.mark.parametrize("bias_shape,bias_dtype", [([3], "float32"), ([2, 1], "float32"), ([2], "float16")])
def test_conv2d_invalid_bias(context, bias_shape, bias_dtype):
    builder = webnn.MLGraphBuilder(context)
    x, f = _conv_inputs(builder)
    bias = builder.input("b", data_type=bias_dtype, shape=bias_shape)
    with pytest.raises(TypeError, match=r"\[c\]"):
        builder.conv2d(x, f, bias=bias, label="c")


def test_conv2d_operand_from_another_builder(context):
    builder, other = webnn.MLGraphBuilder(context), webnn.MLGraphBuilder(context)
    x, f = _conv_inputs(builder)
    foreign = other.input("b", data_type="float32", shape=[2])
    with pytest.raises(TypeError, match="another MLGraphBuilder"):
        builder.conv2d(x, f, bias=foreign, label="c")


@pytest.mark.parametrize("a_shape,b_shape,a_dtype,b_dtype", [
    ([3], [3, 4], "float32", "float32"),
    ([2, 3], [4], "float32", "float32"),
    ([2, 3], [4, 5], "float32", "float32"),
    ([2, 2, 3], [3, 3, 4], "float32", "float32"),
    ([2, 3], [3, 4], "float32", "float16"),
    ([2, 3], [3, 4], "int32", "int32"),
])
def test_matmul_invalid(context, a_shape, b_shape, a_dtype, b_dtype):
    builder = webnn.MLGraphBuilder(context)
    a = builder.input("a", data_type=a_dtype, shape=a_shape)
    b = builder.input("b", data_type=b_dtype, shape=b_shape)
    with pytest.raises(TypeError, match=r"\[mm\] matmul"):
        builder.matmul(a, b, label="mm")
