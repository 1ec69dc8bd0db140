"""batchNormalization, instanceNormalization and layerNormalization against float64 NumPy references."""
import numpy as np
import pytest

import webnn
from conftest import run

RNG = np.random.default_rng(11)
FLOATS = ["float32", "float16"]


def rand(dtype, shape, low=-3, high=3):
    return RNG.uniform(low, high, size=shape).astype(dtype)


def compute(context, op, arrays, *args, **options):
    """Runs `op` with `arrays` ({name: array}; the first is the input) as graph inputs. Array-valued
    options name an entry of `arrays`."""
    builder = webnn.MLGraphBuilder(context)
    operands = {name: builder.input(name, {"dataType": a.dtype.name, "shape": list(a.shape)})
                for name, a in arrays.items()}
    names = list(arrays)
    positional = [operands[n] for n in names if n not in options.values()]
    options = {k: operands[v] if isinstance(v, str) and v in operands else v for k, v in options.items()}
    out = getattr(builder, op)(*positional, *args, **options)
    return run(builder, {"y": out}, arrays)["y"]


def epsilon_as(dtype, epsilon):
    """epsilon after the spec's cast to the input data type."""
    return float(np.asarray(epsilon, dtype=dtype))


def check_close(actual, expected, dtype):
    assert actual.dtype == np.dtype(dtype) and actual.shape == expected.shape
    tol = 3e-3 if dtype == "float16" else 1e-5
    np.testing.assert_allclose(actual.astype(np.float64), expected, rtol=tol, atol=tol)


def normalize(x, axes, epsilon):
    v = x.astype(np.float64)
    mean = v.mean(axis=axes, keepdims=True)
    variance = ((v - mean) ** 2).mean(axis=axes, keepdims=True)
    return (v - mean) / np.sqrt(variance + epsilon)


# ---------------------------------------------------------------- batchNormalization
def batch_norm_reference(x, mean, variance, scale, bias, axis, epsilon):
    shape = [1] * x.ndim
    shape[axis] = -1
    f = lambda a: a.astype(np.float64).reshape(shape)
    y = (x.astype(np.float64) - f(mean)) / np.sqrt(f(variance) + epsilon)
    if scale is not None:
        y = y * f(scale)
    if bias is not None:
        y = y + f(bias)
    return y


@pytest.mark.parametrize("dtype", FLOATS)
def test_batch_normalization(context, dtype):
    for shape, axis in [([6], 0), ([4, 6], 1), ([2, 3, 4], 1), ([2, 3, 2, 2], 3), ([2, 3, 2, 2], 0),
                        ([6, 1, 1, 2, 2], 1), ([1, 1, 1], 2)]:
        channels = shape[axis]
        x = rand(dtype, shape)
        mean, variance = rand(dtype, [channels]), rand(dtype, [channels], 0.1, 2)
        scale, bias = rand(dtype, [channels]), rand(dtype, [channels])
        for use_scale, use_bias, epsilon in [(False, False, None), (True, False, 1e-3), (False, True, 1e-6),
                                             (True, True, None)]:
            arrays = {"x": x, "mean": mean, "variance": variance}
            options = {}
            if axis != 1:
                options["axis"] = axis
            if use_scale:
                arrays["scale"] = scale
                options["scale"] = "scale"
            if use_bias:
                arrays["bias"] = bias
                options["bias"] = "bias"
            if epsilon is not None:
                options["epsilon"] = epsilon
            actual = compute(context, "batchNormalization", arrays, **options)
            expected = batch_norm_reference(x, mean, variance, scale if use_scale else None,
                                            bias if use_bias else None, axis,
                                            epsilon_as(dtype, 1e-5 if epsilon is None else epsilon))
            check_close(actual, expected, dtype)


