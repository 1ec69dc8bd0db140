"""Activations in kernel epilogues (compiler/passes/epilogue_fusion.cc): an element-wise unary op after
a conv2d, depthwise conv2d or matmul (after its fused add and clamp) runs in that kernel while the
tile is in cache, and x * sigmoid(x) runs there as SiLU. Fused results equal the separate ops' bit
for bit (the same vector code, element by element) and a float64 reference within float32 rounding."""
import math

import numpy as np
import pytest

import webnn
from webnn import _core

RNG = np.random.default_rng(5)


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _erf(x):
    return np.vectorize(math.erf)(x)


# name -> (builder call on operand y, float64 reference, the plan's step suffix)
ACTIVATIONS = {
    "sigmoid": (lambda b, y: b.sigmoid(y), _sigmoid, "+sigmoid"),
    "silu": (lambda b, y: b.mul(y, b.sigmoid(y)), lambda x: x * _sigmoid(x), "+sigmoid+mul"),
    "silu_swapped": (lambda b, y: b.mul(b.sigmoid(y), y), lambda x: x * _sigmoid(x), "+sigmoid+mul"),
    "hard_swish": (lambda b, y: b.hard_swish(y), lambda x: x * np.clip(x + 3, 0, 6) / 6, "+hardSwish"),
    "hard_sigmoid": (lambda b, y: b.hard_sigmoid(y, alpha=0.3, beta=0.4), lambda x: np.clip(0.3 * x + 0.4, 0, 1),
                     "+hardSigmoid"),
    "tanh": (lambda b, y: b.tanh(y), np.tanh, "+tanh"),
    "gelu": (lambda b, y: b.gelu(y), lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2))), "+gelu"),
    "leaky_relu": (lambda b, y: b.leaky_relu(y, alpha=0.1), lambda x: np.where(x >= 0, x, 0.1 * x), "+leakyRelu"),
    "elu": (lambda b, y: b.elu(y, alpha=0.7), lambda x: np.where(x > 0, x, 0.7 * np.expm1(np.minimum(x, 0))), "+elu"),
    "softplus": (lambda b, y: b.softplus(y), lambda x: np.logaddexp(0, x), "+softplus"),
}


def _conv_reference(x, w, bias, groups, pad, layout):
    """float64 'same'-padded stride-1 convolution, NCHW or NHWC (filter OIHW)."""
    x64 = x.astype(np.float64) if layout == "nchw" else x.astype(np.float64).transpose(0, 3, 1, 2)
    kh, kw = w.shape[2:]
    padded = np.pad(x64, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, (kh, kw), axis=(2, 3))
    cg, og = x64.shape[1] // groups, w.shape[0] // groups
    out = np.concatenate([np.einsum("nchwij,ocij->nohw", windows[:, g * cg:(g + 1) * cg],
                                    w[g * og:(g + 1) * og].astype(np.float64)) for g in range(groups)], axis=1)
    out += bias.astype(np.float64).reshape(1, -1, 1, 1)
    return out if layout == "nchw" else out.transpose(0, 2, 3, 1)


# (channels in, channels out, size, kernel, groups, layout): the conv kernel's paths
CONVS = {
    "nchw_3x3": (8, 24, 12, 3, 1, "nchw"),
    "nchw_transposed": (16, 40, 7, 3, 1, "nchw"),  # 49 pixels: the transposed product
    "nchw_pointwise": (16, 24, 9, 1, 1, "nchw"),
    "nhwc_3x3": (8, 20, 10, 3, 1, "nhwc"),
    "nhwc_pointwise": (16, 36, 6, 1, 1, "nhwc"),
    "grouped": (8, 12, 9, 3, 2, "nchw"),
    "depthwise_nchw": (12, 12, 11, 3, 12, "nchw"),
    "depthwise_nhwc": (70, 70, 5, 3, 70, "nhwc"),  # two channel blocks, the second partial
    "depthwise_nhwc_rows": (20, 20, 9, 3, 20, "nhwc"),  # 18 output rows: an item is a whole row
}


