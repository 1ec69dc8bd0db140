"""Epilogue fusion (compiler/passes/epilogue_fusion.cc): an add and a clamp-like op absorbed into the
kernel of the conv or matmul producing their input, as far as that kernel accepts them."""
import numpy as np
import pytest

import webnn


def _conv_graph(builder, x, w, activation=None, also_output_conv=False):
    conv = builder.conv2d(x, builder.constant(w), padding=[1, 1, 1, 1])
    outputs = {}
    if activation == "relu":
        outputs["y"] = builder.relu(conv)
    elif activation == "clamp":
        outputs["y"] = builder.clamp(conv, min_value=-0.5, max_value=0.25)
    else:
        outputs["y"] = conv
    if also_output_conv:
        outputs["conv"] = conv
    return outputs


@pytest.mark.parametrize("activation", ["relu", "clamp"])
@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
def test_fused_activation_matches_separate_ops(context, activation, layout):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 4, 6, 6)).astype(np.float32)
    w = rng.standard_normal((5, 4, 3, 3)).astype(np.float32)
    if layout == "nhwc":
        x, w = x.transpose(0, 2, 3, 1).copy(), w.transpose(0, 2, 3, 1).copy()
    options = {} if layout == "nchw" else {"input_layout": "nhwc", "filter_layout": "ohwi"}

    def build(fused):
        builder = webnn.MLGraphBuilder(context)
        xi = builder.input("x", data_type="float32", shape=x.shape)
        conv = builder.conv2d(xi, builder.constant(w), padding=[1, 1, 1, 1], **options)
        outputs = {}
        if not fused:  # a second consumer of the conv output prevents fusion
            outputs["conv"] = builder.identity(conv)
        outputs["y"] = builder.relu(conv) if activation == "relu" else builder.clamp(conv, min_value=-0.5,
                                                                                     max_value=0.25)
        return builder.build(outputs).compute({"x": x})

    fused, separate = build(True), build(False)
    np.testing.assert_array_equal(fused["y"], separate["y"])
    if activation == "relu":
        assert fused["y"].min() == 0.0
    else:
        assert fused["y"].min() >= -0.5 and fused["y"].max() <= 0.25


def test_conv_output_used_twice_is_not_clamped(context):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((1, 2, 5, 5)).astype(np.float32)
    w = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
    builder = webnn.MLGraphBuilder(context)
    xi = builder.input("x", data_type="float32", shape=x.shape)
    out = builder.build(_conv_graph(builder, xi, w, "relu", also_output_conv=True)).compute({"x": x})
    assert out["conv"].min() < 0
    np.testing.assert_array_equal(out["y"], np.maximum(out["conv"], 0))


def test_fused_relu_keeps_nan(context):
    x = np.full((1, 1, 3, 3), np.nan, np.float32)
    w = np.ones((1, 1, 1, 1), np.float32)
    builder = webnn.MLGraphBuilder(context)
    xi = builder.input("x", data_type="float32", shape=x.shape)
    y = builder.relu(builder.conv2d(xi, builder.constant(w)))
    assert np.isnan(builder.build({"y": y}).compute({"x": x})["y"]).all()


def _residual_block(builder, x, w1, w2, layout_options, residual_first):
    """relu(conv(relu(conv(x))) + x), the residual add's other operand created before or after the conv."""
    hidden = builder.relu(builder.conv2d(x, builder.constant(w1), padding=[1, 1, 1, 1], **layout_options))
    if not residual_first:
        conv = builder.conv2d(hidden, builder.constant(w2), padding=[1, 1, 1, 1], **layout_options)
        identity = builder.identity(x)  # created after the conv: the fused kernel must run later
        return builder.relu(builder.add(conv, identity))
    identity = builder.identity(x)
    conv = builder.conv2d(hidden, builder.constant(w2), padding=[1, 1, 1, 1], **layout_options)
    return builder.relu(builder.add(identity, conv))


@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
@pytest.mark.parametrize("residual_first", [False, True])
@pytest.mark.parametrize("size", [6, 7, 20])  # 7: NCHW runs the transposed product
def test_conv_add_relu_fuses_and_matches_reference(context, layout, residual_first, size):
    from webnn import _core

    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 8, size, size)).astype(np.float32)
    x[0, 0, 0, :3] = [np.nan, np.inf, -np.inf]
    w1 = rng.standard_normal((8, 8, 3, 3)).astype(np.float32)
    w2 = rng.standard_normal((8, 8, 3, 3)).astype(np.float32)

    def conv(a, w):  # float64 NCHW reference, padding 1
        padded = np.pad(a, ((0, 0), (0, 0), (1, 1), (1, 1)))
        out = np.zeros((a.shape[0], w.shape[0], size, size))
        for i in range(3):
            for j in range(3):
                out += np.einsum("nchw,oc->nohw", padded[:, :, i:i + size, j:j + size], w[:, :, i, j])
        return out

    with np.errstate(invalid="ignore"):
        expected = np.maximum(conv(np.maximum(conv(x.astype(np.float64), w1), 0), w2) + x, 0)
    options = {}
    xin, w1in, w2in = x, w1, w2
    if layout == "nhwc":
        xin = x.transpose(0, 2, 3, 1).copy()
        w1in, w2in = (w.transpose(0, 2, 3, 1).copy() for w in (w1, w2))
        options = {"input_layout": "nhwc", "filter_layout": "ohwi"}
    builder = webnn.MLGraphBuilder(context)
    xi = builder.input("x", data_type="float32", shape=xin.shape)
    graph = builder.build({"y": _residual_block(builder, xi, w1in, w2in, options, residual_first)})
    assert "conv2d+add+relu" in _core.plan_steps(graph)
    y = graph.compute({"x": xin})["y"]
    if layout == "nhwc":
        y = y.transpose(0, 3, 1, 2)
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-4 * np.nanmax(np.abs(expected[np.isfinite(expected)])))
    assert np.array_equal(np.isnan(y), np.isnan(expected))


