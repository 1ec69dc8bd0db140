"""ONNX Runtime contrib ops (domain "com.microsoft") that its graph optimizer writes into the models
it saves: FusedConv, Gelu, FastGelu, BiasGelu, QuickGelu and SkipLayerNormalization. They are
registered for that domain only ("com.microsoft.FusedConv" in SUPPORTED_OPS); a default-domain
node of the same name never reaches them."""
from .._registry import attributes, full_like, handles
from .activations import gelu_tanh
from .conv_pool import convolve
from .normalization import moments

MICROSOFT = "com.microsoft"


def _activation(cv, name, params, x):
    """FusedConv's activation (ONNX Runtime's MLAS activation kinds) with its activation_params."""
    if not name:
        return x
    params = [float(p) for p in params]

    def param(index, default):
        return params[index] if len(params) > index else default

    if name in ("Relu", "Tanh", "Sigmoid"):
        return cv.op(name.lower(), x)
    if name == "LeakyRelu":
        return cv.op("leakyRelu", x, alpha=param(0, 0.01))
    if name == "HardSigmoid":
        return cv.op("hardSigmoid", x, alpha=param(0, 0.2), beta=param(1, 0.5))
    if name == "Clip":
        if len(params) != 2:
            raise TypeError(f"{cv.where()}: activation Clip needs activation_params [min, max], got {params}")
        low, high = params
        if low > high:
            raise cv.unsupported(f"activation Clip with min {low} > max {high} is not supported")
        return cv.op("clamp", x, minValue=low, maxValue=high)
    raise cv.unsupported(f"activation '{name}' is not supported (Relu, Tanh, Sigmoid, LeakyRelu, Clip and "
                         "HardSigmoid are)")


@handles("FusedConv", domain=MICROSOFT)
def fused_conv(cv, node, opset):
    """Conv (+ Z, the sum input) followed by the activation."""
    attrs = attributes(node)
    x = cv.operand(node.input[0])
    bias = cv.operand(node.input[2], x.data_type) if cv.has(node, 2) else None
    y = convolve(cv, attrs, x, cv.value(node.input[1]), bias)
    if cv.has(node, 3):
        y = cv.op("add", y, cv.operand(node.input[3], x.data_type))
    return _activation(cv, attrs.get("activation", ""), attrs.get("activation_params", []), y)


def _float_input(cv, node, index=0):
    x = cv.operand(node.input[index])
    if x.data_type not in ("float32", "float16"):
        raise cv.unsupported(f"input {index} is {x.data_type}; this operator takes float32 or float16")
    return x


@handles("Gelu", domain=MICROSOFT)
def gelu(cv, node, opset):
    return cv.op("gelu", _float_input(cv, node))


@handles("BiasGelu", domain=MICROSOFT)
def bias_gelu(cv, node, opset):
    x = _float_input(cv, node)
    return cv.op("gelu", cv.op("add", x, cv.operand(node.input[1], x.data_type)))


@handles("FastGelu", domain=MICROSOFT)
def fast_gelu(cv, node, opset):
    """The tanh approximation of gelu, of x + bias when the bias input is given."""
    x = _float_input(cv, node)
    if cv.has(node, 1):
        x = cv.op("add", x, cv.operand(node.input[1], x.data_type))
    return gelu_tanh(cv, x)


@handles("QuickGelu", domain=MICROSOFT)
def quick_gelu(cv, node, opset):
    """x * sigmoid(alpha * x)."""
    x = _float_input(cv, node)
    alpha = attributes(node).get("alpha", 1.702)
    return cv.op("mul", x, cv.op("sigmoid", cv.op("mul", x, full_like(cv, x, alpha))))


@handles("SkipLayerNormalization", domain=MICROSOFT)
def skip_layer_normalization(cv, node, opset):
    """layerNormalization over the last axis of input + skip (+ bias), with gamma and beta.
    Outputs: the result, mean and inv_std_var (kept as a size-1 last dim, as LayerNormalization's),
    and input_skip_bias_sum."""
    attrs = attributes(node)
    x = _float_input(cv, node)
    rank = len(x.shape)
    if rank < 2:
        raise TypeError(f"{cv.where()}: input must have rank 2 or 3, got shape {list(x.shape)}")
    total = cv.op("add", x, cv.operand(node.input[1], x.data_type))
    if cv.has(node, 4):
        total = cv.op("add", total, cv.operand(node.input[4], x.data_type))
    epsilon = attrs.get("epsilon", 1e-12)
    options = {"scale": cv.operand(node.input[2], x.data_type)}
    if cv.has(node, 3):
        options["bias"] = cv.operand(node.input[3], x.data_type)
    hidden = int(x.shape[-1])
    for key, operand in options.items():
        if [int(d) for d in operand.shape] != [hidden]:
            raise TypeError(f"{cv.where()}: {'gamma' if key == 'scale' else 'beta'} must have shape [{hidden}], "
                            f"got {list(operand.shape)}")
    axes = [rank - 1]
    y = cv.op("layerNormalization", total, axes=axes, epsilon=epsilon, **options)
    outputs = [y, None, None, total]
    if any(node.output[1:3]):
        outputs[1:3] = moments(cv, total, axes, epsilon)
    return outputs

