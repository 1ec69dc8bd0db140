"""ONNX -> WebNN import (needs the ``onnx`` package: ``pip install webnn[onnx]``).

    graph = webnn.onnx.load("model.onnx", context, input_shapes={"x": [1, 3, 224, 224]})
    builder, inputs, outputs = webnn.onnx.convert("model.onnx", context)   # to extend or save
    webnn.onnx.convert_to_webnn("model.onnx", "model.webnn", override_dims={"batch": 1})

``load`` keeps the input dimensions a model leaves free dynamic (the graph runs at any size;
unnamed ones, ``?`` or ``-1``, are named ``"<input>[<axis>]"``); ``override_dims={"batch": 1}`` pins
them by name, ``input_shapes={"x": [...]}`` pins whole inputs, ``max_sizes`` bounds them.
``convert`` and ``convert_to_webnn`` make builder calls at one shape: every dimension pinned.
Subgraphs that compute only shapes (Shape, Gather, Concat, Range, ...) and every node whose inputs
are all constants are evaluated at conversion time (exact NumPy forms for data movement and index
arithmetic, WebNN's own kernels for everything else), so the WebNN graph holds only the runtime
work. Nodes written out of topological order are sorted (as ONNX Runtime does). Quantized models
load in the QDQ and QOperator forms (``onnxruntime.quantization``), each quantized op as
dequantizeLinear, the float op, quantizeLinear. ONNX ``bool`` tensors become ``uint8`` 0/1 operands.
``SUPPORTED_OPS`` lists the default-domain op types, then the ONNX Runtime contrib ops that its graph
optimizer and quantizer write into the models they save, by domain ("com.microsoft.FusedConv",
"com.microsoft.QLinearAdd", ...).

Errors:

- :class:`webnn.NotSupportedError`: an ONNX op, attribute value, data type or data-dependent
  shape that WebNN cannot express, or a constant result too large for WebNN (over 2^31-1 elements
  or per dimension), refused before it is allocated; the message names the node, its op type and
  the reason;
- :class:`TypeError`: bad arguments (an unknown input name, a wrong rank, a dimension left
  symbolic), or a malformed model: an input no node produces, a cycle (both name the node), or
  what WebNN's builder rejects (the message starts with the ``[node name]`` label of the failing
  builder call).
"""
from ._convert import SUPPORTED_OPS, convert, convert_to_webnn, input_descriptors, load

__all__ = ["SUPPORTED_OPS", "convert", "convert_to_webnn", "input_descriptors", "load"]
