"""The ONNX op handlers, one module per family; importing this package registers them all in
``onnx._registry.HANDLERS``."""
from . import activations, control_flow, conv_pool, elementwise, linear, normalization, quantization, reduction, resize, shape  # noqa: F401
