"""quantizeLinear and dequantizeLinear against float64 NumPy references, with blockwise
(per-tensor, per-axis and per-block) scale/zeroPoint."""
import numpy as np
import pytest

import webnn
from conftest import run

FLOATS = ["float32", "float16"]
QUANTIZED = ["uint8", "int8", "uint32", "int32", "uint4", "int4"]
FOUR_BIT = {"int4": (-8, 7), "uint4": (0, 15)}  # held one value per int8/uint8 element
BAD = r"\[bad\]"

# (input shape, scale/zeroPoint shape): per-tensor, per-axis, blockwise and rank 0.
LAYOUTS = [
    ([], []),
    ([6], [1]),
    ([6], [6]),
    ([6], [3]),
    ([4, 6], [1, 1]),
    ([4, 6], [4, 1]),
    ([4, 6], [1, 3]),
    ([4, 6], [2, 2]),
    ([2, 3, 4], [2, 1, 2]),
    ([1, 4, 1, 2], [1, 2, 1, 1]),
]


def expand_blockwise(param, shape):
    """Each element of `param` covers a contiguous block of shape[d] / param.shape[d] per dim."""
    for d, (big, small) in enumerate(zip(shape, param.shape)):
        param = np.repeat(param, big // small, axis=d)
    return param.reshape(shape)


def value_range(data_type):
    if data_type in FOUR_BIT:
        return FOUR_BIT[data_type]
    info = np.iinfo(data_type)
    return int(info.min), int(info.max)


def compute(builder, op, x, scale, zero_point, types=None):
    """Runs op on inputs; `types` names their MLOperandDataTypes where the dtype does not (int4)."""
    names = {"x": x, "scale": scale, "zero_point": zero_point}
    types = types or {}
    operands = {n: builder.input(n, {"dataType": types.get(n, a.dtype.name), "shape": list(a.shape)})
                for n, a in names.items()}
    out = getattr(builder, op)(operands["x"], operands["scale"], operands["zero_point"])
    return run(builder, {"y": out}, names)["y"]


def quantize_reference(x, scale, zero_point, zero_point_type=None):
    low, high = value_range(zero_point_type or zero_point.dtype.name)
    # The quotient is a float32 division (as in ONNX's reference and ORT); the rest is float64.
    s = expand_blockwise(scale, x.shape).astype(np.float32)
    zp = expand_blockwise(zero_point, x.shape).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        y = np.rint((x.astype(np.float32) / s).astype(np.float64)) + zp  # np.rint rounds half to even
    y = np.where(np.isnan(y), 0, np.clip(y, low, high))
    return y.astype(zero_point.dtype)


def zero_points(data_type, shape, rng):
    low, high = value_range(data_type)
    if webnn.numpy_dtype(data_type).itemsize > 1:
        low, high = (-1000 if low else 0, 1000)
    return rng.integers(low, high, size=shape, endpoint=True).astype(webnn.numpy_dtype(data_type))


@pytest.mark.parametrize("input_type", FLOATS)
@pytest.mark.parametrize("zero_point_type", QUANTIZED)
@pytest.mark.parametrize("shape,param_shape", LAYOUTS)
def test_quantize_linear(builder, input_type, zero_point_type, shape, param_shape):
    rng = np.random.default_rng(3)
    x = rng.uniform(-300, 300, size=shape).astype(input_type)
    scale = rng.uniform(0.05, 2, size=param_shape).astype(input_type)
    if zero_point_type in FOUR_BIT:
        x = (x / 20).astype(input_type)  # values that both saturate and land inside the range
    zero_point = zero_points(zero_point_type, param_shape, rng)
    out = compute(builder, "quantizeLinear", x, scale, zero_point, {"zero_point": zero_point_type})
    np.testing.assert_array_equal(out, quantize_reference(x, scale, zero_point, zero_point_type))
    assert out.dtype == webnn.numpy_dtype(zero_point_type)


@pytest.mark.parametrize("zero_point_type", QUANTIZED)
def test_quantize_rounding_saturation_and_specials(builder, zero_point_type):
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 1e30, -1e30, np.inf, -np.inf, np.nan, 3.25], np.float32)
    scale = np.ones([1], np.float32)
    zero_point = np.zeros([1], webnn.numpy_dtype(zero_point_type))
    out = compute(builder, "quantizeLinear", x, scale, zero_point, {"zero_point": zero_point_type})
    low, high = value_range(zero_point_type)
    expected = np.array([0, 2, 2, 0, -2, -2, high, low, high, low, 0, 3], np.float64)
    np.testing.assert_array_equal(out, np.clip(expected, low, high).astype(webnn.numpy_dtype(zero_point_type)))


