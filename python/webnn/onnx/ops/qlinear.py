"""The QOperator form of quantized models (``onnxruntime.quantization`` with QuantFormat.QOperator):
QLinearConv and QLinearMatMul, and ONNX Runtime's contrib ops (domain "com.microsoft") QLinearConv
(channels_last too), QLinearAdd, QLinearMul, QLinearSigmoid, QLinearLeakyRelu, QLinearSoftmax,
QLinearGlobalAveragePool, QLinearAveragePool, QLinearConcat and QGemm.

Each is what its definition says, "dequantize, compute in float, quantize": WebNN dequantizeLinear,
the float op, quantizeLinear (round half to even, saturate). Inputs known at conversion time (the
weights with their scales and zero points, the int32 biases, whose scale is the input's times the
weight's) are dequantized then, bitwise as ONNX Runtime's DequantizeLinear (``dequantize_array``),
so the graph holds float weights, packed like any other. ONNX Runtime runs these ops with integer
kernels and requantizes each exact int32 sum once; the float path rounds the dequantized values and
their float32 sums, so an output can differ from ONNX Runtime's by one quantization step where the
exact value lies close to a rounding boundary. (ONNX Runtime's AVX2 u8 x s8 kernels can also
saturate int16 pair sums: see ``ort_exact`` in tests/test_onnx_more_ops.py.)
"""
import numpy as np

from .._registry import attributes, dequantize_array, handles, normalize_axis, reshape
from .activations import _softmax_layout
from .conv_pool import convolve, pool_window
from .linear import drop_vector_dims
from .quantization import _quantization_parameter

MICROSOFT = "com.microsoft"
_QUANTIZED_TYPES = ("uint8", "int8")


# ---------------------------------------------------------------- dequantize, quantize
def _dequantized(cv, node, index, axis=None):
    """Input ``index`` (uint8 or int8) dequantized with its scale (input index + 1) and optional zero
    point (index + 2), in float32: a NumPy array when the three are known at conversion time, else
    an operand. Per tensor, or per ``axis`` when the scale is a 1-D tensor of that axis's size."""
    name = node.input[index]
    data_type = cv.dtype(name)
    if data_type not in _QUANTIZED_TYPES:
        raise cv.unsupported(f"input {index} ('{name}') is {data_type}; this operator takes uint8 or int8")
    x, scale = cv.value(name), cv.value(node.input[index + 1])
    zero = cv.value(node.input[index + 2]) if cv.has(node, index + 2) else None
    shape = [int(d) for d in x.shape]
    scale_count = int(np.prod(scale.shape, dtype=np.int64))
    per_axis = axis is not None and len(scale.shape) == 1 and scale_count != 1
    if scale_count != 1 and not (per_axis and 0 <= axis < len(shape) and shape[axis] == scale_count):
        where = "per tensor" if axis is None else f"per tensor or along axis {axis} of {shape}"
        raise TypeError(f"{cv.where()}: the scale of input {index} has shape {list(scale.shape)}; it must be "
                        f"one value {where}")
    if all(v is None or isinstance(v, np.ndarray) for v in (x, scale, zero)):
        # float32 whatever the scale's type (float16 in opset 21's QLinearMatMul), as on the operand path
        y = dequantize_array(x, scale.astype(np.float32, copy=False), zero, axis if per_axis else 0)
        if y is None:
            raise TypeError(f"{cv.where()}: input {index} cannot be dequantized with a {scale.dtype} scale "
                            f"{list(scale.shape)} and zero point {None if zero is None else list(zero.shape)}")
        return y
    axis = axis if per_axis else 0
    scale = _quantization_parameter(cv, node.input[index + 1], shape, axis, 0, "float32")
    zero = (_quantization_parameter(cv, node.input[index + 2], shape, axis, 0, data_type) if zero is not None
            else cv.operand(np.zeros([int(d) for d in scale.shape], data_type)))
    return cv.op("dequantizeLinear", cv.operand(x), scale, zero)


def _quantized(cv, y, node, scale_index, zero_index, default_type):
    """The float operand y quantized per tensor with inputs ``scale_index`` and ``zero_index`` (the
    zero point optional: 0 of ``default_type``)."""
    rank = len(y.shape)
    for index in (scale_index, zero_index):
        if cv.has(node, index) and int(np.prod(cv.shape(node.input[index]), dtype=np.int64)) != 1:
            raise cv.unsupported(f"input {index} ('{node.input[index]}') has shape {cv.shape(node.input[index])}; "
                                 "only per-tensor output quantization is supported")
    scale = _quantization_parameter(cv, node.input[scale_index], y.shape, 0, 0, "float32")
    if cv.has(node, zero_index):
        zero_type = cv.dtype(node.input[zero_index])
        if zero_type not in _QUANTIZED_TYPES:
            raise cv.unsupported(f"the output zero point is {zero_type}; only uint8 and int8 are supported")
        zero = _quantization_parameter(cv, node.input[zero_index], y.shape, 0, 0, zero_type)
    else:
        zero = cv.operand(np.zeros([1] * rank, default_type))
    return cv.op("quantizeLinear", cv.operand(y), scale, zero)


