"""The nhwc_regions pass (compiler/passes/nhwc_regions.cc): an NCHW graph's convolutions, and the
ops between them that can follow, run channels-last, with one transpose into each region and one
out where NCHW is read again; the results are those of the NCHW plan (to float32 rounding: the
filter taps are summed in another order)."""
import re

import numpy as np
import pytest

from webnn import _core

RNG = np.random.default_rng(5)


def _weights(*shape):
    return (RNG.standard_normal(shape) / np.sqrt(np.prod(shape[1:]))).astype(np.float32)


def _log(graph):
    return dict(_core.plan_passes(graph))["nhwc_regions"]


def _counts(graph):
    match = re.match(r"(\d+) nodes run channels-last, (\d+) transposes into NHWC, (\d+) back to NCHW", _log(graph))
    assert match, _log(graph)
    return tuple(int(v) for v in match.groups())


def _check(build_twice, make, feeds):
    graph, plain = build_twice(make, "nhwc_regions")
    got, want = graph.compute(feeds), plain.compute(feeds)
    for name in want:
        assert got[name].shape == want[name].shape
        np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-5 * max(1.0, np.abs(want[name]).max()))
    return graph


def test_residual_network_is_one_region(build_twice):
    x = RNG.standard_normal((1, 3, 20, 20)).astype(np.float32)
    w0, w1, w2 = _weights(8, 3, 3, 3), _weights(8, 8, 3, 3), _weights(8, 8, 1, 1)
    fc = _weights(8, 5)

    def make(b):
        a = b.input("x", data_type="float32", shape=[1, 3, 20, 20])
        y = b.relu(b.conv2d(a, b.constant(w0), strides=[2, 2], padding=[1, 1, 1, 1]))
        y = b.max_pool2d(y, window_dimensions=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1])
        z = b.relu(b.conv2d(y, b.constant(w1), padding=[1, 1, 1, 1]))
        y = b.relu(b.add(b.conv2d(z, b.constant(w2)), y))
        pooled = b.reshape(b.average_pool2d(y), [1, 8])  # global: [1, 1, 1, 8] in NHWC, a view back
        return b.build({"logits": b.matmul(pooled, b.constant(fc)), "features": y})

    graph = _check(build_twice, make, {"x": x})
    converted, entries, exits = _counts(graph)
    assert converted == 9 and entries == 1  # 3 convs, 3 relus, the add and both pools
    assert exits == 2  # the features (a graph output) and the pooled vector (a view: it moves no data)
    steps = _core.plan_steps(graph)
    assert steps[0] == "conv2d+transpose+relu"  # into the region: the 3-channel convolution reads NCHW itself
    assert steps.count("transpose") == 1  # the features out


def test_a_lone_convolution_is_left_to_its_kernel(build_twice):
    x = RNG.standard_normal((1, 4, 9, 9)).astype(np.float32)
    w = _weights(6, 4, 3, 3)

    def make(b):
        return b.build({"y": b.relu(b.conv2d(b.input("x", data_type="float32", shape=[1, 4, 9, 9]), b.constant(w),
                                             padding=[1, 1, 1, 1]))})

    graph = _check(build_twice, make, {"x": x})
    assert _log(graph).startswith("0 nodes run channels-last (1 NCHW convolutions")
    assert "transpose" not in _core.plan_steps(graph)


def test_transposed_convolution_and_batch_norm_follow(build_twice):
    # A segmentation head: conv, the upsampling transposed convolutions (stride = kernel, and
    # overlapping windows), batch normalization, relu, all channels-last.
    x = RNG.standard_normal((2, 5, 9, 10)).astype(np.float32)
    w0, up0, up1, w1 = _weights(8, 5, 3, 3), _weights(8, 6, 2, 2), _weights(6, 3, 3, 3), _weights(2, 3, 1, 1)
    mean, variance = RNG.standard_normal(6).astype(np.float32), RNG.uniform(0.5, 2, 6).astype(np.float32)
    scale, bias = RNG.standard_normal(6).astype(np.float32), RNG.standard_normal(6).astype(np.float32)

    def make(b):
        y = b.relu(b.conv2d(b.input("x", data_type="float32", shape=[2, 5, 9, 10]), b.constant(w0),
                            padding=[1, 1, 1, 1]))
        y = b.conv_transpose2d(y, b.constant(up0), strides=[2, 2])
        y = b.relu(b.batch_normalization(y, b.constant(mean), b.constant(variance), scale=b.constant(scale),
                                         bias=b.constant(bias)))
        y = b.conv_transpose2d(y, b.constant(up1), strides=[2, 2], padding=[1, 1, 1, 1],
                               bias=b.constant(bias[:3].copy()))
        return b.build({"y": b.sigmoid(b.conv2d(y, b.constant(w1)))})

    graph = _check(build_twice, make, {"x": x})
    converted, entries, exits = _counts(graph)
    assert converted == 8 and entries == 1 and exits == 1, _log(graph)
    assert [s for s in _core.plan_steps(graph) if "convTranspose2d" in s or "batchNormalization" in s] == [
        "convTranspose2d", "batchNormalization", "convTranspose2d"]


