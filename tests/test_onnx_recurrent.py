"""webnn.onnx's LSTM, GRU and RNN mappings compared with ONNX Runtime: WebNN lstm and gru where they
express the node, the unrolled recurrence where they do not (RNN, clip, per-direction activations,
an LSTM output-gate peephole), and the cases the importer refuses.

ONNX Runtime's CPU kernels reject layout=1, so the batch-major cases are compared with ONNX Runtime
on the same node in layout 0 with the inputs and outputs transposed.
"""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import webnn  # noqa: E402
import webnn.onnx  # noqa: E402
from onnx import helper, numpy_helper  # noqa: E402

RTOL, ATOL = 1e-4, 1e-5
GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
# ONNX input positions after X, W, R, B.
SEQUENCE_LENS, INITIAL_H, INITIAL_C, PEEPHOLE = 4, 5, 6, 7
OUTPUTS = {"LSTM": ("Y", "Y_h", "Y_c"), "GRU": ("Y", "Y_h"), "RNN": ("Y", "Y_h")}


@pytest.fixture(scope="module")
def onnx_context():
    return webnn.create_context()


def ort_run(model, feeds):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(None, feeds)))


def node_model(op, inputs, outputs, attributes, fed=("X",), opset=14):
    """A one-node model; ``inputs`` is [(name, array or None)] in ONNX input order (None: absent),
    the arrays named in ``fed`` graph inputs, the others initializers; ``outputs`` holds "" for the
    outputs not requested."""
    names = [name if value is not None else "" for name, value in inputs]
    while names and names[-1] == "":
        names.pop()
    node = helper.make_node(op, names, list(outputs), name="the_rnn", **attributes)
    graph_inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
                    for n, v in inputs if v is not None and n in fed]
    initializers = [numpy_helper.from_array(v, n) for n, v in inputs if v is not None and n not in fed]
    graph_outputs = [helper.make_empty_tensor_value_info(o) for o in outputs if o]
    graph = helper.make_graph([node], "g", graph_inputs, graph_outputs, initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def parameters(op, steps=5, batch=3, input_size=4, hidden=6, directions=1, bias=True, initial=False,
               peephole=False, seed=0, scale=0.5):
    """[(name, array or None)] in ONNX input order: X [steps, batch, input] and random weights."""
    rng = np.random.default_rng(seed)
    G = GATES[op]

    def normal(*shape, s=scale):
        return (rng.standard_normal(shape) * s).astype(np.float32)

    values = [("X", normal(steps, batch, input_size, s=1.0)),
              ("W", normal(directions, G * hidden, input_size)),
              ("R", normal(directions, G * hidden, hidden)),
              ("B", normal(directions, 2 * G * hidden) if bias else None),
              ("sequence_lens", None),
              ("initial_h", normal(directions, batch, hidden) if initial else None)]
    if op == "LSTM":
        values += [("initial_c", normal(directions, batch, hidden) if initial else None),
                   ("P", normal(directions, 3 * hidden) if peephole else None)]
    return values


def compare(context, op, inputs, attributes, outputs=None, fed=("X",)):
    """Converts and runs the node, compares every requested output with ONNX Runtime; returns the
    graph's plan steps (to tell the WebNN op from the unrolled recurrence)."""
    outputs = outputs or OUTPUTS[op]
    model = node_model(op, inputs, outputs, attributes, fed)
    feeds = {n: v for n, v in inputs if n in fed and v is not None}
    graph = webnn.onnx.load(model, context)
    actual = graph.compute(feeds)
    if attributes.get("layout", 0):
        expected = _ort_layout1(op, inputs, outputs, attributes, fed)
    else:
        expected = ort_run(model, feeds)
    for name in outputs:
        if name:
            assert actual[name].shape == expected[name].shape, name
            np.testing.assert_allclose(actual[name], expected[name], rtol=RTOL, atol=ATOL, err_msg=name)
    assert set(actual) == {o for o in outputs if o}
    return webnn._core.plan_steps(graph)


def _ort_layout1(op, inputs, outputs, attributes, fed):
    """ONNX Runtime's results for a layout=1 node: the layout 0 node on transposed inputs."""
    swapped = batch_major(inputs)  # back to time-major: the swap is its own inverse
    model = node_model(op, swapped, outputs, {k: v for k, v in attributes.items() if k != "layout"}, fed)
    results = ort_run(model, {n: v for n, v in swapped if n in fed and v is not None})
    return {n: np.transpose(v, [2, 0, 1, 3]) if n == "Y" else np.swapaxes(v, 0, 1) for n, v in results.items()}


def batch_major(inputs):
    """The inputs of a layout=1 node: X [batch, steps, input], initial states [batch, directions, hidden]."""
    swapped = ("X", "initial_h", "initial_c")
    return [(n, np.ascontiguousarray(v.swapaxes(0, 1)) if v is not None and n in swapped else v) for n, v in inputs]


# ---------------------------------------------------------------- LSTM
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("initial", [False, True], ids=["zero_state", "initial_state"])
def test_lstm(onnx_context, direction, initial):
    D = 2 if direction == "bidirectional" else 1
    inputs = parameters("LSTM", directions=D, initial=initial, seed=1)
    steps = compare(onnx_context, "LSTM", inputs, {"hidden_size": 6, "direction": direction})
    assert "lstm" in steps  # WebNN lstm, not the unrolled recurrence


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_lstm_peepholes(onnx_context, direction):
    """ONNX's output gate peeks at the new cell state, WebNN lstm's at the previous one: with Po the
    importer unrolls the recurrence."""
    D = 2 if direction == "bidirectional" else 1
    inputs = parameters("LSTM", directions=D, initial=True, peephole=True, seed=2)
    steps = compare(onnx_context, "LSTM", inputs, {"hidden_size": 6, "direction": direction})
    assert "lstm" not in steps


def test_lstm_input_and_forget_peepholes_use_webnn_lstm(onnx_context):
    inputs = dict(parameters("LSTM", directions=2, initial=True, peephole=True, seed=3))
    inputs["P"][:, 6:12] = 0  # no output-gate peephole
    steps = compare(onnx_context, "LSTM", list(inputs.items()), {"hidden_size": 6, "direction": "bidirectional"})
    assert "lstm" in steps


@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
@pytest.mark.parametrize("peephole", [False, True], ids=["lstm_op", "unrolled"])
def test_lstm_layout_1(onnx_context, direction, peephole):
    D = 2 if direction == "bidirectional" else 1
    inputs = batch_major(parameters("LSTM", directions=D, initial=True, peephole=peephole, seed=4))
    compare(onnx_context, "LSTM", inputs, {"hidden_size": 6, "direction": direction, "layout": 1})


@pytest.mark.parametrize("outputs", [("", "Y_h"), ("", "", "Y_c"), ("Y",)], ids=["Y_h", "Y_c", "Y"])
def test_lstm_some_outputs(onnx_context, outputs):
    inputs = parameters("LSTM", directions=2, seed=5)
    compare(onnx_context, "LSTM", inputs, {"hidden_size": 6, "direction": "bidirectional"}, outputs=outputs)


def test_lstm_activations_clip_and_sequence_lens(onnx_context):
    # The same activations in both directions: WebNN lstm's activations option.
    inputs = parameters("LSTM", directions=2, seed=6, scale=0.3)
    attributes = {"hidden_size": 6, "direction": "bidirectional",
                  "activations": ["Sigmoid", "Relu", "Tanh"] * 2}
    assert "lstm" in compare(onnx_context, "LSTM", inputs, attributes)
    # Per-direction activations and clip: unrolled.
    attributes["activations"] = ["Sigmoid", "Tanh", "Tanh", "Sigmoid", "Relu", "Sigmoid"]
    assert "lstm" not in compare(onnx_context, "LSTM", inputs, attributes)
    inputs = dict(parameters("LSTM", initial=True, peephole=True, seed=7))
    inputs["sequence_lens"] = np.full(3, 5, np.int32)  # a constant, the full length everywhere
    assert "lstm" not in compare(onnx_context, "LSTM", list(inputs.items()), {"hidden_size": 6, "clip": 0.7})


def test_lstm_weights_at_run_time(onnx_context):
    """W, R, B, the states and P fed as graph inputs, not initializers."""
    inputs = parameters("LSTM", directions=2, initial=True, peephole=True, seed=8)
    fed = ("X", "W", "R", "B", "initial_h", "initial_c", "P")
    compare(onnx_context, "LSTM", inputs, {"hidden_size": 6, "direction": "bidirectional"}, fed=fed)


# ---------------------------------------------------------------- GRU
@pytest.mark.parametrize("linear_before_reset", [0, 1])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_gru(onnx_context, direction, linear_before_reset):
    D = 2 if direction == "bidirectional" else 1
    inputs = parameters("GRU", directions=D, initial=direction != "forward", seed=9)
    steps = compare(onnx_context, "GRU", inputs, {"hidden_size": 6, "direction": direction,
                                                  "linear_before_reset": linear_before_reset})
    assert "gru" in steps


@pytest.mark.parametrize("linear_before_reset", [0, 1])
def test_gru_unrolled(onnx_context, linear_before_reset):
    """clip and per-direction activations: the recurrence unrolled."""
    inputs = parameters("GRU", directions=2, initial=True, seed=10)
    attributes = {"hidden_size": 6, "direction": "bidirectional", "linear_before_reset": linear_before_reset,
                  "clip": 0.8, "activations": ["Sigmoid", "Tanh", "Sigmoid", "Relu"]}
    assert "gru" not in compare(onnx_context, "GRU", inputs, attributes)
    inputs = parameters("GRU", bias=True, seed=11)
    fed = ("X", "W", "R", "B")
    attributes = {"hidden_size": 6, "linear_before_reset": linear_before_reset, "clip": 1.0}
    compare(onnx_context, "GRU", inputs, attributes, fed=fed, outputs=("", "Y_h"))


@pytest.mark.parametrize("linear_before_reset", [0, 1])
def test_gru_layout_1(onnx_context, linear_before_reset):
    inputs = batch_major(parameters("GRU", directions=2, initial=True, seed=12))
    compare(onnx_context, "GRU", inputs, {"hidden_size": 6, "direction": "bidirectional", "layout": 1,
                                          "linear_before_reset": linear_before_reset})


# ---------------------------------------------------------------- RNN
@pytest.mark.parametrize("activation", ["Tanh", "Relu", "Sigmoid"])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_rnn(onnx_context, direction, activation):
    D = 2 if direction == "bidirectional" else 1
    inputs = parameters("RNN", directions=D, initial=direction != "forward", seed=13, scale=0.4)
    compare(onnx_context, "RNN", inputs, {"hidden_size": 6, "direction": direction, "activations": [activation] * D})


def test_rnn_variants(onnx_context):
    # Defaults (Tanh, no bias, zero state), Y_h only.
    compare(onnx_context, "RNN", parameters("RNN", bias=False, seed=14), {"hidden_size": 6}, outputs=("", "Y_h"))
    # Per-direction activations, clip, one step.
    inputs = parameters("RNN", steps=1, directions=2, initial=True, seed=15)
    compare(onnx_context, "RNN", inputs, {"hidden_size": 6, "direction": "bidirectional", "clip": 0.5,
                                          "activations": ["Relu", "Tanh"]})
    # Batch-major, weights at run time.
    inputs = batch_major(parameters("RNN", directions=2, initial=True, seed=16))
    compare(onnx_context, "RNN", inputs, {"hidden_size": 6, "direction": "bidirectional", "layout": 1},
            fed=("X", "W", "R", "B", "initial_h"))


# ---------------------------------------------------------------- a CRNN-like model
def test_crnn(onnx_context):
    """Conv -> ReLU -> [W, N, C*H] sequence -> bidirectional LSTM -> [W, N, 2*hidden] -> MatMul."""
    rng = np.random.default_rng(17)
    N, C, Hgt, Wid, hidden, classes = 2, 4, 6, 10, 8, 5
    weights = {"conv_w": rng.standard_normal((C, 1, 3, 3)) * 0.5, "conv_b": rng.standard_normal(C) * 0.1,
               "W": rng.standard_normal((2, 4 * hidden, C * Hgt)) * 0.3,
               "R": rng.standard_normal((2, 4 * hidden, hidden)) * 0.3,
               "B": rng.standard_normal((2, 8 * hidden)) * 0.1,
               "fc": rng.standard_normal((2 * hidden, classes)) * 0.5,
               "seq_shape": np.int64([Wid, N, C * Hgt]), "out_shape": np.int64([Wid, N, 2 * hidden])}
    nodes = [
        helper.make_node("Conv", ["image", "conv_w", "conv_b"], ["conv"], pads=[1, 1, 1, 1], name="conv"),
        helper.make_node("Relu", ["conv"], ["relu"], name="relu"),
        helper.make_node("Transpose", ["relu"], ["columns"], perm=[3, 0, 1, 2], name="columns"),  # [W, N, C, H]
        helper.make_node("Reshape", ["columns", "seq_shape"], ["sequence"], name="sequence"),
        helper.make_node("LSTM", ["sequence", "W", "R", "B"], ["Y", ""], hidden_size=hidden,
                         direction="bidirectional", name="lstm"),
        helper.make_node("Transpose", ["Y"], ["Y_t"], perm=[0, 2, 1, 3], name="y_t"),  # [W, N, 2, hidden]
        helper.make_node("Reshape", ["Y_t", "out_shape"], ["features"], name="features"),
        helper.make_node("MatMul", ["features", "fc"], ["logits"], name="logits"),
    ]
    graph = helper.make_graph(nodes, "crnn", [helper.make_tensor_value_info("image", 1, [N, 1, Hgt, Wid])],
                              [helper.make_tensor_value_info("logits", 1, [Wid, N, classes])],
                              [numpy_helper.from_array(v if v.dtype == np.int64 else v.astype(np.float32), k)
                               for k, v in weights.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    image = rng.standard_normal((N, 1, Hgt, Wid)).astype(np.float32)
    graph = webnn.onnx.load(model, onnx_context)
    actual = graph.compute({"image": image})["logits"]
    expected = ort_run(model, {"image": image})["logits"]
    assert actual.shape == (Wid, N, classes)
    np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=ATOL)
    assert "lstm" in webnn._core.plan_steps(graph)


# ---------------------------------------------------------------- what the importer refuses
def _refuses(context, op, inputs, attributes, match, fed=("X",)):
    model = node_model(op, inputs, OUTPUTS[op], attributes, fed)
    with pytest.raises(webnn.NotSupportedError, match=r"ONNX node 'the_rnn' \(" + op + r"\): " + match):
        webnn.onnx.convert(model, context)


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
def test_unsupported_activation(onnx_context, op):
    count = {"LSTM": 3, "GRU": 2, "RNN": 1}[op]
    activations = ["Sigmoid", "Tanh", "Tanh"][:count - 1] + ["ScaledTanh"]
    _refuses(onnx_context, op, parameters(op), {"hidden_size": 6, "activations": activations,
                                                "activation_alpha": [1.0] * count, "activation_beta": [1.0] * count},
             "activation 'ScaledTanh' is not supported")


def test_input_forget(onnx_context):
    _refuses(onnx_context, "LSTM", parameters("LSTM"), {"hidden_size": 6, "input_forget": 1}, "input_forget=1")


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
def test_sequence_lens(onnx_context, op):
    inputs = dict(parameters(op))
    inputs["sequence_lens"] = np.int32([5, 3, 5])
    _refuses(onnx_context, op, list(inputs.items()), {"hidden_size": 6}, fed=("X", "sequence_lens"),
             match=r"sequence_lens \('sequence_lens'\) must be known at conversion time")
    _refuses(onnx_context, op, list(inputs.items()), {"hidden_size": 6},
             match=r"sequence_lens \[5, 3, 5\] are not all the sequence length 5")
