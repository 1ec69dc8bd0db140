"""Constant folding in webnn.onnx (``_folding.py``): a node whose inputs are all constants is
evaluated at conversion time, with the kernels that run it at dispatch.

- every op the importer maps, across opsets, gives the same bits folded (its data an initializer)
  as run (its data a graph input), and both are close to a float64 NumPy reference where that is
  simple (ONNX Runtime for Resize); the ONNX backend node tests are swept the same way;
- the exact NumPy forms of the shape ops give what the ONNX reference implementation gives, and
  leave the cases they do not handle to the engine;
- a folded result over WebNN's limits (2^31-1 elements or per dimension) is refused with
  NotSupportedError before anything is allocated: 100-byte models cannot take gigabytes.
"""
import os
import subprocess
import sys
import tempfile
import textwrap

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

import webnn  # noqa: E402
import webnn.onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from webnn.onnx import _convert, _folding  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
import test_onnx_node_tests as node_tests  # noqa: E402

RNG = np.random.default_rng(3)
I64 = np.int64


@pytest.fixture(scope="module")
def ctx():
    return webnn.create_context()


def make_model(nodes, inputs, initializers, outputs=("y",), opset=17):
    """inputs, initializers: {name: array} (graph inputs typed from the arrays)."""
    def info(name, array):
        return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(array.dtype), list(array.shape))

    graph = helper.make_graph(list(nodes), "g", [info(n, np.asarray(a)) for n, a in inputs.items()],
                              [helper.make_empty_tensor_value_info(n) for n in outputs],
                              [numpy_helper.from_array(np.asarray(a), n) for n, a in initializers.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8 if opset >= 7 else 3
    return model


@pytest.fixture
def folded_ops(monkeypatch):
    """The op types webnn.onnx folds while the test runs."""
    seen = []
    evaluate = _folding.evaluate

    def spy(converter, node, opset):
        seen.append(node.op_type)
        return evaluate(converter, node, opset)

    monkeypatch.setattr(_folding, "evaluate", spy)
    return seen


def same_bits(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def fold_and_run(ctx, nodes, data, params, opset, outputs=("y",)):
    """Loads the model twice: ``data`` ({name: array}) as graph inputs (run time) and as
    initializers (folded); checks the two give the same bits and returns the folded outputs."""
    graph = webnn.onnx.load(make_model(nodes, data, params, outputs, opset), ctx)
    feeds = {k: v.astype(np.uint8) if v.dtype == np.bool_ else v for k, v in data.items()}
    run = graph.compute({k: v for k, v in feeds.items() if k in graph.input_descriptors})
    folded_graph = webnn.onnx.load(make_model(nodes, {}, {**data, **params}, outputs, opset), ctx)
    assert not folded_graph.input_descriptors
    folded = folded_graph.compute({})
    for name in outputs:
        assert same_bits(folded[name], run[name]), (
            f"{name}: folded and run differ by {np.abs(folded[name].astype(np.float64) - run[name]).max()}")
    return folded


# ---------------------------------------------------------------- float64 references
def softmax_family(op, x, axis, opset):
    """Before opset 13 the input is coerced to 2-D at axis, normalized over dims [axis:]."""
    shape = x.shape
    axis = axis % x.ndim
    if opset < 13:
        x = x.reshape(int(np.prod(shape[:axis])), -1)
        axis = 1
    x = x.astype(np.float64)
    if op == "Hardmax":
        index = np.expand_dims(np.argmax(x, axis=axis), axis)
        positions = np.arange(x.shape[axis]).reshape([-1] + [1] * (x.ndim - axis - 1))
        return (index == positions).astype(np.float64).reshape(shape)
    shifted = x - x.max(axis=axis, keepdims=True)
    log_sum = np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
    y = shifted - log_sum if op == "LogSoftmax" else np.exp(shifted - log_sum)
    return y.reshape(shape)


X4 = RNG.standard_normal((2, 4, 5, 6)).astype(np.float32) * 3


@pytest.mark.parametrize("opset", [1, 11, 13])
@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax", "Hardmax"])
@pytest.mark.parametrize("axis", [None, 0, 1, 2, -1])
def test_softmax_family(ctx, folded_ops, op, axis, opset):
    attributes = {} if axis is None else {"axis": axis}
    node = helper.make_node(op, ["x"], ["y"], **attributes)
    y = fold_and_run(ctx, [node], {"x": X4}, {}, opset)["y"]
    assert op in folded_ops
    want = softmax_family(op, X4, (1 if opset < 13 else -1) if axis is None else axis, opset)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=2e-6)


@pytest.mark.parametrize("opset", [7, 9, 13, 14, 15])
def test_batch_normalization(ctx, folded_ops, opset):
    scale, bias, mean = (RNG.standard_normal(4).astype(np.float32) for _ in range(3))
    var = (RNG.random(4) + 0.5).astype(np.float32)
    node = helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["y"], epsilon=1e-3)
    params = {"scale": scale, "bias": bias, "mean": mean, "var": var}
    y = fold_and_run(ctx, [node], {"x": X4}, params, opset)["y"]
    assert folded_ops == ["BatchNormalization"]
    per_channel = [v.astype(np.float64).reshape(1, 4, 1, 1) for v in (scale, bias, mean, var)]
    want = (X4 - per_channel[2]) / np.sqrt(per_channel[3] + 1e-3) * per_channel[0] + per_channel[1]
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


RESIZE_CASES = [
    # (attributes, scales or None, sizes or None)
    ({"mode": "cubic", "coordinate_transformation_mode": "align_corners"}, [1, 1, 2, 1.5], None),
    ({"mode": "cubic", "coordinate_transformation_mode": "align_corners"}, None, [2, 4, 3, 9]),
    ({"mode": "cubic"}, [1, 1, 0.6, 1.5], None),
    ({"mode": "cubic", "cubic_coeff_a": -0.5, "exclude_outside": 1}, [1, 1, 1.6, 2], None),
    ({"mode": "linear", "coordinate_transformation_mode": "align_corners"}, [1, 1, 2, 2], None),
    ({"mode": "linear", "coordinate_transformation_mode": "pytorch_half_pixel"}, None, [2, 4, 7, 4]),
    ({"mode": "linear"}, [1, 1, 2, 2], None),
    ({"mode": "linear", "coordinate_transformation_mode": "asymmetric"}, [1, 1, 0.5, 1.5], None),
    ({"mode": "nearest"}, [1, 1, 2, 3], None),
    ({"mode": "nearest", "nearest_mode": "floor", "coordinate_transformation_mode": "asymmetric"}, None,
     [2, 4, 8, 4]),
    ({"mode": "nearest", "nearest_mode": "round_prefer_ceil", "coordinate_transformation_mode": "align_corners"},
     [1, 1, 1.5, 0.5], None),
]


@pytest.mark.parametrize("opset", [11, 13, 18])
@pytest.mark.parametrize("attributes, scales, sizes", RESIZE_CASES, ids=[str(i) for i in range(len(RESIZE_CASES))])
def test_resize(ctx, folded_ops, attributes, scales, sizes, opset):
    params = {"roi": np.zeros(0, np.float32)}
    names = ["x", "roi" if opset < 13 else "", "scales" if scales is not None else "", "sizes" if sizes else ""]
    if scales is not None:
        params["scales"] = np.array(scales, np.float32)
    else:
        if opset < 13:
            params["scales"] = np.zeros(0, np.float32)
            names[2] = "scales"
        params["sizes"] = np.array(sizes, I64)
    while names[-1] == "":
        names.pop()
    node = helper.make_node("Resize", names, ["y"], **attributes)
    model_params = {k: v for k, v in params.items() if k in names}
    y = fold_and_run(ctx, [node], {"x": X4}, model_params, opset)["y"]
    assert folded_ops == ["Resize"]
    ort = pytest.importorskip("onnxruntime")
    model = make_model([node], {"x": X4}, model_params, opset=opset)
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": X4})[0]
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("opset", [7, 9])
def test_upsample(ctx, folded_ops, opset):
    scales = [1.0, 1.0, 2.0, 3.0]
    if opset < 9:
        node, params = helper.make_node("Upsample", ["x"], ["y"], mode="nearest", scales=scales), {}
    else:
        node, params = helper.make_node("Upsample", ["x", "s"], ["y"], mode="nearest"), {"s": np.float32(scales)}
    y = fold_and_run(ctx, [node], {"x": X4}, params, opset)["y"]
    assert folded_ops == ["Upsample"]
    np.testing.assert_array_equal(y, X4.repeat(2, axis=2).repeat(3, axis=3))


# ---------------------------------------------------------------- common ops, across their opsets
A = RNG.standard_normal((3, 4)).astype(np.float32)
B = RNG.standard_normal((3, 4)).astype(np.float32)
POSITIVE = (RNG.random((3, 4)) + 0.25).astype(np.float32)
INTS = RNG.integers(-20, 20, (3, 4)).astype(I64)
INTS_NONZERO = np.where(INTS == 0, 7, INTS)
IMAGE = RNG.standard_normal((1, 2, 6, 6)).astype(np.float32)
WEIGHTS = RNG.standard_normal((3, 2, 3, 3)).astype(np.float32)


def f64(x):
    return np.asarray(x, np.float64)


COMMON = [
    # (id, op, attributes, data, params, opsets, float64 reference of the data and params or None)
    ("add", "Add", {}, A, [B], [7, 14], lambda a, b: f64(a) + b),
    ("sub-int", "Sub", {}, INTS, [INTS[::-1].copy()], [13], lambda a, b: a - b),
    ("mul", "Mul", {}, A, [B], [7, 14], lambda a, b: f64(a) * b),
    ("div", "Div", {}, A, [POSITIVE], [7, 14], lambda a, b: f64(a) / b),
    ("div-int", "Div", {}, INTS, [INTS_NONZERO[::-1].copy()], [13], None),
    ("pow", "Pow", {}, POSITIVE, [B], [7, 15], lambda a, b: f64(a) ** b),
    ("sqrt", "Sqrt", {}, POSITIVE, [], [6, 13], lambda a: np.sqrt(f64(a))),
    ("exp", "Exp", {}, A, [], [6, 13], lambda a: np.exp(f64(a))),
    ("log", "Log", {}, POSITIVE, [], [6, 13], lambda a: np.log(f64(a))),
    ("tanh", "Tanh", {}, A, [], [6, 13], lambda a: np.tanh(f64(a))),
    ("sigmoid", "Sigmoid", {}, A, [], [6, 13], lambda a: 1 / (1 + np.exp(-f64(a)))),
    ("erf", "Erf", {}, A, [], [9, 13], None),
    ("relu", "Relu", {}, A, [], [6, 14], lambda a: np.maximum(f64(a), 0)),
    ("leaky-relu", "LeakyRelu", {"alpha": 0.1}, A, [], [6, 16], lambda a: np.where(a > 0, f64(a), 0.1 * f64(a))),
    ("elu", "Elu", {}, A, [], [6], lambda a: np.where(a > 0, f64(a), np.expm1(f64(a)))),
    ("softplus", "Softplus", {}, A, [], [1], lambda a: np.log1p(np.exp(f64(a)))),
    ("gelu", "Gelu", {}, A, [], [20], None),
    ("hard-swish", "HardSwish", {}, A, [], [14], None),
    ("clip-attributes", "Clip", {"min": -0.5, "max": 0.5}, A, [], [6], lambda a: np.clip(f64(a), -0.5, 0.5)),
    ("clip-inputs", "Clip", {}, A, [np.float32(-0.5), np.float32(0.5)], [11, 13],
     lambda a, low, high: np.clip(f64(a), low, high)),
    ("reciprocal", "Reciprocal", {}, POSITIVE, [], [6, 13], lambda a: 1 / f64(a)),
    ("cos", "Cos", {}, A, [], [7], lambda a: np.cos(f64(a))),
    ("round", "Round", {}, A * 4, [], [11], lambda a: np.round(f64(a))),
    ("mod", "Mod", {"fmod": 1}, A, [POSITIVE], [13], lambda a, b: np.fmod(f64(a), b)),
    ("mod-int", "Mod", {}, INTS, [INTS_NONZERO[::-1].copy()], [13], lambda a, b: np.mod(a, b)),
    ("cast-float-int", "Cast", {"to": TensorProto.INT32}, A * 10, [], [6, 13, 19], lambda a: np.trunc(f64(a))),
    ("cast-int-float", "Cast", {"to": TensorProto.FLOAT}, INTS, [], [13], lambda a: f64(a)),
    ("cast-float16", "Cast", {"to": TensorProto.FLOAT16}, A, [], [13], lambda a: a.astype(np.float16)),
    ("equal", "Equal", {}, INTS, [np.maximum(INTS, 0)], [11, 13], lambda a, b: a == b),
    ("less", "Less", {}, A, [B], [9, 13], lambda a, b: a < b),
    ("where", "Where", {}, A > 0, [A, B], [9, 16], lambda c, a, b: np.where(c, f64(a), b)),
    ("matmul", "MatMul", {}, A, [B.T.copy()], [9, 13], lambda a, b: f64(a) @ b),
    ("gemm", "Gemm", {"alpha": 0.5, "transB": 1}, A, [B, POSITIVE[:, :3].copy()[0]], [9, 13],
     lambda a, b, c: 0.5 * f64(a) @ f64(b).T + c),
    ("conv", "Conv", {"pads": [1, 1, 1, 1]}, IMAGE, [WEIGHTS], [1, 11], None),
    ("conv-transpose", "ConvTranspose", {"strides": [2, 2]}, IMAGE, [WEIGHTS.transpose(1, 0, 2, 3).copy()], [11], None),
    ("max-pool", "MaxPool", {"kernel_shape": [3, 3], "strides": [2, 2]}, IMAGE, [], [8, 12], None),
    ("average-pool", "AveragePool", {"kernel_shape": [2, 2], "pads": [1, 1, 1, 1], "count_include_pad": 1},
     IMAGE, [], [7, 19], None),
    ("global-average-pool", "GlobalAveragePool", {}, IMAGE, [], [1], lambda x: f64(x).mean(axis=(2, 3), keepdims=True)),
    ("reduce-mean-attribute", "ReduceMean", {"axes": [1]}, A, [], [11, 13],
     lambda a: f64(a).mean(axis=1, keepdims=True)),
    ("reduce-mean-input", "ReduceMean", {"keepdims": 0}, A, [np.array([0], I64)], [18],
     lambda a, axes: f64(a).mean(axis=0)),
    ("reduce-sum-attribute", "ReduceSum", {"axes": [0]}, A, [], [11], lambda a: f64(a).sum(axis=0, keepdims=True)),
    ("reduce-sum-input", "ReduceSum", {}, A, [np.array([1], I64)], [13],
     lambda a, axes: f64(a).sum(axis=1, keepdims=True)),
    ("reduce-sum-int", "ReduceSum", {"keepdims": 0}, INTS, [np.array([1], I64)], [13], lambda a, axes: a.sum(axis=1)),
    ("reduce-l2", "ReduceL2", {"axes": [1]}, A, [], [13], lambda a: np.sqrt((f64(a) ** 2).sum(axis=1, keepdims=True))),
    ("arg-max", "ArgMax", {"axis": 1}, A, [], [11, 13], lambda a: np.argmax(a, axis=1)[:, None]),
    ("cumsum", "CumSum", {}, A, [np.array(1, I64)], [11, 14], lambda a, axis: np.cumsum(f64(a), axis=1)),
    ("layer-normalization", "LayerNormalization", {"epsilon": 1e-3}, X4, [POSITIVE.reshape(-1)[:6], B.reshape(-1)[:6]], [17],
     lambda x, s, b: (f64(x) - f64(x).mean(-1, keepdims=True)) / np.sqrt(f64(x).var(-1, keepdims=True) + 1e-3) * s + b),
    ("instance-normalization", "InstanceNormalization", {}, X4, [POSITIVE[0], B[0]], [6], None),
    ("group-normalization", "GroupNormalization", {"num_groups": 2}, X4, [POSITIVE[0], B[0]], [21], None),
    ("lp-normalization", "LpNormalization", {"axis": 1}, A, [], [1],
     lambda a: f64(a) / np.linalg.norm(f64(a), axis=1, keepdims=True)),
    ("mean-variance-normalization", "MeanVarianceNormalization", {}, X4, [], [13], None),
    ("lrn", "LRN", {"size": 3}, X4, [], [13], None),
    ("einsum", "Einsum", {"equation": "ij,kj->ik"}, A, [B], [12], lambda a, b: f64(a) @ f64(b).T),
    ("transpose", "Transpose", {"perm": [1, 0]}, A, [], [1, 13], lambda a: a.T),
    ("tile", "Tile", {}, A, [np.array([2, 3], I64)], [6, 13], lambda a, r: np.tile(a, (2, 3))),
    ("pad-attributes", "Pad", {"pads": [1, 0, 0, 2], "value": 1.5}, A, [], [2], None),
    ("pad-inputs", "Pad", {"mode": "reflect"}, A, [np.array([1, 2, 1, 2], I64)], [11, 13],
     lambda a, p: np.pad(a, [(1, 1), (2, 2)], "reflect")),
    ("pad-axes", "Pad", {}, A, [np.array([1, 2], I64), np.float32(3), np.array([1], I64)], [18],
     lambda a, p, v, axes: np.pad(a, [(0, 0), (1, 2)], constant_values=3)),
    ("split-attribute", "Split", {"axis": 1, "split": [1, 3]}, A, [], [11], None),
    ("split-input", "Split", {"axis": 1}, A, [np.array([3, 1], I64)], [13], None),
    ("split-outputs", "Split", {"axis": 1, "num_outputs": 2}, A, [], [18], None),
    ("depth-to-space", "DepthToSpace", {"blocksize": 2, "mode": "CRD"}, X4, [], [13], None),
    ("trilu", "Trilu", {"upper": 0}, A, [np.array(1, I64)], [14], lambda a, k: np.tril(a, 1)),
    ("one-hot", "OneHot", {}, np.array([0, 3, -1], I64), [np.array(4, I64), np.float32([0, 2])], [11], None),
    ("sum", "Sum", {}, A, [B, POSITIVE], [8, 13], lambda a, b, c: f64(a) + b + c),
    ("mean", "Mean", {}, A, [B], [13], lambda a, b: (f64(a) + b) / 2),
    ("max", "Max", {}, INTS, [INTS[::-1].copy()], [13], lambda a, b: np.maximum(a, b)),
    ("prelu", "PRelu", {}, A, [POSITIVE[0]], [9, 16], lambda a, s: np.where(a > 0, f64(a), f64(a) * s)),
    ("flatten", "Flatten", {"axis": 2}, X4, [], [13], lambda x: x.reshape(8, 30)),
    ("gather-elements", "GatherElements", {"axis": 1}, A, [np.array([[0, 3], [1, 1], [2, 0]], I64)], [13], None),
    ("scatter-elements", "ScatterElements", {"axis": 1}, A, [np.array([[0], [3], [2]], I64), B[:, :1].copy()], [13],
     None),
    ("dequantize", "DequantizeLinear", {}, INTS.astype(np.int8), [np.float32(0.5), np.int8(3)], [13],
     lambda q, s, z: (f64(q) - z) * s),
    ("quantize", "QuantizeLinear", {}, A * 20, [np.float32(0.5), np.uint8(128)], [13], None),
    ("is-nan", "IsNaN", {}, np.where(A > 1, np.nan, A).astype(np.float32), [], [13], lambda a: np.isnan(a)),
    ("not", "Not", {}, A > 0, [], [1], lambda a: ~a),
    ("dropout", "Dropout", {}, A, [], [13], lambda a: a),
    ("shape-start", "Shape", {"start": 1}, X4, [], [15], lambda x: np.array([4, 5, 6], I64)),
    ("size", "Size", {}, X4, [], [13], lambda x: np.array(240, I64)),
    ("eye-like", "EyeLike", {"k": 1}, A, [], [9], lambda a: np.eye(3, 4, 1, dtype=np.float32)),
]


@pytest.mark.parametrize("op, attributes, data, params, opset, reference", [
    pytest.param(*case[1:5], opset, case[6], id=f"{case[0]}-{opset}") for case in COMMON for opset in case[5]])
def test_common_op(ctx, folded_ops, op, attributes, data, params, opset, reference):
    names = [f"p{i}" for i in range(len(params))]
    outputs = ["y", "z"] if op == "Split" else ["y"]
    node = helper.make_node(op, ["x"] + names, outputs, **attributes)
    folded = fold_and_run(ctx, [node], {"x": np.asarray(data)}, dict(zip(names, map(np.asarray, params))), opset,
                          outputs)
    assert folded_ops == [op]
    if reference is not None:
        want = np.asarray(reference(data, *params))
        got = folded["y"]
        if want.dtype == np.bool_:
            want = want.astype(np.uint8)
        assert got.shape == want.shape
        if want.dtype.kind == "f":
            np.testing.assert_allclose(got.astype(np.float64), want, rtol=2e-3 if got.dtype == np.float16 else 1e-5,
                                       atol=1e-5)
        else:
            np.testing.assert_array_equal(got, want)


def test_folded_bool_results_stay_bool(ctx):
    """Equal folds to an ONNX bool (WebNN's uint8 0/1 converted back): Not and Where take it."""
    nodes = [helper.make_node("Equal", ["a", "b"], ["eq"]), helper.make_node("Not", ["eq"], ["ne"]),
             helper.make_node("Where", ["ne", "a", "b"], ["y"]), helper.make_node("Cast", ["ne"], ["c"], to=1)]
    a, b = np.array([1, 2, 3], I64), np.array([1, 5, 3], I64)
    model = make_model(nodes, {}, {"a": a, "b": b}, outputs=("y", "c", "ne"), opset=13)
    converter_values = {}

    def keep(converter, node, opset, evaluate=_folding.evaluate):
        outputs = evaluate(converter, node, opset)
        converter_values.update(zip(node.output, outputs))
        return outputs

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_folding, "evaluate", keep)
        results = webnn.onnx.load(model, ctx).compute({})
    assert converter_values["eq"].dtype == np.bool_ and converter_values["ne"].dtype == np.bool_
    np.testing.assert_array_equal(results["y"], [1, 2, 3])
    np.testing.assert_array_equal(results["c"], [0, 1, 0])
    np.testing.assert_array_equal(results["ne"], [0, 1, 0])