def test_ops_that_cannot_follow_read_nchw(build_twice):
    """softmax over channels and a pool declared NHWC (on NCHW-shaped data) end the region; an
    element-wise op with a rank-4 constant, resample2d, split and concat follow."""
    x = RNG.standard_normal((2, 4, 6, 8)).astype(np.float32)
    w1, w2 = _weights(6, 4, 3, 3), _weights(4, 6, 1, 1)
    scale = RNG.standard_normal((1, 6, 1, 1)).astype(np.float32)

    def make(b):
        a = b.input("x", data_type="float32", shape=[2, 4, 6, 8])
        y = b.sub(b.constant(scale), b.conv2d(a, b.constant(w1), padding=[1, 1, 1, 1]))  # not folded
        up = b.resample2d(y, scales=[2.0, 2.0])
        p, q = b.split(up, 2, axis=1)
        joined = b.concat([q, b.sigmoid(p)], 1)
        soft = b.softmax(joined, 1)
        z = b.conv2d(soft, b.constant(w2))
        pooled = b.max_pool2d(z, window_dimensions=[2, 2], layout="nhwc")  # reads [2, 4, 12, 16] as NHWC
        return b.build({"z": z, "pooled": pooled})

    graph = _check(build_twice, make, {"x": x})
    converted, entries, exits = _counts(graph)
    assert converted == 7  # conv, mul, resample2d, split, sigmoid, concat, conv
    assert entries == 3 and exits == 2  # x, the constant (a view) and softmax's result in; concat and z out
    steps = _core.plan_steps(graph)
    assert "softmax" in steps and "resample2d" in steps and "maxPool2d" in steps


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_float16_and_a_batch(build_twice, dtype):
    x = RNG.standard_normal((3, 5, 7, 7)).astype(dtype)
    w1, w2 = _weights(8, 5, 3, 3).astype(dtype), _weights(8, 8, 3, 3).astype(dtype)

    def make(b):
        a = b.input("x", data_type=dtype, shape=[3, 5, 7, 7])
        y = b.clamp(b.conv2d(a, b.constant(w1), padding=[1, 1, 1, 1]), min_value=0.0, max_value=6.0)
        return b.build({"y": b.average_pool2d(b.conv2d(y, b.constant(w2), dilations=[2, 2], padding=[2, 2, 2, 2]),
                                              window_dimensions=[3, 3], strides=[2, 2])})

    graph, plain = build_twice(make, "nhwc_regions")
    assert _counts(graph)[0] == 4
    got, want = graph.compute({"x": x})["y"], plain.compute({"x": x})["y"]
    tolerance = 1e-5 if dtype == "float32" else 1e-2
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tolerance, atol=tolerance)


def test_single_values_stay_in_the_region(build_twice):
    """hardSwish written out with scalar constants (rank 0 and rank 1, as exporters write it) keeps
    the region whole: single values are the same in any layout."""
    x = RNG.standard_normal((1, 6, 8, 8)).astype(np.float32)
    w1, w2 = _weights(6, 6, 3, 3), _weights(4, 6, 1, 1)

    def make(b):
        a = b.input("x", data_type="float32", shape=[1, 6, 8, 8])
        y = b.conv2d(a, b.constant(w1), padding=[1, 1, 1, 1])
        three, sixth = b.constant(np.float32(3.0)), b.constant(np.full([1], 1 / 6, np.float32))
        gate = b.mul(b.clamp(b.add(y, three), min_value=0.0, max_value=6.0), sixth)
        return b.build({"y": b.conv2d(b.mul(y, gate), b.constant(w2))})

    graph = _check(build_twice, make, {"x": x})
    assert _counts(graph) == (6, 1, 1)  # conv, add, clamp, mul, mul, conv