def test_batch_normalization_validation(context):
    def fails(shape=(2, 3, 4), mean=(3,), variance=(3,), scale=None, bias=None, dtype="float32", mean_dtype=None,
              **options):
        b = webnn.MLGraphBuilder(context)
        x = b.input("x", {"dataType": dtype, "shape": list(shape)})
        m = b.input("m", {"dataType": mean_dtype or dtype, "shape": list(mean)})
        v = b.input("v", {"dataType": dtype, "shape": list(variance)})
        if scale is not None:
            options["scale"] = b.input("s", {"dataType": dtype, "shape": list(scale)})
        if bias is not None:
            options["bias"] = b.input("b", {"dataType": dtype, "shape": list(bias)})
        with pytest.raises(TypeError, match=r"\[bn\]"):
            b.batch_normalization(x, m, v, label="bn", **options)

    fails(axis=3)
    fails(mean=(4,))
    fails(variance=(3, 1))
    fails(scale=(2,))
    fails(bias=(4,))
    fails(mean_dtype="float16")
    fails(dtype="int32")
    fails(shape=(), mean=(1,), variance=(1,))
    other = webnn.MLGraphBuilder(context)
    b = webnn.MLGraphBuilder(context)
    x = b.input("x", {"dataType": "float32", "shape": [2, 3]})
    m = b.input("m", {"dataType": "float32", "shape": [3]})
    with pytest.raises(TypeError):
        b.batch_normalization(x, m, m, scale=other.input("s", {"dataType": "float32", "shape": [3]}))


# ---------------------------------------------------------------- instanceNormalization
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
def test_instance_normalization(context, dtype, layout):
    for shape in ([2, 3, 4, 5], [1, 1, 1, 1], [2, 4, 1, 3]):
        x = rand(dtype, shape)
        channel_axis = 3 if layout == "nhwc" else 1
        spatial = (1, 2) if layout == "nhwc" else (2, 3)
        channels = shape[channel_axis]
        scale, bias = rand(dtype, [channels]), rand(dtype, [channels])
        for use_scale, use_bias, epsilon in [(False, False, None), (True, True, 1e-2), (True, False, None),
                                             (False, True, None)]:
            arrays = {"x": x}
            options = {"layout": layout} if layout == "nhwc" else {}
            bshape = [1, 1, 1, 1]
            bshape[channel_axis] = channels
            expected = normalize(x, spatial, epsilon_as(dtype, 1e-5 if epsilon is None else epsilon))
            if use_scale:
                arrays["scale"] = scale
                options["scale"] = "scale"
                expected = expected * scale.astype(np.float64).reshape(bshape)
            if use_bias:
                arrays["bias"] = bias
                options["bias"] = "bias"
                expected = expected + bias.astype(np.float64).reshape(bshape)
            if epsilon is not None:
                options["epsilon"] = epsilon
            check_close(compute(context, "instanceNormalization", arrays, **options), expected, dtype)


def test_instance_normalization_validation(context):
    def fails(shape=(2, 3, 4, 5), scale=None, bias=None, dtype="float32", **options):
        b = webnn.MLGraphBuilder(context)
        x = b.input("x", {"dataType": dtype, "shape": list(shape)})
        if scale is not None:
            options["scale"] = b.input("s", {"dataType": scale[1], "shape": list(scale[0])})
        if bias is not None:
            options["bias"] = b.input("b", {"dataType": bias[1], "shape": list(bias[0])})
        with pytest.raises(TypeError, match=r"\[in\]"):
            b.instance_normalization(x, label="in", **options)

    fails(scale=([5], "float32"))
    fails(scale=([3], "float32"), layout="nhwc")  # nhwc: C is the last dim (5)
    fails(bias=([3, 1], "float32"))
    fails(scale=([3], "float16"))
    fails(shape=(2, 3, 4))
    fails(dtype="int32")
    fails(layout="hwcn")