def _bias(cv, node, index, scale, shape=None):
    """An int32 bias (input ``index``) dequantized with zero point 0 and ``scale`` (float32 NumPy: one
    value, or one per element of the bias's last axis), as a float32 NumPy array."""
    bias = cv.const(node.input[index], "the int32 bias")
    if bias.dtype != np.int32:
        raise cv.unsupported(f"the bias is {bias.dtype}; this operator takes an int32 bias")
    scale = np.asarray(scale, np.float32).reshape(-1)
    if scale.size != 1 and (bias.ndim == 0 or bias.shape[-1] != scale.size):
        raise TypeError(f"{cv.where()}: the bias has shape {list(bias.shape)}, whose last axis does not fit its "
                        f"{scale.size} scales")
    # dequantize_array's arithmetic, broadcast along the last axis: int32 to float32, one float32 product.
    return bias.astype(np.float32) * (scale[0] if scale.size == 1 else scale)


def _constant_scale(cv, node, index):
    return np.asarray(cv.const(node.input[index], f"the scale '{node.input[index]}' of the int32 bias"), np.float32)


def _input_type(cv, node, index=0):
    return cv.dtype(node.input[index])


def _to_channels_first(cv, x):
    rank = len(x.shape)
    return cv.op("transpose", cv.operand(x), permutation=[0, rank - 1] + list(range(1, rank - 1)))


def _to_channels_last(cv, y):
    rank = len(y.shape)
    return cv.op("transpose", y, permutation=[0] + list(range(2, rank)) + [1])


# ---------------------------------------------------------------- convolution, matrix products
@handles("QLinearConv")
@handles("QLinearConv", domain=MICROSOFT)
def qlinear_conv(cv, node, opset):
    """y = quantize(conv(dequantize(x), dequantize(w), B dequantized with x_scale * w_scale)); w per
    tensor or per output channel. com.microsoft's channels_last takes and gives NHWC."""
    attrs = attributes(node)
    channels_last = bool(attrs.get("channels_last", 0))
    x = cv.operand(_dequantized(cv, node, 0))
    if channels_last:
        x = _to_channels_first(cv, x)
    w = _dequantized(cv, node, 3, axis=0)
    bias = None
    if cv.has(node, 8):
        scale = _constant_scale(cv, node, 1).reshape(-1) * _constant_scale(cv, node, 4).reshape(-1)
        bias = cv.operand(_bias(cv, node, 8, scale))
    y = convolve(cv, attrs, x, w, bias)
    if channels_last:
        y = _to_channels_last(cv, y)
    return _quantized(cv, y, node, 6, 7, _input_type(cv, node))


@handles("QLinearMatMul")
def qlinear_matmul(cv, node, opset):
    """y = quantize(dequantize(a) @ dequantize(b)); a per tensor or per row, b per tensor or per
    column."""
    a_rank, b_rank = cv.rank(node.input[0]), cv.rank(node.input[3])
    a = cv.operand(_dequantized(cv, node, 0, axis=a_rank - 2 if a_rank >= 2 else None))
    b = cv.operand(_dequantized(cv, node, 3, axis=b_rank - 1 if b_rank >= 2 else None))
    if a_rank == 1:
        a = reshape(cv, a, [1, a.shape[0]])
    if b_rank == 1:
        b = reshape(cv, b, [b.shape[0], 1])
    y = drop_vector_dims(cv, cv.op("matmul", a, b), a_rank, b_rank)
    return _quantized(cv, y, node, 6, 7, _input_type(cv, node))


@handles("QGemm", domain=MICROSOFT)
def qgemm(cv, node, opset):
    """Y = alpha * dequantize(A)' dequantize(B)' + C, C int32 dequantized with alpha * a_scale * b_scale
    (b per tensor or per output column), quantized with y_scale and y_zero_point, or float when they
    are absent."""
    attrs = attributes(node)
    alpha = float(attrs.get("alpha", 1.0))
    trans_a, trans_b = bool(attrs.get("transA", 0)), bool(attrs.get("transB", 0))
    a = cv.operand(_dequantized(cv, node, 0))
    b = cv.operand(_dequantized(cv, node, 3, axis=0 if trans_b else 1))
    options = {"alpha": alpha, "beta": 1.0, "aTranspose": trans_a, "bTranspose": trans_b}
    if cv.has(node, 6):
        scale = np.float32(alpha) * _constant_scale(cv, node, 1).reshape(-1) * _constant_scale(cv, node, 4).reshape(-1)
        options["c"] = cv.operand(_bias(cv, node, 6, scale))
    y = cv.op("gemm", a, b, **options)
    if not cv.has(node, 7):
        return y
    if not cv.has(node, 8):
        raise cv.unsupported("y_scale without y_zero_point is not supported")
    return _quantized(cv, y, node, 7, 8, _input_type(cv, node))


