"""Convolutions and pooling."""

from .._registry import attributes, first_output_only, handles, reshape


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
    x = cv.operand(node.input[0])
    bias = cv.operand(node.input[2], x.data_type) if cv.has(node, 2) else None
    return convolve(cv, attributes(node), x, cv.value(node.input[1]), bias)


def convolve(cv, attrs, x, weight, bias=None):
    """An ONNX Conv with these attributes of the operand x by weight (an array or an operand) and an
    optional bias operand, as WebNN conv2d (1-D windows with a unit height)."""
    rank = len(x.shape)
    kernel = list(weight.shape[2:])
    strides, dilations = _spatial_attrs(cv, attrs, rank)
    pads = _auto_pads(cv, attrs, x.shape[2:], kernel, strides, dilations)
    if any(p < 0 for pair in pads for p in pair):
        raise cv.unsupported("negative pads are not supported")
    spatial = rank - 2
    if spatial == 1:
        strides, dilations, pads = [1] + strides, [1] + dilations, [(0, 0)] + pads
    options = {"padding": _padding(pads), "strides": strides, "dilations": dilations, "groups": attrs.get("group", 1)}
    if bias is not None:
        options["bias"] = bias
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
    first_output_only(cv, node, "MaxPool indices")
    return pool_window(cv, node.op_type, attributes(node), cv.operand(node.input[0]))


def pool_window(cv, op_type, attrs, x):
    """ONNX MaxPool, AveragePool or LpPool (``op_type``) with these attributes of the operand x."""
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
    if op_type == "AveragePool" and attrs.get("count_include_pad", 0) and any(p for pair in pads for p in pair):
        # Padding counts in the divisor: pad with zeros explicitly (WebNN excludes its own padding).
        x = cv.op("pad", x, [0, 0] + [b for b, _ in pads], [0, 0] + [e for _, e in pads])
        in_sizes = [size + b + e for size, (b, e) in zip(in_sizes, pads)]
        pads = [(0, 0)] * spatial
    # WebNN padding is skipped by max/avg/l2 windows, so a ceil-mode tail is extra end padding.
    padding = [(begin, end + max(0, (out - 1) * s + window - (size + begin + end)))
               for size, window, s, out, (begin, end) in zip(in_sizes, windows, strides, out_sizes, pads)]
    if spatial == 1:
        kernel, strides, dilations, padding = [1] + kernel, [1] + strides, [1] + dilations, [(0, 0)] + padding
    if op_type == "LpPool" and attrs.get("p", 2) != 2:
        raise cv.unsupported(f"p={attrs.get('p')} is not supported (WebNN has l2Pool2d only)")
    op = {"MaxPool": "maxPool2d", "AveragePool": "averagePool2d", "LpPool": "l2Pool2d"}[op_type]
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