@pytest.mark.parametrize("conv", CONVS)
@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_conv_activation_fused(build_twice, same_results, conv, activation):
    cin, cout, size, k, groups, layout = CONVS[conv]
    pad = k // 2
    shape = (2, cin, size, size) if layout == "nchw" else (2, size, size, cin)
    x = (RNG.standard_normal(shape) * 2).astype(np.float32)
    w = (RNG.standard_normal((cout, cin // groups, k, k)) / math.sqrt(cin // groups * k * k)).astype(np.float32)
    bias = RNG.standard_normal(cout).astype(np.float32)
    apply, reference, suffix = ACTIVATIONS[activation]

    def make(b):
        filt = w if layout == "nchw" else w.transpose(0, 2, 3, 1).copy()
        options = {} if layout == "nchw" else {"input_layout": "nhwc", "filter_layout": "ohwi"}
        y = b.conv2d(b.input("x", data_type="float32", shape=list(shape)), b.constant(filt), bias=b.constant(bias),
                     padding=[pad] * 4, groups=groups, **options)
        return b.build({"y": apply(b, y)})

    graph, plain = build_twice(make, "epilogue_fusion")
    assert _core.plan_steps(graph) == ["conv2d" + suffix]
    got = same_results(graph, plain, {"x": x})["y"]
    want = reference(_conv_reference(x, w, bias, groups, pad, layout))
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)


# (channels in, channels out, height, width, kernel, groups) of NHWC convs whose work items cover part
# of each pixel's output channels: a filter in several L2-sized chunks (1100 x 16 floats per panel,
# 13 panels, the last partial), and groups; 35 pixels end in a partial tile.
PARTIAL_ROW_CONVS = {"filter_chunks": (1100, 200, 7, 5, 1, 1), "groups": (16, 40, 7, 5, 3, 2)}


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("conv", PARTIAL_ROW_CONVS)
@pytest.mark.parametrize("activation", ["hard_swish", "gelu"])
def test_nhwc_conv_activation_over_each_items_columns(threads, conv, activation):
    """The activation runs over each row's columns of the item's panels, once every panel is done."""
    cin, cout, height, width, k, groups = PARTIAL_ROW_CONVS[conv]
    x = RNG.standard_normal((1, height, width, cin)).astype(np.float32)
    w = (RNG.standard_normal((cout, cin // groups, k, k)) / math.sqrt(cin // groups * k * k)).astype(np.float32)
    bias = RNG.standard_normal(cout).astype(np.float32)
    apply, reference, suffix = ACTIVATIONS[activation]
    context = webnn.ml.create_context(num_threads=threads)
    b = webnn.MLGraphBuilder(context)
    y = b.conv2d(b.input("x", data_type="float32", shape=list(x.shape)), b.constant(w.transpose(0, 2, 3, 1).copy()),
                 bias=b.constant(bias), padding=[k // 2] * 4, groups=groups, input_layout="nhwc", filter_layout="ohwi")
    graph = b.build({"y": apply(b, y)})
    assert _core.plan_steps(graph) == ["conv2d" + suffix]
    got = context.compute(graph, {"x": x})["y"]
    x64 = x.astype(np.float64).transpose(0, 3, 1, 2)
    want = reference(_conv_reference(x64, w, bias, groups, k // 2, "nchw")).transpose(0, 2, 3, 1)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("m", [1, 3, 37])  # GEMV rows, then the blocked driver
@pytest.mark.parametrize("activation", ["silu", "gelu", "tanh", "hard_swish"])
def test_matmul_bias_activation_fused(build_twice, same_results, m, activation):
    a = RNG.standard_normal((m, 70)).astype(np.float32)
    w = (RNG.standard_normal((70, 45)) * 0.2).astype(np.float32)
    bias = RNG.standard_normal(45).astype(np.float32)
    apply, reference, suffix = ACTIVATIONS[activation]

    def make(b):
        y = b.add(b.matmul(b.input("a", data_type="float32", shape=[m, 70]), b.constant(w)), b.constant(bias))
        return b.build({"y": apply(b, y)})

    graph, plain = build_twice(make, "epilogue_fusion")
    assert _core.plan_steps(graph) == ["matmul+add" + suffix]
    got = same_results(graph, plain, {"a": a})["y"]
    np.testing.assert_allclose(got, reference(a.astype(np.float64) @ w + bias), rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("threads", [1, 2])
def test_matmul_activation_over_k_blocks_row_groups_and_column_chunks(threads):
    """The in-place GEMM applies the activation once per item (row tiles x B panels), after its last K
    block: K spans three blocks, M two row groups with a partial tile, N a partial panel; at two
    threads the panels are split into chunks."""
    a = RNG.standard_normal((203, 800)).astype(np.float32)
    w = (RNG.standard_normal((800, 45)) * 0.05).astype(np.float32)
    bias = RNG.standard_normal(45).astype(np.float32)
    context = webnn.ml.create_context(num_threads=threads)
    b = webnn.MLGraphBuilder(context)
    y = b.add(b.matmul(b.input("a", data_type="float32", shape=[203, 800]), b.constant(w)), b.constant(bias))
    graph = b.build({"y": b.gelu(y)})
    assert _core.plan_steps(graph) == ["matmul+add+gelu"]
    got = context.compute(graph, {"a": a})["y"]
    np.testing.assert_allclose(got, ACTIVATIONS["gelu"][1](a.astype(np.float64) @ w + bias), rtol=2e-5, atol=2e-5)


def test_residual_add_relu_then_activation_fused_in_order(build_twice, same_results):
    x = RNG.standard_normal((1, 8, 10, 10)).astype(np.float32)
    r = RNG.standard_normal((1, 8, 10, 10)).astype(np.float32)
    w = (RNG.standard_normal((8, 8, 3, 3)) * 0.2).astype(np.float32)

    def make(b):
        y = b.conv2d(b.input("x", data_type="float32", shape=[1, 8, 10, 10]), b.constant(w), padding=[1] * 4)
        y = b.clamp(b.add(y, b.input("r", data_type="float32", shape=[1, 8, 10, 10])), min_value=-1.0, max_value=0.5)
        return b.build({"y": b.mul(y, b.sigmoid(y))})

    graph, plain = build_twice(make, "epilogue_fusion")
    assert _core.plan_steps(graph) == ["conv2d+add+clamp+sigmoid+mul"]
    got = same_results(graph, plain, {"x": x, "r": r})["y"]
    z = np.clip(_conv_reference(x, w, np.zeros(8, np.float32), 1, 1, "nchw") + r, -1.0, 0.5)
    np.testing.assert_allclose(got, z * _sigmoid(z), rtol=2e-5, atol=2e-5)


def _silu_and_sigmoid(b, y):
    s = b.sigmoid(y)
    return {"s": s, "y": b.mul(y, s)}


def _conv_then(b, then):
    w = np.full((4, 4, 1, 1), 0.25, np.float32)
    y = b.conv2d(b.input("x", data_type="float32", shape=[1, 4, 5, 5]), b.constant(w))
    return b.build(then(b, y))


@pytest.mark.parametrize("name,then,steps", [
    # the sigmoid's output is also a graph output: SiLU would lose it
    ("sigmoid read twice", lambda b, y: _silu_and_sigmoid(b, y), ["conv2d", "sigmoid", "mul"]),
    ("x read by a third op", lambda b, y: {"y": b.mul(y, b.sigmoid(y)), "z": b.neg(y)},
     ["conv2d", "elementwise+sigmoid+mul", "neg"]),
    ("mul by another operand", lambda b, y: {"y": b.mul(b.abs(y), b.sigmoid(y))}, ["conv2d", "elementwise+abs+sigmoid+mul"]),
    # the epilogue's order is add, clamp, activation: what follows an activation stays separate
    # (element-wise ops after a kernel's epilogue run as one chain: elementwise_fusion)
    ("add after the activation", lambda b, y: {"y": b.add(b.tanh(y), b.input("r", data_type="float32",
                                                                             shape=[1, 4, 5, 5]))},
     ["conv2d+tanh", "add"]),
    ("relu after the activation", lambda b, y: {"y": b.relu(b.tanh(y))}, ["conv2d+tanh", "relu"]),
    ("two activations", lambda b, y: {"y": b.sigmoid(b.tanh(y))}, ["conv2d+tanh", "sigmoid"]),
])
def test_what_is_not_fused(context, name, then, steps):
    import webnn
    graph = _conv_then(webnn.MLGraphBuilder(context), then)
    assert _core.plan_steps(graph) == steps, name
    x = RNG.standard_normal((1, 4, 5, 5)).astype(np.float32)
    feeds = {"x": x, "r": x} if "add" in name else {"x": x}
    out = graph.compute(feeds)
    conv = np.repeat(x.astype(np.float64).sum(axis=1, keepdims=True) * 0.25, 4, axis=1)
    if "y" in out and name.startswith("sigmoid"):
        np.testing.assert_allclose(out["y"], conv * _sigmoid(conv), rtol=1e-5, atol=1e-6)


def test_float16_conv_fuses_its_activation_between_widening_casts(context):
    # float16 values between nodes are held in float32 (half_widening): the float32 fusion applies and
    # the step rounds its results to float16 values.
    import webnn
    b = webnn.MLGraphBuilder(context)
    w = np.full((4, 4, 1, 1), 0.25, np.float16)
    y = b.conv2d(b.input("x", data_type="float16", shape=[1, 4, 5, 5]), b.constant(w))
    graph = b.build({"y": b.sigmoid(y)})
    assert _core.plan_steps(graph) == ["cast", "conv2d+sigmoid+roundToFloat16", "cast"]
    x = RNG.standard_normal((1, 4, 5, 5)).astype(np.float16)
    want = _sigmoid(np.repeat(x.astype(np.float64).sum(axis=1, keepdims=True) * 0.25, 4, axis=1))
    np.testing.assert_allclose(graph.compute({"x": x})["y"].astype(np.float64), want, rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("case", ["conv_hard_swish_mul_add", "depthwise_relu_mul", "matmul_gelu_add_mul"])
def test_single_value_mul_and_add_after_the_activation_fused(build_twice, case):
    # PP-LCNet's learnable affine after each hard-swish: y = hardSwish(conv(x)) * s + t runs in the
    # convolution's epilogue (to float32 rounding: the two are applied as one scale and shift).
    if case == "matmul_gelu_add_mul":
        x = RNG.standard_normal((5, 30)).astype(np.float32)
        w = (RNG.standard_normal((30, 20)) * 0.3).astype(np.float32)
        bias = RNG.standard_normal(20).astype(np.float32)

        def make(b):
            y = b.gelu(b.add(b.matmul(b.input("x", data_type="float32", shape=[5, 30]), b.constant(w)),
                             b.constant(bias)))
            return b.build({"y": b.mul(b.add(y, b.constant("float32", 0.5)), b.constant("float32", 3.0))})

        z = x.astype(np.float64) @ w + bias
        want = (0.5 * z * (1 + _erf(z / math.sqrt(2))) + 0.5) * 3.0
        steps = ["matmul+add+gelu+add+mul"]
    else:
        cin, cout, groups, k = (6, 10, 1, 3) if case.startswith("conv") else (12, 12, 12, 3)
        x = RNG.standard_normal((1, 7, 8, cin)).astype(np.float32)
        w = (RNG.standard_normal((cout, cin // groups, k, k)) / math.sqrt(cin // groups * k * k)).astype(np.float32)
        bias = RNG.standard_normal(cout).astype(np.float32)

        def make(b):
            y = b.conv2d(b.input("x", data_type="float32", shape=list(x.shape)),
                         b.constant(w.transpose(0, 2, 3, 1).copy()), bias=b.constant(bias), padding=[1] * 4,
                         groups=groups, input_layout="nhwc", filter_layout="ohwi")
            if case.startswith("conv"):
                y = b.add(b.mul(b.hard_swish(y), b.constant("float32", 0.75)), b.constant("float32", -0.2))
            else:
                y = b.mul(b.relu(y), b.constant("float32", -1.5))
            return b.build({"y": y})

        z = _conv_reference(x, w, bias, groups, 1, "nhwc")
        want = z * np.clip(z + 3, 0, 6) / 6 * 0.75 - 0.2 if case.startswith("conv") else np.maximum(z, 0) * -1.5
        steps = ["conv2d+hardSwish+mul+add"] if case.startswith("conv") else ["conv2d+relu+mul"]
    graph, plain = build_twice(make, "epilogue_fusion")
    assert _core.plan_steps(graph) == steps
    got, separate = graph.compute({"x": x})["y"], plain.compute({"x": x})["y"]
    np.testing.assert_allclose(got, separate, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)


def test_nothing_fuses_after_the_affine_tail(build_twice):
    # relu, * 2, then a sigmoid: the sigmoid would have to run after the scale, so it runs alone.
    x = RNG.standard_normal((1, 4, 5, 5)).astype(np.float32)
    w = (RNG.standard_normal((4, 4, 1, 1)) * 0.5).astype(np.float32)

    def make(b):
        y = b.relu(b.conv2d(b.input("x", data_type="float32", shape=[1, 4, 5, 5]), b.constant(w)))
        return b.build({"y": b.sigmoid(b.mul(b.constant("float32", 2.0), y))})

    graph, plain = build_twice(make, "epilogue_fusion")
    assert _core.plan_steps(graph) == ["conv2d+relu+mul", "sigmoid"]
    want = _sigmoid(2 * np.maximum(_conv_reference(x, w, np.zeros(4, np.float32), 1, 0, "nchw"), 0))
    np.testing.assert_allclose(graph.compute({"x": x})["y"], want, rtol=2e-6, atol=2e-6)
    np.testing.assert_allclose(plain.compute({"x": x})["y"], want, rtol=2e-6, atol=2e-6)
