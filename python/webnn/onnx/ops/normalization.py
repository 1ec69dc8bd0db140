"""Batch, instance, layer, group, Lp, mean-variance and local response normalization."""
import numpy as np

from .._registry import attributes, first_output_only, full_like, handles, normalize_axis, reshape


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


def moments(cv, x, axes, epsilon):
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
        outputs.extend(moments(cv, x, axes, epsilon))
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


@handles("LRN")
def lrn(cv, node, opset):
    """y = x / (bias + alpha / size · Σ x²)^beta, the sum over the channels c - floor((size - 1) / 2)
    .. c + ceil((size - 1) / 2) that exist: the squares as [N, 1, C, rest] convolved with a [size, 1]
    window of ones, zero-padded along C."""
    attrs = attributes(node)
    if "size" not in attrs:
        raise TypeError(f"{cv.where()}: the size attribute is required")
    size = int(attrs["size"])
    if size < 1:
        raise TypeError(f"{cv.where()}: size must be positive, got {size}")
    alpha, beta, bias = attrs.get("alpha", 1e-4), attrs.get("beta", 0.75), attrs.get("bias", 1.0)
    x = cv.operand(node.input[0])
    shape = list(x.shape)
    if len(shape) < 2:
        raise TypeError(f"{cv.where()}: X must have rank 2 or more (N x C x ...), got shape {shape}")
    rest = int(np.prod(shape[2:], dtype=np.int64))
    squares = reshape(cv, cv.op("mul", x, x), [shape[0], 1, shape[1], rest])
    before = (size - 1) // 2
    window = cv.operand(np.ones([1, 1, size, 1], x.data_type))
    sums = reshape(cv, cv.op("conv2d", squares, window, padding=[before, size - 1 - before, 0, 0]), shape)
    base = cv.op("add", cv.op("mul", sums, full_like(cv, x, alpha / size)), full_like(cv, x, bias))
    return cv.op("div", x, cv.op("pow", base, full_like(cv, x, beta)))
