"""Quantized and float16 ONNX models, as ONNX Runtime's own tools write them, loaded by webnn.onnx:

- the QOperator ops (QLinearConv, QLinearMatMul; com.microsoft QLinearAdd, QLinearMul,
  QLinearSigmoid, QLinearLeakyRelu, QLinearSoftmax, QLinearGlobalAveragePool, QLinearAveragePool,
  QLinearConcat, QGemm) one by one, against a float64 NumPy evaluation of their definition
  (dequantize, compute, quantize with round half to even): within one quantization step, almost all
  exact; and against ONNX Runtime within one step where its integer kernels are exact (``ort_exact``:
  its AVX2 u8 x s8 kernels saturate int16 pair sums, so 2 max|a| max|w| must stay within 32767);
- DequantizeLinear of int32 / int16 constants (quantized biases) folded bitwise as ONNX Runtime
  computes it;
- models made by onnxruntime.quantization.quantize_static (QDQ and QOperator, per-channel or not,
  uint8 or int8 activations) from small conv and matmul nets and from tests/onnx_models: QDQ models
  against ONNX Runtime with its optimizations off (the float path: DequantizeLinear, the float op,
  QuantizeLinear, no integer kernel), QOperator ones against ONNX Runtime with reduce_range (7-bit
  weights, which its kernels compute exactly on every CPU); within a few output scales;
- quantize_dynamic (MatMulInteger, ConvInteger, com.microsoft DynamicQuantizeLSTM);
- onnxruntime.transformers.float16.convert_float_to_float16, whose nodes come out of topological
  order (the importer sorts them, as ONNX Runtime does), and graphs shuffled by hand; a cycle is
  refused naming its nodes.

Runs with onnx 1.19 / onnxruntime 1.19 / NumPy 2.0 too.
"""
import os
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
quantization = pytest.importorskip("onnxruntime.quantization")

import webnn  # noqa: E402
import webnn.onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from onnx_models import vision  # noqa: E402
from test_onnx_more_ops import make_model, ort_exact  # noqa: E402

MS = "com.microsoft"
RNG = np.random.default_rng(34)


@pytest.fixture(scope="module")
def ctx():
    return webnn.create_context()


# ---------------------------------------------------------------- helpers
def ort_run(model, feeds, optimize=True):
    options = ort.SessionOptions()
    if not optimize:  # no QDQ fusion into integer kernels: DequantizeLinear, the float op, QuantizeLinear
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    source = model if isinstance(model, (str, bytes)) else model.SerializeToString()
    session = ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds)))


def webnn_run(ctx, model, feeds):
    return webnn.onnx.load(model, ctx).compute(feeds)


def ints(dtype, shape, low=None, high=None):
    info = np.iinfo(dtype)
    low = info.min if low is None else low
    high = info.max if high is None else high
    return RNG.integers(low, high, shape, endpoint=True).astype(dtype)


# float64 forms of the definitions: dequantize, compute, quantize (round half to even, saturate)
def dequantize64(q, scale, zero, axis=None, rank=None):
    scale, zero = np.asarray(scale, np.float64), np.asarray(zero, np.float64)
    if axis is not None and scale.size > 1:
        shape = [1] * q.ndim
        shape[axis] = scale.size
        scale, zero = scale.reshape(shape), zero.reshape(shape)
    return (q.astype(np.float64) - zero) * scale


def quantize64(y, scale, zero):
    zero = np.asarray(zero)
    info = np.iinfo(zero.dtype)
    return np.clip(np.rint(y / np.float64(scale)) + zero.astype(np.float64), info.min, info.max).astype(zero.dtype)


def conv64(x, w, bias=None, strides=(1, 1), pads=(0, 0, 0, 0), dilations=(1, 1), group=1):
    x = np.pad(x, [(0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])])
    _, _, height, width = x.shape
    out_channels, group_channels, kh, kw = w.shape
    (sh, sw), (dh, dw) = strides, dilations
    oh, ow = (height - (kh - 1) * dh - 1) // sh + 1, (width - (kw - 1) * dw - 1) // sw + 1
    y = np.zeros((x.shape[0], out_channels, oh, ow))
    per_group = out_channels // group
    for i in range(kh):
        for j in range(kw):
            patch = x[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh, j * dw:j * dw + sw * (ow - 1) + 1:sw]
            for g in range(group):
                y[:, g * per_group:(g + 1) * per_group] += np.einsum(
                    "nchw,mc->nmhw", patch[:, g * group_channels:(g + 1) * group_channels],
                    w[g * per_group:(g + 1) * per_group, :, i, j])
    return y if bias is None else y + bias.reshape(1, -1, 1, 1)


def assert_within_one_step(actual, expected, what="", exact_fraction=0.97):
    """Quantized results: every element within one step, almost all equal."""
    assert actual.dtype == expected.dtype and actual.shape == expected.shape, (actual.dtype, actual.shape,
                                                                               expected.dtype, expected.shape)
    difference = np.abs(actual.astype(np.int64) - expected.astype(np.int64))
    assert difference.max() <= 1, f"{what}: {difference.max()} steps off at {np.argwhere(difference > 1)[:5]}"
    assert np.mean(difference == 0) >= exact_fraction, f"{what}: only {np.mean(difference == 0):.3f} exact"


def quantization_parameters(y, dtype):
    """(scale, zero point) mapping y's range (widened to hold 0) onto dtype, as the quantizers do."""
    info = np.iinfo(dtype)
    low, high = min(float(y.min()), 0.0), max(float(y.max()), 0.0)
    scale = np.float32((high - low) / (info.max - info.min) or 1.0)
    zero = np.asarray(np.clip(np.rint(info.min - low / scale), info.min, info.max), dtype)
    return scale, zero


def node_model(op, input_names, feeds, constants, domain="", **attributes):
    """One node of ``op`` reading ``input_names`` ("" for an absent one): ``feeds`` graph inputs,
    ``constants`` initializers, output "y"; opset 17."""
    node = helper.make_node(op, list(input_names), ["y"], domain=domain, **attributes)
    return make_model([node], feeds, ["y"], constants, contrib=domain == MS)


def check_node(ctx, model, feeds, expected, ort_too=True):
    """webnn.onnx within one step of the float64 definition (``expected``), and of ONNX Runtime."""
    actual = webnn_run(ctx, model, feeds)["y"]
    assert_within_one_step(actual, expected, "float64 definition")
    if ort_too:
        assert_within_one_step(actual, ort_run(model, feeds)["y"], "ONNX Runtime")
    return actual


