"""QuantizeLinear, DequantizeLinear and their relatives."""
import numpy as np

from .._registry import attributes, handles, reshape, webnn_type


# ---------------------------------------------------------------- quantization
def _quantization_parameter(cv, name, x_shape, axis, block_size, data_type):
    """A scale or zero point reshaped to the input's rank (per-tensor, per-axis or blockwise)."""
    value = cv.value(name)
    rank = len(x_shape)
    if len(value.shape) == 0 or (len(value.shape) == 1 and value.shape[0] == 1 and rank != 1):
        value = reshape(cv, value, [1] * rank)
    elif len(value.shape) == 1 and not block_size:
        if not 0 <= axis < rank:
            raise TypeError(f"{cv.where()}: axis is out of range for rank {rank}")
        value = reshape(cv, value, [value.shape[0] if i == axis else 1 for i in range(rank)])
    return cv.operand(value, data_type)


@handles("QuantizeLinear", "DequantizeLinear")
def quantize(cv, node, opset):
    attrs = attributes(node)
    x = cv.operand(node.input[0])
    rank = len(x.shape)
    axis = attrs.get("axis", 1)
    axis = axis + rank if axis < 0 else axis  # used only by per-axis (1-D) parameters
    block_size = attrs.get("block_size", 0)
    if node.op_type == "QuantizeLinear":
        scale = _quantization_parameter(cv, node.input[1], x.shape, axis, block_size, x.data_type)
        if cv.has(node, 2):
            zero_type = cv.dtype(node.input[2])
        else:
            zero_type = webnn_type(attrs["output_dtype"]) if attrs.get("output_dtype") else "uint8"
        if zero_type not in ("uint8", "int8", "uint32", "int32"):
            raise cv.unsupported(f"{zero_type} quantization is not supported")
        zero = (_quantization_parameter(cv, node.input[2], x.shape, axis, block_size, zero_type) if cv.has(node, 2)
                else cv.operand(np.zeros(scale.shape, zero_type)))
        return cv.op("quantizeLinear", x, scale, zero)
    scale_value = cv.value(node.input[1])
    scale_type = scale_value.dtype.name if isinstance(scale_value, np.ndarray) else scale_value.data_type
    scale = _quantization_parameter(cv, node.input[1], x.shape, axis, block_size, scale_type)
    zero = (_quantization_parameter(cv, node.input[2], x.shape, axis, block_size, x.data_type) if cv.has(node, 2)
            else cv.operand(np.zeros(scale.shape, x.data_type)))
    return cv.op("dequantizeLinear", x, scale, zero)