# ---------------------------------------------------------------- layerNormalization
def layer_norm_reference(x, axes, scale, bias, epsilon):
    y = normalize(x, tuple(axes), epsilon)
    # scale/bias dims follow the order of `axes`: move them into input order, then broadcast.
    shape = [1] * x.ndim
    for axis in axes:
        shape[axis] = x.shape[axis]
    order = np.argsort(axes)
    for p in (scale, bias):
        if p is not None:
            aligned = np.transpose(p.astype(np.float64), order).reshape(shape) if axes else p.astype(np.float64)
            y = y * aligned if p is scale else y + aligned
    return y


@pytest.mark.parametrize("dtype", FLOATS)
def test_layer_normalization(context, dtype):
    cases = [([], None), ([5], None), ([4, 6], None), ([4, 6], []), ([2, 1, 4, 3], None), ([2, 1, 4, 3], [2]),
             ([2, 1, 4, 3], [0, 2]), ([2, 1, 4, 3], [3, 1, 2]), ([2, 1, 4, 3], [0, 3, 1]), ([3, 4, 5], [0]),
             ([2, 1, 2, 2, 3], None)]
    for shape, axes in cases:
        x = rand(dtype, shape)
        effective = list(range(1, len(shape))) if axes is None else axes
        pshape = [shape[a] for a in effective]
        scale, bias = rand(dtype, pshape), rand(dtype, pshape)
        for use_scale, use_bias, epsilon in [(False, False, None), (True, True, 1e-3), (True, False, None),
                                             (False, True, None)]:
            arrays = {"x": x}
            options = {} if axes is None else {"axes": axes}
            if use_scale:
                arrays["scale"] = scale
                options["scale"] = "scale"
            if use_bias:
                arrays["bias"] = bias
                options["bias"] = "bias"
            if epsilon is not None:
                options["epsilon"] = epsilon
            expected = layer_norm_reference(x, effective, scale if use_scale else None, bias if use_bias else None,
                                            epsilon_as(dtype, 1e-5 if epsilon is None else epsilon))
            check_close(compute(context, "layerNormalization", arrays, **options), expected, dtype)


def test_layer_normalization_large_rows(context):
    x = rand("float32", [3, 50000], 100, 101)  # a large mean: the two-pass variance stays accurate
    check_close(compute(context, "layerNormalization", {"x": x}), normalize(x, (1,), 1e-5), "float32")


def test_layer_normalization_validation(context):
    def fails(shape=(2, 3, 4), scale=None, bias=None, dtype="float32", **options):
        b = webnn.MLGraphBuilder(context)
        x = b.input("x", {"dataType": dtype, "shape": list(shape)})
        if scale is not None:
            options["scale"] = b.input("s", {"dataType": scale[1], "shape": list(scale[0])})
        if bias is not None:
            options["bias"] = b.input("b", {"dataType": bias[1], "shape": list(bias[0])})
        with pytest.raises(TypeError, match=r"\[ln\]"):
            b.layer_normalization(x, label="ln", **options)

    fails(axes=[3])
    fails(axes=[1, 1])
    fails(scale=([4, 3], "float32"))             # default axes [1, 2]: shape must be [3, 4]
    fails(scale=([3, 4], "float32"), axes=[2, 1])  # order follows axes: [4, 3]
    fails(bias=([3], "float32"))                 # rank must equal len(axes)
    fails(bias=([3, 4], "float16"))
    fails(dtype="int32")
    b = webnn.MLGraphBuilder(context)
    with pytest.raises(TypeError):
        b.layer_normalization(b.input("x", {"dataType": "float32", "shape": [2]}), axes=[-1])


def test_normalization_support_limits(context):
    limits = context.op_support_limits()
    for op in ("batchNormalization", "instanceNormalization", "layerNormalization"):
        for operand in ("input", "scale", "bias", "output"):
            assert sorted(limits[op][operand]["dataTypes"]) == ["float16", "float32"], (op, operand)
    assert limits["batchNormalization"]["mean"]["rankRange"] == {"min": 1, "max": 1}
    assert limits["instanceNormalization"]["input"]["rankRange"] == {"min": 4, "max": 4}
    assert limits["layerNormalization"]["scale"]["rankRange"]["min"] == 0