# ---------------------------------------------------------------- QLinearConv
CONV_CASES = {
    # name: (x type, w type, per-channel, bias, in channels, out channels, kernel, attributes)
    "u8 x s8, bias": (np.uint8, np.int8, False, True, 4, 6, 3, {"pads": [1, 1, 1, 1]}),
    "u8 x s8 per-channel, stride 2": (np.uint8, np.int8, True, True, 4, 6, 3,
                                      {"pads": [1, 0, 1, 2], "strides": [2, 2]}),
    "s8 x s8 per-channel, depthwise": (np.int8, np.int8, True, True, 8, 8, 3, {"pads": [1, 1, 1, 1], "group": 8}),
    "u8 x u8, dilated, no bias": (np.uint8, np.uint8, False, False, 3, 5, 3, {"dilations": [2, 2]}),
    "u8 x s8 1x1, 32 channels": (np.uint8, np.int8, True, True, 32, 8, 1, {}),
}


@pytest.mark.parametrize("ranges", ["full", "ort-exact"])
@pytest.mark.parametrize("case", CONV_CASES, ids=list(CONV_CASES))
def test_qlinear_conv(ctx, case, ranges):
    x_type, w_type, per_channel, with_bias, channels, out_channels, kernel, attributes = CONV_CASES[case]
    group = attributes.get("group", 1)
    x = ints(x_type, (2, channels, 9, 9))
    w_range = (None, None)
    if ranges == "ort-exact":  # 2 * 255 * 64 <= 32767, 2 * 128 * 127 <= 32767
        w_range = ((-64, 63) if w_type == np.int8 else (0, 64)) if x_type == np.uint8 else (-127, 127)
    w = ints(w_type, (out_channels, channels // group, kernel, kernel), *w_range)
    x_scale, x_zero = np.float32(0.02), np.asarray(131 if x_type == np.uint8 else -3, x_type)
    count = out_channels if per_channel else 1
    w_scale = RNG.uniform(0.002, 0.01, count).astype(np.float32).reshape(() if count == 1 else (-1,))
    w_zero = np.full(w_scale.shape, 0 if w_type == np.int8 else 120, w_type)
    bias = RNG.integers(-3000, 3000, out_channels).astype(np.int32) if with_bias else None
    strides, pads = attributes.get("strides", [1, 1]), attributes.get("pads", [0, 0, 0, 0])
    dilations = attributes.get("dilations", [1, 1])
    bias64 = None if bias is None else bias * (np.float64(x_scale) * w_scale.astype(np.float64))
    exact = conv64(dequantize64(x, x_scale, x_zero), dequantize64(w, w_scale, w_zero, axis=0), bias64, strides, pads,
                   dilations, group)
    y_scale, y_zero = quantization_parameters(exact, x_type)
    constants = {"x_scale": x_scale, "x_zero": x_zero, "w": w, "w_scale": w_scale, "w_zero": w_zero,
                 "y_scale": y_scale, "y_zero": y_zero}
    names = ["x", "x_scale", "x_zero", "w", "w_scale", "w_zero", "y_scale", "y_zero"]
    if bias is not None:
        constants["bias"] = bias
        names.append("bias")
    model = node_model("QLinearConv", names, {"x": x}, constants, kernel_shape=[kernel, kernel], **attributes)
    ort_too = ort_exact(x, w)
    assert ort_too or ranges == "full"
    check_node(ctx, model, {"x": x}, quantize64(exact, y_scale, y_zero), ort_too)


def test_qlinear_conv_channels_last(ctx):
    """com.microsoft QLinearConv with channels_last: NHWC in and out."""
    x = ints(np.uint8, (1, 7, 7, 4))
    w = ints(np.int8, (6, 4, 3, 3), -64, 63)
    w_scale, w_zero = RNG.uniform(0.002, 0.01, 6).astype(np.float32), np.zeros(6, np.int8)
    bias = RNG.integers(-3000, 3000, 6).astype(np.int32)
    x_scale, x_zero = np.float32(0.03), np.uint8(100)
    exact = conv64(dequantize64(x.transpose(0, 3, 1, 2), x_scale, x_zero), dequantize64(w, w_scale, w_zero, axis=0),
                   bias * (np.float64(x_scale) * w_scale), pads=(1, 1, 1, 1)).transpose(0, 2, 3, 1)
    y_scale, y_zero = quantization_parameters(exact, np.uint8)
    constants = {"x_scale": x_scale, "x_zero": x_zero, "w": w, "w_scale": w_scale, "w_zero": w_zero,
                 "y_scale": y_scale, "y_zero": y_zero, "bias": bias}
    model = node_model("QLinearConv", ["x", "x_scale", "x_zero", "w", "w_scale", "w_zero", "y_scale", "y_zero",
                                       "bias"], {"x": x}, constants, domain=MS, channels_last=1,
                       kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    check_node(ctx, model, {"x": x}, quantize64(exact, y_scale, y_zero))


# ---------------------------------------------------------------- QLinearMatMul, QGemm
MATMUL_CASES = {
    # name: (a type, a shape, b type, b shape, per-column b, b at run time)
    "u8 x s8": (np.uint8, (3, 5), np.int8, (5, 4), False, False),
    "u8 x s8 per-column": (np.uint8, (3, 40), np.int8, (40, 4), True, False),
    "s8 x s8 batched": (np.int8, (2, 3, 6), np.int8, (6, 5), False, False),
    "u8 x u8, both at run time": (np.uint8, (4, 7), np.uint8, (7, 3), False, True),
}


@pytest.mark.parametrize("case", MATMUL_CASES, ids=list(MATMUL_CASES))
def test_qlinear_matmul(ctx, case):
    a_type, a_shape, b_type, b_shape, per_column, b_runtime = MATMUL_CASES[case]
    a = ints(a_type, a_shape)
    b = ints(b_type, b_shape, *((-64, 63) if b_type == np.int8 else (0, 64)))
    assert ort_exact(a, b)
    a_scale, a_zero = np.float32(0.05), np.asarray(128 if a_type == np.uint8 else 3, a_type)
    count = b_shape[-1] if per_column else 1
    b_scale = RNG.uniform(0.005, 0.02, count).astype(np.float32).reshape(() if count == 1 else (-1,))
    b_zero = np.full(b_scale.shape, 0 if b_type == np.int8 else 30, b_type)
    exact = dequantize64(a, a_scale, a_zero) @ dequantize64(b, b_scale, b_zero, axis=len(b_shape) - 1)
    y_scale, y_zero = quantization_parameters(exact, a_type)
    feeds = {"a": a, "b": b} if b_runtime else {"a": a}
    constants = {"a_scale": a_scale, "a_zero": a_zero, "b_scale": b_scale, "b_zero": b_zero, "y_scale": y_scale,
                 "y_zero": y_zero, **({} if b_runtime else {"b": b})}
    model = node_model("QLinearMatMul", ["a", "a_scale", "a_zero", "b", "b_scale", "b_zero", "y_scale", "y_zero"],
                       feeds, constants)
    check_node(ctx, model, feeds, quantize64(exact, y_scale, y_zero))


@pytest.mark.parametrize("quantized_output", [True, False], ids=["uint8 output", "float output"])
def test_qgemm(ctx, quantized_output):
    """Y = alpha A B' + C, C int32 with scale alpha * a_scale * b_scale, B per output column."""
    a = ints(np.uint8, (3, 24))
    b = ints(np.int8, (5, 24), -64, 63)
    alpha = 0.5
    a_scale, a_zero = np.float32(0.04), np.uint8(120)
    b_scale, b_zero = RNG.uniform(0.005, 0.02, 5).astype(np.float32), np.zeros(5, np.int8)
    c = RNG.integers(-2000, 2000, 5).astype(np.int32)
    exact = alpha * dequantize64(a, a_scale, a_zero) @ dequantize64(b, b_scale, b_zero, axis=0).T + \
        c * (alpha * np.float64(a_scale) * b_scale)
    names = ["a", "a_scale", "a_zero", "b", "b_scale", "b_zero", "c"]
    constants = {"a_scale": a_scale, "a_zero": a_zero, "b": b, "b_scale": b_scale, "b_zero": b_zero, "c": c}
    if quantized_output:
        y_scale, y_zero = quantization_parameters(exact, np.uint8)
        constants.update(y_scale=y_scale, y_zero=y_zero)
        names += ["y_scale", "y_zero"]
    model = node_model("QGemm", names, {"a": a}, constants, domain=MS, alpha=alpha, transB=1)
    if quantized_output:
        check_node(ctx, model, {"a": a}, quantize64(exact, y_scale, y_zero))
        return
    actual = webnn_run(ctx, model, {"a": a})["y"]
    assert actual.dtype == np.float32
    np.testing.assert_allclose(actual, exact, rtol=1e-5, atol=1e-5 * np.abs(exact).max())
    np.testing.assert_allclose(actual, ort_run(model, {"a": a})["y"], rtol=1e-5, atol=1e-5 * np.abs(exact).max())


# ---------------------------------------------------------------- element-wise, pooling, concatenation
@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_qlinear_binary(ctx, op, dtype):
    a, b = ints(dtype, (2, 3, 8)), ints(dtype, (3, 8))
    a_scale, a_zero = np.float32(0.03), np.asarray(10, dtype)
    b_scale, b_zero = np.float32(0.07), np.asarray(-5 if dtype == np.int8 else 200, dtype)
    fa, fb = dequantize64(a, a_scale, a_zero), dequantize64(b, b_scale, b_zero)
    exact = fa + fb if op == "QLinearAdd" else fa * fb
    y_scale, y_zero = quantization_parameters(exact, dtype)
    constants = {"a_scale": a_scale, "a_zero": a_zero, "b": b, "b_scale": b_scale, "b_zero": b_zero,
                 "y_scale": y_scale, "y_zero": y_zero}
    model = node_model(op, ["a", "a_scale", "a_zero", "b", "b_scale", "b_zero", "y_scale", "y_zero"], {"a": a},
                       constants, domain=MS)
    check_node(ctx, model, {"a": a}, quantize64(exact, y_scale, y_zero))


@pytest.mark.parametrize("op", ["QLinearSigmoid", "QLinearLeakyRelu"])
@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_qlinear_activation(ctx, op, dtype):
    """Every one of the 256 input values."""
    info = np.iinfo(dtype)
    x = np.arange(info.min, info.max + 1).astype(dtype).reshape(4, 64)
    x_scale, x_zero = np.float32(0.05), np.asarray(100 if dtype == np.uint8 else -20, dtype)
    fx = dequantize64(x, x_scale, x_zero)
    exact = 1 / (1 + np.exp(-fx)) if op == "QLinearSigmoid" else np.where(fx >= 0, fx, 0.1 * fx)
    y_scale, y_zero = quantization_parameters(exact, dtype)
    model = node_model(op, ["x", "x_scale", "x_zero", "y_scale", "y_zero"], {"x": x},
                       {"x_scale": x_scale, "x_zero": x_zero, "y_scale": y_scale, "y_zero": y_zero}, domain=MS,
                       **({"alpha": 0.1} if op == "QLinearLeakyRelu" else {}))
    check_node(ctx, model, {"x": x}, quantize64(exact, y_scale, y_zero))


@pytest.mark.parametrize("opset, axis", [(13, -1), (13, 1), (12, 1)])
def test_qlinear_softmax(ctx, opset, axis):
    """Before opset 13 the dims from axis on are normalized together."""
    x = ints(np.uint8, (2, 3, 5))
    x_scale, x_zero = np.float32(0.1), np.uint8(128)
    fx = dequantize64(x, x_scale, x_zero)
    flat = fx.reshape(2, 15) if opset < 13 else fx
    exp = np.exp(flat - flat.max(axis=axis, keepdims=True))
    exact = (exp / exp.sum(axis=axis, keepdims=True)).reshape(fx.shape)
    y_scale, y_zero = np.float32(1 / 256), np.uint8(0)
    model = node_model("QLinearSoftmax", ["x", "x_scale", "x_zero", "y_scale", "y_zero"], {"x": x},
                       {"x_scale": x_scale, "x_zero": x_zero, "y_scale": y_scale, "y_zero": y_zero}, domain=MS,
                       opset=opset, axis=axis)
    check_node(ctx, model, {"x": x}, quantize64(exact, y_scale, y_zero))


@pytest.mark.parametrize("channels_last", [0, 1])
def test_qlinear_global_average_pool(ctx, channels_last):
    x = ints(np.uint8, (2, 5, 6, 3) if channels_last else (2, 3, 5, 6))
    x_scale, x_zero = np.float32(0.02), np.uint8(90)
    exact = dequantize64(x, x_scale, x_zero).mean(axis=(1, 2) if channels_last else (2, 3), keepdims=True)
    y_scale, y_zero = quantization_parameters(exact, np.uint8)
    model = node_model("QLinearGlobalAveragePool", ["x", "x_scale", "x_zero", "y_scale", "y_zero"], {"x": x},
                       {"x_scale": x_scale, "x_zero": x_zero, "y_scale": y_scale, "y_zero": y_zero}, domain=MS,
                       channels_last=channels_last)
    check_node(ctx, model, {"x": x}, quantize64(exact, y_scale, y_zero))


@pytest.mark.parametrize("count_include_pad", [0, 1])
def test_qlinear_average_pool(ctx, count_include_pad):
    x = ints(np.int8, (1, 2, 7, 7))
    x_scale, x_zero = np.float32(0.02), np.int8(-10)
    fx = np.pad(dequantize64(x, x_scale, x_zero), [(0, 0), (0, 0), (1, 1), (1, 1)])
    ones = np.pad(np.ones((7, 7)), 1) if not count_include_pad else np.ones((9, 9))
    sums = sum(fx[:, :, i:i + 7:2, j:j + 7:2] for i in range(3) for j in range(3))
    counts = sum(ones[i:i + 7:2, j:j + 7:2] for i in range(3) for j in range(3))
    exact = sums / counts
    y_scale, y_zero = quantization_parameters(exact, np.int8)
    model = node_model("QLinearAveragePool", ["x", "x_scale", "x_zero", "y_scale", "y_zero"], {"x": x},
                       {"x_scale": x_scale, "x_zero": x_zero, "y_scale": y_scale, "y_zero": y_zero}, domain=MS,
                       kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=count_include_pad)
    check_node(ctx, model, {"x": x}, quantize64(exact, y_scale, y_zero))


def test_qlinear_concat(ctx):
    """Inputs of different scales (one a constant) requantized to the output's."""
    parts = [ints(np.uint8, (2, c, 3)) for c in (2, 4, 1)]
    scales = [np.float32(s) for s in (0.02, 0.05, 0.01)]
    zeros = [np.uint8(z) for z in (128, 100, 0)]
    exact = np.concatenate([dequantize64(p, s, z) for p, s, z in zip(parts, scales, zeros)], axis=1)
    y_scale, y_zero = quantization_parameters(exact, np.uint8)
    feeds = {"x0": parts[0], "x1": parts[1]}
    constants = {"y_scale": y_scale, "y_zero": y_zero, "x2": parts[2]}
    names = ["y_scale", "y_zero"]
    for i, (scale, zero) in enumerate(zip(scales, zeros)):
        constants.update({f"s{i}": scale, f"z{i}": zero})
        names += [f"x{i}", f"s{i}", f"z{i}"]
    model = node_model("QLinearConcat", names, feeds, constants, domain=MS, axis=-2)
    check_node(ctx, model, feeds, quantize64(exact, y_scale, y_zero))


# ---------------------------------------------------------------- models quantized by quantize_static
def _weight(shape, scale=0.3):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def conv_net():
    """A small float conv net: conv + bias, ReLU, SiLU (Sigmoid, Mul), LeakyRelu, a residual Add,
    Concat, max and average pooling, global average pooling, Gemm."""
    f = TensorProto.FLOAT
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("Sigmoid", ["c2"], ["s2"]),
        helper.make_node("Mul", ["c2", "s2"], ["silu"]),
        helper.make_node("Add", ["silu", "r1"], ["res"]),
        helper.make_node("Conv", ["res", "w3"], ["c3"], strides=[2, 2], pads=[1, 1, 1, 1], group=8),
        helper.make_node("LeakyRelu", ["c3"], ["l3"], alpha=0.1),
        helper.make_node("MaxPool", ["res"], ["m"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Concat", ["l3", "m"], ["cat"], axis=1),
        helper.make_node("AveragePool", ["cat"], ["a"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("GlobalAveragePool", ["a"], ["g"]),
        helper.make_node("Flatten", ["g"], ["flat"]),
        helper.make_node("Gemm", ["flat", "wf", "bf"], ["y"], transB=1),
    ]
    initializers = {"w1": _weight((8, 3, 3, 3)), "b1": _weight(8, 0.1), "w2": _weight((8, 8, 3, 3), 0.15),
                    "b2": _weight(8, 0.1), "w3": _weight((8, 1, 3, 3)), "wf": _weight((10, 16)), "bf": _weight(10, 0.1)}
    graph = helper.make_graph(nodes, "conv_net", [helper.make_tensor_value_info("x", f, [1, 3, 12, 12])],
                              [helper.make_tensor_value_info("y", f, [1, 10])],
                              [numpy_helper.from_array(v, k) for k, v in initializers.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model, "x", (1, 3, 12, 12)


def matmul_net():
    """A small float MLP: MatMul + Add, ReLU, MatMul + Add, Sigmoid."""
    f = TensorProto.FLOAT
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["m1"]), helper.make_node("Add", ["m1", "b1"], ["a1"]),
             helper.make_node("Relu", ["a1"], ["r1"]), helper.make_node("MatMul", ["r1", "w2"], ["m2"]),
             helper.make_node("Add", ["m2", "b2"], ["a2"]), helper.make_node("Sigmoid", ["a2"], ["y"])]
    initializers = {"w1": _weight((16, 32)), "b1": _weight(32, 0.1), "w2": _weight((32, 8)), "b2": _weight(8, 0.1)}
    graph = helper.make_graph(nodes, "matmul_net", [helper.make_tensor_value_info("x", f, [4, 16])],
                              [helper.make_tensor_value_info("y", f, [4, 8])],
                              [numpy_helper.from_array(v, k) for k, v in initializers.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model, "x", (4, 16)


class RandomReader(quantization.CalibrationDataReader):
    """A few standard-normal inputs."""

    def __init__(self, name, shape, count=3, seed=0):
        rng = np.random.default_rng(seed)
        self.feeds = iter([{name: rng.standard_normal(shape).astype(np.float32)} for _ in range(count)])

    def get_next(self):
        return next(self.feeds, None)


def quantize_static(model, name, shape, tmp_path, **options):
    """``model`` through onnxruntime.quantization.quantize_static (weights int8), calibrated on a few
    random inputs; ``options`` go to it."""
    source, target = tmp_path / "float.onnx", tmp_path / "quantized.onnx"
    onnx.save(model, str(source))
    options.setdefault("weight_type", quantization.QuantType.QInt8)
    quantization.quantize_static(str(source), str(target), RandomReader(name, shape), **options)
    return onnx.load(str(target))


def output_step(model, name):
    """The largest scale of the DequantizeLinear that gives output ``name``."""
    producer = next(n for n in model.graph.node if name in n.output)
    assert producer.op_type == "DequantizeLinear", producer.op_type
    scale = next(t for t in model.graph.initializer if t.name == producer.input[1])
    return float(np.max(numpy_helper.to_array(scale)))


def assert_within_steps(actual, expected, step, steps, what=""):
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    difference = float(np.abs(actual.astype(np.float64) - expected).max())
    assert difference <= steps * step * (1 + 1e-6), f"{what}: off by {difference / step:.2f} steps of {step:.4g}"


def op_types(model):
    return {n.op_type for n in model.graph.node}


STATIC_CASES = [pytest.param(net, fmt, per_channel, activation, id=f"{net.__name__}-{fmt}-"
                             f"{'per-channel' if per_channel else 'per-tensor'}-{activation}")
                for net in (conv_net, matmul_net) for fmt in ("QDQ", "QOperator") for per_channel in (False, True)
                for activation in ("QUInt8", "QInt8")]


@pytest.mark.parametrize("net, fmt, per_channel, activation", STATIC_CASES)
def test_quantize_static(ctx, tmp_path, net, fmt, per_channel, activation):
    """QDQ: against ONNX Runtime's float path (optimizations off: DequantizeLinear, float op,
    QuantizeLinear); its int32 biases are DequantizeLinear nodes folded at conversion. QOperator: with
    reduce_range (7-bit weights) ONNX Runtime's integer kernels are exact on every CPU, and are the
    reference. Within two output steps: a value one step off early can move a later one."""
    model, name, shape = net()
    qdq = fmt == "QDQ"
    quantized = quantize_static(model, name, shape, tmp_path, quant_format=getattr(quantization.QuantFormat, fmt),
                                per_channel=per_channel, reduce_range=not qdq,
                                activation_type=getattr(quantization.QuantType, activation))
    if not qdq:
        assert {"QLinearConv" if net is conv_net else "QLinearMatMul"} <= op_types(quantized), op_types(quantized)
    x = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    actual = webnn_run(ctx, quantized, {name: x})["y"]
    expected = ort_run(quantized, {name: x}, optimize=not qdq)["y"]
    assert_within_steps(actual, expected, output_step(quantized, "y"), 2, f"{fmt} against ONNX Runtime")
    # and against the float model, within the quantization's own error
    float_y = ort_run(model, {name: x})["y"]
    assert np.abs(actual - float_y).max() <= 0.1 * np.abs(float_y).max() + 4 * output_step(quantized, "y")


def _at_size(model, size):
    """The vision model with its input pinned to [1, 3, size, size]."""
    dims = model.graph.input[0].type.tensor_type.shape.dim
    for dim, value in zip(dims, (1, 3, size, size)):
        dim.Clear()
        dim.dim_value = value
    for output in model.graph.output:
        output.type.tensor_type.shape.dim[0].Clear()
        output.type.tensor_type.shape.dim[0].dim_value = 1
    return model


@pytest.mark.parametrize("fmt, activation", [("QDQ", "QUInt8"), ("QDQ", "QInt8"), ("QOperator", "QUInt8")])
def test_quantized_mobilenet_v2(ctx, tmp_path, fmt, activation):
    """tests/onnx_models' MobileNetV2 (Conv and BatchNormalization unfused, ReLU6 as Clip) quantized
    per channel, int8 weights, at 64 x 64. Deep: a value one step off moves later ones a little (the
    QOperator form, with reduce_range, gives ONNX Runtime's bits here)."""
    model = _at_size(vision.mobilenet_v2(seed=0, classes=100), 64)
    qdq = fmt == "QDQ"
    quantized = quantize_static(model, "input", (1, 3, 64, 64), tmp_path,
                                quant_format=getattr(quantization.QuantFormat, fmt), per_channel=True,
                                reduce_range=not qdq, activation_type=getattr(quantization.QuantType, activation))
    x = np.random.default_rng(6).standard_normal((1, 3, 64, 64)).astype(np.float32)
    (name,) = [o.name for o in quantized.graph.output]
    actual = webnn_run(ctx, quantized, {"input": x})[name]
    expected = ort_run(quantized, {"input": x}, optimize=not qdq)[name]
    step = output_step(quantized, name)
    # As close as ONNX Runtime's own optimized (integer) and unoptimized (float) runs are to each
    # other: at most 4 steps apart, 1.2 on average.
    assert_within_steps(actual, expected, step, 4, f"{fmt} against ONNX Runtime")
    assert np.abs(actual - expected).mean() <= 1.5 * step


def test_quantized_yolov8_style_qoperator(ctx, tmp_path):
    """tests/onnx_models' YOLOv8-style detector in the QOperator form: QLinearConv, QLinearSigmoid and
    QLinearMul (SiLU), QLinearConcat, QLinearAdd, QLinearSoftmax (the DFL), reduce_range weights
    (ONNX Runtime exact on every CPU)."""
    model = _at_size(vision.yolov8(size=64, seed=0), 64)
    quantized = quantize_static(model, "input", (1, 3, 64, 64), tmp_path,
                                quant_format=quantization.QuantFormat.QOperator, per_channel=True, reduce_range=True,
                                activation_type=quantization.QuantType.QUInt8)
    assert {"QLinearConv", "QLinearSigmoid", "QLinearMul", "QLinearConcat", "QLinearSoftmax"} <= op_types(quantized)
    x = np.random.default_rng(7).standard_normal((1, 3, 64, 64)).astype(np.float32)
    (name,) = [o.name for o in quantized.graph.output]
    actual = webnn_run(ctx, quantized, {"input": x})[name]
    expected = ort_run(quantized, {"input": x})[name]
    step = output_step(quantized, name)
    assert_within_steps(actual, expected, step, 4, "against ONNX Runtime")
    assert np.abs(actual - expected).mean() <= 1.5 * step


@pytest.mark.parametrize("activation", ["QUInt8", "QInt8"])
def test_quantized_yolov8_style_qdq(ctx, tmp_path, activation):
    """The YOLOv8-style detector in the QDQ form, per channel: quantized convolutions, SiLU as
    DequantizeLinear -> Sigmoid -> QuantizeLinear -> DequantizeLinear -> Mul -> QuantizeLinear (one
    table lookup per element), splits and concats, the DFL softmax. Against ONNX Runtime's float path
    (optimizations off), within a few output steps."""
    model = _at_size(vision.yolov8(size=64, seed=0), 64)
    quantized = quantize_static(model, "input", (1, 3, 64, 64), tmp_path, quant_format=quantization.QuantFormat.QDQ,
                                per_channel=True, activation_type=getattr(quantization.QuantType, activation))
    x = np.random.default_rng(8).standard_normal((1, 3, 64, 64)).astype(np.float32)
    (name,) = [o.name for o in quantized.graph.output]
    actual = webnn_run(ctx, quantized, {"input": x})[name]
    expected = ort_run(quantized, {"input": x}, optimize=False)[name]
    step = output_step(quantized, name)
    assert_within_steps(actual, expected, step, 4, "against ONNX Runtime")
    assert np.abs(actual - expected).mean() <= 1.5 * step


# ---------------------------------------------------------------- DequantizeLinear folded at conversion
DEQUANTIZE_CASES = {
    # name: (data, scale, zero point, axis)
    "int32 bias per channel": (np.array([[5, -7, 2**24 + 1, -(2**24 + 3), 2**31 - 1, -2**31]], np.int32).T.repeat(3, 1),
                               np.float32([3e-4, 7.1e-3, 0.25]), None, 1),
    "int32 large values": (RNG.integers(-2**31, 2**31 - 1, (4, 6)).astype(np.int32), np.float32(1.37e-5), None, 1),
    "int32 to float16": (RNG.integers(-2**20, 2**20, (4, 6)).astype(np.int32), np.float16(3e-3), None, 1),
    "int16 per axis": (RNG.integers(-2**15, 2**15, (5, 3)).astype(np.int16), np.float32([0.1, 0.01, 0.001]),
                       np.int16([-3, 0, 1000]), 1),
    "uint16": (RNG.integers(0, 2**16, (7,)).astype(np.uint16), np.float32(0.013), np.uint16(30000), 1),
    "int8 per axis 0": (ints(np.int8, (4, 3, 2)), np.float32([0.1, 0.2, 0.3, 0.4]), np.int8([0, 1, -1, 5]), 0),
    "uint8 one-element scale": (ints(np.uint8, (6,)), np.float32([0.02]), np.uint8([128]), 1),
}


@pytest.mark.parametrize("case", DEQUANTIZE_CASES, ids=list(DEQUANTIZE_CASES))
def test_dequantize_constants_bitwise_as_onnx_runtime(ctx, case):
    """Constant DequantizeLinear (the int32 biases quantize_static writes, int16 weights WebNN has no
    type for) folds to ONNX Runtime's bits: x - zero point in int32, to float32, times the scale."""
    data, scale, zero, axis = DEQUANTIZE_CASES[case]
    constants = {"q": data, "scale": scale, **({} if zero is None else {"zero": zero})}
    node = helper.make_node("DequantizeLinear", ["q", "scale"] + ([] if zero is None else ["zero"]), ["d"], axis=axis)
    model = make_model([node, helper.make_node("Identity", ["d"], ["y"])], {}, ["y"], constants, opset=21)
    model.ir_version = 10
    actual = webnn_run(ctx, model, {})["y"]
    expected = ort_run(model, {})["y"]
    assert actual.dtype == expected.dtype and actual.tobytes() == expected.tobytes()


# ---------------------------------------------------------------- quantize_dynamic
def quantize_dynamic(model, tmp_path, **options):
    source, target = tmp_path / "float.onnx", tmp_path / "dynamic.onnx"
    onnx.save(model, str(source))
    quantization.quantize_dynamic(str(source), str(target), **options)
    return onnx.load(str(target))


def ort_run_dynamic(model, feeds):
    """ort_run of a quantize_dynamic model; skips where ONNX Runtime has no ConvInteger kernel."""
    try:
        return ort_run(model, feeds)
    except Exception as error:  # noqa: BLE001 (ONNX Runtime's NotImplemented)
        if "ConvInteger" in str(error) and "NOT_IMPLEMENTED" in str(error):
            pytest.skip(f"onnxruntime {ort.__version__} has no ConvInteger kernel for int8 weights (1.19 has none)")
        raise


@pytest.mark.parametrize("net", [conv_net, matmul_net])
def test_quantize_dynamic(ctx, tmp_path, net):
    """DynamicQuantizeLinear + ConvInteger / MatMulInteger (exact int32 sums) + the float scaling;
    reduce_range keeps ONNX Runtime's integer kernels exact on every CPU."""
    model, name, shape = net()
    quantized = quantize_dynamic(model, tmp_path, reduce_range=True)
    assert ("ConvInteger" if net is conv_net else "MatMulInteger") in op_types(quantized), op_types(quantized)
    x = np.random.default_rng(8).standard_normal(shape).astype(np.float32)
    actual = webnn_run(ctx, quantized, {name: x})["y"]
    float_y = ort_run(model, {name: x})["y"]
    assert np.abs(actual - float_y).max() <= 0.05 * np.abs(float_y).max()
    expected = ort_run_dynamic(quantized, {name: x})["y"]
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-5 * np.abs(expected).max())


@pytest.mark.parametrize("net", [matmul_net, conv_net])
def test_quantize_dynamic_products_run_on_integers(ctx, tmp_path, net):
    """quantize_dynamic's MatMulInteger | ConvInteger -> Cast -> Mul(a_scale * b_scale) becomes one
    product or convolution of dequantized values, which runs on integers with a float32 result."""
    model, name, shape = net()
    quantized = quantize_dynamic(model, tmp_path)
    graph = webnn.onnx.load(quantized, ctx)
    summary = dict(graph.describe_plan()["passes"])["quantized_ops"]
    # conv_net: two convolutions and a matmul; its depthwise convolution runs in float
    assert summary.startswith("2 ops run on integers (quantizedMatmul" if net is matmul_net else
                              "3 ops run on integers (quantizedConv2d"), summary
    x = np.random.default_rng(9).standard_normal(shape).astype(np.float32)
    expected = ort_run_dynamic(quantized, {name: x})["y"]
    np.testing.assert_allclose(graph.compute({name: x})["y"], expected, rtol=1e-5, atol=1e-6 * np.abs(expected).max())


@pytest.mark.parametrize("case", ["zero_points_bias", "per_column", "int8_a", "no_zero_points"])
def test_matmul_integer_to_float(ctx, case):
    """ONNX Runtime's own fused node, as its optimizer saves it: against ONNX Runtime."""
    rng = np.random.default_rng(11)
    a_type = np.int8 if case == "int8_a" else np.uint8
    a = rng.integers(np.iinfo(a_type).min, np.iinfo(a_type).max + 1, (2, 5, 40)).astype(a_type)
    constants = {"b": rng.integers(-128, 128, (40, 24)).astype(np.int8),
                 "b_scale": (rng.random(24 if case == "per_column" else 1) * 0.02 + 0.001).astype(np.float32)}
    inputs = ["a", "b", "a_scale", "b_scale"]
    feeds = {"a": a, "a_scale": np.array([0.037], np.float32)}
    if case != "no_zero_points":
        feeds["a_zero"] = np.array([int(a.mean())], a_type)
        constants["b_zero"] = rng.integers(-3, 4, constants["b_scale"].shape).astype(np.int8)
        inputs += ["a_zero", "b_zero"]
    if case == "zero_points_bias":
        constants["bias"] = rng.standard_normal(24).astype(np.float32)
        inputs.append("bias")
    node = helper.make_node("MatMulIntegerToFloat", inputs, ["y"], domain=MS)
    model = make_model([node], feeds, ["y"], constants, contrib=True)
    graph = webnn.onnx.load(model, ctx)
    assert "quantizedMatmul" in dict(graph.describe_plan()["passes"])["quantized_ops"]
    np.testing.assert_allclose(graph.compute(feeds)["y"], ort_run(model, feeds)["y"], rtol=1e-5, atol=1e-5)


def test_matmul_integer_read_twice_is_not_fused(ctx):
    """A MatMulInteger whose int32 result has another reader keeps its exact float emulation."""
    rng = np.random.default_rng(12)
    a = rng.integers(0, 256, (3, 20)).astype(np.uint8)
    constants = {"b": rng.integers(-128, 128, (20, 6)).astype(np.int8), "s": np.array(0.01, np.float32),
                 "sb": np.array(0.5, np.float32)}
    nodes = [helper.make_node("MatMulInteger", ["a", "b"], ["p"]), helper.make_node("Cast", ["p"], ["f"], to=1),
             helper.make_node("Mul", ["s", "sb"], ["scale"]), helper.make_node("Mul", ["f", "scale"], ["y"]),
             helper.make_node("Identity", ["p"], ["p_out"])]
    model = make_model(nodes, {"a": a}, ["y", "p_out"], constants)
    got, want = webnn_run(ctx, model, {"a": a}), ort_run(model, {"a": a})
    np.testing.assert_array_equal(got["p_out"], want["p_out"])
    np.testing.assert_allclose(got["y"], want["y"], rtol=1e-6)


def lstm_model(directions=1, input_size=8, hidden=16, steps=5, batch=2, initial_state=False):
    f = TensorProto.FLOAT
    inputs = ["x", "W", "R", "B"] + (["", "h0", "c0"] if initial_state else [])
    node = helper.make_node("LSTM", inputs, ["y", "y_h", "y_c"], hidden_size=hidden,
                            direction="bidirectional" if directions == 2 else "forward")
    initializers = {"W": _weight((directions, 4 * hidden, input_size)), "R": _weight((directions, 4 * hidden, hidden)),
                    "B": _weight((directions, 8 * hidden), 0.1)}
    if initial_state:
        initializers.update(h0=_weight((directions, batch, hidden), 0.5), c0=_weight((directions, batch, hidden), 0.5))
    graph = helper.make_graph([node], "lstm", [helper.make_tensor_value_info("x", f, [steps, batch, input_size])],
                              [helper.make_tensor_value_info(n, f, None) for n in ("y", "y_h", "y_c")],
                              [numpy_helper.from_array(v, k) for k, v in initializers.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    return model


def float_lstm_of(quantized):
    """The float ONNX LSTM that a DynamicQuantizeLSTM computes before its activations' rounding: W and
    R dequantized (per direction or per gate column) and transposed to LSTM's layout."""
    node = next(n for n in quantized.graph.node if n.op_type == "DynamicQuantizeLSTM")
    values = {t.name: numpy_helper.to_array(t) for t in quantized.graph.initializer}
    inputs = list(node.input) + [""] * (12 - len(node.input))

    def dequantized(index, scale_index):
        q, scale, zero = (values[inputs[i]] for i in (index, scale_index, scale_index + 1))
        shape = (q.shape[0], 1, -1) if scale.ndim == 2 else (-1, 1, 1)
        w = (q.astype(np.float64) - zero.astype(np.float64).reshape(shape)) * scale.astype(np.float64).reshape(shape)
        return w.astype(np.float32).transpose(0, 2, 1)

    weights = {"W": dequantized(1, 8), "R": dequantized(2, 10)}
    attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    lstm = helper.make_node("LSTM", [inputs[0], "W", "R"] + inputs[3:8], list(node.output), **attributes)
    others = {k: v for k, v in values.items() if k in inputs[3:8]}
    graph = helper.make_graph([lstm], "float_lstm", list(quantized.graph.input), list(quantized.graph.output),
                              [numpy_helper.from_array(v, k) for k, v in {**weights, **others}.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    return model


def check_dynamic_lstm(ctx, quantized, x, against_ort=True):
    """Close to the float LSTM on the dequantized weights (what the mapping computes), and to ONNX
    Runtime's DynamicQuantizeLSTM within its rounding of X and the hidden state to uint8."""
    actual = webnn_run(ctx, quantized, {"x": x})
    float_run = ort_run(float_lstm_of(quantized), {"x": x})
    quantized_run = ort_run(quantized, {"x": x}) if against_ort else None
    for name in ("y", "y_h", "y_c"):
        np.testing.assert_allclose(actual[name], float_run[name], rtol=1e-4, atol=2e-5, err_msg=name)
        if against_ort:
            np.testing.assert_allclose(actual[name], quantized_run[name], atol=0.05, err_msg=name)


@pytest.mark.parametrize("directions", [1, 2])
def test_quantize_dynamic_lstm(ctx, tmp_path, directions):
    quantized = quantize_dynamic(lstm_model(directions), tmp_path)
    assert "DynamicQuantizeLSTM" in op_types(quantized)
    check_dynamic_lstm(ctx, quantized, np.random.default_rng(9).standard_normal((5, 2, 8)).astype(np.float32))


@pytest.mark.parametrize("zero_points", ["per direction", "per column"])
def test_dynamic_quantize_lstm_per_column_uint8(ctx, zero_points):
    """A DynamicQuantizeLSTM written by hand: uint8 weights with scales per direction and gate column,
    bidirectional, initial states. Zero points that differ between the columns of a direction are
    checked against the float LSTM alone: ONNX Runtime refuses them."""
    D, I, H, S, B = 2, 6, 4, 3, 2
    w, r = ints(np.uint8, (D, I, 4 * H)), ints(np.uint8, (D, H, 4 * H))
    constants = {"W": w, "R": r, "B": _weight((D, 8 * H), 0.1), "h0": _weight((D, B, H), 0.5),
                 "c0": _weight((D, B, H), 0.5),
                 "W_scale": RNG.uniform(0.002, 0.01, (D, 4 * H)).astype(np.float32),
                 "W_zero": np.full((D, 4 * H), 120, np.uint8),
                 "R_scale": RNG.uniform(0.002, 0.01, (D, 4 * H)).astype(np.float32),
                 "R_zero": np.full((D, 4 * H), 131, np.uint8)}
    node = helper.make_node("DynamicQuantizeLSTM", ["x", "W", "R", "B", "", "h0", "c0", "", "W_scale", "W_zero",
                                                    "R_scale", "R_zero"], ["y", "y_h", "y_c"], domain=MS,
                            hidden_size=H, direction="bidirectional")
    if zero_points == "per column":
        constants.update(W_zero=ints(np.uint8, (D, 4 * H), 100, 150), R_zero=ints(np.uint8, (D, 4 * H), 100, 150))
    x = np.random.default_rng(10).standard_normal((S, B, I)).astype(np.float32)
    model = make_model([node], {"x": x}, ["y", "y_h", "y_c"], constants, opset=14, contrib=True)
    check_dynamic_lstm(ctx, model, x, against_ort=zero_points == "per direction")


# ---------------------------------------------------------------- float16 models
@pytest.mark.parametrize("keep_io_types", [True, False])
@pytest.mark.parametrize("net", [conv_net, matmul_net])
def test_convert_float_to_float16(ctx, net, keep_io_types):
    """onnxruntime.transformers.float16.convert_float_to_float16: with keep_io_types it appends the
    input Casts after the nodes that read them (ONNX Runtime sorts the graph; so does the importer)."""
    float16 = pytest.importorskip("onnxruntime.transformers.float16")
    model, name, shape = net()
    converted = float16.convert_float_to_float16(model, keep_io_types=keep_io_types)
    produced = {o for n in converted.graph.node for o in n.output}
    first = converted.graph.node[0]
    if keep_io_types:  # the case this test is for: the first node reads a Cast that comes later
        assert any(i in produced for i in first.input), [n.op_type for n in converted.graph.node]
    x = np.random.default_rng(11).standard_normal(shape).astype(np.float32 if keep_io_types else np.float16)
    actual = webnn_run(ctx, converted, {name: x})["y"]
    expected = ort_run(converted, {name: x})["y"]
    assert actual.dtype == expected.dtype == (np.float32 if keep_io_types else np.float16)
    tolerance = 1e-2 * float(np.abs(expected.astype(np.float32)).max())
    np.testing.assert_allclose(actual.astype(np.float32), expected.astype(np.float32), rtol=1e-2, atol=tolerance)


# ---------------------------------------------------------------- node order
def _reordered(model, order):
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    nodes = [copy.graph.node[i] for i in order]
    nodes = [onnx.NodeProto.FromString(n.SerializeToString()) for n in nodes]
    del copy.graph.node[:]
    copy.graph.node.extend(nodes)
    return copy


@pytest.mark.parametrize("seed", [0, 1])
def test_shuffled_nodes_load_as_the_ordered_graph(ctx, seed):
    """Nodes in any order (ONNX requires a topological one; ONNX Runtime sorts them anyway) give the
    ordered graph's bits."""
    model, name, shape = conv_net()
    order = np.random.default_rng(seed).permutation(len(model.graph.node))
    shuffled = _reordered(model, order)
    x = np.random.default_rng(12).standard_normal(shape).astype(np.float32)
    want = webnn_run(ctx, model, {name: x})["y"]
    got = webnn_run(ctx, shuffled, {name: x})["y"]
    assert got.tobytes() == want.tobytes()
    np.testing.assert_allclose(got, ort_run(shuffled, {name: x})["y"], rtol=1e-4, atol=1e-5)


def test_the_order_kept_is_the_files_where_valid(ctx):
    """The sort takes the earliest ready node first: a valid order is kept as it is, and a node is moved
    only after what it reads. Node labels keep their position in the file."""
    from webnn.onnx import _convert
    nodes = [helper.make_node("Relu", ["b"], ["c"], name="C"), helper.make_node("Relu", ["x"], ["a"], name="A"),
             helper.make_node("Relu", ["x"], ["b"], name="B"), helper.make_node("Relu", ["a"], ["d"], name="D")]
    model = make_model(nodes, {"x": np.zeros(2, np.float32)}, ["c", "d"])
    converter = _convert.Converter(model, webnn.MLGraphBuilder(ctx), ctx)
    converter.set("x", np.zeros(2, np.float32))
    assert [(i, n.name) for i, n in converter.in_order(model.graph.node)] == [(1, "A"), (2, "B"), (0, "C"), (3, "D")]
    ordered = [nodes[i] for i in (1, 2, 0, 3)]
    assert [n.name for _, n in converter.in_order(ordered)] == ["A", "B", "C", "D"]


def test_a_subgraph_reading_a_later_node_is_sorted_after_it(ctx):
    """An If branch reads an outer value that a node after the If produces: the If moves after it."""
    f = TensorProto.FLOAT
    one = numpy_helper.from_array(np.float32([1.0]), "one")
    then_branch = helper.make_graph([helper.make_node("Add", ["t", "one"], ["then_y"])], "then", [],
                                    [helper.make_tensor_value_info("then_y", f, [3])])
    else_branch = helper.make_graph([helper.make_node("Sub", ["t", "one"], ["else_y"])], "else", [],
                                    [helper.make_tensor_value_info("else_y", f, [3])])
    nodes = [helper.make_node("If", ["cond"], ["y"], then_branch=then_branch, else_branch=else_branch),
             helper.make_node("Relu", ["x"], ["t"])]
    x = np.float32([-1, 0.5, 2])
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", f, [3]),
                                           helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
                              [helper.make_tensor_value_info("y", f, [3])], [one])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    graph = webnn.onnx.load(model, ctx)
    for condition in (True, False):
        y = graph.compute({"x": x, "cond": np.array(condition).astype(np.uint8)})["y"]
        np.testing.assert_array_equal(y, np.maximum(x, 0) + (1 if condition else -1))


def test_a_cycle_is_refused_naming_its_nodes(ctx):
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="first"),
             helper.make_node("Add", ["a", "c"], ["b"], name="add"),
             helper.make_node("Relu", ["b"], ["c"], name="back"),
             helper.make_node("Relu", ["c"], ["y"], name="after")]
    model = make_model(nodes, {"x": np.zeros(2, np.float32)}, ["y"])
    cycle = r"ONNX node 'add' \(Add\): the graph has a cycle \('add' \(Add\) -> 'back' \(Relu\) -> 'add'"
    with pytest.raises(TypeError, match=cycle):
        webnn.onnx.load(model, ctx)
    loop = make_model([helper.make_node("Add", ["x", "s"], ["s"], name="self")], {"x": np.zeros(2, np.float32)}, ["s"])
    with pytest.raises(TypeError, match=r"ONNX node 'self' \(Add\): the graph has a cycle"):
        webnn.onnx.load(loop, ctx)


def test_a_missing_input_is_still_named(ctx):
    """Out of order and reading a name nothing produces: the importer's error for a missing input."""
    nodes = [helper.make_node("Relu", ["a"], ["y"], name="reader"), helper.make_node("Add", ["x", "nowhere"], ["a"],
                                                                                      name="adder")]
    model = make_model(nodes, {"x": np.zeros(2, np.float32)}, ["y"])
    with pytest.raises(TypeError, match=r"ONNX node 'adder' \(Add\): input 'nowhere' is not produced by any earlier"):
        webnn.onnx.load(model, ctx)