def test_one_channel_convolution_follows_but_does_not_seed(build_twice):
    # YOLO's DFL: a 16 -> 1 convolution over an NCHW tensor stays NCHW (channels-last would fill a
    # panel of GEMM columns with one, after a transpose of its input); one reading a region's output
    # follows it.
    x = RNG.standard_normal((1, 16, 6, 7)).astype(np.float32)
    w0, w1, w_one = _weights(8, 16, 3, 3), _weights(8, 8, 1, 1), _weights(1, 8, 1, 1)
    w_dfl = _weights(1, 16, 1, 1)

    def make(b):
        a = b.input("x", data_type="float32", shape=list(x.shape))
        y = b.conv2d(b.relu(b.conv2d(a, b.constant(w0), padding=[1, 1, 1, 1])), b.constant(w1))
        following = b.conv2d(y, b.constant(w_one))
        dfl = b.conv2d(b.softmax(a, axis=1), b.constant(w_dfl))
        return b.build({"following": following, "dfl": dfl})

    graph = _check(build_twice, make, {"x": x})
    converted, entries, exits = _counts(graph)
    assert (converted, entries) == (4, 1)  # 3 convs and the relu; the image read once channels-last
    steps = _core.plan_steps(graph)
    assert steps.count("conv2d") == 3 and steps.index("softmax") < len(steps) - 1


@pytest.mark.parametrize("per_channel", [False, True])
def test_quantize_dequantize_follow(build_twice, per_channel):
    """A QDQ pair between convolutions (an ONNX QDQ model) stays in the region: its scale and zero
    point are transposed with it, per-tensor or per-channel; the quantized values are the NCHW plan's.
    (Small integers and power-of-two scales keep the first convolution's sums exact in any order, so
    that both plans quantize the same values: a sum one rounding apart could land a step apart.)"""
    x = RNG.integers(-3, 4, (1, 4, 12, 12)).astype(np.float32)
    w0, w1 = RNG.integers(-2, 3, (8, 4, 3, 3)).astype(np.float32), _weights(8, 8, 3, 3)
    shape = [1, 8, 1, 1] if per_channel else [1, 1, 1, 1]
    scale = (2.0 ** RNG.integers(-1, 3, shape)).astype(np.float32)
    zero = RNG.integers(0, 20, shape).astype(np.uint8)

    def make(b):
        a = b.input("x", data_type="float32", shape=[1, 4, 12, 12])
        y = b.relu(b.conv2d(a, b.constant(w0), padding=[1, 1, 1, 1]))
        q = b.quantize_linear(y, b.constant(scale), b.constant(zero))
        d = b.dequantize_linear(q, b.constant(scale), b.constant(zero))
        return b.build({"y": b.conv2d(d, b.constant(w1), padding=[1, 1, 1, 1])})

    graph = _check(build_twice, make, {"x": x})
    converted, _, exits = _counts(graph)
    assert converted == 5 and exits == 1, _log(graph)  # both convs, the relu and the QDQ pair
    steps = _core.plan_steps(graph)
    assert steps.count("transpose") == 1, steps  # only the output goes back (the constants are views)


@pytest.mark.parametrize("axes", [None, [2, 3], [1], [0, 1, 2, 3]])
def test_reductions_keeping_their_dims_follow(build_twice, axes):
    # A reduction keeping its dims (as DynamicQuantizeLinear's min and max are) reduces the same dims
    # at their channels-last places; without keepDimensions its result leaves the region.
    x = RNG.standard_normal((2, 4, 6, 5)).astype(np.float32)
    w0, w1 = _weights(8, 4, 3, 3), _weights(6, 8, 1, 1)

    def make(b):
        a = b.input("x", data_type="float32", shape=list(x.shape))
        y = b.conv2d(a, b.constant(w0), padding=[1, 1, 1, 1])
        options = {} if axes is None else {"axes": axes}
        scale = b.reduce_max(b.abs(y), keep_dimensions=True, **options)
        z = b.conv2d(b.div(y, b.add(scale, b.constant("float32", 1.0))), b.constant(w1))
        return b.build({"z": z, "mean": b.reduce_mean(z, axes=[2, 3])})

    graph = _check(build_twice, make, {"x": x})
    converted, entries, exits = _counts(graph)
    assert converted == 6 and entries == 1, _log(graph)  # convs, abs, reduceMax, add, div; not reduceMean
