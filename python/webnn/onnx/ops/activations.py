"""Activations and the softmax family."""
import math

import numpy as np

from .._registry import attributes, full_like, handles, normalize_axis, reshape


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
    return gelu_tanh(cv, x)


def gelu_tanh(cv, x):
    """0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))"""
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
    if opset >= 13 or axis == rank - 1:  # before 13: over dims [axis:], the same when only the last
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