def test_add_is_not_fused_when_it_broadcasts_or_the_conv_output_is_reused(context):
    from webnn import _core

    builder = webnn.MLGraphBuilder(context)
    x = builder.input("x", data_type="float32", shape=[1, 2, 4, 4])
    w = builder.constant(np.ones((2, 2, 1, 1), np.float32))
    broadcast = builder.add(builder.conv2d(x, w), builder.constant(np.ones((1, 2, 1, 1), np.float32)))
    reused = builder.conv2d(x, w)
    graph = builder.build({"a": broadcast, "b": builder.add(reused, x), "c": reused})
    steps = _core.plan_steps(graph)
    assert not any("+add" in step for step in steps), steps
    out = graph.compute({"x": np.ones((1, 2, 4, 4), np.float32)})
    np.testing.assert_array_equal(out["a"], 3.0)
    np.testing.assert_array_equal(out["b"], 3.0)


@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
def test_depthwise_conv_add_clamp_fuses(context, layout):
    from webnn import _core

    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 16, 9, 9)).astype(np.float32)
    w = rng.standard_normal((16, 1, 3, 3)).astype(np.float32)
    padded = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    conv = sum(padded[:, :, i:i + 9, j:j + 9] * w[None, :, 0, i, j, None, None] for i in range(3) for j in range(3))
    expected = np.clip(conv + x, -1.0, 2.0)
    options = {"groups": 16, "padding": [1, 1, 1, 1]}
    xin, win = x, w
    if layout == "nhwc":
        xin, win = x.transpose(0, 2, 3, 1).copy(), w.transpose(1, 2, 3, 0).copy()  # ihwo
        options.update(input_layout="nhwc", filter_layout="ihwo")
    builder = webnn.MLGraphBuilder(context)
    xi = builder.input("x", data_type="float32", shape=xin.shape)
    y = builder.clamp(builder.add(xi, builder.conv2d(xi, builder.constant(win), **options)), min_value=-1, max_value=2)
    graph = builder.build({"y": y})
    assert _core.plan_steps(graph) == ["conv2d+add+clamp"]
    out = graph.compute({"x": xin})["y"]
    if layout == "nhwc":
        out = out.transpose(0, 3, 1, 2)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("m", [1, 3, 37])  # 1-4 rows: the small-M path
@pytest.mark.parametrize("addend", ["row", "row2d", "residual"])
@pytest.mark.parametrize("activation", [None, "relu", "clamp"])
def test_matmul_add_activation_fuse(context, m, addend, activation):
    from webnn import _core

    rng = np.random.default_rng(7)
    a = rng.standard_normal((2, m, 40)).astype(np.float32)
    b = rng.standard_normal((40, 50)).astype(np.float32)
    other = {"row": rng.standard_normal(50), "row2d": rng.standard_normal((1, 50)),
             "residual": rng.standard_normal((2, m, 50))}[addend].astype(np.float32)
    expected = a.astype(np.float64) @ b + other
    builder = webnn.MLGraphBuilder(context)
    ai = builder.input("a", data_type="float32", shape=a.shape)
    y = builder.add(builder.matmul(ai, builder.constant(b)), builder.constant(other))
    fused = "matmul+add"
    if activation == "relu":
        y, expected, fused = builder.relu(y), np.maximum(expected, 0), fused + "+relu"
    elif activation == "clamp":
        y, expected, fused = builder.clamp(y, min_value=-1, max_value=1), np.clip(expected, -1, 1), fused + "+clamp"
    graph = builder.build({"y": y})
    assert _core.plan_steps(graph) == [fused]
    np.testing.assert_allclose(graph.compute({"a": a})["y"], expected, rtol=1e-5, atol=1e-4)


def test_matmul_add_of_a_column_is_not_fused(context):
    from webnn import _core

    rng = np.random.default_rng(8)
    a = rng.standard_normal((6, 5)).astype(np.float32)
    b = rng.standard_normal((5, 7)).astype(np.float32)
    column = rng.standard_normal((6, 1)).astype(np.float32)
    builder = webnn.MLGraphBuilder(context)
    y = builder.add(builder.matmul(builder.input("a", data_type="float32", shape=[6, 5]), builder.constant(b)),
                    builder.constant(column))
    graph = builder.build({"y": y})
    assert _core.plan_steps(graph) == ["matmul", "add"]
    np.testing.assert_allclose(graph.compute({"a": a})["y"], a.astype(np.float64) @ b + column, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- one copy of each constant
