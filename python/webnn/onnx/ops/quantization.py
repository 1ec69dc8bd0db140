"""QuantizeLinear, DequantizeLinear and their relatives: DynamicQuantizeLinear, MatMulInteger,
ConvInteger and ONNX Runtime's MatMulIntegerToFloat.

MatMulInteger and ConvInteger take int8/uint8 operands minus their zero points; WebNN's matmul and
conv2d take floats, so the centered operands are float32 (integers of magnitude <= 255), the
product runs in float32 and the result is cast to int32. That is exact while every partial sum
stays within 2^24 (float32 holds every integer up to 2^24 in magnitude), whatever order the kernel
adds in: the reduction (K, or input channels) is split into ranges whose sums of magnitudes are
bounded by 2^24 (from a constant weight's actual values, else from the data type's range), each
range's result is cast to int32 and the ranges are added in int32.
"""
import numpy as np

from .._registry import attributes, full_like, handles, reshape, webnn_type
from .conv_pool import convolve
from .linear import drop_vector_dims


# ---------------------------------------------------------------- quantization
def _quantization_parameter(cv, name, x_shape, axis, block_size, data_type):
    """A scale or zero point reshaped to the input's rank (per-tensor, per-axis or blockwise)."""
    value = cv.value(name)
    rank = len(x_shape)
    if len(value.shape) == 0 or (len(value.shape) == 1 and value.shape[0] == 1):
        # per tensor: a scalar, or a one-element vector (as ONNX Runtime reads it, whatever the axis)
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


# ---------------------------------------------------------------- dynamic quantization
@handles("DynamicQuantizeLinear")
def dynamic_quantize_linear(cv, node, opset):
    """uint8 quantization over the range of x widened to hold 0: scale = (max(x, 0) - min(x, 0)) / 255
    (1 when x is all zeros, as in ONNX Runtime), zero point = saturate(roundEven(-min / scale)),
    y = saturate(roundEven(x / scale) + zero point) (WebNN quantizeLinear)."""
    x = cv.operand(node.input[0])
    if x.data_type != "float32":
        raise cv.unsupported(f"x is {x.data_type}; DynamicQuantizeLinear takes float32")
    zero = full_like(cv, x, 0)
    low = cv.op("min", cv.op("reduceMin", x, keepDimensions=True), zero)
    high = cv.op("max", cv.op("reduceMax", x, keepDimensions=True), zero)
    spread = cv.op("sub", high, low)
    scale = cv.op("where", cv.op("equal", spread, zero), full_like(cv, x, 1),
                  cv.op("div", spread, full_like(cv, x, 255)))
    zero_point = cv.op("cast", cv.op("clamp", cv.op("roundEven", cv.op("neg", cv.op("div", low, scale))),
                                     minValue=0, maxValue=255), "uint8")
    y = cv.op("quantizeLinear", x, scale, zero_point)
    return [y, reshape(cv, scale, []), reshape(cv, zero_point, [])]


# ---------------------------------------------------------------- integer products
_INTEGER_RANGES = {"uint8": (0, 255), "int8": (-128, 127)}
_EXACT_LIMIT = 2.0 ** 24  # float32 holds every integer of at most this magnitude


def _centered(cv, node, index, zero_index, what, zero_shape):
    """Input ``index`` minus its zero point (input ``zero_index``, reshaped by ``zero_shape``) in
    float32: (value, magnitude), value a NumPy array when known at conversion time (its magnitude
    is then read from it: None), else an operand with a bound on its magnitude."""
    name = node.input[index]
    data_type = cv.dtype(name)
    if data_type not in _INTEGER_RANGES:
        raise cv.unsupported(f"{what} is {data_type}; only int8 and uint8 are supported")
    low, high = _INTEGER_RANGES[data_type]
    value = cv.value(name)
    zero = None
    if cv.has(node, zero_index):
        zero = cv.value(node.input[zero_index])
        zero = reshape(cv, zero, zero_shape(list(zero.shape)))
    if isinstance(value, np.ndarray) and (zero is None or isinstance(zero, np.ndarray)):
        return value.astype(np.float32) - (0 if zero is None else zero.astype(np.float32)), None
    operand = cv.op("cast", cv.operand(value), "float32")
    if zero is None:
        return operand, max(-low, high)
    operand = cv.op("sub", operand, cv.operand(zero, "float32"))
    if isinstance(zero, np.ndarray):
        zero = zero.astype(np.int64)
        return operand, int(max(high - zero.min(), zero.max() - low))
    return operand, high - low


