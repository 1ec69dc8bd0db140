"""The 2022 Working Draft conveniences (python/webnn/_compat.py): each one against the
current-spec graph it stands for (numerically equal results), plus its validation.

Tests of ops not registered yet are skipped.
"""
import numpy as np
import pytest

import webnn
from webnn import MLActivation
from webnn._compat import ACTIVATION_OPS

REGISTERED = {info["name"] for info in webnn._core.op_infos()}
RNG = np.random.default_rng(2022)
LBL = r"\[lbl\]"


def needs(*ops):
    missing = [op for op in ops if op not in REGISTERED]
    return pytest.mark.skipif(bool(missing), reason=f"not registered yet: {', '.join(missing)}")


def random(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def compute(context, make, inputs):
    """Builds ``make(builder, operands)`` (operands: one graph input per entry of ``inputs``)
    and runs it; returns the arrays in output order."""
    builder = webnn.MLGraphBuilder(context)
    operands = {name: builder.input(name, {"dataType": value.dtype.name, "shape": list(value.shape)})
                for name, value in inputs.items()}
    result = make(builder, operands)
    outputs = result if isinstance(result, (list, tuple)) else [result]
    graph = builder.build({f"out{i}": out for i, out in enumerate(outputs)})
    results = graph.compute(inputs)
    return [results[f"out{i}"] for i in range(len(outputs))]


def assert_same(context, compat, current, inputs):
    """The 2022 form and its current-spec equivalent give identical results."""
    got = compute(context, compat, inputs)
    want = compute(context, current, inputs)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


# ---------------------------------------------------------------- squeeze
@needs("reshape")
@pytest.mark.parametrize("shape, axes, expected", [
    ([1, 3, 1, 2], None, [3, 2]),
    ([1, 3, 1, 2], [0], [3, 1, 2]),
    ([1, 3, 1, 2], [2, 0], [3, 2]),
    ([3, 2], None, [3, 2]),
    ([1, 1], None, []),
    ([1], [0], []),
    ([], None, []),
])
def test_squeeze_matches_reshape(context, shape, axes, expected):
    x = random(*shape)
    assert_same(context, lambda b, o: b.squeeze(o["x"], axes), lambda b, o: b.reshape(o["x"], expected), {"x": x})
    builder = webnn.MLGraphBuilder(context)
    assert builder.squeeze(builder.input("x", {"dataType": "float32", "shape": shape}), axes=axes).shape == expected


@needs("reshape")
def test_squeeze_option_forms(builder):
    x = builder.input("x", {"dataType": "int32", "shape": [1, 4, 1]})
    assert builder.squeeze(x, {"axes": [2], "label": "s"}).shape == [1, 4]
    assert builder.squeeze(x, axes=[0], label="s").shape == [4, 1]
    assert builder.squeeze(x, {}).shape == [4]
    assert builder.squeeze(x).data_type == "int32"


@needs("reshape")
@pytest.mark.parametrize("axes, message", [
    ([3], "out of range"), ([-1], "out of range"), ([0, 0], "duplicates"), ([1], "not 1"),
    (["0"], "integers"), ([True], "integers"), (0, "sequence"),
])
def test_squeeze_rejects_bad_axes(builder, axes, message):
    x = builder.input("x", {"dataType": "float32", "shape": [1, 4, 1]})
    with pytest.raises(TypeError, match=LBL + r" squeeze: .*" + message):
        builder.squeeze(x, axes, label="lbl")


@needs("reshape")
def test_squeeze_rejects_a_non_operand_and_unknown_options(builder):
    with pytest.raises(TypeError, match=LBL + " squeeze: input must be an MLOperand"):
        builder.squeeze([1, 2], label="lbl")
    x = builder.input("x", {"dataType": "float32", "shape": [1]})
    with pytest.raises(TypeError, match=LBL + " squeeze: unknown option 'axis'"):
        builder.squeeze(x, {"axis": [0], "label": "lbl"})


# ---------------------------------------------------------------- MLActivation
ACTIVATION_OPTIONS = {
    "clamp": {"minValue": -0.5, "maxValue": 0.75},
    "elu": {"alpha": 0.5},
    "hardSigmoid": {"alpha": 0.3, "beta": 0.4},
    "leakyRelu": {"alpha": 0.2},
    "linear": {"alpha": 2.0, "beta": -1.0},
}


def _snake(op):
    return webnn._api.snake_case(op)


@pytest.mark.parametrize("op", ACTIVATION_OPS)
def test_activation_without_input_is_an_mlactivation(context, op):
    if op not in REGISTERED:
        pytest.skip(f"{op} is not registered yet")
    options = ACTIVATION_OPTIONS.get(op, {})
    builder = webnn.MLGraphBuilder(context)
    for activation in (getattr(builder, _snake(op))(**options), getattr(builder, op)(dict(options))):
        assert isinstance(activation, MLActivation)
        assert activation.name == op and activation.options == options
    x = builder.input("x", {"dataType": "float32", "shape": [2, 3]})
    assert isinstance(getattr(builder, _snake(op))(x, **options), webnn.MLOperand)
    assert isinstance(getattr(builder, _snake(op))(input=x, **options), webnn.MLOperand)
    inputs = {"x": random(2, 3)}
    assert_same(context, lambda b, o: getattr(b, _snake(op))(**options).apply(o["x"]),
                lambda b, o: getattr(b, _snake(op))(o["x"], **options), inputs)


@needs("relu", "leakyRelu")
def test_activation_rejects_unknown_options(builder):
    with pytest.raises(TypeError, match=LBL + " relu: unknown option 'alpha'"):
        builder.relu(alpha=1.0, label="lbl")
    with pytest.raises(TypeError, match=LBL + " leakyRelu: unknown option 'beta'"):
        builder.leaky_relu({"beta": 1.0, "label": "lbl"})


@needs("softplus", "mul", "div")
@pytest.mark.parametrize("steepness", [1.0, 2.0, 0.5])
def test_softplus_steepness(context, steepness):
    x = np.linspace(-4, 4, 12, dtype=np.float32).reshape(3, 4)
    (got,) = compute(context, lambda b, o: b.softplus(o["x"], steepness=steepness), {"x": x})
    want = np.log1p(np.exp(steepness * x.astype(np.float64))) / steepness
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    (fused,) = compute(context, lambda b, o: b.softplus(steepness=steepness).apply(o["x"]), {"x": x})
    np.testing.assert_array_equal(fused, got)
    builder = webnn.MLGraphBuilder(context)
    with pytest.raises(TypeError, match=LBL + " softplus: steepness must be a finite number"):
        builder.softplus(builder.input("x", {"dataType": "float32", "shape": [2]}), steepness=float("nan"),
                         label="lbl")


# ---------------------------------------------------------------- fused activation option
@needs("conv2d", "relu", "clamp")
@pytest.mark.parametrize("activation, options", [("relu", {}), ("clamp", {"min_value": 0.0, "max_value": 0.5})])
def test_conv2d_activation(context, activation, options):
    inputs = {"x": random(1, 2, 5, 5), "w": random(3, 2, 3, 3), "bias": random(3)}

    def compat(b, o):
        act = getattr(b, activation)(**options)
        return b.conv2d(o["x"], o["w"], {"padding": [1, 1, 1, 1], "bias": o["bias"], "activation": act})

    def current(b, o):
        y = b.conv2d(o["x"], o["w"], padding=[1, 1, 1, 1], bias=o["bias"])
        return getattr(b, activation)(y, **options)

    assert_same(context, compat, current, inputs)


@needs("convTranspose2d", "sigmoid")
def test_conv_transpose2d_activation(context):
    inputs = {"x": random(1, 2, 3, 3), "w": random(2, 3, 2, 2)}
    assert_same(context, lambda b, o: b.conv_transpose2d(o["x"], o["w"], strides=[2, 2], activation=b.sigmoid()),
                lambda b, o: b.sigmoid(b.conv_transpose2d(o["x"], o["w"], strides=[2, 2])), inputs)


@needs("batchNormalization", "leakyRelu")
def test_batch_normalization_activation(context):
    inputs = {"x": random(2, 3, 2, 2), "mean": random(3), "variance": np.abs(random(3)) + 0.5}
    assert_same(
        context,
        lambda b, o: b.batchNormalization(o["x"], o["mean"], o["variance"],
                                          {"activation": b.leakyRelu({"alpha": 0.3})}),
        lambda b, o: b.leaky_relu(b.batch_normalization(o["x"], o["mean"], o["variance"]), alpha=0.3), inputs)


@needs("conv2d", "relu")
def test_activation_option_validation(context):
    builder = webnn.MLGraphBuilder(context)
    x = builder.input("x", {"dataType": "float32", "shape": [1, 1, 3, 3]})
    w = builder.input("w", {"dataType": "float32", "shape": [1, 1, 1, 1]})
    with pytest.raises(TypeError, match=LBL + " conv2d: activation must be an MLActivation"):
        builder.conv2d(x, w, activation="relu", label="lbl")
    other = webnn.MLGraphBuilder(context)
    with pytest.raises(TypeError, match=LBL + " conv2d: the relu activation was created by another MLGraphBuilder"):
        builder.conv2d(x, w, {"activation": other.relu(), "label": "lbl"})
    # activation=None is the same as no activation
    assert builder.conv2d(x, w, activation=None).shape == [1, 1, 3, 3]


@needs("gruCell", "gru", "sigmoid", "tanh", "relu")
def test_recurrent_activations(context):
    hidden, batch, size = 3, 2, 4
    cell_inputs = {"x": random(batch, size), "w": random(3 * hidden, size), "r": random(3 * hidden, hidden),
                   "h": random(batch, hidden)}
    assert_same(context,
                lambda b, o: b.gru_cell(o["x"], o["w"], o["r"], o["h"], hidden, activations=[b.relu(), b.tanh()]),
                lambda b, o: b.gru_cell(o["x"], o["w"], o["r"], o["h"], hidden, activations=["relu", "tanh"]),
                cell_inputs)
    seq_inputs = {"x": random(2, batch, size), "w": random(1, 3 * hidden, size), "r": random(1, 3 * hidden, hidden)}
    assert_same(context,
                lambda b, o: b.gru(o["x"], o["w"], o["r"], 2, hidden, {"activations": [b.sigmoid(), "relu"]}),
                lambda b, o: b.gru(o["x"], o["w"], o["r"], 2, hidden, {"activations": ["sigmoid", "relu"]}),
                seq_inputs)
    if "lstmCell" in REGISTERED:
        lstm_inputs = {"x": random(batch, size), "w": random(4 * hidden, size), "r": random(4 * hidden, hidden),
                       "h": random(batch, hidden), "c": random(batch, hidden)}
        assert_same(context,
                    lambda b, o: b.lstm_cell(o["x"], o["w"], o["r"], o["h"], o["c"], hidden,
                                             activations=[b.sigmoid(), b.relu(), b.tanh()]),
                    lambda b, o: b.lstm_cell(o["x"], o["w"], o["r"], o["h"], o["c"], hidden,
                                             activations=["sigmoid", "relu", "tanh"]), lstm_inputs)
    builder = webnn.MLGraphBuilder(context)
    ops = {k: builder.input(k, {"dataType": "float32", "shape": list(v.shape)}) for k, v in cell_inputs.items()}
    with pytest.raises(TypeError, match=LBL + " gruCell: .*no MLRecurrentNetworkActivation equivalent"):
        builder.gru_cell(ops["x"], ops["w"], ops["r"], ops["h"], hidden, activations=[builder.relu(), builder.elu()],
                         label="lbl")


@needs("conv2d", "relu", "gruCell")
def test_current_forms_are_unchanged(builder):
    x = builder.input("x", {"dataType": "float32", "shape": [1, 1, 3, 3]})
    w = builder.input("w", {"dataType": "float32", "shape": [1, 1, 1, 1]})
    with pytest.raises(TypeError, match="unknown option 'paddin'"):
        builder.conv2d(x, w, {"paddin": [0, 0, 0, 0]})
    with pytest.raises(TypeError, match="unexpected keyword argument 'paddin'"):
        builder.conv2d(x, w, paddin=[0, 0, 0, 0])
    with pytest.raises(TypeError, match="required"):
        builder.relu(None)
    assert isinstance(builder.relu(x), webnn.MLOperand)
    assert builder.conv2d(x, w, {"padding": [1, 1, 1, 1], "label": "c"}).shape == [1, 1, 5, 5]


# ---------------------------------------------------------------- autoPad
def same_padding(size, window, stride, dilation, upper):
    """The 2022 "same" padding, written out: the output is ceil(size / stride)."""
    effective = (window - 1) * dilation + 1
    out = (size + stride - 1) // stride
    total = max(0, (out - 1) * stride + effective - size)
    return [total // 2, total - total // 2] if upper else [total - total // 2, total // 2]


CONV_CASES = [  # input hw, filter hw, strides, dilations
    ((7, 6), (3, 3), (1, 1), (1, 1)),
    ((6, 6), (3, 2), (2, 2), (1, 1)),
    ((8, 5), (2, 4), (2, 3), (1, 1)),
    ((7, 7), (3, 3), (1, 2), (2, 1)),
    ((2, 3), (3, 3), (3, 3), (1, 1)),
]


@needs("conv2d")
@pytest.mark.parametrize("mode", ["same-upper", "same-lower"])
@pytest.mark.parametrize("sizes, kernel, strides, dilations", CONV_CASES)
def test_conv2d_auto_pad(context, mode, sizes, kernel, strides, dilations):
    upper = mode == "same-upper"
    padding = (same_padding(sizes[0], kernel[0], strides[0], dilations[0], upper)
               + same_padding(sizes[1], kernel[1], strides[1], dilations[1], upper))
    inputs = {"x": random(1, 2, *sizes), "w": random(3, 2, *kernel)}
    options = {"strides": list(strides), "dilations": list(dilations)}
    got = compute(context, lambda b, o: b.conv2d(o["x"], o["w"], autoPad=mode, padding=[9, 9, 9, 9], **options), inputs)
    want = compute(context, lambda b, o: b.conv2d(o["x"], o["w"], padding=padding, **options), inputs)
    np.testing.assert_array_equal(got[0], want[0])
    assert list(got[0].shape[2:]) == [-(-s // t) for s, t in zip(sizes, strides)]


@needs("conv2d")
def test_conv2d_auto_pad_layouts_and_known_values(context):
    # 4x4 input, 3x3 window, stride 2: total padding 1, at the end for same-upper.
    inputs = {"x": random(1, 4, 4, 2), "w": random(3, 3, 2, 5)}  # nhwc, hwio
    layouts = {"inputLayout": "nhwc", "filterLayout": "hwio", "strides": [2, 2]}
    for mode, padding in (("same-upper", [0, 1, 0, 1]), ("same-lower", [1, 0, 1, 0])):
        assert_same(context, lambda b, o: b.conv2d(o["x"], o["w"], {"autoPad": mode, **layouts}),
                    lambda b, o: b.conv2d(o["x"], o["w"], {"padding": padding, **layouts}), inputs)
    # "explicit" keeps the padding given.
    assert_same(context, lambda b, o: b.conv2d(o["x"], o["w"], auto_pad="explicit", padding=[1, 2, 0, 1], **layouts),
                lambda b, o: b.conv2d(o["x"], o["w"], padding=[1, 2, 0, 1], **layouts), inputs)


@needs("conv2d", "averagePool2d")
def test_auto_pad_validation(context):
    builder = webnn.MLGraphBuilder(context)
    x = builder.input("x", {"dataType": "float32", "shape": [1, 1, 4, 4]})
    w = builder.input("w", {"dataType": "float32", "shape": [1, 1, 3, 3]})
    with pytest.raises(TypeError, match=LBL + " conv2d: autoPad must be one of"):
        builder.conv2d(x, w, autoPad="same", label="lbl")
    with pytest.raises(TypeError, match=LBL + " averagePool2d: autoPad must be one of"):
        builder.average_pool2d(x, {"autoPad": "valid", "label": "lbl"})
    # A malformed argument is still reported by the op itself.
    with pytest.raises(TypeError, match=LBL + " conv2d: strides"):
        builder.conv2d(x, w, autoPad="same-upper", strides=[1, 1, 1], label="lbl")
    three_d = builder.input("y", {"dataType": "float32", "shape": [1, 4, 4]})
    with pytest.raises(TypeError, match=LBL + " conv2d: input has rank 3"):
        builder.conv2d(three_d, w, autoPad="same-lower", label="lbl")


def transpose_same_padding(size, window, stride, dilation, output_padding, upper):
    """convTranspose2d "same": the output is size * stride (output padding supplies any shortfall)."""
    total = (window - 1) * dilation + 1 + output_padding - stride
    extra = max(0, -total)
    total = max(0, total)
    pads = [total // 2, total - total // 2] if upper else [total - total // 2, total // 2]
    return pads, output_padding + extra


@needs("convTranspose2d")
@pytest.mark.parametrize("mode", ["same-upper", "same-lower"])
@pytest.mark.parametrize("sizes, kernel, strides, dilations, output_padding", [
    ((3, 4), (3, 3), (1, 1), (1, 1), (0, 0)),
    ((3, 4), (4, 3), (2, 2), (1, 1), (1, 0)),
    ((3, 3), (3, 2), (2, 3), (2, 1), (0, 0)),  # width: window 2 < stride 3
])
def test_conv_transpose2d_auto_pad(context, mode, sizes, kernel, strides, dilations, output_padding):
    upper = mode == "same-upper"
    (pad_h, out_pad_h), (pad_w, out_pad_w) = (
        transpose_same_padding(sizes[i], kernel[i], strides[i], dilations[i], output_padding[i], upper)
        for i in range(2))
    inputs = {"x": random(1, 2, *sizes), "w": random(2, 3, *kernel)}
    common = {"strides": list(strides), "dilations": list(dilations)}
    got = compute(context, lambda b, o: b.conv_transpose2d(o["x"], o["w"], autoPad=mode,
                                                           outputPadding=list(output_padding), **common), inputs)
    want = compute(context, lambda b, o: b.conv_transpose2d(o["x"], o["w"], padding=pad_h + pad_w,
                                                            outputPadding=[out_pad_h, out_pad_w], **common), inputs)
    np.testing.assert_array_equal(got[0], want[0])
    assert list(got[0].shape[2:]) == [s * t for s, t in zip(sizes, strides)]


@needs("convTranspose2d")
def test_conv_transpose2d_auto_pad_with_output_sizes(context):
    # input 3, window 3, stride 2: natural size 7; outputSizes 6 -> total padding 1.
    inputs = {"x": random(1, 1, 3, 3), "w": random(1, 1, 3, 3)}
    for mode, padding in (("same-upper", [0, 1, 0, 1]), ("same-lower", [1, 0, 1, 0])):
        assert_same(context,
                    lambda b, o: b.conv_transpose2d(o["x"], o["w"], autoPad=mode, strides=[2, 2], outputSizes=[6, 6]),
                    lambda b, o: b.conv_transpose2d(o["x"], o["w"], padding=padding, strides=[2, 2],
                                                    outputSizes=[6, 6]), inputs)


POOLS = ("averagePool2d", "l2Pool2d", "maxPool2d")


@pytest.mark.parametrize("op", POOLS)
@pytest.mark.parametrize("mode", ["same-upper", "same-lower"])
@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
def test_pool_auto_pad(context, op, mode, layout):
    if op not in REGISTERED:
        pytest.skip(f"{op} is not registered yet")
    upper = mode == "same-upper"
    sizes, window, strides = (6, 5), (3, 2), (2, 2)  # odd total padding on both axes
    padding = same_padding(6, 3, 2, 1, upper) + same_padding(5, 2, 2, 1, upper)
    shape = [1, 2, *sizes] if layout == "nchw" else [1, *sizes, 2]
    inputs = {"x": np.abs(random(*shape)) + 0.1}
    options = {"windowDimensions": list(window), "strides": list(strides), "layout": layout}
    assert_same(context, lambda b, o: getattr(b, _snake(op))(o["x"], autoPad=mode, **options),
                lambda b, o: getattr(b, _snake(op))(o["x"], padding=padding, **options), inputs)


@pytest.mark.parametrize("op", POOLS)
def test_pool_auto_pad_global_window(context, op):
    if op not in REGISTERED:
        pytest.skip(f"{op} is not registered yet")
    # No windowDimensions: the window is the whole input (3x3); "same" keeps the 3x3 size.
    inputs = {"x": np.abs(random(1, 2, 3, 3)) + 0.1}
    assert_same(context, lambda b, o: getattr(b, op)(o["x"], {"autoPad": "same-upper"}),
                lambda b, o: getattr(b, op)(o["x"], {"windowDimensions": [3, 3], "padding": [1, 1, 1, 1]}), inputs)


# ---------------------------------------------------------------- roundingType
@pytest.mark.parametrize("op", POOLS)
def test_rounding_type_alias(context, op):
    if op not in REGISTERED:
        pytest.skip(f"{op} is not registered yet")
    inputs = {"x": np.abs(random(1, 1, 6, 6)) + 0.1}
    options = {"windowDimensions": [3, 3], "strides": [2, 2]}
    got = compute(context, lambda b, o: getattr(b, op)(o["x"], {"roundingType": "ceil", **options}), inputs)
    want = compute(context, lambda b, o: getattr(b, op)(o["x"], {"outputShapeRounding": "ceil", **options}), inputs)
    np.testing.assert_array_equal(got[0], want[0])
    assert got[0].shape == (1, 1, 3, 3)
    builder = webnn.MLGraphBuilder(context)
    x = builder.input("x", {"dataType": "float32", "shape": [1, 1, 6, 6]})
    assert getattr(builder, _snake(op))(x, rounding_type="floor", output_shape_rounding="floor", **options).shape == \
        [1, 1, 2, 2]
    with pytest.raises(TypeError, match=LBL + f" {op}: roundingType .* disagree"):
        getattr(builder, _snake(op))(x, rounding_type="ceil", output_shape_rounding="floor", label="lbl", **options)


# ---------------------------------------------------------------- descriptors
def test_2022_descriptors(context):
    builder = webnn.MLGraphBuilder(context)
    x = builder.input("x", {"type": "float32", "dimensions": [2, 3]})
    assert (x.data_type, x.shape) == ("float32", [2, 3])
    scalar = builder.input("s", {"type": "int32"})
    assert (scalar.data_type, scalar.shape) == ("int32", [])
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    c = builder.constant({"type": "float32", "dimensions": [2, 3]}, data)
    assert (c.data_type, c.shape) == ("float32", [2, 3])
    tensor = context.create_tensor({"type": "uint8", "dimensions": [4], "readable": True})
    assert tensor is not None
    # The current form is unchanged: a shape is required.
    with pytest.raises(TypeError, match="no shape"):
        builder.input("y", {"dataType": "float32"})
    # A 2022 free dimension (-1) is a dynamic dimension named after the input and axis.
    z = builder.input("z", {"type": "float32", "dimensions": [-1, 3]})
    assert z.shape == [webnn.DynamicDimension("z[0]"), 3]
    with pytest.raises(TypeError):
        builder.input("w", {"type": "float32", "dimensions": [-2, 3]})


@needs("add")
def test_2022_descriptor_graph_matches_current(context):
    data = np.arange(6, dtype=np.float32).reshape(2, 3)

    def make(descriptor):
        builder = webnn.MLGraphBuilder(context)
        y = builder.add(builder.input("x", descriptor), builder.constant(descriptor, data))
        return builder.build({"y": y}).compute({"x": data})["y"]

    np.testing.assert_array_equal(make({"type": "float32", "dimensions": [2, 3]}),
                                  make({"dataType": "float32", "shape": [2, 3]}))


# ---------------------------------------------------------------- constant(value, type)
def test_constant_2022_argument_order(builder):
    for operand, dtype in ((builder.constant(2.5, "float32"), "float32"), (builder.constant(3), "float32"),
                           (builder.constant(7, "int32"), "int32"),
                           (builder.constant(1.5, type="float16"), "float16"),
                           (builder.constant(value=4, type="uint8"), "uint8"),
                           (builder.constant(value=1.0), "float32")):
        assert (operand.data_type, operand.shape) == (dtype, [])
    # the current forms are unchanged
    assert builder.constant("int32", 3).data_type == "int32"
    assert builder.constant(np.ones((2,), np.int8)).data_type == "int8"
    with pytest.raises(TypeError):
        builder.constant(1, "float64")


@needs("add")
def test_constant_2022_values(context):
    x = np.array([1, 2], np.float32)
    assert_same(context, lambda b, o: b.add(o["x"], b.constant(2.5)),
                lambda b, o: b.add(o["x"], b.constant("float32", 2.5)), {"x": x})
    xi = np.array([1, -2], np.int32)
    assert_same(context, lambda b, o: b.add(o["x"], b.constant(-7, "int32")),
                lambda b, o: b.add(o["x"], b.constant("int32", -7)), {"x": xi})


# ---------------------------------------------------------------- compute(inputs, outputs)
@needs("add", "mul")
def test_compute_into_preallocated_outputs(context):
    builder = webnn.MLGraphBuilder(context)
    x = builder.input("x", {"dataType": "float32", "shape": [2, 2]})
    graph = builder.build({"sum": builder.add(x, x), "product": builder.mul(x, x)})
    data = np.array([[1, 2], [3, 4]], np.float32)
    expected = graph.compute({"x": data})  # the current form: unchanged
    assert set(expected) == {"sum", "product"}

    outputs = {"sum": np.zeros((2, 2), np.float32), "product": np.zeros(4, np.float32)}
    returned = graph.compute({"x": data}, outputs)
    np.testing.assert_array_equal(outputs["sum"], expected["sum"])
    np.testing.assert_array_equal(outputs["product"], expected["product"].reshape(4))
    assert returned["sum"] is outputs["sum"]

    only = {"product": np.zeros((2, 2), np.float32)}
    context.compute(graph, {"x": {"resource": data.reshape(4), "dimensions": [2, 2]}}, only)
    np.testing.assert_array_equal(only["product"], expected["product"])
    np.testing.assert_array_equal(context.compute(graph, {"x": data})["sum"], expected["sum"])
    np.testing.assert_array_equal(graph.compute({"x": data}, context)["sum"], expected["sum"])
    np.testing.assert_array_equal(graph.compute({"x": data}, outputs=None, context=context)["sum"], expected["sum"])

    with pytest.raises(TypeError, match="not an output"):
        graph.compute({"x": data}, {"nope": np.zeros((2, 2), np.float32)})
    with pytest.raises(TypeError, match="must hold float32"):
        graph.compute({"x": data}, {"sum": np.zeros((2, 2), np.float64)})
    with pytest.raises(TypeError, match="must hold float32"):
        graph.compute({"x": data}, {"sum": np.zeros(5, np.float32)})
    with pytest.raises(TypeError, match="writable NumPy array"):
        graph.compute({"x": data}, {"sum": [0, 0, 0, 0]})


def test_compute_on_a_graph_with_minus_one_dimensions(context):
    """webnn-samples' dynamic_shape.js: a 2022 graph with -1 dimensions, run with compute(inputs,
    outputs) and compute(inputs), the inputs as {resource, dimensions}."""
    b = webnn.MLGraphBuilder(context)
    a = b.input("a", {"type": "float32", "dimensions": [-1, 4]})
    w = b.constant({"type": "float32", "dimensions": [4, 2]}, np.arange(8, dtype=np.float32))
    graph = b.build({"y": b.matmul(a, w)})
    w_values = np.arange(8, dtype=np.float32).reshape(4, 2)
    for rows in (3, 5):
        x = np.random.default_rng(rows).standard_normal((rows, 4)).astype(np.float32)
        out = {"y": np.empty((rows, 2), np.float32)}
        result = graph.compute({"a": {"resource": x.ravel(), "dimensions": [rows, 4]}}, out)
        assert result["y"] is out["y"]
        np.testing.assert_allclose(out["y"], x @ w_values, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(graph.compute({"a": {"resource": x, "dimensions": [rows, 4]}})["y"],
                                   x @ w_values, rtol=1e-5, atol=1e-5)
    with pytest.raises(TypeError, match="must hold float32"):
        graph.compute({"a": {"resource": np.zeros((3, 4), np.float32), "dimensions": [3, 4]}},
                      {"y": np.empty((4, 2), np.float32)})
