"""The ONNX op handlers, one module per family; importing this package registers them all in
``onnx._registry.HANDLERS`` (re-exported here: importing it from this package ensures they are)."""
from . import (activations, contrib, control_flow, conv_pool, elementwise, linear, normalization, qlinear,
               quantization, recurrent, reduction, resize, shape)
from .._registry import HANDLERS

__all__ = ["HANDLERS", "activations", "contrib", "control_flow", "conv_pool", "elementwise", "linear", "normalization",
           "qlinear", "quantization", "recurrent", "reduction", "resize", "shape"]