# ---------------------------------------------------------------- element-wise
def _binary(op):
    def handler(cv, node, opset):
        a = cv.operand(_dequantized(cv, node, 0))
        b = cv.operand(_dequantized(cv, node, 3))
        return _quantized(cv, cv.op(op, a, b), node, 6, 7, _input_type(cv, node))
    handler.__name__ = handler.__qualname__ = f"qlinear_{op}"
    handler.__doc__ = f"C = quantize({op}(dequantize(A), dequantize(B))), broadcast as in NumPy."
    return handler


handles("QLinearAdd", domain=MICROSOFT)(_binary("add"))
handles("QLinearMul", domain=MICROSOFT)(_binary("mul"))


@handles("QLinearSigmoid", "QLinearLeakyRelu", domain=MICROSOFT)
def qlinear_activation(cv, node, opset):
    """Y = quantize(f(dequantize(X))): sigmoid, or leakyRelu with alpha (0.01)."""
    x = cv.operand(_dequantized(cv, node, 0))
    if node.op_type == "QLinearSigmoid":
        y = cv.op("sigmoid", x)
    else:
        y = cv.op("leakyRelu", x, alpha=float(attributes(node).get("alpha", 0.01)))
    return _quantized(cv, y, node, 3, 4, _input_type(cv, node))


@handles("QLinearSoftmax", domain=MICROSOFT)
def qlinear_softmax(cv, node, opset):
    """Y = quantize(softmax(dequantize(X))), over axis as ONNX Softmax of the node's ``opset``
    attribute defines it (before 13: the dims from axis on, flattened)."""
    attrs = attributes(node)
    if "opset" not in attrs:
        raise TypeError(f"{cv.where()}: QLinearSoftmax needs its 'opset' attribute")
    x, axis, restore = _softmax_layout(cv, node, int(attrs["opset"]), cv.operand(_dequantized(cv, node, 0)))
    y = cv.op("softmax", x, axis)
    y = y if restore is None else reshape(cv, y, restore)
    return _quantized(cv, y, node, 3, 4, _input_type(cv, node))


# ---------------------------------------------------------------- pooling, concatenation
@handles("QLinearGlobalAveragePool", domain=MICROSOFT)
def qlinear_global_average_pool(cv, node, opset):
    """Y = quantize(mean of dequantize(X) over the spatial dims), NCHW or (channels_last) NHWC."""
    x = cv.operand(_dequantized(cv, node, 0))
    rank = len(x.shape)
    if rank < 3:
        raise TypeError(f"{cv.where()}: X must have rank 3 or more, got shape {list(x.shape)}")
    if attributes(node).get("channels_last", 0):
        y = cv.op("reduceMean", x, axes=list(range(1, rank - 1)), keepDimensions=True)
    elif rank == 4:
        y = cv.op("averagePool2d", x)
    else:
        y = cv.op("reduceMean", x, axes=list(range(2, rank)), keepDimensions=True)
    return _quantized(cv, y, node, 3, 4, _input_type(cv, node))


@handles("QLinearAveragePool", domain=MICROSOFT)
def qlinear_average_pool(cv, node, opset):
    """Y = quantize(AveragePool(dequantize(X))) with AveragePool's attributes, NCHW or (channels_last)
    NHWC."""
    attrs = attributes(node)
    channels_last = bool(attrs.get("channels_last", 0))
    x = cv.operand(_dequantized(cv, node, 0))
    if channels_last:
        x = _to_channels_first(cv, x)
    y = pool_window(cv, "AveragePool", attrs, x)
    if channels_last:
        y = _to_channels_last(cv, y)
    return _quantized(cv, y, node, 3, 4, _input_type(cv, node))


@handles("QLinearConcat", domain=MICROSOFT)
def qlinear_concat(cv, node, opset):
    """Y = quantize(concat(dequantize(X_i))): inputs Y_scale, Y_zero_point, then (X_i, X_i_scale,
    X_i_zero_point) for each tensor."""
    count, extra = divmod(len(node.input) - 2, 3)
    if extra or count < 1:
        raise TypeError(f"{cv.where()}: QLinearConcat takes Y_scale, Y_zero_point and (tensor, scale, zero point) "
                        f"triples, got {len(node.input)} inputs")
    parts = [cv.operand(_dequantized(cv, node, 2 + 3 * i)) for i in range(count)]
    axis = normalize_axis(cv, attributes(node)["axis"], len(parts[0].shape))
    y = parts[0] if count == 1 else cv.op("concat", parts, axis)
    return _quantized(cv, y, node, 0, 1, _input_type(cv, node, 2))
