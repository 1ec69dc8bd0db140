"""The ONNX backend node tests (one ONNX op per model, with reference inputs and outputs) for every op
that webnn.onnx claims to support, run through the importer and compared with the references.

The cases come from ``onnx/backend/test/data/node`` when the installed onnx ships that folder, and
otherwise from the generators in ``onnx.backend.test.case.node``. Cases that WebNN cannot express
(a data type it lacks, such as double, int16 or string; a run-time shape; an unsupported attribute
value) are skipped with the importer's reason, never dropped.
"""
import glob
import os
import warnings

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

import webnn  # noqa: E402
import webnn.onnx  # noqa: E402
from onnx import numpy_helper  # noqa: E402

# Element types with a WebNN data type (bool travels as uint8).
_WEBNN_ELEM_TYPES = {1, 2, 3, 6, 7, 9, 10, 12, 13}
_ELEM_NAMES = {4: "uint16", 5: "int16", 8: "string", 11: "double", 14: "complex64", 15: "complex128",
               16: "bfloat16"}


def _load_cases():
    """[(name, model, [(inputs, outputs)])] for every node test."""
    import onnx.backend.test

    data_dir = os.path.join(os.path.dirname(onnx.backend.test.__file__), "data", "node")
    cases = []
    if os.path.isdir(data_dir):
        for case_dir in sorted(glob.glob(os.path.join(data_dir, "test_*"))):
            model = onnx.load(os.path.join(case_dir, "model.onnx"))
            data_sets = []
            for set_dir in sorted(glob.glob(os.path.join(case_dir, "test_data_set_*"))):
                def read(prefix):
                    tensors = []
                    for path in sorted(glob.glob(os.path.join(set_dir, f"{prefix}_*.pb")),
                                       key=lambda p: int(p.rsplit("_", 1)[1][:-3])):
                        tensor = onnx.TensorProto()
                        with open(path, "rb") as f:
                            tensor.ParseFromString(f.read())
                        tensors.append(tensor)
                    return tensors
                data_sets.append((read("input"), read("output")))
            cases.append((os.path.basename(case_dir), model, data_sets))
        return cases
    from onnx.backend.test.case import node

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for case in node.collect_testcases(None):
            cases.append((case.name, case.model, case.data_sets))
    return cases


# Cases whose reference outputs disagree with the ONNX operator text, which webnn.onnx and ONNX
# Runtime follow.
KNOWN_DIVERGENCES = {
    name: "the ONNX reference uses the fractional output length (scale x input) for align_corners; the operator "
          "text and ONNX Runtime use the integer output length, as webnn.onnx does"
    for name in ("test_resize_downsample_scales_linear_align_corners", "test_resize_downsample_scales_cubic_align_corners")
}


def _claimed(model):
    return all(n.domain in ("", "ai.onnx") and n.op_type in webnn.onnx.SUPPORTED_OPS for n in model.graph.node)


_CASES = [case for case in _load_cases() if _claimed(case[1])]


def _to_array(value):
    if isinstance(value, onnx.TensorProto):
        return numpy_helper.to_array(value)
    return value


def _unsupported_type(model):
    for info in list(model.graph.input) + list(model.graph.output):
        if not info.type.HasField("tensor_type"):
            return f"'{info.name}' is not a tensor"
        elem = info.type.tensor_type.elem_type
        if elem not in _WEBNN_ELEM_TYPES:
            return f"'{info.name}' has type {_ELEM_NAMES.get(elem, elem)}, which WebNN does not have"
    return None


def _tolerances(expected):
    if expected.dtype == np.float16:
        return 1e-2, 1e-3
    return 1e-3, 1e-5


def _convert_baking_parameters(model, context, feeds):
    """Converts the model; graph inputs that the importer needs at conversion time (axes, shapes,
    scales, pads fed as inputs by the tests) become initializers holding the test's values.
    Returns the MLGraph, or a skip reason."""
    model_copy = None
    while True:
        current = model_copy or model
        baked = {t.name for t in current.graph.initializer}
        shapes = {i.name: list(np.shape(feeds[i.name])) for i in current.graph.input
                  if i.name in feeds and i.name not in baked}
        try:
            return webnn.onnx.load(current, context, input_shapes={k: v for k, v in shapes.items() if v})
        except webnn.NotSupportedError as error:
            name = getattr(error, "runtime_value", None)
            if name not in feeds or not any(i.name == name for i in current.graph.input):
                return str(error)
            if model_copy is None:
                model_copy = onnx.ModelProto()
                model_copy.CopyFrom(model)
            model_copy.graph.initializer.append(numpy_helper.from_array(np.asarray(feeds[name]), name))
            BAKED.add(id(model))