def test_folding_while_dispatching_a_dynamic_graph(ctx):
    """A dynamic model converts again for each new input shape, at dispatch, and folds its float
    shape arithmetic (Range, then Mul: a one-node WebNN graph computed on the same context) there."""
    nodes = [helper.make_node("Shape", ["x"], ["shape"]),
             helper.make_node("Gather", ["shape", "zero"], ["n"]),
             helper.make_node("Cast", ["n"], ["n_float"], to=TensorProto.FLOAT),
             helper.make_node("Range", ["start", "n_float", "step"], ["positions"]),
             helper.make_node("Mul", ["positions", "half"], ["offsets"]),
             helper.make_node("Add", ["x", "offsets"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n"])],
                              [numpy_helper.from_array(np.array(0, I64), "zero"),
                               numpy_helper.from_array(np.float32(0), "start"),
                               numpy_helper.from_array(np.float32(1), "step"),
                               numpy_helper.from_array(np.float32(0.5), "half")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    loaded = webnn.onnx.load(model, ctx)
    outputs = []
    for n in (3, 5, 3, 7):
        x = RNG.standard_normal(n).astype(np.float32)
        tx = ctx.create_tensor(data_type="float32", shape=[n], writable=True)
        ty = ctx.create_tensor(data_type="float32", shape=[n], readable=True)
        ctx.write_tensor(tx, x)
        ctx.dispatch(loaded, {"x": tx}, {"y": ty})
        outputs.append((x, ty))
    for x, ty in outputs:
        np.testing.assert_array_equal(ctx.read_tensor(ty), x + np.float32(0.5) * np.arange(len(x), dtype=np.float32))


# ---------------------------------------------------------------- the ONNX backend node tests, folded
@pytest.mark.parametrize("name, model, data_sets", node_tests._CASES, ids=[c[0] for c in node_tests._CASES])
def test_node_test_folded(ctx, name, model, data_sets):
    """Each ONNX backend node test case with its first input a graph input (run time), then with
    every input an initializer (folded): the same bits, wherever the run-time form converts."""
    if node_tests._unsupported_type(model):
        pytest.skip(node_tests._unsupported_type(model))
    inputs, _ = data_sets[0]
    initializer_names = {t.name for t in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in initializer_names]
    values = [node_tests._to_array(v) for v in inputs]
    if not names or any(v is None or isinstance(v, list) for v in values):
        pytest.skip("no tensor inputs")
    values = dict(zip(names, (np.asarray(v) for v in values)))
    if any(v.size == 0 for v in values.values()):
        pytest.skip("an empty input (WebNN has no empty tensors)")

    def with_initializers(keep):
        copy = onnx.ModelProto()
        copy.CopyFrom(model)
        del copy.graph.input[:]
        copy.graph.input.extend(i for i in model.graph.input if i.name in keep)
        copy.graph.initializer.extend(numpy_helper.from_array(v, k) for k, v in values.items() if k not in keep)
        return copy

    try:
        graph = webnn.onnx.load(with_initializers({names[0]}), ctx)
    except (webnn.NotSupportedError, TypeError) as error:
        pytest.skip(f"not convertible with only its first input at run time: {error}")
    data = values[names[0]]
    run = graph.compute({names[0]: data.astype(np.uint8) if data.dtype == np.bool_ else data}
                        if names[0] in graph.input_descriptors else {})
    folded = webnn.onnx.load(with_initializers(set()), ctx).compute({})
    for output in model.graph.output:
        got, want = folded[output.name], run[output.name]
        if len(model.graph.node) == 1:
            assert same_bits(got, want), output.name
        else:  # a function body: its run-time part is compiled as a whole (GELU written with erf is one gelu;
            # fused float16 steps round once, at their output: a float16 ulp or two)
            assert got.dtype == want.dtype and got.shape == want.shape
            tol = (2e-3, 2e-3) if want.dtype == np.float16 else (1e-5, 1e-6)
            np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol[0], atol=tol[1],
                                       err_msg=output.name)


# ---------------------------------------------------------------- exact NumPy forms
def converter_for(ctx, values, opset):
    model = helper.make_model(helper.make_graph([], "g", [], []), opset_imports=[helper.make_opsetid("", opset)])
    converter = _convert.Converter(model, webnn.MLGraphBuilder(ctx), ctx)
    for name, value in values.items():
        converter.set(name, value)
    return converter


DATA = RNG.standard_normal((2, 3, 4)).astype(np.float32)
FORM_CASES = [
    # (op, inputs, attributes, opset, handled by the NumPy form)
    ("Reshape", [DATA, np.array([0, -1], I64)], {}, 17, True),
    ("Reshape", [DATA, np.array([4, 0, 2], I64)], {}, 17, True),
    ("Reshape", [DATA, np.array([-1], I64)], {}, 17, True),
    ("Reshape", [DATA, np.array([24, 1], I64)], {"allowzero": 1}, 17, False),
    ("Cast", [DATA * 10], {"to": TensorProto.INT64}, 17, False),  # float to int: the engine's
    ("Cast", [np.array([3, -7, 300], I64)], {"to": TensorProto.FLOAT}, 17, False),
    ("Cast", [np.array([3, -7, 300], I64)], {"to": TensorProto.INT32}, 17, True),
    ("Cast", [np.array([3, -7, 300], I64)], {"to": TensorProto.INT8}, 17, False),  # does not fit
    ("Cast", [np.array([3, 0, 300], np.int32)], {"to": TensorProto.BOOL}, 17, True),
    ("Cast", [np.array([True, False])], {"to": TensorProto.INT64}, 17, True),
    ("Cast", [np.array([0.1, 2.5, -1e30], np.float64)], {"to": TensorProto.FLOAT}, 17, True),  # no WebNN double
    ("Cast", [np.array([3, -7], np.int16)], {"to": TensorProto.INT64}, 17, True),
    ("Cast", [np.zeros((0, 3), np.float32)], {"to": TensorProto.INT64}, 17, True),
    ("Cast", [np.array([1.5], np.float32)], {"to": TensorProto.STRING}, 17, False),
    ("Unsqueeze", [DATA, np.array([-1, 0], I64)], {}, 13, True),
    ("Unsqueeze", [np.array(5, I64), np.array([0], I64)], {}, 17, True),
    ("Unsqueeze", [DATA], {"axes": [1, 4]}, 11, True),
    ("Squeeze", [DATA[:1, :, :1]], {}, 13, True),
    ("Squeeze", [DATA[:1, :, :1], np.array([-1], I64)], {}, 13, True),
    ("Squeeze", [DATA[:1]], {"axes": [0]}, 11, True),
    ("Concat", [np.array([1, 2], I64), np.array([3], I64)], {"axis": 0}, 17, True),
    ("Concat", [DATA, DATA[:, :1]], {"axis": -2}, 17, True),
    ("Gather", [np.array([4, 5, 6, 7], I64), np.array(1, I64)], {}, 17, True),
    ("Gather", [DATA, np.array([[2, -1], [0, 1]], I64)], {"axis": -1}, 17, True),
    ("Gather", [DATA, np.array([1], np.int32)], {"axis": 1}, 17, True),
    ("Shape", [DATA], {}, 17, True),
    ("Shape", [DATA], {"start": 1}, 17, False),
    ("Identity", [DATA], {}, 17, True),
    ("Slice", [DATA, np.array([1], I64), np.array([100], I64), np.array([-1], I64)], {}, 13, True),
    ("Slice", [DATA, np.array([-1, 0], I64), np.array([-4, 3], I64), np.array([2, 0], I64),
               np.array([-1, 2], I64)], {}, 13, True),
    ("Slice", [DATA, np.array([2], I64), np.array([2], I64)], {}, 13, True),  # empty
    ("Slice", [np.arange(10, dtype=I64), np.array([-2**63], I64), np.array([2**63 - 1], I64), np.array([0], I64),
               np.array([-3], I64)], {}, 13, True),
    ("Slice", [DATA], {"starts": [1], "ends": [3], "axes": [2]}, 9, True),
    ("Expand", [DATA[:, :1], np.array([2, 1, 5, 1], I64)], {}, 13, True),
    ("Expand", [np.array([1.5], np.float32), np.array([3], I64)], {}, 13, True),
    ("ConstantOfShape", [np.array([2, 3], I64)], {}, 13, True),
    ("ConstantOfShape", [np.array([2], I64)], {"value": numpy_helper.from_array(np.array([7], I64))}, 13, True),
    ("ConstantOfShape", [np.zeros(0, I64)], {"value": numpy_helper.from_array(np.array([True]))}, 13, True),
    ("Range", [np.array(2, I64), np.array(11, I64), np.array(3, I64)], {}, 13, True),
    ("Range", [np.array(10, np.int32), np.array(0, np.int32), np.array(-3, np.int32)], {}, 13, True),
    ("Range", [np.array(5, I64), np.array(1, I64), np.array(1, I64)], {}, 13, True),  # empty
]


@pytest.mark.parametrize("op, inputs, attributes, opset, handled", FORM_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(FORM_CASES)])
def test_numpy_form_matches_the_reference(ctx, op, inputs, attributes, opset, handled):
    names = [f"x{i}" for i in range(len(inputs))]
    node = helper.make_node(op, names, ["y"], **attributes)
    form = _folding._numpy_form(node, [np.asarray(x) for x in inputs], opset)
    assert (form is not None) == handled
    want = np.asarray(_folding._reference(converter_for(ctx, dict(zip(names, inputs)), opset), node, opset)[0])
    if form is not None:
        got = form[0]
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
        assert got.flags.c_contiguous


def test_float_range_adds_delta_in_its_type(ctx):
    """Range's values are start, then each the previous one plus delta in the inputs' type (the ONNX
    function body, and ONNX Runtime), not start + i * delta; its length is ceil((limit - start) / delta)."""
    start, limit, delta = np.float32(0.1), np.float32(300.7), np.float32(0.3)
    node = helper.make_node("Range", ["a", "b", "c"], ["y"])
    (y,) = _folding.evaluate(converter_for(ctx, {"a": start, "b": limit, "c": delta}, 13), node, 13)
    expected, value = [], start
    for _ in range(int(np.ceil(np.float64(limit - start) / np.float64(delta)))):
        expected.append(value)
        value = np.float32(value + delta)
    assert y.dtype == np.float32 and same_bits(y, np.array(expected, np.float32))


def test_ops_without_a_webnn_mapping_use_the_reference(ctx):
    """TopK and Acos have no WebNN mapping: folded by the ONNX reference implementation."""
    x = np.array([[0.5, -0.25, 0.75], [0.0, 1.0, -1.0]], np.float32)
    nodes = [helper.make_node("TopK", ["x", "k"], ["values", "indices"], axis=1),
             helper.make_node("Acos", ["values"], ["y"])]
    model = make_model(nodes, {}, {"x": x, "k": np.array([2], I64)}, outputs=("y", "indices"), opset=13)
    results = webnn.onnx.load(model, ctx).compute({})
    np.testing.assert_allclose(results["y"], np.arccos(np.sort(x, axis=1)[:, ::-1][:, :2]), rtol=1e-6)
    np.testing.assert_array_equal(results["indices"], [[2, 0], [1, 0]])


def test_folding_an_op_on_a_type_webnn_lacks_is_refused(ctx):
    """A double Mul has no WebNN kernel (it could not run at dispatch either): NotSupportedError naming
    the node. A Cast from double is exact in NumPy and folds."""
    a = np.array([1.5, 2.5])
    model = make_model([helper.make_node("Mul", ["a", "a"], ["y"], name="square")], {}, {"a": a}, opset=13)
    with pytest.raises(webnn.NotSupportedError, match=r"node 'square' \(Mul\).*no float64 tensors"):
        webnn.onnx.load(model, ctx)
    model = make_model([helper.make_node("Cast", ["a"], ["y"], to=TensorProto.FLOAT)], {}, {"a": a}, opset=13)
    np.testing.assert_array_equal(webnn.onnx.load(model, ctx).compute({})["y"], np.float32([1.5, 2.5]))


# ---------------------------------------------------------------- size limits
def _bombs():
    """{name: tiny model whose folding would allocate gigabytes}: each result is just over 2^31-1
    elements (or a dimension is), so WebNN could not hold it anyway."""
    def model(nodes, initializers, opset=13):
        nodes = list(nodes) + [helper.make_node("Add", ["t", "x"], ["y"])]
        graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                                  [numpy_helper.from_array(np.asarray(v), k) for k, v in initializers.items()])
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])

    ones = np.ones((2, 2), np.float32)
    return {
        "tile": model([helper.make_node("Tile", ["a", "r"], ["t"])], {"a": ones, "r": np.array([1, 2**29], I64)}),
        "constant-of-shape": model([helper.make_node("ConstantOfShape", ["s"], ["t"])], {"s": np.array([2**31], I64)}),
        "range": model([helper.make_node("Range", ["a", "b", "c"], ["r"]),
                        helper.make_node("Cast", ["r"], ["t"], to=TensorProto.FLOAT)],
                       {"a": np.array(0, I64), "b": np.array(2**31, I64), "c": np.array(1, I64)}),
        "expand": model([helper.make_node("Expand", ["a", "s"], ["t"])],
                        {"a": ones, "s": np.array([2**30, 1, 1], I64)}),
        "pad": model([helper.make_node("Pad", ["a", "p"], ["t"])], {"a": ones, "p": np.array([0, 0, 0, 2**31], I64)}),
        "gather": model([helper.make_node("ConstantOfShape", ["n"], ["i"],
                                          value=numpy_helper.from_array(np.zeros(1, I64))),
                         helper.make_node("ConstantOfShape", ["s"], ["a"]),
                         helper.make_node("Gather", ["a", "i"], ["t"])],
                        {"n": np.array([2**16], I64), "s": np.array([1, 2**16], I64)}),  # [2^16, 2^16]
        "one-hot": model([helper.make_node("OneHot", ["i", "d", "v"], ["t"])],
                         {"i": np.zeros(2, I64), "d": np.array(2**30, I64), "v": np.float32([0, 1])}),
        "resize": model([helper.make_node("Resize", ["a", "", "sc"], ["t"], mode="linear")],
                        {"a": ones, "sc": np.float32([1, 2**30])}),
        "hann-window": model([helper.make_node("HannWindow", ["n"], ["t"])], {"n": np.array(2**31, I64)}, opset=17),
    }


