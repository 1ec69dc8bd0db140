"""The transpose_absorption pass (compiler/passes/transpose_absorption.cc): the transpose into a
channels-last region that feeds a network's first convolution (few input channels) runs inside that
convolution's step, which reads the NCHW input in place. Results match the plan without the pass to
float32 rounding (the filter taps are summed in another order) and a float64 reference."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from webnn import _core

_spec = importlib.util.spec_from_file_location("isa_sweep", Path(__file__).parents[1] / "kernels" / "isa_sweep.py")
_isa_sweep = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_isa_sweep)
conv_reference = _isa_sweep.conv_reference

RNG = np.random.default_rng(11)


def _weights(*shape, dtype=np.float32):
    return (RNG.standard_normal(shape) / np.sqrt(np.prod(shape[1:]))).astype(dtype)


def _log(graph):
    return dict(_core.plan_passes(graph))["transpose_absorption"]


def _compare(build_twice, make, feeds, reference=None):
    graph, plain = build_twice(make, "transpose_absorption")
    got, want = graph.compute(feeds), plain.compute(feeds)
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-5 * max(1.0, np.abs(want[name]).max()))
    if reference is not None:
        np.testing.assert_allclose(got["y"], reference, rtol=1e-4, atol=1e-4 * max(1.0, np.abs(reference).max()))
    return graph, plain


def _hard_swish(v):
    return v * np.clip(v + 3, 0, 6) / 6


def test_stem_convolution_reads_the_nchw_image(build_twice):
    x = RNG.standard_normal((2, 3, 21, 20)).astype(np.float32)
    w0, b0, w1 = _weights(16, 3, 3, 3), _weights(16), _weights(8, 16, 1, 1)

    def make(b):
        a = b.input("x", data_type="float32", shape=list(x.shape))
        y = b.hard_swish(b.conv2d(a, b.constant(w0), bias=b.constant(b0), strides=[2, 2], padding=[1, 1, 1, 1]))
        return b.build({"y": b.conv2d(y, b.constant(w1))})

    stem = _hard_swish(conv_reference(x.astype(np.float64), w0, b0, (2, 2), (1, 1), (1, 1, 1, 1), 1))
    reference = conv_reference(stem, w1, None, (1, 1), (1, 1), (0, 0, 0, 0), 1)
    graph, plain = _compare(build_twice, make, {"x": x}, reference)
    assert _log(graph) == "1 transposes into channels-last read in place by their consumer"
    assert _core.plan_steps(graph) == ["conv2d+transpose+hardSwish", "conv2d", "transpose"]
    assert _core.plan_steps(plain)[0] == "transpose"  # without the pass: the image copied channels-last first
    assert _log(plain) == "disabled (WEBNN_DISABLE_PASSES)"


@pytest.mark.parametrize("filter_layout", ["oihw", "hwio", "ohwi", "ihwo"])
def test_stem_with_residual_silu_and_any_filter_layout(build_twice, filter_layout):
    x = RNG.standard_normal((1, 4, 13, 11)).astype(np.float32)
    r = RNG.standard_normal((1, 20, 13, 11)).astype(np.float32)
    w0, w1 = _weights(20, 4, 3, 5), _weights(20, 20, 1, 1)
    perm = {"oihw": (0, 1, 2, 3), "hwio": (2, 3, 1, 0), "ohwi": (0, 2, 3, 1), "ihwo": (1, 2, 3, 0)}[filter_layout]

    def make(b):
        a = b.input("x", data_type="float32", shape=list(x.shape))
        res = b.input("r", data_type="float32", shape=list(r.shape))
        y = b.add(b.conv2d(a, b.constant(np.ascontiguousarray(w0.transpose(perm))), padding=[1, 1, 2, 2],
                           filter_layout=filter_layout), res)
        y = b.mul(y, b.sigmoid(y))
        return b.build({"y": b.conv2d(y, b.constant(w1))})

    stem = conv_reference(x.astype(np.float64), w0, None, (1, 1), (1, 1), (1, 1, 2, 2), 1) + r
    stem = stem / (1 + np.exp(-stem))
    reference = conv_reference(stem, w1, None, (1, 1), (1, 1), (0, 0, 0, 0), 1)
    graph, _ = _compare(build_twice, make, {"x": x, "r": r}, reference)
    assert _core.plan_steps(graph)[-3] == "conv2d+transpose+add+sigmoid+mul"


def test_left_alone_when_it_cannot_pay_or_cannot_read_in_place(build_twice):
    # 5 input channels (the transposed copy pays), a transposed image read by two convolutions, and
    # a grouped convolution: every transpose into channels-last stays a step of its own.
    x5 = RNG.standard_normal((1, 5, 9, 9)).astype(np.float32)
    x3 = RNG.standard_normal((1, 4, 9, 9)).astype(np.float32)
    w5, w3a, w3b, wg = _weights(8, 5, 3, 3), _weights(8, 4, 3, 3), _weights(8, 4, 1, 1), _weights(8, 2, 3, 3)

    def make(b):
        a5 = b.input("x5", data_type="float32", shape=list(x5.shape))
        a3 = b.input("x3", data_type="float32", shape=list(x3.shape))
        y5 = b.conv2d(a5, b.constant(w5), padding=[1, 1, 1, 1])
        y3 = b.add(b.conv2d(a3, b.constant(w3a), padding=[1, 1, 1, 1]), b.conv2d(a3, b.constant(w3b)))
        yg = b.conv2d(a3, b.constant(wg), padding=[1, 1, 1, 1], groups=2)
        return b.build({"y": b.add(b.add(y5, y3), yg)})

    graph, _ = _compare(build_twice, make, {"x5": x5, "x3": x3})
    assert _log(graph) == "0 transposes into channels-last read in place by their consumer"
    assert _core.plan_steps(graph).count("transpose") == 3  # x5 and x3 in, the sum out


def test_float16_stem_reads_its_widened_input_in_place(build_twice):
    # float16 values between nodes are held in float32 (half_widening): the stem reads the widening
    # cast's NCHW result in place, as a float32 stem reads its input.
    x = RNG.standard_normal((1, 3, 10, 10)).astype(np.float16)
    w0, w1 = _weights(8, 3, 3, 3, dtype=np.float16), _weights(8, 8, 1, 1, dtype=np.float16)

    def make(b):
        a = b.input("x", data_type="float16", shape=list(x.shape))
        y = b.relu(b.conv2d(a, b.constant(w0), strides=[2, 2]))
        return b.build({"y": b.conv2d(y, b.constant(w1))})

    graph, _ = _compare(build_twice, make, {"x": x})
    assert _log(graph).startswith("1 transposes")


# The step reads the image through the strided microkernel at strides 1 and 2 (a tile's pixels one
# or two floats apart in each padded row; one pointer per tap), else through the indirect one:
# ragged pixel tiles, 16 / 24 / 40 / 64 output channels (one vector, one and a half, a panel and a
# quarter, two panels), dilation.
@pytest.mark.parametrize("stride", [1, 2, 3])
@pytest.mark.parametrize("channels, dilation", [(16, 1), (24, 1), (40, 1), (64, 2)])
def test_stem_tiles_strides_and_dilations(build_twice, stride, channels, dilation):
    x = RNG.standard_normal((1, 3, 17, 45)).astype(np.float32)
    w0, b0, w1 = _weights(channels, 3, 3, 3), _weights(channels), _weights(8, channels, 1, 1)

    def make(b):
        a = b.input("x", data_type="float32", shape=list(x.shape))
        y = b.relu(b.conv2d(a, b.constant(w0), bias=b.constant(b0), strides=[stride, stride],
                            dilations=[dilation, dilation], padding=[1, 2, 2, 1]))
        return b.build({"y": b.conv2d(y, b.constant(w1))})

    stem = np.maximum(conv_reference(x.astype(np.float64), w0, b0, (stride, stride), (dilation, dilation),
                                     (1, 2, 2, 1), 1), 0)
    reference = conv_reference(stem, w1, None, (1, 1), (1, 1), (0, 0, 0, 0), 1)
    graph, _ = _compare(build_twice, make, {"x": x}, reference)
    assert _log(graph) == "1 transposes into channels-last read in place by their consumer"