def _magnitude(value, bound):
    return float(np.abs(value).max(initial=0)) if bound is None else float(bound)


def _exact_ranges(weights):
    """[(start, stop)]: consecutive ranges of the rows of ``weights`` (each row's bound on its terms'
    magnitudes, per output column) whose column sums stay within 2^24."""
    count = weights.shape[0]
    ranges, start = [], 0
    while start < count:
        totals = np.cumsum(weights[start:], axis=0, dtype=np.float64)
        over = np.nonzero((totals > _EXACT_LIMIT).any(axis=1))[0]
        stop = start + max(int(over[0]), 1) if over.size else count
        ranges.append((start, stop))
        start = stop
    return ranges


def _slice_axis(cv, value, axis, start, stop):
    if start == 0 and stop == value.shape[axis]:
        return value
    if isinstance(value, np.ndarray):
        return np.take(value, np.arange(start, stop), axis=axis)
    starts = [0] * len(value.shape)
    sizes = [int(d) for d in value.shape]
    starts[axis], sizes[axis] = start, stop - start
    return cv.op("slice", value, starts, sizes)


def _sum_int32(cv, parts):
    result = cv.op("cast", parts[0], "int32")
    for part in parts[1:]:
        result = cv.op("add", result, cv.op("cast", part, "int32"))
    return result


@handles("MatMulInteger")
def matmul_integer(cv, node, opset):
    a_rank, b_rank = cv.rank(node.input[0]), cv.rank(node.input[1])

    # a_zero_point: per tensor, or per row (an M-vector for a 2-D A, [..., M, 1] for more dims);
    # b_zero_point: per tensor, or per column (an N-vector, or [..., 1, N]).
    def a_zero_shape(shape):
        if len(shape) == 1:
            return [] if shape[0] == 1 else [shape[0], 1]
        return shape

    def b_zero_shape(shape):
        return [] if len(shape) == 1 and shape[0] == 1 else shape

    a, a_bound = _centered(cv, node, 0, 2, "A", a_zero_shape)
    b, b_bound = _centered(cv, node, 1, 3, "B", b_zero_shape)
    if a_rank == 1:
        a = reshape(cv, a, [1, a.shape[0]])
    if b_rank == 1:
        b = reshape(cv, b, [b.shape[0], 1])
    k = int(a.shape[-1])
    if isinstance(b, np.ndarray):
        weights = np.moveaxis(np.abs(b.astype(np.float64)), -2, 0).reshape(k, -1) * _magnitude(a, a_bound)
    elif isinstance(a, np.ndarray):
        weights = np.moveaxis(np.abs(a.astype(np.float64)), -1, 0).reshape(k, -1) * _magnitude(b, b_bound)
    else:
        weights = np.full((k, 1), float(a_bound) * float(b_bound))
    parts = [cv.op("matmul", cv.operand(_slice_axis(cv, a, len(a.shape) - 1, start, stop)),
                   cv.operand(_slice_axis(cv, b, len(b.shape) - 2, start, stop)))
             for start, stop in _exact_ranges(weights)]
    return drop_vector_dims(cv, _sum_int32(cv, parts), a_rank, b_rank)


# ---------------------------------------------------------------- products scaled to float
MICROSOFT = "com.microsoft"


def _per_tensor_or_column(cv, name, rank, columns, data_type, what):
    """A scale or zero point of one value (reshaped to rank ones) or, when ``columns``, one per column
    ([1, ..., N])."""
    value = cv.value(name)
    count = int(np.prod(value.shape, dtype=np.int64))
    if count == 1:
        return cv.operand(reshape(cv, value, [1] * rank), data_type)
    if columns and count == columns and len(value.shape) == 1:
        return cv.operand(reshape(cv, value, [1] * (rank - 1) + [columns]), data_type)
    raise cv.unsupported(f"{what} of shape {list(value.shape)} is not supported (one value"
                         f"{', or one per column' if columns else ''})")