def test_oversized_folds_are_refused_before_allocating():
    """In a child process limited to 2 GB of address space: each model fails at once with
    NotSupportedError naming the node and the limit, and the child's peak memory stays small."""
    script = textwrap.dedent("""
        import resource, sys, time
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
        import onnx, webnn, webnn.onnx
        for path in sys.argv[1:]:
            model = onnx.load(path)
            start = time.perf_counter()
            try:
                webnn.onnx.load(model)
                print(path, "LOADED")
            except Exception as error:
                print(path, type(error).__name__, time.perf_counter() - start, str(error).replace("\\n", " "))
        print("maxrss", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    """)
    with tempfile.TemporaryDirectory() as folder:
        paths = {}
        for name, model in _bombs().items():
            paths[name] = os.path.join(folder, f"{name}.onnx")
            onnx.save(model, paths[name])
            assert len(model.SerializeToString()) < 300
        # Without the test suite's ONNX shape-inference cross-check, whose data propagation allocates.
        child = subprocess.run([sys.executable, "-c", script, *paths.values()], capture_output=True, text=True,
                               timeout=120, env={**os.environ, "WEBNN_ONNX_SHAPE_CHECK": "0"})
    assert child.returncode == 0, child.stderr
    lines = child.stdout.splitlines()
    by_path = {line.split(" ", 1)[0]: line.split(" ", 1)[1] for line in lines[:-1]}
    for name, path in paths.items():
        kind, seconds, message = by_path[path].split(" ", 2)
        assert kind == "NotSupportedError", (name, by_path[path])
        assert "2^31-1" in message and "ONNX node" in message, (name, message)
        assert float(seconds) < 5, (name, seconds)
    assert int(lines[-1].split()[1]) < 1024 * 1024, lines[-1]  # kilobytes: under 1 GB


def test_check_size_limits(ctx):
    converter = converter_for(ctx, {}, 13)
    converter.check_size([2**31 - 1], np.int8)
    with pytest.raises(webnn.NotSupportedError, match="dimension 2147483648"):
        converter.check_size([2**31, 0], np.int8)
    with pytest.raises(webnn.NotSupportedError, match="2147483648 elements"):
        converter.check_size([2**16, 2**15], np.int8)
    converter._limits = {**converter._limits, "maxTensorByteLength": 1000}
    with pytest.raises(webnn.NotSupportedError, match="1024 bytes, over this context's maxTensorByteLength of 1000"):
        converter.check_size([256], np.float32)
