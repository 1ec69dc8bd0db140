"""Scale folding (compiler/passes/scale_folding.cc): batchNormalization, and mul / add by a
per-channel constant, folded into the preceding conv2d's filter and bias, for every input and filter
layout, groups, float16, and chains; left alone when the conv's output has another reader, is a graph
output, or the map is not per output channel. Results match float64 NumPy and the unfolded plan."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from webnn import _core

_spec = importlib.util.spec_from_file_location("isa_sweep", Path(__file__).parents[1] / "kernels" / "isa_sweep.py")
_isa_sweep = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_isa_sweep)
conv_reference = _isa_sweep.conv_reference  # float64, NCHW / OIHW

FILTER_LAYOUT_PERMS = {"oihw": (0, 1, 2, 3), "hwio": (2, 3, 1, 0), "ohwi": (0, 2, 3, 1), "ihwo": (1, 2, 3, 0)}
RNG = np.random.default_rng(11)


def _folded(graph):
    summary = dict(_core.plan_passes(graph))["scale_folding"]
    return 0 if summary.startswith("disabled") else int(summary.split()[0])


def _bn_params(channels, dtype):
    mean = RNG.standard_normal(channels).astype(dtype)
    variance = RNG.uniform(0.5, 2.0, channels).astype(dtype)
    scale = RNG.uniform(0.5, 1.5, channels).astype(dtype)
    bias = RNG.standard_normal(channels).astype(dtype)
    return mean, variance, scale, bias


def _bn_reference(y, mean, variance, scale, bias, epsilon=1e-5):
    shape = (1, -1, 1, 1)
    m, v, s, b = (p.astype(np.float64).reshape(shape) for p in (mean, variance, scale, bias))
    return (y - m) / np.sqrt(v + epsilon) * s + b


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("input_layout", ["nchw", "nhwc"])
@pytest.mark.parametrize("filter_layout", ["oihw", "hwio", "ohwi", "ihwo"])
@pytest.mark.parametrize("conv_bias", [False, True])
def test_batch_norm_folds_into_conv(build_twice, dtype, input_layout, filter_layout, conv_bias):
    n, c, h, w, o, groups = 2, 4, 6, 5, 6, 2
    x = RNG.standard_normal((n, c, h, w)).astype(dtype)
    f = RNG.standard_normal((o, c // groups, 3, 3)).astype(dtype)
    cb = RNG.standard_normal(o).astype(dtype)
    mean, variance, scale, bias = _bn_params(o, dtype)
    xin = x if input_layout == "nchw" else x.transpose(0, 2, 3, 1).copy()

    def make(b):
        options = {"bias": b.constant(cb)} if conv_bias else {}
        y = b.conv2d(b.input("x", data_type=dtype, shape=list(xin.shape)),
                     b.constant(f.transpose(FILTER_LAYOUT_PERMS[filter_layout]).copy()), padding=[1, 1, 1, 1],
                     groups=groups, input_layout=input_layout, filter_layout=filter_layout, **options)
        z = b.batch_normalization(y, b.constant(mean), b.constant(variance), scale=b.constant(scale),
                                  bias=b.constant(bias), axis=1 if input_layout == "nchw" else 3)
        return b.build({"z": b.relu(z)})

    folded, plain = build_twice(make, "scale_folding")
    assert _folded(folded) == 1 and _folded(plain) == 0
    steps = _core.plan_steps(folded)
    # (float16: held in float32 between the widening and narrowing casts, rounded by the conv's step)
    assert steps == (["conv2d+relu"] if dtype == "float32" else ["cast", "conv2d+relu+roundToFloat16", "cast"])
    conv = conv_reference(x.astype(np.float64), f.astype(np.float64), cb.astype(np.float64) if conv_bias else None,
                          [1, 1], [1, 1], [1, 1, 1, 1], groups)
    want = np.maximum(_bn_reference(conv, mean, variance, scale, bias), 0)
    tol = 1e-5 if dtype == "float32" else 2e-2
    for graph in (folded, plain):
        out = graph.compute({"x": xin})["z"].astype(np.float64)
        if input_layout == "nhwc":
            out = out.transpose(0, 3, 1, 2)
        np.testing.assert_allclose(out, want, rtol=tol, atol=tol * np.abs(want).max())


def test_depthwise_conv_mul_add_chain_folds(build_twice):
    x = RNG.standard_normal((1, 8, 7, 7)).astype(np.float32)
    f = RNG.standard_normal((8, 1, 3, 3)).astype(np.float32)
    s = RNG.uniform(0.5, 2, (1, 8, 1, 1)).astype(np.float32)
    t = RNG.standard_normal((8, 1, 1)).astype(np.float32)

    def make(b):
        y = b.conv2d(b.input("x", data_type="float32", shape=[1, 8, 7, 7]), b.constant(f), groups=8,
                     padding=[1, 1, 1, 1])
        y = b.add(b.constant(t), b.mul(y, b.constant(s)))  # constant first: either order
        y = b.mul(y, b.constant("float32", 0.5))  # a scalar scales every channel
        return b.build({"y": b.clamp(y, min_value=0.0, max_value=6.0)})

    folded, plain = build_twice(make, "scale_folding")
    assert _folded(folded) == 3
    assert _core.plan_steps(folded) == ["conv2d+clamp"]
    conv = conv_reference(x.astype(np.float64), f.astype(np.float64), None, [1, 1], [1, 1], [1, 1, 1, 1], 8)
    want = np.clip((conv * s + t) * 0.5, 0, 6)
    for graph in (folded, plain):
        np.testing.assert_allclose(graph.compute({"x": x})["y"], want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", ["second_reader", "graph_output", "wrong_axis", "full_shape_addend",
                                  "variable_mean", "variable_filter"])
def test_not_folded(build_twice, case):
    x = RNG.standard_normal((1, 4, 5, 5)).astype(np.float32)
    f = RNG.standard_normal((4, 4, 3, 3)).astype(np.float32)
    mean, variance, scale, bias = _bn_params(4, np.float32)
    addend = RNG.standard_normal((1, 4, 3, 3)).astype(np.float32)
    width_scale = RNG.standard_normal(3).astype(np.float32)

    def make(b):
        inputs = {"x": b.input("x", data_type="float32", shape=[1, 4, 5, 5])}
        if case == "variable_filter":
            filt = inputs["f"] = b.input("f", data_type="float32", shape=[4, 4, 3, 3])
        else:
            filt = b.constant(f)
        y = b.conv2d(inputs["x"], filt)
        outputs = {}
        if case == "wrong_axis":  # per-channel along the width: not the conv's channel axis
            outputs["z"] = b.mul(y, b.constant(width_scale))
        elif case == "full_shape_addend":
            outputs["z"] = b.add(y, b.constant(addend))
        else:
            m = b.input("mean", data_type="float32", shape=[4]) if case == "variable_mean" else b.constant(mean)
            outputs["z"] = b.batch_normalization(y, m, b.constant(variance), scale=b.constant(scale))
        if case == "second_reader":
            outputs["other"] = b.relu(y)
        if case == "graph_output":
            outputs["y"] = y
        return b.build(outputs)

    folded, plain = build_twice(make, "scale_folding")
    assert _folded(folded) == 0
    feeds = {"x": x, "f": f, "mean": mean}
    names = [name for name in feeds if name in folded.input_descriptors]
    feeds = {name: feeds[name] for name in names}
    got, want = folded.compute(feeds), plain.compute(feeds)
    for name in want:
        np.testing.assert_array_equal(got[name], want[name])


@pytest.mark.parametrize("size", [7, 14])  # 7x7 outputs run as the transposed product, packed as B
def test_two_scales_fold_into_a_packed_filter(build_twice, size):
    """float32 filters are scaled as the kernel packs them (Conv2dParams::filter_scale): a batch norm
    and a per-channel mul compose, on both GEMM orientations."""
    x = RNG.standard_normal((1, 16, size, size)).astype(np.float32)
    f = (RNG.standard_normal((64, 16, 3, 3)) * 0.2).astype(np.float32)
    mean, variance, scale, bias = _bn_params(64, np.float32)
    s = RNG.uniform(0.5, 2, (1, 64, 1, 1)).astype(np.float32)

    def make(b):
        y = b.conv2d(b.input("x", data_type="float32", shape=[1, 16, size, size]), b.constant(f), padding=[1] * 4)
        y = b.batch_normalization(y, b.constant(mean), b.constant(variance), scale=b.constant(scale),
                                  bias=b.constant(bias))
        return b.build({"y": b.mul(y, b.constant(s))})

    folded, plain = build_twice(make, "scale_folding")
    assert _folded(folded) == 2 and _core.plan_steps(folded) == ["conv2d"]
    conv = conv_reference(x.astype(np.float64), f.astype(np.float64), None, [1, 1], [1, 1], [1, 1, 1, 1], 1)
    want = _bn_reference(conv, mean, variance, scale, bias) * s
    for graph in (folded, plain):
        np.testing.assert_allclose(graph.compute({"x": x})["y"], want, rtol=1e-5, atol=1e-5 * np.abs(want).max())