@handles("MatMulIntegerToFloat", domain=MICROSOFT)
def matmul_integer_to_float(cv, node, opset):
    """(A - a_zero_point)(B - b_zero_point) * a_scale * b_scale [+ bias], float: the WebNN spelling is
    matmul(dequantizeLinear(A), dequantizeLinear(B)), which the compiler runs on integers
    (quantizedMatmul). ONNX Runtime's fusion of MatMulInteger -> Cast -> Mul, which the importer also
    makes of those three nodes (fuse_integer_products)."""
    a, b = cv.operand(node.input[0]), cv.operand(node.input[1])
    for what, x in (("A", a), ("B", b)):
        if x.data_type not in _INTEGER_RANGES:
            raise cv.unsupported(f"{what} is {x.data_type}; only int8 and uint8 are supported")
    a_rank, b_rank = len(a.shape), len(b.shape)
    if a_rank < 2 or b_rank != 2:
        raise cv.unsupported(f"A of rank {a_rank} and B of rank {b_rank} are not supported (A of rank 2 or more, "
                             "B a matrix)")
    columns = int(b.shape[1])
    scale_type = cv.dtype(node.input[2])
    a_scale = _per_tensor_or_column(cv, node.input[2], a_rank, 0, scale_type, "a_scale")
    b_scale = _per_tensor_or_column(cv, node.input[3], 2, columns, scale_type, "b_scale")
    a_zero = (_per_tensor_or_column(cv, node.input[4], a_rank, 0, a.data_type, "a_zero_point") if cv.has(node, 4)
              else cv.operand(np.zeros([1] * a_rank, a.data_type)))
    b_zero = (_per_tensor_or_column(cv, node.input[5], 2, columns, b.data_type, "b_zero_point") if cv.has(node, 5)
              else cv.operand(np.zeros([1, 1], b.data_type)))
    y = cv.op("matmul", cv.op("dequantizeLinear", a, a_scale, a_zero), cv.op("dequantizeLinear", b, b_scale, b_zero))
    return cv.op("add", y, cv.operand(node.input[6])) if cv.has(node, 6) else y


class FusedNode:
    """A node the importer made of several of the file's nodes: the NodeProto fields the converter
    reads, and the handler that maps it (never looked up by name: a file cannot name one)."""

    def __init__(self, op_type, inputs, outputs, name, attribute, handler):
        self.op_type, self.domain, self.name = op_type, "", name
        self.input, self.output, self.attribute = list(inputs), list(outputs), list(attribute)
        self.handler = handler


def _conv_integer_to_float(cv, node, opset):
    """ConvInteger -> Cast -> Mul(x_scale * w_scale): conv2d(dequantizeLinear(x), dequantizeLinear(w)),
    which the compiler runs on integers with a float32 result (quantizedConv2d)."""
    attrs = attributes(node)
    x, w = cv.operand(node.input[0]), cv.operand(node.input[1])
    for what, value in (("x", x), ("w", w)):
        if value.data_type not in _INTEGER_RANGES:
            raise cv.unsupported(f"{what} is {value.data_type}; only int8 and uint8 are supported")
    rank, channels = len(x.shape), int(w.shape[0])
    per_channel = [channels] + [1] * (len(w.shape) - 1)

    def parameter(index, shape_if_many, data_type, what):
        value = cv.value(node.input[index])
        count = int(np.prod(value.shape, dtype=np.int64))
        if count != 1 and (not shape_if_many or count != channels):
            raise cv.unsupported(f"{what} of shape {list(value.shape)} is not supported")
        return cv.operand(reshape(cv, value, [1] * len(shape_if_many or [0] * rank) if count == 1 else shape_if_many),
                          data_type)

    scale_type = cv.dtype(node.input[2])
    x_scale = parameter(2, None, scale_type, "x_scale")
    w_scale = parameter(3, per_channel, scale_type, "w_scale")
    x_zero = parameter(4, None, x.data_type, "x_zero_point") if node.input[4] else cv.operand(
        np.zeros([1] * rank, x.data_type))
    w_zero = parameter(5, per_channel, w.data_type, "w_zero_point") if node.input[5] else cv.operand(
        np.zeros([1] * len(w.shape), w.data_type))
    return convolve(cv, attrs, cv.op("dequantizeLinear", x, x_scale, x_zero),
                    cv.op("dequantizeLinear", w, w_scale, w_zero))


def _channel_scale(shape, channels, rank):
    """Whether a constant of ``shape`` multiplies a rank-``rank`` [N, C, ...] result by one value, or
    by one value per channel C (right-aligned broadcasting: [C, 1, ...] or [1, C, 1, ...])."""
    dims = [int(d) for d in shape]
    if int(np.prod(dims, dtype=np.int64)) == 1:
        return len(dims) <= rank
    lead = rank - len(dims)
    return lead in (0, 1) and all(d == (channels if lead + i == 1 else 1) for i, d in enumerate(dims))


