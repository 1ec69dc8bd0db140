"""webnn: a native CPU implementation of the W3C Web Neural Network API.

Quick start::

    import numpy as np
    import webnn

    context = webnn.ml.create_context()
    builder = webnn.MLGraphBuilder(context)
    x = builder.input("x", data_type="float32", shape=[2, 2])
    y = builder.relu(builder.add(x, builder.constant(np.ones((2, 2), np.float32))))
    graph = builder.build({"y": y})
    print(graph.compute({"x": np.array([[-3, 1], [2, -1]], np.float32)})["y"])
"""
from ._errors import DataError, InvalidStateError, MLError, NotSupportedError, OperationError, UnknownError
from . import _core
from ._api import (
    ML,
    MLContext,
    MLContextLostInfo,
    MLGraph,
    MLGraphBuilder,
    MLOperand,
    MLOperandDescriptor,
    MLTensor,
    MLTensorDescriptor,
    create_context,
    create_context_async,
    ml,
    numpy_dtype,
)
from ._compat import MLActivation  # the 2022 Working Draft's MLOperator
from ._dynamic import DynamicDimension, dynamic  # dynamic input dimensions
from .formats import load, load_into, save  # .webnn model files
from . import profiling  # plan and profile reports
from .batch import BatchRunner, run_batches  # many items on every core

__version__ = _core.version()


def __getattr__(name):
    # webnn.onnx after `import webnn` alone; the ONNX importer (and the onnx package) load on first use.
    if name == "onnx":
        import importlib

        return importlib.import_module(".onnx", __name__)
    raise AttributeError(f"module 'webnn' has no attribute '{name}'")

__all__ = [
    "ML", "MLContext", "MLContextLostInfo", "MLGraph", "MLGraphBuilder", "MLOperand", "MLOperandDescriptor",
    "MLTensor", "MLTensorDescriptor", "create_context", "create_context_async", "ml",
    "MLError", "DataError", "InvalidStateError", "NotSupportedError", "OperationError", "UnknownError",
    "MLActivation", "numpy_dtype", "load", "load_into", "save", "profiling", "BatchRunner", "run_batches",
    "DynamicDimension", "dynamic",
]
