"""Imports an ONNX model (made here with onnx.helper: MatMul, Add, Sigmoid) and runs it.

Needs the onnx package (``pip install 'webnn[onnx]'``); without it, says so and exits.
"""
import importlib.util
from typing import Optional

import numpy as np
import numpy.typing as npt


def make_model() -> bytes:
    """A serialized ONNX model: ``y = sigmoid(x @ w + b)`` with x of shape [batch, 4]."""
    from onnx import TensorProto, helper, numpy_helper

    w = numpy_helper.from_array(np.linspace(-1, 1, 8, dtype=np.float32).reshape(4, 2), "w")
    b = numpy_helper.from_array(np.array([0.5, -0.5], np.float32), "b")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["xw"]), helper.make_node("Add", ["xw", "b"], ["z"]),
         helper.make_node("Sigmoid", ["z"], ["y"])],
        "dense_sigmoid",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 2])],
        initializer=[w, b])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    serialized: bytes = model.SerializeToString()
    return serialized


def main() -> Optional[npt.NDArray[np.float32]]:
    if importlib.util.find_spec("onnx") is None:
        print("onnx is not installed: pip install 'webnn[onnx]'")
        return None
    import webnn.onnx

    graph = webnn.onnx.load(make_model(), override_dims={"batch": 3})
    x = np.arange(12, dtype=np.float32).reshape(3, 4) / 10
    y: npt.NDArray[np.float32] = graph.compute({"x": x})["y"]
    w = np.linspace(-1, 1, 8, dtype=np.float32).reshape(4, 2)
    np.testing.assert_allclose(y, 1 / (1 + np.exp(-(x @ w + np.array([0.5, -0.5], np.float32)))), rtol=1e-5)
    return y


if __name__ == "__main__":
    print(main())
