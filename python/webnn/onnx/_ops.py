"""ONNX op -> WebNN builder mappings. Each handler takes ``(converter, node, opset)`` and returns the
node's output values (MLOperands, or NumPy arrays for values known at conversion time)."""
import math

import numpy as np

from ._prepare import initializers, onnx_module

HANDLERS = {}


def handles(*op_types):
    def register(function):
        for op_type in op_types:
            HANDLERS[op_type] = function
        return function
    return register


# ---------------------------------------------------------------- helpers
def attributes(node):
    get = onnx_module().helper.get_attribute_value
    out = {}
    for attribute in node.attribute:
        value = get(attribute)
        if isinstance(value, bytes):
            value = value.decode()
        out[attribute.name] = value
    return out


def normalize_axis(cv, axis, rank):
    axis = int(axis)
    if not -rank <= axis < max(rank, 1):
        raise TypeError(f"{cv.where()}: axis {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def optional_const(cv, node, index):
    """The constant value of optional input ``index``, or None when absent or empty."""
    if not cv.has(node, index):
        return None
    value = cv.const(node.input[index], f"input {index}")
    return None if value.size == 0 and value.ndim == 1 else value


def ints(values):
    return [int(v) for v in np.asarray(values).reshape(-1)]


def scalar(value):
    """A Python number from a one-element array."""
    item = np.asarray(value).reshape(-1)[0].item()
    return item


def reshape(cv, value, shape):
    shape = [int(d) for d in shape]
    if isinstance(value, np.ndarray):
        return value.reshape(shape)
    if list(value.shape) == shape:
        return value
    return cv.op("reshape", value, shape)


def is_float(data_type):
    return data_type in ("float32", "float16")


def full_like(cv, name_or_operand, number):
    """A scalar constant operand of the operand's data type."""
    operand = cv.operand(name_or_operand) if isinstance(name_or_operand, str) else name_or_operand
    return cv.operand(np.array(number, dtype=operand.data_type))


def first_output_only(cv, node, what="extra outputs"):
    for name in node.output[1:]:
        if name:
            raise cv.unsupported(f"{what} ('{name}') are not supported")


# ---------------------------------------------------------------- element-wise
_UNARY = {"Abs": "abs", "Ceil": "ceil", "Floor": "floor", "Cos": "cos", "Sin": "sin", "Tan": "tan", "Exp": "exp",
          "Log": "log", "Neg": "neg", "Reciprocal": "reciprocal", "Sqrt": "sqrt", "Erf": "erf", "Sign": "sign",
          "Sigmoid": "sigmoid", "Tanh": "tanh", "Relu": "relu", "Softplus": "softplus", "Softsign": "softsign",
          "Round": "roundEven", "IsNaN": "isNaN", "Not": "logicalNot", "HardSwish": "hardSwish"}


@handles(*_UNARY)
def unary(cv, node, opset):
    return cv.op(_UNARY[node.op_type], cv.operand(node.input[0]))


_BINARY = {"Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div", "Equal": "equal", "Greater": "greater",
           "Less": "lesser", "GreaterOrEqual": "greaterOrEqual", "LessOrEqual": "lesserOrEqual",
           "And": "logicalAnd", "Or": "logicalOr", "Xor": "logicalXor"}


@handles(*_BINARY)
def binary(cv, node, opset):
    attrs = attributes(node)
    if attrs.get("broadcast") and "axis" in attrs:
        raise cv.unsupported("legacy broadcasting with an explicit axis (opset < 7) is not supported")
    return cv.op(_BINARY[node.op_type], cv.operand(node.input[0]), cv.operand(node.input[1]))


@handles("Pow")
def pow_(cv, node, opset):
    base = cv.operand(node.input[0])
    exponent_type = cv.dtype(node.input[1])
    if exponent_type != base.data_type and not is_float(base.data_type):
        raise cv.unsupported(f"an integer base ({base.data_type}) with a {exponent_type} exponent is not supported")
    return cv.op("pow", base, cv.operand(node.input[1], base.data_type))


@handles("Max", "Min", "Sum", "Mean")
def variadic(cv, node, opset):
    op = {"Max": "max", "Min": "min", "Sum": "add", "Mean": "add"}[node.op_type]
    names = [name for name in node.input if name]
    result = cv.operand(names[0])
    for name in names[1:]:
        result = cv.op(op, result, cv.operand(name))
    if len(names) == 1:
        result = cv.op("identity", result)
    if node.op_type == "Mean" and len(names) > 1:
        result = cv.op("div", result, full_like(cv, result, len(names)))
    return result


@handles("IsInf")
def is_inf(cv, node, opset):
    attrs = attributes(node)
    x = cv.operand(node.input[0])
    negative, positive = attrs.get("detect_negative", 1), attrs.get("detect_positive", 1)
    infinite = cv.op("isInfinite", x)
    if negative and positive:
        return infinite
    if not negative and not positive:
        return cv.operand(np.zeros(x.shape, np.uint8))
    side = cv.op("greater" if positive else "lesser", x, full_like(cv, x, 0))
    return cv.op("logicalAnd", infinite, side)


@handles("Where")
def where(cv, node, opset):
    true_value = cv.operand(node.input[1])
    return cv.op("where", cv.operand(node.input[0], "uint8"), true_value,
                 cv.operand(node.input[2], true_value.data_type))


@handles("Clip")
def clip(cv, node, opset):
    x = cv.operand(node.input[0])
    if opset < 11:
        attrs = attributes(node)
        bounds = [attrs.get("min"), attrs.get("max")]
    else:
        bounds = [node.input[i] if cv.has(node, i) else None for i in (1, 2)]
    if all(b is None or not isinstance(b, str) or cv.is_const(b) for b in bounds):
        low, high = [None if b is None else (scalar(cv.values[b]) if isinstance(b, str) else b) for b in bounds]
        if low is None or high is None or low <= high:
            options = {}
            if low is not None:
                options["minValue"] = low
            if high is not None:
                options["maxValue"] = high
            return cv.op("clamp", x, **options)
    # Run-time bounds, or min > max (ONNX then yields max): max then min, element-wise.
    result = x
    if bounds[0] is not None:
        result = cv.op("max", result, cv.operand(bounds[0], x.data_type) if isinstance(bounds[0], str)
                       else full_like(cv, x, bounds[0]))
    if bounds[1] is not None:
        result = cv.op("min", result, cv.operand(bounds[1], x.data_type) if isinstance(bounds[1], str)
                       else full_like(cv, x, bounds[1]))
    return result


@handles("Cast", "CastLike")
def cast(cv, node, opset):
    from ._convert import onnx_type_name, webnn_type

    x = cv.operand(node.input[0])
    if node.op_type == "Cast":
        to = attributes(node)["to"]
        is_bool, target = to == 9, webnn_type(to)
        if target is None:
            raise cv.unsupported(f"casting to {onnx_type_name(to)} is not supported: WebNN has no such data type")
    else:
        target = cv.dtype(node.input[1])
        is_bool = target == "bool"
        if is_bool:
            target = "uint8"
        elif target not in ("float32", "float16", "int32", "uint32", "int64", "uint64", "int8", "uint8"):
            raise cv.unsupported(f"casting to {target} is not supported: WebNN has no such data type")
    if is_bool:
        return cv.op("notEqual", x, full_like(cv, x, 0))
    if x.data_type == target:
        return x
    return cv.op("cast", x, target)


# ---------------------------------------------------------------- activations
@handles("LeakyRelu")
def leaky_relu(cv, node, opset):
    return cv.op("leakyRelu", cv.operand(node.input[0]), alpha=attributes(node).get("alpha", 0.01))


@handles("Elu")
def elu(cv, node, opset):
    return cv.op("elu", cv.operand(node.input[0]), alpha=attributes(node).get("alpha", 1.0))


@handles("HardSigmoid")
def hard_sigmoid(cv, node, opset):
    attrs = attributes(node)
    return cv.op("hardSigmoid", cv.operand(node.input[0]), alpha=attrs.get("alpha", 0.2), beta=attrs.get("beta", 0.5))


@handles("Selu")
def selu(cv, node, opset):
    attrs = attributes(node)
    x = cv.operand(node.input[0])
    y = cv.op("elu", x, alpha=attrs.get("alpha", 1.67326319217681884765625))
    return cv.op("mul", y, full_like(cv, x, attrs.get("gamma", 1.05070102214813232421875)))


@handles("Celu")
def celu(cv, node, opset):
    alpha = attributes(node).get("alpha", 1.0)
    x = cv.operand(node.input[0])
    # max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
    negative = cv.op("mul", cv.op("sub", cv.op("exp", cv.op("div", x, full_like(cv, x, alpha))), full_like(cv, x, 1)),
                     full_like(cv, x, alpha))
    return cv.op("add", cv.op("relu", x), cv.op("min", negative, full_like(cv, x, 0)))


@handles("ThresholdedRelu")
def thresholded_relu(cv, node, opset):
    x = cv.operand(node.input[0])
    above = cv.op("greater", x, full_like(cv, x, attributes(node).get("alpha", 1.0)))
    return cv.op("where", above, x, full_like(cv, x, 0))


@handles("Shrink")
def shrink(cv, node, opset):
    attrs = attributes(node)
    lambd, bias = attrs.get("lambd", 0.5), attrs.get("bias", 0.0)
    x = cv.operand(node.input[0])
    low = cv.op("where", cv.op("lesser", x, full_like(cv, x, -lambd)), cv.op("add", x, full_like(cv, x, bias)),
                full_like(cv, x, 0))
    return cv.op("where", cv.op("greater", x, full_like(cv, x, lambd)), cv.op("sub", x, full_like(cv, x, bias)), low)


@handles("Gelu")
def gelu(cv, node, opset):
    x = cv.operand(node.input[0])
    approximate = attributes(node).get("approximate", "none")
    if approximate == "none":
        return cv.op("gelu", x)
    if approximate != "tanh":
        raise cv.unsupported(f"approximate='{approximate}' is not an ONNX Gelu mode")
    # 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))
    cube = cv.op("mul", cv.op("mul", x, x), x)
    inner = cv.op("add", x, cv.op("mul", cube, full_like(cv, x, 0.044715)))
    t = cv.op("tanh", cv.op("mul", inner, full_like(cv, x, math.sqrt(2.0 / math.pi))))
    return cv.op("mul", cv.op("mul", x, full_like(cv, x, 0.5)), cv.op("add", t, full_like(cv, x, 1)))


@handles("Mish")
def mish(cv, node, opset):
    x = cv.operand(node.input[0])
    return cv.op("mul", x, cv.op("tanh", cv.op("softplus", x)))


@handles("PRelu")
def prelu(cv, node, opset):
    x = cv.operand(node.input[0])
    return cv.op("prelu", x, cv.operand(node.input[1], x.data_type))


# ---------------------------------------------------------------- softmax family
def _softmax_layout(cv, node, opset, x):
    """(operand to normalize, axis, shape to restore or None) per the opset's axis semantics."""
    rank = len(x.shape)
    axis = normalize_axis(cv, attributes(node).get("axis", 1 if opset < 13 else -1), rank)
    if opset >= 13:
        return x, axis, None
    rows = int(np.prod(x.shape[:axis], dtype=np.int64))
    return reshape(cv, x, [rows, int(np.prod(x.shape[axis:], dtype=np.int64))]), 1, list(x.shape)


@handles("Softmax")
def softmax(cv, node, opset):
    x, axis, restore = _softmax_layout(cv, node, opset, cv.operand(node.input[0]))
    y = cv.op("softmax", x, axis)
    return y if restore is None else reshape(cv, y, restore)


@handles("LogSoftmax")
def log_softmax(cv, node, opset):
    x, axis, restore = _softmax_layout(cv, node, opset, cv.operand(node.input[0]))
    shifted = cv.op("sub", x, cv.op("reduceMax", x, axes=[axis], keepDimensions=True))
    y = cv.op("sub", shifted, cv.op("log", cv.op("reduceSum", cv.op("exp", shifted), axes=[axis], keepDimensions=True)))
    return y if restore is None else reshape(cv, y, restore)


@handles("Hardmax")
def hardmax(cv, node, opset):
    x, axis, restore = _softmax_layout(cv, node, opset, cv.operand(node.input[0]))
    index = cv.op("argMax", x, axis, keepDimensions=True, outputDataType="int32")
    positions = np.arange(x.shape[axis], dtype=np.int32).reshape([-1] + [1] * (len(x.shape) - axis - 1))
    y = cv.op("cast", cv.op("equal", index, cv.operand(positions)), x.data_type)
    return y if restore is None else reshape(cv, y, restore)


# ---------------------------------------------------------------- matrix products
@handles("MatMul")
def matmul(cv, node, opset):
    a, b = cv.operand(node.input[0]), cv.operand(node.input[1])
    a_rank, b_rank = len(a.shape), len(b.shape)
    if a_rank == 1:
        a = reshape(cv, a, [1, a.shape[0]])
    if b_rank == 1:
        b = reshape(cv, b, [b.shape[0], 1])
    y = cv.op("matmul", a, b)
    if a_rank == 1 or b_rank == 1:
        shape = list(y.shape)
        if b_rank == 1:
            shape.pop(-1)
        if a_rank == 1:
            shape.pop(-1 if b_rank == 1 else -2)
        y = reshape(cv, y, shape)
    return y


@handles("Gemm")
def gemm(cv, node, opset):
    attrs = attributes(node)
    a = cv.operand(node.input[0])
    options = {"alpha": attrs.get("alpha", 1.0), "beta": attrs.get("beta", 1.0),
               "aTranspose": bool(attrs.get("transA", 0)), "bTranspose": bool(attrs.get("transB", 0))}
    if cv.has(node, 2):
        options["c"] = cv.operand(node.input[2], a.data_type)
    return cv.op("gemm", a, cv.operand(node.input[1], a.data_type), **options)


# ---------------------------------------------------------------- convolution and pooling
def _auto_pads(cv, attrs, in_sizes, kernel, strides, dilations):
    """[(begin, end)] per spatial dim from pads or auto_pad."""
    n = len(in_sizes)
    auto_pad = attrs.get("auto_pad", "NOTSET")
    if auto_pad in ("NOTSET", ""):
        pads = list(attrs.get("pads", [0] * (2 * n)))
        if len(pads) != 2 * n:
            raise TypeError(f"{cv.where()}: pads has {len(pads)} values, expected {2 * n}")
        return [(pads[i], pads[i + n]) for i in range(n)]
    if auto_pad == "VALID":
        return [(0, 0)] * n
    if auto_pad not in ("SAME_UPPER", "SAME_LOWER"):
        raise cv.unsupported(f"auto_pad='{auto_pad}' is not an ONNX padding mode")
    pads = []
    for size, k, s, d in zip(in_sizes, kernel, strides, dilations):
        out = -(-size // s)
        total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
        small = total // 2
        pads.append((small, total - small) if auto_pad == "SAME_UPPER" else (total - small, small))
    return pads


def _spatial_attrs(cv, attrs, rank):
    spatial = rank - 2
    if spatial not in (1, 2):
        raise cv.unsupported(f"only 1-D and 2-D windows are supported (this input has rank {rank})")
    strides = list(attrs.get("strides", [1] * spatial))
    dilations = list(attrs.get("dilations", [1] * spatial))
    return strides, dilations


def _as_2d(cv, value, spatial):
    """Inserts a unit height for 1-D windows."""
    if spatial == 2:
        return value
    shape = list(value.shape)
    return reshape(cv, value, shape[:2] + [1] + shape[2:])


def _padding(pads):
    return [pads[0][0], pads[0][1], pads[1][0], pads[1][1]]


@handles("Conv")
def conv(cv, node, opset):
    attrs = attributes(node)
    x = cv.operand(node.input[0])
    rank = len(x.shape)
    weight = cv.value(node.input[1])
    kernel = list(weight.shape[2:])
    strides, dilations = _spatial_attrs(cv, attrs, rank)
    pads = _auto_pads(cv, attrs, x.shape[2:], kernel, strides, dilations)
    if any(p < 0 for pair in pads for p in pair):
        raise cv.unsupported("negative pads are not supported")
    spatial = rank - 2
    if spatial == 1:
        strides, dilations, pads = [1] + strides, [1] + dilations, [(0, 0)] + pads
    options = {"padding": _padding(pads), "strides": strides, "dilations": dilations, "groups": attrs.get("group", 1)}
    if cv.has(node, 2):
        options["bias"] = cv.operand(node.input[2], x.data_type)
    filter_ = cv.operand(_as_2d(cv, weight, spatial), x.data_type)
    y = cv.op("conv2d", _as_2d(cv, x, spatial), filter_, **options)
    return y if spatial == 2 else reshape(cv, y, [y.shape[0], y.shape[1], y.shape[3]])


@handles("ConvTranspose")
def conv_transpose(cv, node, opset):
    attrs = attributes(node)
    x = cv.operand(node.input[0])
    rank = len(x.shape)
    weight = cv.value(node.input[1])
    kernel = list(weight.shape[2:])
    strides, dilations = _spatial_attrs(cv, attrs, rank)
    spatial = rank - 2
    in_sizes = list(x.shape[2:])
    output_padding = list(attrs.get("output_padding", [0] * spatial))
    output_shape = attrs.get("output_shape")
    auto_pad = attrs.get("auto_pad", "NOTSET")
    if output_shape is None and auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        output_shape = [size * s for size, s in zip(in_sizes, strides)]
    if output_shape is not None:
        output_shape = list(output_shape)[-spatial:]
        pads = []
        for i in range(spatial):
            total = strides[i] * (in_sizes[i] - 1) + output_padding[i] + (kernel[i] - 1) * dilations[i] + 1 \
                - output_shape[i]
            half = total // 2
            pads.append((half, total - half) if auto_pad == "SAME_UPPER" else (total - half, half))
    elif auto_pad == "VALID":
        pads = [(0, 0)] * spatial
    else:
        pads = _auto_pads(cv, attrs, in_sizes, kernel, strides, dilations)
    # A negative end pad lengthens the output: WebNN expresses that as output padding (< stride).
    pads_out = []
    for i, (begin, end) in enumerate(pads):
        if begin < 0:
            raise cv.unsupported("the requested output shape needs negative leading padding")
        if end < 0:
            output_padding[i] -= end
            end = 0
        if output_padding[i] and output_padding[i] >= strides[i]:
            raise cv.unsupported(f"output padding {output_padding[i]} is not smaller than the stride {strides[i]}")
        pads_out.append((begin, end))
    pads = pads_out
    if spatial == 1:
        strides, dilations, pads, output_padding = [1] + strides, [1] + dilations, [(0, 0)] + pads, [0] + output_padding
    options = {"padding": _padding(pads), "strides": strides, "dilations": dilations, "groups": attrs.get("group", 1),
               "outputPadding": output_padding, "filterLayout": "iohw"}
    if cv.has(node, 2):
        options["bias"] = cv.operand(node.input[2], x.data_type)
    filter_ = cv.operand(_as_2d(cv, weight, spatial), x.data_type)
    y = cv.op("convTranspose2d", _as_2d(cv, x, spatial), filter_, **options)
    return y if spatial == 2 else reshape(cv, y, [y.shape[0], y.shape[1], y.shape[3]])


@handles("MaxPool", "AveragePool", "LpPool")
def pool(cv, node, opset):
    attrs = attributes(node)
    first_output_only(cv, node, "MaxPool indices")
    x = cv.operand(node.input[0])
    rank = len(x.shape)
    kernel = list(attrs["kernel_shape"])
    strides, dilations = _spatial_attrs(cv, attrs, rank)
    spatial = rank - 2
    in_sizes = list(x.shape[2:])
    pads = _auto_pads(cv, attrs, in_sizes, kernel, strides, dilations)
    windows = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    out_sizes = []
    for size, window, s, (begin, end) in zip(in_sizes, windows, strides, pads):
        span = size + begin + end - window
        if span < 0:
            raise TypeError(f"{cv.where()}: the window is larger than the padded input")
        out = span // s + 1
        if attrs.get("ceil_mode", 0):
            out = -(-span // s) + 1
            if (out - 1) * s >= size + begin:  # the last window must start inside the input or leading pad
                out -= 1
        out_sizes.append(out)
    if node.op_type == "AveragePool" and attrs.get("count_include_pad", 0) and any(p for pair in pads for p in pair):
        # Padding counts in the divisor: pad with zeros explicitly (WebNN excludes its own padding).
        x = cv.op("pad", x, [0, 0] + [b for b, _ in pads], [0, 0] + [e for _, e in pads])
        in_sizes = [size + b + e for size, (b, e) in zip(in_sizes, pads)]
        pads = [(0, 0)] * spatial
    # WebNN padding is skipped by max/avg/l2 windows, so a ceil-mode tail is extra end padding.
    padding = [(begin, end + max(0, (out - 1) * s + window - (size + begin + end)))
               for size, window, s, out, (begin, end) in zip(in_sizes, windows, strides, out_sizes, pads)]
    if spatial == 1:
        kernel, strides, dilations, padding = [1] + kernel, [1] + strides, [1] + dilations, [(0, 0)] + padding
    if node.op_type == "LpPool" and attrs.get("p", 2) != 2:
        raise cv.unsupported(f"p={attrs.get('p')} is not supported (WebNN has l2Pool2d only)")
    op = {"MaxPool": "maxPool2d", "AveragePool": "averagePool2d", "LpPool": "l2Pool2d"}[node.op_type]
    y = cv.op(op, _as_2d(cv, x, spatial), windowDimensions=kernel, padding=_padding(padding), strides=strides,
              dilations=dilations)
    return y if spatial == 2 else reshape(cv, y, [y.shape[0], y.shape[1], y.shape[3]])


@handles("GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool")
def global_pool(cv, node, opset):
    x = cv.operand(node.input[0])
    rank = len(x.shape)
    p = attributes(node).get("p", 2)
    if node.op_type == "GlobalLpPool" and p not in (1, 2):
        raise cv.unsupported(f"p={p} is not supported (only 1 and 2)")
    if rank == 4 and not (node.op_type == "GlobalLpPool" and p == 1):
        op = {"GlobalAveragePool": "averagePool2d", "GlobalMaxPool": "maxPool2d", "GlobalLpPool": "l2Pool2d"}
        return cv.op(op[node.op_type], x)
    op = {"GlobalAveragePool": "reduceMean", "GlobalMaxPool": "reduceMax",
          "GlobalLpPool": "reduceL2" if p == 2 else "reduceL1"}[node.op_type]
    return cv.op(op, x, axes=list(range(2, rank)), keepDimensions=True)


# ---------------------------------------------------------------- normalization
@handles("BatchNormalization")
def batch_normalization(cv, node, opset):
    attrs = attributes(node)
    if attrs.get("training_mode", 0):
        raise cv.unsupported("training_mode=1 is not supported (inference only)")
    if opset < 9 and attrs.get("spatial", 1) == 0:
        raise cv.unsupported("spatial=0 is not supported")
    first_output_only(cv, node, "training statistics outputs")
    x = cv.operand(node.input[0])
    operands = [cv.operand(node.input[i], x.data_type) for i in (1, 2, 3, 4)]
    return cv.op("batchNormalization", x, operands[2], operands[3], scale=operands[0], bias=operands[1], axis=1,
                 epsilon=attrs.get("epsilon", 1e-5))


def _per_channel(cv, name, data_type, rank):
    """A [C] parameter reshaped to broadcast over [N, C, ...]."""
    value = cv.value(name)
    return cv.operand(reshape(cv, value, [value.shape[0]] + [1] * (rank - 2)), data_type)


@handles("InstanceNormalization")
def instance_normalization(cv, node, opset):
    x = cv.operand(node.input[0])
    epsilon = attributes(node).get("epsilon", 1e-5)
    rank = len(x.shape)
    scale, bias = cv.operand(node.input[1], x.data_type), cv.operand(node.input[2], x.data_type)
    if rank == 4:
        return cv.op("instanceNormalization", x, scale=scale, bias=bias, epsilon=epsilon)
    y = cv.op("layerNormalization", x, axes=list(range(2, rank)), epsilon=epsilon)
    y = cv.op("mul", y, _per_channel(cv, node.input[1], x.data_type, rank))
    return cv.op("add", y, _per_channel(cv, node.input[2], x.data_type, rank))


def _statistics(cv, x, axes, epsilon):
    """(mean, 1/sqrt(var + epsilon)) over axes, kept as size-1 dims."""
    mean = cv.op("reduceMean", x, axes=axes, keepDimensions=True)
    centered = cv.op("sub", x, mean)
    variance = cv.op("reduceMean", cv.op("mul", centered, centered), axes=axes, keepDimensions=True)
    return mean, cv.op("reciprocal", cv.op("sqrt", cv.op("add", variance, full_like(cv, x, epsilon))))


@handles("LayerNormalization")
def layer_normalization(cv, node, opset):
    attrs = attributes(node)
    x = cv.operand(node.input[0])
    rank = len(x.shape)
    axis = normalize_axis(cv, attrs.get("axis", -1), rank)
    epsilon = attrs.get("epsilon", 1e-5)
    axes = list(range(axis, rank))
    normalized_shape = list(x.shape[axis:])
    options = {}
    for key, index in (("scale", 1), ("bias", 2)):
        if not cv.has(node, index):
            continue
        value = cv.value(node.input[index])
        if list(value.shape) != normalized_shape:  # broadcastable to the normalized dims
            if isinstance(value, np.ndarray):
                if value.ndim > len(normalized_shape):
                    value = value.reshape(value.shape[value.ndim - len(normalized_shape):])
                value = np.ascontiguousarray(np.broadcast_to(value, normalized_shape))
            else:
                value = cv.op("expand", value, normalized_shape)
        options[key] = cv.operand(value, x.data_type)
    y = cv.op("layerNormalization", x, axes=axes, epsilon=epsilon, **options)
    outputs = [y]
    if any(node.output[1:]):
        outputs.extend(_statistics(cv, x, axes, epsilon))
    return outputs


@handles("GroupNormalization")
def group_normalization(cv, node, opset):
    attrs = attributes(node)
    x = cv.operand(node.input[0])
    shape = list(x.shape)
    groups = attrs["num_groups"]
    channels = shape[1]
    if channels % groups:
        raise TypeError(f"{cv.where()}: {channels} channels do not split into {groups} groups")
    grouped = reshape(cv, x, [shape[0], groups, int(np.prod(shape[1:])) // groups])
    y = reshape(cv, cv.op("layerNormalization", grouped, axes=[2], epsilon=attrs.get("epsilon", 1e-5)), shape)
    parameters = []
    for index in (1, 2):
        value = cv.value(node.input[index])
        if value.shape[0] == groups and groups != channels:  # opset 18: one value per group
            value = np.repeat(cv.const(node.input[index], "a per-group scale or bias"), channels // groups)
        parameters.append(cv.operand(reshape(cv, value, [channels] + [1] * (len(shape) - 2)), x.data_type))
    return cv.op("add", cv.op("mul", y, parameters[0]), parameters[1])


@handles("LpNormalization")
def lp_normalization(cv, node, opset):
    attrs = attributes(node)
    x = cv.operand(node.input[0])
    axis = normalize_axis(cv, attrs.get("axis", -1), len(x.shape))
    p = attrs.get("p", 2)
    if p not in (1, 2):
        raise cv.unsupported(f"p={p} is not supported (only 1 and 2)")
    norm = cv.op("reduceL2" if p == 2 else "reduceL1", x, axes=[axis], keepDimensions=True)
    zero = cv.op("equal", norm, full_like(cv, x, 0))
    return cv.op("div", x, cv.op("where", zero, full_like(cv, x, 1), norm))  # a zero vector stays zero


@handles("MeanVarianceNormalization")
def mean_variance_normalization(cv, node, opset):
    x = cv.operand(node.input[0])
    axes = sorted(normalize_axis(cv, a, len(x.shape)) for a in attributes(node).get("axes", [0, 2, 3]))
    mean = cv.op("reduceMean", x, axes=axes, keepDimensions=True)
    mean_of_squares = cv.op("reduceMean", cv.op("mul", x, x), axes=axes, keepDimensions=True)
    std = cv.op("sqrt", cv.op("sub", mean_of_squares, cv.op("mul", mean, mean)))
    return cv.op("div", cv.op("sub", x, mean), cv.op("add", std, full_like(cv, x, 1e-9)))


# ---------------------------------------------------------------- reductions
_REDUCE = {"ReduceL1": "reduceL1", "ReduceL2": "reduceL2", "ReduceLogSum": "reduceLogSum",
           "ReduceLogSumExp": "reduceLogSumExp", "ReduceMax": "reduceMax", "ReduceMean": "reduceMean",
           "ReduceMin": "reduceMin", "ReduceProd": "reduceProduct", "ReduceSum": "reduceSum",
           "ReduceSumSquare": "reduceSumSquare"}


@handles(*_REDUCE)
def reduce(cv, node, opset):
    attrs = attributes(node)
    x = cv.operand(node.input[0])
    axes = attrs.get("axes")
    if axes is None:
        axes = optional_const(cv, node, 1)
    options = {"keepDimensions": bool(attrs.get("keepdims", 1))}
    if axes is None or len(np.asarray(axes).reshape(-1)) == 0:
        if attrs.get("noop_with_empty_axes", 0):
            return cv.op("identity", x)
    else:
        options["axes"] = sorted({normalize_axis(cv, a, len(x.shape)) for a in ints(axes)})
    return cv.op(_REDUCE[node.op_type], x, **options)


@handles("ArgMax", "ArgMin")
def arg_reduce(cv, node, opset):
    attrs = attributes(node)
    x = cv.operand(node.input[0])
    axis = normalize_axis(cv, attrs.get("axis", 0), len(x.shape))
    op = "argMax" if node.op_type == "ArgMax" else "argMin"
    keep = bool(attrs.get("keepdims", 1))
    if not attrs.get("select_last_index", 0):
        return cv.op(op, x, axis, keepDimensions=keep, outputDataType="int64")
    # The last extreme index is the first one of the reversed axis, counted from the end.
    index = cv.op(op, cv.op("reverse", x, axes=[axis]), axis, keepDimensions=keep, outputDataType="int64")
    return cv.op("sub", cv.operand(np.array(x.shape[axis] - 1, np.int64)), index)


@handles("CumSum")
def cumsum(cv, node, opset):
    attrs = attributes(node)
    x = cv.operand(node.input[0])
    axis = normalize_axis(cv, scalar(cv.const(node.input[1], "axis")), len(x.shape))
    return cv.op("cumulativeSum", x, axis, exclusive=bool(attrs.get("exclusive", 0)),
                 reversed=bool(attrs.get("reverse", 0)))


# ---------------------------------------------------------------- shapes and data movement
@handles("Identity", "Dropout")
def identity(cv, node, opset):
    x = cv.value(node.input[0])
    if node.op_type == "Dropout":
        training = optional_const(cv, node, 2)
        if training is not None and bool(np.asarray(training).reshape(-1)[0]):
            raise cv.unsupported("training_mode=True is not supported (inference only)")
        if len(node.output) > 1 and node.output[1]:
            return [x, np.ones(x.shape, np.bool_)]
    return x


@handles("Shape")
def shape_of(cv, node, opset):
    attrs = attributes(node)
    shape = cv.shape(node.input[0])
    return np.array(shape[slice(attrs.get("start", 0), attrs.get("end"))], np.int64)


@handles("Size")
def size_of(cv, node, opset):
    return np.array(int(np.prod(cv.shape(node.input[0]), dtype=np.int64)), np.int64)


@handles("EyeLike")
def eye_like(cv, node, opset):
    from ._convert import webnn_type

    attrs = attributes(node)
    shape = cv.shape(node.input[0])
    dtype = webnn_type(attrs["dtype"]) if "dtype" in attrs else cv.dtype(node.input[0])
    if dtype is None:
        raise cv.unsupported("the requested data type is not a WebNN data type")
    return np.eye(shape[0], shape[1], attrs.get("k", 0), dtype=np.bool_ if attrs.get("dtype") == 9 else dtype)


@handles("NonZero", "Unique", "Compress", "ConstantOfShape", "Range")
def data_dependent(cv, node, opset):
    raise cv.unsupported("the output shape or content depends on run-time values, which WebNN cannot express "
                         "(it is supported only when the inputs are constants)")


@handles("Reshape")
def reshape_op(cv, node, opset):
    x = cv.operand(node.input[0])
    attrs = attributes(node)
    target = ints(cv.const(node.input[1], "the shape")) if opset >= 5 else list(attrs["shape"])
    allow_zero = attrs.get("allowzero", 0)
    shape = [x.shape[i] if d == 0 and not allow_zero else d for i, d in enumerate(target)]
    if shape.count(-1) > 1:
        raise TypeError(f"{cv.where()}: the shape has more than one -1")
    if -1 in shape:
        known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
        total = int(np.prod(x.shape, dtype=np.int64))
        if known == 0 or total % known:
            raise TypeError(f"{cv.where()}: cannot reshape {list(x.shape)} to {target}")
        shape[shape.index(-1)] = total // known
    return reshape(cv, x, shape)


@handles("Flatten")
def flatten(cv, node, opset):
    x = cv.operand(node.input[0])
    rank = len(x.shape)
    axis = attributes(node).get("axis", 1)
    axis = axis + rank if axis < 0 else axis
    if not 0 <= axis <= rank:
        raise TypeError(f"{cv.where()}: axis {axis} is out of range for rank {rank}")
    outer = int(np.prod(x.shape[:axis], dtype=np.int64))
    return reshape(cv, x, [outer, int(np.prod(x.shape[axis:], dtype=np.int64))])


def _axes_argument(cv, node, opset, index):
    attrs = attributes(node)
    if "axes" in attrs:
        return list(attrs["axes"])
    value = optional_const(cv, node, index)
    return None if value is None else ints(value)


@handles("Squeeze")
def squeeze(cv, node, opset):
    x = cv.operand(node.input[0])
    axes = _axes_argument(cv, node, opset, 1)
    rank = len(x.shape)
    if axes is None:
        axes = [i for i, d in enumerate(x.shape) if d == 1]
    axes = {normalize_axis(cv, a, rank) for a in axes}
    for a in axes:
        if x.shape[a] != 1:
            raise TypeError(f"{cv.where()}: cannot squeeze axis {a} of size {x.shape[a]}")
    return reshape(cv, x, [d for i, d in enumerate(x.shape) if i not in axes])


@handles("Unsqueeze")
def unsqueeze(cv, node, opset):
    x = cv.operand(node.input[0])
    axes = _axes_argument(cv, node, opset, 1)
    if axes is None:
        raise TypeError(f"{cv.where()}: Unsqueeze needs axes")
    rank = len(x.shape) + len(axes)
    axes = sorted(normalize_axis(cv, a, rank) for a in axes)
    shape = list(x.shape)
    for a in axes:
        shape.insert(a, 1)
    return reshape(cv, x, shape)


@handles("Transpose")
def transpose(cv, node, opset):
    x = cv.operand(node.input[0])
    perm = attributes(node).get("perm")
    rank = len(x.shape)
    perm = list(range(rank))[::-1] if perm is None else [normalize_axis(cv, p, rank) for p in perm]
    if perm == list(range(rank)):
        return x
    return cv.op("transpose", x, permutation=perm)


@handles("Concat")
def concat(cv, node, opset):
    values = [cv.value(name) for name in node.input if name]
    values = [v for v in values if not (isinstance(v, np.ndarray) and v.size == 0)] or values
    data_type = next((v.data_type for v in values if not isinstance(v, np.ndarray)), None)
    operands = [cv.operand(v, data_type) for v in values]
    axis = normalize_axis(cv, attributes(node)["axis"], len(operands[0].shape))
    if len(operands) == 1:
        return cv.op("identity", operands[0])
    return cv.op("concat", operands, axis)


@handles("Split")
def split(cv, node, opset):
    attrs = attributes(node)
    x = cv.operand(node.input[0])
    axis = normalize_axis(cv, attrs.get("axis", 0), len(x.shape))
    size = x.shape[axis]
    parts = attrs.get("split")
    if parts is None:
        parts = optional_const(cv, node, 1)
    count = len(node.output)
    if parts is not None:
        parts = ints(parts)
    elif "num_outputs" in attrs:
        chunk = -(-size // attrs["num_outputs"])
        parts = [chunk] * (attrs["num_outputs"] - 1) + [size - chunk * (attrs["num_outputs"] - 1)]
    else:
        if size % count:
            raise TypeError(f"{cv.where()}: dimension {size} does not split into {count} equal parts")
        parts = [size // count] * count
    if any(p <= 0 for p in parts):
        raise cv.unsupported(f"split sizes {parts} contain an empty part (WebNN has no empty tensors)")
    return cv.op("split", x, parts, axis=axis)


@handles("Slice")
def slice_op(cv, node, opset):
    x = cv.operand(node.input[0])
    rank = len(x.shape)
    if opset < 10:
        attrs = attributes(node)
        starts, ends = list(attrs["starts"]), list(attrs["ends"])
        axes, steps = attrs.get("axes"), None
    else:
        starts = ints(cv.const(node.input[1], "starts"))
        ends = ints(cv.const(node.input[2], "ends"))
        axes = optional_const(cv, node, 3)
        steps = optional_const(cv, node, 4)
        axes = None if axes is None else ints(axes)
        steps = None if steps is None else ints(steps)
    axes = list(range(len(starts))) if axes is None else [normalize_axis(cv, a, rank) for a in axes]
    steps = [1] * len(starts) if steps is None else steps
    begin, sizes, strides = [0] * rank, list(x.shape), [1] * rank
    reversed_axes = []
    for axis, start, end, step in zip(axes, starts, ends, steps):
        if step == 0:
            raise TypeError(f"{cv.where()}: a slice step is 0")
        dim = x.shape[axis]
        first, stop, step = slice(start, end, step).indices(dim)
        count = len(range(first, stop, step))
        if count == 0:
            raise cv.unsupported(f"the slice of axis {axis} is empty (WebNN has no empty tensors)")
        if step < 0:
            reversed_axes.append(axis)
            first, step = dim - 1 - first, -step
        begin[axis], sizes[axis], strides[axis] = first, (count - 1) * step + 1, step
    if reversed_axes:
        x = cv.op("reverse", x, axes=sorted(reversed_axes))
    if begin == [0] * rank and sizes == list(x.shape) and strides == [1] * rank:
        return x if reversed_axes else cv.op("identity", x)
    options = {"strides": strides} if any(s != 1 for s in strides) else {}
    return cv.op("slice", x, begin, sizes, **options)


@handles("Gather")
def gather(cv, node, opset):
    x = cv.operand(node.input[0])
    axis = normalize_axis(cv, attributes(node).get("axis", 0), len(x.shape))
    return cv.op("gather", x, _indices(cv, node.input[1]), axis=axis)


def _indices(cv, name):
    value = cv.value(name)
    if isinstance(value, np.ndarray) and value.dtype not in (np.int32, np.int64):
        value = value.astype(np.int64)
    return cv.operand(value)


@handles("GatherElements")
def gather_elements(cv, node, opset):
    x = cv.operand(node.input[0])
    axis = normalize_axis(cv, attributes(node).get("axis", 0), len(x.shape))
    return cv.op("gatherElements", x, _indices(cv, node.input[1]), axis=axis)


@handles("GatherND")
def gather_nd(cv, node, opset):
    if attributes(node).get("batch_dims", 0):
        raise cv.unsupported("batch_dims != 0 is not supported")
    return cv.op("gatherND", cv.operand(node.input[0]), _indices(cv, node.input[1]))


@handles("ScatterElements", "Scatter", "ScatterND")
def scatter(cv, node, opset):
    attrs = attributes(node)
    if attrs.get("reduction", "none") != "none":
        raise cv.unsupported(f"reduction='{attrs['reduction']}' is not supported (WebNN scatter replaces)")
    x = cv.operand(node.input[0])
    updates = cv.operand(node.input[2], x.data_type)
    if node.op_type == "ScatterND":
        return cv.op("scatterND", x, _indices(cv, node.input[1]), updates)
    axis = normalize_axis(cv, attrs.get("axis", 0), len(x.shape))
    return cv.op("scatterElements", x, _indices(cv, node.input[1]), updates, axis=axis)


@handles("Expand")
def expand(cv, node, opset):
    x = cv.operand(node.input[0])
    target = ints(cv.const(node.input[1], "the shape"))
    try:
        shape = list(np.broadcast_shapes(tuple(x.shape), tuple(target)))
    except ValueError:
        raise TypeError(f"{cv.where()}: shape {list(x.shape)} does not broadcast to {target}") from None
    if shape == list(x.shape):
        return cv.op("identity", x)
    return cv.op("expand", x, shape)


@handles("Tile")
def tile(cv, node, opset):
    x = cv.operand(node.input[0])
    repeats = ints(cv.const(node.input[1], "repeats"))
    return cv.op("tile", x, repeats)


@handles("Pad")
def pad(cv, node, opset):
    attrs = attributes(node)
    x = cv.operand(node.input[0])
    rank = len(x.shape)
    mode = attrs.get("mode", "constant")
    if opset < 11:
        pads, value = list(attrs.get("pads", attrs.get("paddings", []))), attrs.get("value", 0.0)
        axes = None
    else:
        pads = ints(cv.const(node.input[1], "pads"))
        value = optional_const(cv, node, 2)
        value = 0 if value is None else scalar(value)
        axes = optional_const(cv, node, 3)
    axes = list(range(rank)) if axes is None else [normalize_axis(cv, a, rank) for a in ints(axes)]
    if len(pads) != 2 * len(axes):
        raise TypeError(f"{cv.where()}: pads has {len(pads)} values, expected {2 * len(axes)}")
    begin, end = [0] * rank, [0] * rank
    for i, axis in enumerate(axes):
        begin[axis], end[axis] = pads[i], pads[i + len(axes)]
    modes = {"constant": "constant", "edge": "edge", "reflect": "reflection"}
    if mode not in modes:
        raise cv.unsupported(f"mode='{mode}' is not supported (WebNN pads with constant, edge or reflection)")
    y = x
    if any(p > 0 for p in begin + end):
        options = {"mode": modes[mode]}
        if mode == "constant":
            options["value"] = value
        y = cv.op("pad", x, [max(p, 0) for p in begin], [max(p, 0) for p in end], **options)
    if any(p < 0 for p in begin + end):  # negative pads crop
        starts = [max(-p, 0) for p in begin]
        sizes = [d - s - max(-e, 0) for d, s, e in zip(y.shape, starts, end)]
        if any(s <= 0 for s in sizes):
            raise cv.unsupported("the pads crop the tensor to nothing (WebNN has no empty tensors)")
        y = cv.op("slice", y, starts, sizes)
    return y if y is not x else cv.op("identity", x)


@handles("DepthToSpace", "SpaceToDepth")
def depth_space(cv, node, opset):
    attrs = attributes(node)
    x = cv.operand(node.input[0])
    if len(x.shape) != 4:
        raise TypeError(f"{cv.where()}: the input must have rank 4")
    n, c, h, w = x.shape
    b = attrs["blocksize"]
    crd = attrs.get("mode", "DCR") == "CRD"
    if node.op_type == "SpaceToDepth":
        permutation = [0, 1, 3, 5, 2, 4] if crd else [0, 3, 5, 1, 2, 4]
        t = cv.op("transpose", reshape(cv, x, [n, c, h // b, b, w // b, b]), permutation=permutation)
        return reshape(cv, t, [n, c * b * b, h // b, w // b])
    if not crd:
        t = cv.op("transpose", reshape(cv, x, [n, b, b, c // (b * b), h, w]), permutation=[0, 3, 4, 1, 5, 2])
    else:
        t = cv.op("transpose", reshape(cv, x, [n, c // (b * b), b, b, h, w]), permutation=[0, 1, 4, 2, 5, 3])
    return reshape(cv, t, [n, c // (b * b), h * b, w * b])


@handles("Trilu")
def trilu(cv, node, opset):
    k = optional_const(cv, node, 1)
    return cv.op("triangular", cv.operand(node.input[0]), upper=bool(attributes(node).get("upper", 1)),
                 diagonal=0 if k is None else int(scalar(k)))


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
    from ._convert import webnn_type

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


# ---------------------------------------------------------------- control flow
@handles("If")
def if_op(cv, node, opset):
    condition = cv.const(node.input[0], "the condition")
    attrs = attributes(node)
    branch = attrs["then_branch"] if bool(np.asarray(condition).reshape(-1)[0]) else attrs["else_branch"]
    saved = cv.node, cv.label
    for name, array in initializers(branch).items():
        cv.set(name, array)
    cv.run_nodes(branch.node, opset)
    cv.node, cv.label = saved
    return [cv.value(output.name) for output in branch.output]


from . import _resize  # noqa: E402,F401  (registers Resize and Upsample)


@handles("Constant")
def constant(cv, node, opset):
    from ._folding import evaluate

    return evaluate(cv, node, opset)