def fuse_integer_products(nodes, outputs, constants):
    """The nodes with each MatMulInteger | ConvInteger -> Cast(to float) -> Mul(by a_scale * b_scale)
    chain, as onnxruntime.quantization.quantize_dynamic writes it (b_scale a constant: one value, or
    one per column or output channel; the integer and Cast results read by nothing else), made one
    node at the Mul's place: ONNX Runtime's MatMulIntegerToFloat, or a fused conv (FusedNode). The
    same value (the exact integer sums times the scales' product), which WebNN spells as a product or
    convolution of dequantized operands. ``constants``: {initializer name: array}."""
    from .._prepare import onnx_module
    producer = {name: node for node in nodes for name in node.output}
    readers = {}
    for node in nodes:
        for name in node.input:
            readers.setdefault(name, []).append(node)
    fused, dropped = {}, set()
    for node in nodes:
        if node.op_type not in ("MatMulInteger", "ConvInteger") or node.domain not in ("", "ai.onnx") or \
                len(node.input) < 2:
            continue
        product = node.output[0]
        casts = readers.get(product, [])
        if len(casts) != 1 or product in outputs or casts[0].op_type != "Cast":
            continue
        cast = casts[0]
        to = [a.i for a in cast.attribute if a.name == "to"]
        muls = readers.get(cast.output[0], [])
        if to != [1] or len(muls) != 1 or cast.output[0] in outputs or muls[0].op_type != "Mul":
            continue
        mul = muls[0]
        scales = producer.get(mul.input[1] if mul.input[0] == cast.output[0] else mul.input[0])
        if scales is None or scales.op_type != "Mul" or len(scales.input) != 2:
            continue
        a_scale, b_scale = scales.input
        if a_scale in constants and b_scale not in constants:
            a_scale, b_scale = b_scale, a_scale
        if b_scale not in constants:
            continue
        zeros = list(node.input[2:4]) + [""] * (4 - len(node.input))
        inputs = [node.input[0], node.input[1], a_scale, b_scale, zeros[0], zeros[1]]
        if node.op_type == "ConvInteger":
            weights = constants.get(node.input[1])
            if weights is None or not _channel_scale(np.shape(constants[b_scale]), weights.shape[0], weights.ndim):
                continue
            fused[id(mul)] = FusedNode("ConvInteger", inputs, [mul.output[0]], node.name or mul.name, node.attribute,
                                       _conv_integer_to_float)
        else:
            fused[id(mul)] = onnx_module().helper.make_node("MatMulIntegerToFloat", inputs, [mul.output[0]],
                                                            name=node.name or mul.name, domain=MICROSOFT)
        dropped.update((id(node), id(cast)))
    if not fused:
        return nodes
    return [fused.get(id(node), node) for node in nodes if id(node) not in dropped]


@handles("ConvInteger")
def conv_integer(cv, node, opset):
    attrs = attributes(node)
    w_rank = cv.rank(node.input[1])

    def per_tensor(shape):
        if int(np.prod(shape, dtype=np.int64)) != 1:
            raise cv.unsupported(f"a per-channel x_zero_point (shape {shape}) is not supported; ONNX defines a "
                                 "scalar one")
        return []

    def per_tensor_or_channel(shape):
        if int(np.prod(shape, dtype=np.int64)) == 1:
            return []
        return [int(np.prod(shape, dtype=np.int64))] + [1] * (w_rank - 1)  # one per output channel

    x, x_bound = _centered(cv, node, 0, 2, "x", per_tensor)
    w, w_bound = _centered(cv, node, 1, 3, "w", per_tensor_or_channel)
    x = cv.operand(x)
    channels = int(w.shape[1])  # input channels per group
    if isinstance(w, np.ndarray):  # weights[c, m]: output channel m's bound from input channel c
        weights = np.abs(w.astype(np.float64)).reshape(w.shape[0], channels, -1).sum(axis=2).T
        weights *= _magnitude(x, x_bound)
    else:
        weights = np.full((channels, 1), float(np.prod(w.shape[2:])) * float(x_bound) * float(w_bound))
    ranges = _exact_ranges(weights)
    if len(ranges) == 1:
        return cv.op("cast", convolve(cv, attrs, x, w), "int32")
    if attrs.get("group", 1) != 1:
        raise cv.unsupported("the sums may exceed 2^24, where float32 convolution stops being exact, and "
                             "splitting the input channels is supported only for group=1")
    parts = [convolve(cv, attrs, _slice_axis(cv, x, 1, start, stop), _slice_axis(cv, w, 1, start, stop))
             for start, stop in ranges]
    return _sum_int32(cv, parts)
