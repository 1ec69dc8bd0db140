"""The importer's NumPy forms of folded shape ops give what the ONNX reference implementation
gives (values, dtype and shape), and leave the cases they do not handle to it."""
import types

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import helper  # noqa: E402

from webnn.onnx import _folding  # noqa: E402


def converter_for(values, opset):
    model = helper.make_model(helper.make_graph([], "g", [], []), opset_imports=[helper.make_opsetid("", opset)])
    return types.SimpleNamespace(values=values, model=model, unsupported=RuntimeError)


def reference(node, values, opset, monkeypatch):
    with monkeypatch.context() as patch:
        patch.setattr(_folding, "_NUMPY_FORMS", {})
        return _folding.evaluate(converter_for(values, opset), node, opset)


I64 = np.int64
RNG = np.random.default_rng(3)
DATA = RNG.standard_normal((2, 3, 4)).astype(np.float32)
CASES = [
    # (op, inputs, attributes, opset, handled by the NumPy form)
    ("Reshape", [DATA, np.array([0, -1], I64)], {}, 17, True),
    ("Reshape", [DATA, np.array([4, 0, 2], I64)], {}, 17, True),
    ("Reshape", [DATA, np.array([-1], I64)], {}, 17, True),
    ("Reshape", [DATA, np.array([24, 1], I64)], {"allowzero": 1}, 17, False),
    ("Cast", [DATA * 10], {"to": onnx.TensorProto.INT64}, 17, True),
    ("Cast", [np.array([3, -7, 300], I64)], {"to": onnx.TensorProto.FLOAT}, 17, True),
    ("Cast", [DATA], {"to": onnx.TensorProto.FLOAT16}, 17, True),
    ("Cast", [np.array([0.0, 2.5, -0.0], np.float32)], {"to": onnx.TensorProto.BOOL}, 17, True),
    ("Cast", [np.array([True, False])], {"to": onnx.TensorProto.FLOAT}, 17, True),
    ("Cast", [np.array([1.5], np.float32)], {"to": onnx.TensorProto.STRING}, 17, False),
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
]


@pytest.mark.parametrize("op, inputs, attributes, opset, handled", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_numpy_form_matches_the_reference(op, inputs, attributes, opset, handled, monkeypatch):
    names = [f"x{i}" for i in range(len(inputs))]
    node = helper.make_node(op, names, ["y"], **attributes)
    values = dict(zip(names, inputs))
    form = _folding._numpy_form(converter_for(values, opset), node, opset)
    assert (form is not None) == handled
    got = _folding.evaluate(converter_for(values, opset), node, opset)[0]
    want = np.asarray(reference(node, values, opset, monkeypatch)[0])
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
