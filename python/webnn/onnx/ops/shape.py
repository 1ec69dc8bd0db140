"""Shapes and data movement: reshape, transpose, slice, gather, concat, pad, ..."""
import numpy as np

from .._registry import attributes, handles, ints, normalize_axis, optional_const, reshape, scalar, webnn_type


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
    attrs = attributes(node)
    shape = cv.shape(node.input[0])
    dtype = webnn_type(attrs["dtype"]) if "dtype" in attrs else cv.dtype(node.input[0])
    if dtype is None:
        raise cv.unsupported("the requested data type is not a WebNN data type")
    return np.eye(shape[0], shape[1], attrs.get("k", 0), dtype=np.bool_ if attrs.get("dtype") == 9 else dtype)


@handles("OneHot")
def one_hot(cv, node, opset):
    """where(equal(index, iota), on, off): the index gets a unit axis at ``axis`` and is compared with
    [0, depth) along it. Negative indices count from depth; indices outside [-depth, depth) match no
    position and give all off values, as the operator text and ONNX Runtime say."""
    indices = cv.operand(node.input[0])
    depth = scalar(cv.const(node.input[1], "depth"))
    if depth != int(depth) or depth < 1:
        raise TypeError(f"{cv.where()}: depth must be a positive integer, got {depth}")
    depth = int(depth)
    values = cv.value(node.input[2])
    if list(values.shape) != [2]:
        raise TypeError(f"{cv.where()}: values must be [off_value, on_value], got shape {list(values.shape)}")
    rank = len(indices.shape)
    axis = normalize_axis(cv, attributes(node).get("axis", -1), rank + 1)
    cv.check_size(list(indices.shape[:axis]) + [depth] + list(indices.shape[axis:]), cv.dtype(node.input[2]))
    index_type = indices.data_type
    if index_type in ("float32", "float16"):  # ONNX Runtime truncates non-integer indices toward zero
        index_type = "int64"
    elif index_type in ("int8", "uint8"):  # wide enough for depth
        index_type = "int32"
    if index_type != indices.data_type:
        indices = cv.op("cast", indices, index_type)
    if not index_type.startswith("u"):
        negative = cv.op("lesser", indices, cv.operand(np.array(0, index_type)))
        indices = cv.op("where", negative, cv.op("add", indices, cv.operand(np.array(depth, index_type))), indices)
    shape = list(indices.shape)
    index = reshape(cv, indices, shape[:axis] + [1] + shape[axis:])
    positions = np.arange(depth, dtype=index_type).reshape([depth] + [1] * (rank - axis))
    hot = cv.op("equal", index, cv.operand(positions))
    if isinstance(values, np.ndarray):
        off, on = (cv.operand(np.array(values[i])) for i in (0, 1))
    else:
        off, on = (reshape(cv, cv.op("slice", values, [i], [1]), []) for i in (0, 1))
    return cv.op("where", hot, on, off)


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
