"""Element-wise ONNX ops: unary and binary math, comparisons and logic, Where, Clip, Cast."""
import numpy as np

from .._registry import attributes, full_like, handles, is_float, onnx_type_name, scalar, webnn_type


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


@handles("Mod")
def mod(cv, node, opset):
    """fmod=1: C's fmod, a - b·trunc(a / b), with the dividend's sign. fmod=0: the remainder with the
    divisor's sign (Python's %): fmod's result plus b when it is nonzero and the signs differ.
    Integer WebNN div truncates toward zero, so integers are exact; floats follow NumPy's fmod and
    mod, infinities, NaN and signed zeros included (a - b·trunc(a / b) rounds once more than a
    true fmod when the quotient is large). Division by zero is undefined for integers (as in ONNX)."""
    fmod = int(attributes(node).get("fmod", 0))
    a = cv.operand(node.input[0])
    b = cv.operand(node.input[1], a.data_type)
    data_type = a.data_type
    zero = full_like(cv, a, 0)
    if not is_float(data_type):
        remainder = cv.op("sub", a, cv.op("mul", b, cv.op("div", a, b)))
        if fmod or data_type.startswith("u"):
            return remainder
        differ = cv.op("notEqual", cv.op("lesser", remainder, zero), cv.op("lesser", b, zero))
        adjust = cv.op("logicalAnd", cv.op("notEqual", remainder, zero), differ)
        return cv.op("where", adjust, cv.op("add", remainder, b), remainder)
    quotient = cv.op("div", a, b)
    quotient = cv.op("where", cv.op("lesser", quotient, zero), cv.op("ceil", quotient), cv.op("floor", quotient))
    remainder = cv.op("sub", a, cv.op("mul", b, quotient))
    # fmod(a, ±inf) is a for a finite a (b · 0 above is NaN).
    finite_by_infinite = cv.op("logicalAnd", cv.op("isInfinite", b), cv.op("logicalNot", cv.op("isInfinite", a)))
    remainder = cv.op("where", finite_by_infinite, a, remainder)
    if fmod:  # a zero remainder has the dividend's sign (a is finite there)
        return cv.op("where", cv.op("equal", remainder, zero), cv.op("mul", a, zero), remainder)
    differ = cv.op("notEqual", cv.op("lesser", remainder, zero), cv.op("lesser", b, zero))
    adjust = cv.op("logicalAnd", cv.op("notEqual", remainder, zero), differ)
    remainder = cv.op("where", adjust, cv.op("add", remainder, b), remainder)
    signed_zero = cv.op("where", cv.op("lesser", b, zero), full_like(cv, a, -0.0), zero)  # the divisor's sign
    return cv.op("where", cv.op("equal", remainder, zero), signed_zero, remainder)


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