BAKED = set()  # models run with some parameter inputs fixed as initializers


def run_case(context, model, data_sets):
    """Runs one case; returns None on success or a skip reason; raises AssertionError on a mismatch."""
    reason = _unsupported_type(model)
    if reason:
        return reason
    input_names = [i.name for i in model.graph.input if i.name not in {t.name for t in model.graph.initializer}]
    for inputs, outputs in data_sets:
        inputs = [_to_array(v) for v in inputs]
        if any(v is None or isinstance(v, list) for v in inputs):
            return "optional or sequence inputs are not supported"
        feeds = {name: np.asarray(v) for name, v in zip(input_names, inputs)}
        shapes = {name: list(v.shape) for name, v in feeds.items()}
        if any(0 in shape for shape in shapes.values()):
            return "an input is an empty tensor (WebNN has no empty tensors)"
        graph = _convert_baking_parameters(model, context, feeds)
        if isinstance(graph, str):
            return graph
        feeds = {name: (v.astype(np.uint8) if v.dtype == np.bool_ else v) for name, v in feeds.items()
                 if name in graph.input_descriptors}  # inputs used only for their shape are folded away
        results = graph.compute(feeds)
        for info, expected in zip(model.graph.output, outputs):
            expected = np.asarray(_to_array(expected))
            actual = results[info.name]
            if expected.dtype == np.bool_:
                expected = expected.astype(np.uint8)
            assert list(actual.shape) == list(expected.shape), f"{info.name}: shape {actual.shape} != {expected.shape}"
            if expected.dtype.kind == "f":
                rtol, atol = _tolerances(expected)
                np.testing.assert_allclose(actual.astype(np.float64), expected.astype(np.float64), rtol=rtol, atol=atol,
                                           err_msg=info.name)
            else:
                np.testing.assert_array_equal(actual, expected, err_msg=info.name)
    return None


def _qlinearmatmul_data_wraps(data_sets):
    """Whether a QLinearMatMul case's reference output wraps an int8 overflow around (older onnx's data)
    where the spec's quantizeLinear, and newer onnx, saturate."""
    for inputs, outputs in data_sets:
        a, sa, za, b, sb, zb, sy, zy = (_to_array(x) for x in inputs)
        expected = _to_array(outputs[0])
        real = ((a.astype(np.float64) - za) * sa) @ ((b.astype(np.float64) - zb) * sb)
        y = np.rint(real / sy.astype(np.float64)) + zy
        info = np.iinfo(expected.dtype)
        wrapped = (y - info.min) % (info.max - info.min + 1) + info.min
        far = np.abs(np.clip(y, info.min, info.max) - expected) > 1  # (float16 scales: one step of rounding)
        if far.any() and np.all(np.abs(wrapped[far] - expected[far]) <= 1):
            return True
    return False


@pytest.fixture(scope="module")
def onnx_context():
    return webnn.create_context()


@pytest.mark.parametrize("name, model, data_sets", _CASES, ids=[c[0] for c in _CASES])
def test_node(onnx_context, name, model, data_sets):
    if name in KNOWN_DIVERGENCES:
        pytest.skip(KNOWN_DIVERGENCES[name])
    if name == "test_l2normalization_axis_0" and any(np.isnan(_to_array(o)).any() for _, outs in data_sets
                                                    for o in outs):
        pytest.skip("this onnx's reference data predates ONNX defining a zero norm's output as 0 (0/0 = 0), which "
                    "webnn.onnx follows")
    if name.startswith("test_qlinearmatmul") and _qlinearmatmul_data_wraps(data_sets):
        pytest.skip("this onnx's reference data wraps the int8 overflow around; quantizeLinear saturates (the spec, "
                    "and newer onnx's data)")
    reason = run_case(onnx_context, model, data_sets)
    if reason:
        pytest.skip(reason)
