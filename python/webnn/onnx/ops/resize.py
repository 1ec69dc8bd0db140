"""Resize and Upsample. Every mode is separable, so each resized axis is an [out, in] weight matrix
computed here with the ONNX reference rules. The node becomes WebNN resample2d when that op gives
the same matrices (half-pixel nearest with round-half-down, or half-pixel linear on axes 2 and 3);
otherwise nearest modes become a gather per axis and linear/cubic modes a matmul per axis."""
import math

import numpy as np

from .._registry import attributes, handles, normalize_axis, optional_const


def _source_coordinates(mode, scale, in_size, out_size):
    """Input coordinates of the output positions, per the ONNX operator text (which ONNX Runtime
    follows): align_corners and pytorch_half_pixel use the integer output length."""
    y = np.arange(out_size, dtype=np.float64)
    out_width = scale * in_size
    if mode == "align_corners":
        return np.zeros(out_size) if out_size == 1 else y * (in_size - 1) / (out_size - 1)
    if mode == "asymmetric":
        return y / scale
    if mode == "pytorch_half_pixel":
        return np.zeros(out_size) if out_size == 1 else (y + 0.5) / scale - 0.5
    if mode == "half_pixel":
        return (y + 0.5) / scale - 0.5
    if mode == "half_pixel_symmetric":
        offset = in_size / 2 * (1 - out_size / out_width)
        return offset + (y + 0.5) / scale - 0.5
    if mode == "tf_half_pixel_for_nn":
        return (y + 0.5) / scale
    raise ValueError(mode)


def _nearest(ratio, scale, nearest_mode):
    if ratio == 1:
        return [0.0, 1.0]
    pick_right = {"round_prefer_floor": ratio > 0.5, "round_prefer_ceil": ratio >= 0.5, "floor": False,
                  "ceil": True, "simple": scale < 1}[nearest_mode]
    return [0.0, 1.0] if pick_right else [1.0, 0.0]


def _linear(ratio, scale, antialias):
    if not antialias:
        return [1 - ratio, ratio]
    scale = min(scale, 1.0)
    start = int(np.floor(-1 / scale) + 1)
    args = (np.arange(start, 2 - start) - ratio) * scale
    coeffs = np.clip(1 - np.abs(args), 0, 1)
    return coeffs / coeffs.sum()