@pytest.mark.parametrize("zero_point_type", ["uint8", "int8"])
@pytest.mark.parametrize("scale", [0.05, 1 / 255, 0.1, 3.7, 2.0 ** -100, 2.0 ** 100, 0.75 * 2.0 ** -100,
                                   1.5 * 2.0 ** 100, 1e-30, 7e30, 2.0 ** -126])
def test_quantize_8bit_quotients_are_exact(builder, zero_point_type, scale):
    """The 8-bit loops compute x / scale without dividing where 2^-100 <= scale <= 2^100 (with the
    float nearest 1 / scale and an FMA correction); every quotient must still be the float32
    division's, rounded half to even: values on, and ulps either side of, every halfway point,
    random values over wide ranges, zeros, infinities, NaN and subnormals."""
    rng = np.random.default_rng(int(np.log2(scale) * 10) & 0xFFFF)
    s = np.float32(scale)
    halfway = (np.arange(-300, 300, dtype=np.float32) + np.float32(0.5)) * s
    near = [np.nextafter(halfway, np.float32(np.inf) * sign) for sign in (1, -1)]
    near2 = [np.nextafter(v, np.float32(np.inf) * sign) for v, sign in zip(near, (1, -1))]
    spread = (rng.standard_normal(2000) * 200).astype(np.float32) * s
    wide = rng.standard_normal(500).astype(np.float32) * np.float32(2.0) ** rng.integers(-140, 120, 500).astype(
        np.float32)
    specials = np.array([0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 3.4e38, -3.4e38, 1.1754944e-38],
                        np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        x = np.concatenate([halfway, *near, *near2, spread, wide, specials]).astype(np.float32)
    x = x[np.isfinite(x) | np.isinf(x) | np.isnan(x)]
    zero = np.array([-3 if zero_point_type == "int8" else 7], zero_point_type)
    got = compute(builder, "quantize_linear", x, np.array([s], np.float32), zero)
    np.testing.assert_array_equal(got, quantize_reference(x, np.array([s], np.float32), zero))


def test_quantize_zero_point_offsets_before_saturating(builder):
    x = np.array([-10, 0, 100, 300], np.float16)
    out = compute(builder, "quantizeLinear", x, np.array([2], np.float16), np.array([128], np.uint8))
    np.testing.assert_array_equal(out, np.array([123, 128, 178, 255], np.uint8))


def test_quantize_zero_scale_saturates(builder):
    x = np.array([-1, 0, 1], np.float32)
    out = compute(builder, "quantizeLinear", x, np.zeros([1], np.float32), np.full([1], 5, np.int8))
    np.testing.assert_array_equal(out, np.array([-128, 0, 127], np.int8))  # -inf, NaN -> 0, +inf


@pytest.mark.parametrize("input_type", QUANTIZED)
@pytest.mark.parametrize("scale_type", FLOATS)
@pytest.mark.parametrize("shape,param_shape", LAYOUTS)
def test_dequantize_linear(builder, input_type, scale_type, shape, param_shape):
    rng = np.random.default_rng(4)
    low, high = value_range(input_type)
    storage = webnn.numpy_dtype(input_type)
    x = rng.integers(low, high, size=shape, endpoint=True).astype(storage)
    x.reshape(-1)[:2] = [low, high][: x.size]
    scale = rng.uniform(0.001, 2, size=param_shape).astype(scale_type)
    zero_point = rng.integers(low, high, size=param_shape, endpoint=True).astype(storage)
    out = compute(builder, "dequantizeLinear", x, scale, zero_point, {"x": input_type, "zero_point": input_type})
    expected = (x.astype(np.float64) - expand_blockwise(zero_point, shape).astype(np.float64)) * \
        expand_blockwise(scale, shape).astype(np.float64)
    assert out.dtype == np.dtype(scale_type)
    if scale_type == "float32":
        np.testing.assert_array_equal(out, expected.astype(np.float32))  # one rounding of the exact value
    else:
        with np.errstate(over="ignore"):
            np.testing.assert_allclose(out.astype(np.float64), expected.astype(np.float16), rtol=1e-3)


def test_quantize_dequantize_round_trip(builder):
    x = np.linspace(-2, 2, 24, dtype=np.float32).reshape(4, 6)
    scale = np.array([[0.02, 0.03], [0.04, 0.05]], np.float32)  # no saturation on [-2, 2]
    zero_point = np.array([[0, 10], [-10, 5]], np.int8)
    operands = {n: builder.input(n, {"dataType": a.dtype.name, "shape": list(a.shape)})
                for n, a in {"x": x, "s": scale, "z": zero_point}.items()}
    q = builder.quantize_linear(operands["x"], operands["s"], operands["z"])
    y = builder.dequantize_linear(q, operands["s"], operands["z"])
    out = run(builder, {"y": y}, {"x": x, "s": scale, "z": zero_point})["y"]
    np.testing.assert_allclose(out, x, atol=0.025 + 1e-6)  # half of the largest scale


def test_validation(builder):
    def operand(dtype, shape, name):
        return builder.input(name, {"dataType": dtype, "shape": list(shape)})

    xf = operand("float32", [4, 6], "xf")
    xq = operand("uint8", [4, 6], "xq")
    cases = [
        ("quantizeLinear", xf, ("float32", [1]), ("uint8", [1])),  # rank mismatch
        ("quantizeLinear", xf, ("float32", [1, 1]), ("uint8", [1])),  # zeroPoint rank mismatch
        ("quantizeLinear", xf, ("float32", [2, 3]), ("uint8", [2, 2])),  # scale shape != zeroPoint shape
        ("quantizeLinear", xf, ("float32", [3, 1]), ("uint8", [3, 1])),  # 4 % 3 != 0
        ("quantizeLinear", xf, ("float32", [8, 6]), ("uint8", [8, 6])),  # larger than the input
        ("quantizeLinear", xf, ("float16", [1, 1]), ("uint8", [1, 1])),  # scale dtype != input dtype
        ("quantizeLinear", xf, ("float32", [1, 1]), ("float32", [1, 1])),  # float zeroPoint
        ("quantizeLinear", xf, ("float32", [1, 1]), ("int64", [1, 1])),
        ("quantizeLinear", xq, ("float32", [1, 1]), ("uint8", [1, 1])),  # integer input
        ("dequantizeLinear", xq, ("float32", [1]), ("uint8", [1])),
        ("dequantizeLinear", xq, ("float32", [4, 4]), ("uint8", [4, 4])),
        ("dequantizeLinear", xq, ("float32", [2, 1]), ("int8", [2, 1])),  # zeroPoint dtype != input dtype
        ("dequantizeLinear", xq, ("int32", [2, 1]), ("uint8", [2, 1])),  # integer scale
        ("dequantizeLinear", xf, ("float32", [2, 1]), ("float32", [2, 1])),  # float input
        ("dequantizeLinear", operand("int64", [4, 6], "x64"), ("float32", [1, 1]), ("int64", [1, 1])),
    ]
    for i, (op, x, (scale_type, scale_shape), (zp_type, zp_shape)) in enumerate(cases):
        scale = operand(scale_type, scale_shape, f"s{i}")
        zero_point = operand(zp_type, zp_shape, f"z{i}")
        with pytest.raises(TypeError, match=BAD):
            getattr(builder, op)(x, scale, zero_point, label="bad")
    y = builder.dequantizeLinear(xq, operand("float16", [2, 3], "s"), operand("uint8", [2, 3], "z"))
    assert (y.data_type, y.shape) == ("float16", [4, 6])


def test_op_support_limits(context):
    limits = context.op_support_limits()
    q, dq = limits["quantizeLinear"], limits["dequantizeLinear"]
    assert set(q) == set(dq) == {"input", "scale", "zeroPoint", "output"}
    quantized = ["int32", "uint32", "int8", "uint8", "int4", "uint4"]
    assert q["input"]["dataTypes"] == FLOATS and q["output"]["dataTypes"] == quantized
    assert q["zeroPoint"]["dataTypes"] == quantized
    assert dq["input"]["dataTypes"] == quantized and dq["output"]["dataTypes"] == FLOATS
    assert q["input"]["rankRange"] == {"min": 0, "max": 8}


def test_large_tensors(context):
    """Sizes that split across threads, with per-row and blockwise parameters."""
    rng = np.random.default_rng(8)
    x = rng.uniform(-100, 100, size=[300, 400]).astype(np.float32)
    scale = rng.uniform(0.5, 1, size=[300, 1]).astype(np.float32)
    zero_point = rng.integers(-20, 20, size=[300, 1]).astype(np.int8)
    out = compute(webnn.MLGraphBuilder(context), "quantizeLinear", x, scale, zero_point)
    np.testing.assert_array_equal(out, quantize_reference(x, scale, zero_point))
    q = rng.integers(0, 255, size=[300, 400]).astype(np.uint8)
    scale = rng.uniform(0.5, 1, size=[3, 8]).astype(np.float32)
    zero_point = rng.integers(0, 255, size=[3, 8]).astype(np.uint8)
    out = compute(webnn.MLGraphBuilder(context), "dequantizeLinear", q, scale, zero_point)
    expected = (q - expand_blockwise(zero_point, q.shape).astype(np.float64)) * expand_blockwise(scale, q.shape)
    np.testing.assert_array_equal(out, expected.astype(np.float32))


# ---------------------------------------------------------------- int4 / uint4 storage
@pytest.mark.parametrize("data_type,low,high", [("int4", -8, 7), ("uint4", 0, 15)])
def test_four_bit_values_outside_the_range_are_rejected(context, data_type, low, high):
    storage = webnn.numpy_dtype(data_type)
    builder = webnn.MLGraphBuilder(context)
    good = np.array([low, high], storage)
    assert builder.constant({"dataType": data_type, "shape": [2]}, good).data_type == data_type
    for bad in (low - 1, high + 1):
        if bad < np.iinfo(storage).min:
            continue
        data = np.array([low, bad], storage)
        with pytest.raises(TypeError, match=f"element 1 is {bad}, outside the {data_type} range"):
            builder.constant({"dataType": data_type, "shape": [2]}, data)
        with pytest.raises(TypeError, match="createConstantTensor: element 1"):
            context.create_constant_tensor({"dataType": data_type, "shape": [2]}, data)
        tensor = context.create_tensor(data_type=data_type, shape=[2], writable=True)
        with pytest.raises(TypeError, match="writeTensor: element 1"):
            context.write_tensor(tensor, data)
    with pytest.raises(TypeError, match=f"does not match {data_type}"):
        builder.constant({"dataType": data_type, "shape": [2]}, good.astype(np.int32))


@pytest.mark.parametrize("data_type,low,high", [("int4", -8, 7), ("uint4", 0, 15)])
def test_four_bit_scalar_constant_saturates(builder, data_type, low, high):
    scale = builder.constant(np.ones([], np.float32))
    outs = {f"y{i}": builder.dequantize_linear(builder.constant(data_type, v), scale,
                                                builder.constant(data_type, 0))
            for i, v in enumerate([100, -100, 3.5, 2.5])}
    out = run(builder, outs)
    assert [float(out[f"y{i}"]) for i in range(4)] == [high, low, 4.0, 2.0]


@pytest.mark.parametrize("data_type", ["int4", "uint4"])
def test_four_bit_tensors_round_trip_and_only_quantize_ops_accept_them(context, data_type):
    low, high = FOUR_BIT[data_type]
    values = np.arange(low, high + 1, dtype=webnn.numpy_dtype(data_type))
    tensor = context.create_tensor(data_type=data_type, shape=[values.size], readable=True, writable=True)
    context.write_tensor(tensor, values)
    np.testing.assert_array_equal(context.read_tensor(tensor), values)
    assert context.read_tensor(tensor).dtype == webnn.numpy_dtype(data_type)
    builder = webnn.MLGraphBuilder(context)
    x = builder.input("x", data_type=data_type, shape=[4])
    for op in ("relu", "identity", "neg"):
        with pytest.raises(TypeError, match=r"\[four\]"):
            getattr(builder, op)(x, label="four")
    limits = context.op_support_limits()
    assert data_type in limits["input"]["dataTypes"] and data_type not in limits["relu"]["input"]["dataTypes"]


def test_numpy_dtype_mapping():
    assert webnn.numpy_dtype("int4") == np.int8 and webnn.numpy_dtype("uint4") == np.uint8
    assert webnn.numpy_dtype("float16") == np.float16 and webnn.numpy_dtype(np.int64) == np.int64
    with pytest.raises(TypeError, match="not an MLOperandDataType"):
        webnn.numpy_dtype("int2")
