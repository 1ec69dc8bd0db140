"""The ONNX op registry: ``HANDLERS`` maps an op type to its handler, ``handles`` registers one, and
the helpers and type tables the handler modules (``onnx/ops/``) share. Each handler takes
``(converter, node, opset)`` and returns the node's output values (MLOperands, or NumPy arrays for
values known at conversion time).

Ops of the default domain are keyed by their op type ("Conv"); ops of another domain by the domain
and the op type, as ONNX Runtime's documentation names them ("com.microsoft.FusedConv"), so a node
reaches a contrib handler only when its domain is that one."""
import numpy as np

from ._prepare import onnx_module

HANDLERS = {}


DEFAULT_DOMAINS = ("", "ai.onnx")


def handler_key(domain, op_type):
    """The HANDLERS key of an op type in a domain."""
    return op_type if domain in DEFAULT_DOMAINS else f"{domain}.{op_type}"


def handles(*op_types, domain=""):
    def register(function):
        for op_type in op_types:
            HANDLERS[handler_key(domain, op_type)] = function
        return function
    return register


# ---------------------------------------------------------------- ONNX element types
_WEBNN_TYPES = {1: "float32", 2: "uint8", 3: "int8", 6: "int32", 7: "int64", 9: "uint8", 10: "float16",
                12: "uint32", 13: "uint64"}
_ONNX_TYPE_NAMES = {0: "undefined", 1: "float", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32",
                    7: "int64", 8: "string", 9: "bool", 10: "float16", 11: "double", 12: "uint32", 13: "uint64",
                    14: "complex64", 15: "complex128", 16: "bfloat16"}


def onnx_type_name(elem_type):
    return _ONNX_TYPE_NAMES.get(elem_type, f"type {elem_type}")


def webnn_type(elem_type):
    """The WebNN data type of an ONNX element type, or None."""
    return _WEBNN_TYPES.get(elem_type)


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


# ---------------------------------------------------------------- quantization
_DEQUANTIZABLE = frozenset({"int8", "uint8", "int16", "uint16", "int32"})


def dequantize_array(x, scale, zero=None, axis=1):
    """ONNX DequantizeLinear of NumPy arrays, per tensor (a scale of one element) or per axis (a
    1-D scale along ``axis``), bitwise as ONNX Runtime computes it: x minus the zero point in int32
    (wrapping, as its kernel does), converted to float32, times the scale in float32 (one IEEE
    rounding), then converted to the scale's type (float16 rounds once more). That is the spec's
    float path, (x - zeroPoint) * scale, and for 8- and 16-bit data any correct kernel's result.
    None where it does not apply (other data types, blocked scales, shapes that do not fit)."""
    x, scale = np.asarray(x), np.asarray(scale)
    if x.dtype.name not in _DEQUANTIZABLE or scale.dtype.name not in ("float32", "float16"):
        return None
    if zero is not None:
        zero = np.asarray(zero)
        if zero.dtype != x.dtype or zero.size != scale.size:
            return None
    if scale.size == 1 and scale.ndim <= 1:
        shape = ()
    elif scale.ndim == 1 and -x.ndim <= axis < x.ndim and x.shape[axis] == scale.size:
        shape = [1] * x.ndim
        shape[axis] = scale.size
    else:
        return None
    with np.errstate(over="ignore"):
        centered = x.astype(np.int32) if zero is None else x.astype(np.int32) - zero.astype(np.int32).reshape(shape)
        y = np.asarray(centered.astype(np.float32) * scale.astype(np.float32).reshape(shape))
        return y.astype(scale.dtype, copy=False)