def _cubic(ratio, scale, a, antialias):
    if not antialias:
        r = ratio
        return [((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
                ((a + 2) * r - (a + 3)) * r * r + 1,
                ((a + 2) * (1 - r) - (a + 3)) * (1 - r) * (1 - r) + 1,
                ((a * (2 - r) - 5 * a) * (2 - r) + 8 * a) * (2 - r) - 4 * a]
    scale = min(scale, 1.0)
    start = int(np.floor(-2 / scale) + 1)
    x = np.abs(scale * (np.arange(start, 2 - start) - ratio))
    coeffs = np.where(x <= 1, (a + 2) * x ** 3 - (a + 3) * x ** 2 + 1,
                      np.where(x < 2, a * x ** 3 - 5 * a * x ** 2 + 8 * a * x - 4 * a, 0.0))
    return coeffs / coeffs.sum()


def axis_weights(settings, scale, in_size, out_size):
    """The [out, in] interpolation matrix of one axis."""
    x = _source_coordinates(settings["coordinates"], scale, in_size, out_size)
    floor = np.floor(x)
    ratios = np.where(x == floor, 1.0, x - floor)
    mode = settings["mode"]
    if mode == "nearest":
        coeffs = np.array([_nearest(r, scale, settings["nearest_mode"]) for r in ratios])
    elif mode == "linear":
        coeffs = np.array([_linear(r, scale, settings["antialias"]) for r in ratios])
    else:
        coeffs = np.array([_cubic(r, scale, settings["cubic_coeff_a"], settings["antialias"]) for r in ratios])
    n = coeffs.shape[1]
    pad = -(-n // 2)
    padded = x + pad
    base = np.floor(padded)
    frac = padded - base
    if n % 2 == 0:
        offset = np.where(frac == 0, -(n // 2), -(n // 2) + 1)
    else:
        offset = np.where(frac <= 0.5, -((n - 1) // 2), -((n - 1) // 2) + 1)
    neighbors = (base + offset).astype(np.int64)[:, None] + np.arange(n)[None, :] - pad
    if settings["exclude_outside"]:
        coeffs = np.where((neighbors < 0) | (neighbors >= in_size), 0.0, coeffs)
        total = coeffs.sum(axis=1, keepdims=True)
        coeffs = coeffs / np.where(total == 0, 1.0, total)
    weights = np.zeros((out_size, in_size))
    rows = np.repeat(np.arange(out_size), n)
    np.add.at(weights, (rows, np.clip(neighbors, 0, in_size - 1).reshape(-1)), coeffs.reshape(-1))
    return weights


def _webnn_weights(mode, in_size, out_size):
    """The matrix WebNN resample2d applies: half-pixel with scale out/in, clamped coordinates."""
    u = np.clip((np.arange(out_size) + 0.5) * in_size / out_size - 0.5, 0, in_size - 1)
    weights = np.zeros((out_size, in_size))
    rows = np.arange(out_size)
    if mode == "nearest":
        weights[rows, np.ceil(u - 0.5).astype(np.int64)] = 1.0
        return weights
    low = np.floor(u)
    np.add.at(weights, (rows, low.astype(np.int64)), 1 - (u - low))
    np.add.at(weights, (rows, np.ceil(u).astype(np.int64)), u - low)
    return weights


def _along_axis(cv, x, weights, axis):
    """Applies an [out, in] matrix to one axis with matmul."""
    rank = len(x.shape)
    matrix = weights.astype(x.data_type)
    if rank == 1:
        y = cv.op("matmul", cv.op("reshape", x, [1, x.shape[0]]), cv.operand(np.ascontiguousarray(matrix.T)))
        return cv.op("reshape", y, [matrix.shape[0]])
    if axis == rank - 1:
        return cv.op("matmul", x, cv.operand(np.ascontiguousarray(matrix.T)))
    if axis == rank - 2:
        return cv.op("matmul", cv.operand(matrix), x)
    order = [d for d in range(rank) if d != axis] + [axis]
    moved = cv.op("transpose", x, permutation=order)
    y = cv.op("matmul", moved, cv.operand(np.ascontiguousarray(matrix.T)))
    return cv.op("transpose", y, permutation=[order.index(d) for d in range(rank)])


def _sizes_and_scales(cv, shape, axes, scales, sizes, policy):
    rank = len(shape)
    if sizes is not None:
        sizes = [int(s) for s in np.asarray(sizes).reshape(-1)]
        if len(sizes) != len(axes):
            raise TypeError(f"{cv.where()}: sizes has {len(sizes)} values for {len(axes)} axes")
        out = list(shape)
        for axis, size in zip(axes, sizes):
            out[axis] = size
        factors = [out[d] / shape[d] for d in range(rank)]
        if policy != "stretch":
            pick = min if policy == "not_larger" else max
            scale = pick(factors[d] for d in axes)
            factors = [scale if d in axes else 1.0 for d in range(rank)]
            out = [int(scale * shape[d] + 0.5) if d in axes else shape[d] for d in range(rank)]
        return out, factors
    values = np.asarray(scales, dtype=np.float32).reshape(-1)
    if len(values) != len(axes):
        raise TypeError(f"{cv.where()}: scales has {len(values)} values for {len(axes)} axes")
    factors = [1.0] * rank
    for axis, value in zip(axes, values):
        if value <= 0:
            raise TypeError(f"{cv.where()}: scales must be positive")
        factors[axis] = float(value)
    out = (np.array(factors) * np.array(shape)).astype(np.int64).tolist()
    return out, factors


@handles("Resize", "Upsample")
def resize(cv, node, opset):
    attrs = attributes(node)
    x = cv.operand(node.input[0])
    shape = list(x.shape)
    rank = len(shape)
    mode = attrs.get("mode", "nearest")
    mode = "linear" if mode in ("bilinear", "trilinear") else mode
    legacy = node.op_type == "Upsample" or opset < 11
    settings = {
        "mode": mode,
        "coordinates": "asymmetric" if legacy else attrs.get("coordinate_transformation_mode", "half_pixel"),
        "nearest_mode": "simple" if legacy else attrs.get("nearest_mode", "round_prefer_floor"),
        "cubic_coeff_a": attrs.get("cubic_coeff_a", -0.75),
        "exclude_outside": attrs.get("exclude_outside", 0),
        "antialias": attrs.get("antialias", 0),
    }
    if mode not in ("nearest", "linear", "cubic"):
        raise cv.unsupported(f"mode='{mode}' is not an ONNX resize mode")
    if settings["coordinates"] == "tf_crop_and_resize":
        raise cv.unsupported("coordinate_transformation_mode='tf_crop_and_resize' is not supported")
    if node.op_type == "Upsample":
        scales = attrs["scales"] if opset < 9 else cv.const(node.input[1], "scales")
        sizes = None
    elif opset < 11:
        scales, sizes = cv.const(node.input[1], "scales"), None
    else:
        scales, sizes = optional_const(cv, node, 2), optional_const(cv, node, 3)
        if scales is not None and scales.size == 0:
            scales = None
    if scales is None and sizes is None:
        raise TypeError(f"{cv.where()}: Resize needs scales or sizes")
    axes = [normalize_axis(cv, a, rank) for a in attrs.get("axes", range(rank))]
    out, factors = _sizes_and_scales(cv, shape, axes, scales, sizes,
                                     attrs.get("keep_aspect_ratio_policy", "stretch"))
    resized = [d for d in sorted(set(axes)) if not (math.isclose(factors[d], 1.0) and out[d] == shape[d])]
    if not resized:
        return cv.op("identity", x)
    if any(out[d] <= 0 for d in resized):
        raise cv.unsupported(f"the output shape {out} is empty (WebNN has no empty tensors)")
    cv.check_size(out, x.data_type)  # before the [out, in] weight matrices are made
    weights = {d: axis_weights(settings, factors[d], shape[d], out[d]) for d in resized}
    resample_types = cv._limits.get("resample2d", {}).get("input", {}).get("dataTypes", [])
    if (rank == 4 and set(resized) <= {2, 3} and mode in ("nearest", "linear") and x.data_type in resample_types
            and all(np.allclose(weights[d], _webnn_weights(mode, shape[d], out[d]), rtol=0, atol=1e-12)
                    for d in resized)):
        webnn_mode = "nearest-neighbor" if mode == "nearest" else "linear"
        return cv.op("resample2d", x, mode=webnn_mode, sizes=[out[2], out[3]], axes=[2, 3])
    y = x
    for d in resized:
        if mode == "nearest":
            y = cv.op("gather", y, cv.operand(weights[d].argmax(axis=1).astype(np.int32)), axis=d)
        elif x.data_type not in ("float32", "float16"):
            raise cv.unsupported(f"{mode} resizing of {x.data_type} tensors is not supported")
        else:
            y = _along_axis(cv, y, weights[d], d)
    return y
