"""Op recognition (compiler/passes/op_recognition.cc): GELU spelled out with erf, in the orders
exporters write it, runs as one gelu step; a chain whose values are read elsewhere, or whose constants
differ, is left alone. Results match float64 GELU and the unrecognized plan."""
import math

import numpy as np
import pytest

import webnn
from webnn import _core

RNG = np.random.default_rng(9)


def _gelu(x):
    x = x.astype(np.float64)
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def _chain(b, x, form, half=0.5, root=math.sqrt(2)):
    dtype = x.data_type
    c = lambda v: b.constant(dtype, v)  # noqa: E731
    scaled = b.div(x, c(root)) if form != "mul_by_inverse" else b.mul(c(1 / root), x)
    gate = b.add(b.erf(scaled), c(1.0)) if form != "one_first" else b.add(c(1.0), b.erf(scaled))
    if form == "half_first":
        return b.mul(b.mul(x, c(half)), gate)
    if form == "half_last_left":
        return b.mul(c(half), b.mul(gate, x))
    return b.mul(b.mul(x, gate), c(half))


def _recognized(graph):
    summary = dict(_core.plan_passes(graph))["op_recognition"]
    return 0 if summary.startswith("disabled") else int(summary.split()[0])


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("form", ["half_last", "half_first", "half_last_left", "mul_by_inverse", "one_first"])
def test_gelu_chains_become_gelu(context, monkeypatch, dtype, form):
    x = (RNG.standard_normal((3, 40)) * 3).astype(dtype)

    def make(b):
        a = b.input("x", data_type=dtype, shape=[3, 40])
        return b.build({"y": b.neg(_chain(b, b.abs(a), form))})

    graph = make(webnn.MLGraphBuilder(context))
    monkeypatch.setenv("WEBNN_DISABLE_PASSES", "op_recognition")
    plain = make(webnn.MLGraphBuilder(context))
    assert _recognized(graph) == 1 and _recognized(plain) == 0
    # the three run as one element-wise chain (elementwise_fusion); float16 values are held in float32
    # between the casts that widen the input and narrow the output (half_widening)
    chain = ["elementwise+abs+gelu+neg"]
    assert _core.plan_steps(graph) == (chain if dtype == "float32" else ["cast"] + chain + ["cast"])
    want = -_gelu(np.abs(x))
    tol = 1e-6 if dtype == "float32" else 3e-3
    for g in (graph, plain):
        np.testing.assert_allclose(g.compute({"x": x})["y"].astype(np.float64), want, rtol=tol, atol=tol)


@pytest.mark.parametrize("case", ["gate_read_elsewhere", "erf_is_output", "other_half", "other_root", "int_type"])
def test_not_recognized(context, case):
    b = webnn.MLGraphBuilder(context)
    dtype = "int32" if case == "int_type" else "float32"
    a = b.input("x", data_type="float32", shape=[4])
    outputs = {}
    if case == "int_type":
        x = b.cast(a, "int32")
        outputs["y"] = b.mul(b.mul(x, b.add(b.abs(x), b.constant(dtype, 1))), b.constant(dtype, 0))
    elif case in ("gate_read_elsewhere", "erf_is_output"):
        e = b.erf(b.div(a, b.constant("float32", math.sqrt(2))))
        gate = b.add(e, b.constant("float32", 1.0))
        outputs["y"] = b.mul(b.mul(a, gate), b.constant("float32", 0.5))
        outputs["other"] = b.relu(gate) if case == "gate_read_elsewhere" else e
    else:
        outputs["y"] = _chain(b, a, "half_last", half=0.25 if case == "other_half" else 0.5,
                              root=2.0 if case == "other_root" else math.sqrt(2))
    graph = b.build(outputs)
    assert _recognized(graph) == 0
    x = np.linspace(-3, 3, 4).astype(np.float32)
    if case in ("gate_read_elsewhere", "erf_is_output"):
        np.testing.assert_allclose(graph.compute({"x": x})["y"], _gelu(x), rtol=1e-6, atol=1e-7)


def _hard_swish(x):
    x = x.astype(np.float64)
    return x * np.clip(x + 3, 0, 6) / 6


def _hard_swish_chain(b, x, form, three=3.0, six=6.0):
    dtype = x.data_type
    c = lambda v: b.constant(dtype, v)  # noqa: E731
    gate = b.clamp(b.add(x, c(three)) if form != "three_first" else b.add(c(three), x), min_value=0.0, max_value=six)
    product = b.mul(x, gate) if form != "gate_first" else b.mul(gate, x)
    return b.mul(product, c(1 / 6)) if form == "times_sixth" else b.div(product, c(6.0))


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("form", ["plain", "three_first", "gate_first", "times_sixth"])
def test_hard_swish_chains_become_hard_swish_and_fuse(context, monkeypatch, dtype, form):
    # PaddlePaddle exports hard-swish spelled out; recognized, it runs in the convolution's epilogue.
    x = (RNG.standard_normal((1, 4, 6, 7)) * 3).astype(dtype)
    w = (RNG.standard_normal((5, 4, 3, 3)) / 6).astype(dtype)

    def make(b):
        a = b.input("x", data_type=dtype, shape=list(x.shape))
        return b.build({"y": _hard_swish_chain(b, b.conv2d(a, b.constant(w), padding=[1, 1, 1, 1]), form)})

    graph = make(webnn.MLGraphBuilder(context))
    monkeypatch.setenv("WEBNN_DISABLE_PASSES", "op_recognition")
    plain = make(webnn.MLGraphBuilder(context))
    assert _recognized(graph) == 1 and _recognized(plain) == 0
    assert _core.plan_steps(graph) == (["conv2d+hardSwish"] if dtype == "float32"
                                       else ["cast", "conv2d+hardSwish+roundToFloat16", "cast"])
    conv = graph.compute({"x": x})["y"]
    want = plain.compute({"x": x})["y"].astype(np.float64)
    tol = 1e-5 if dtype == "float32" else 3e-3
    np.testing.assert_allclose(conv.astype(np.float64), want, rtol=tol, atol=tol)


@pytest.mark.parametrize("case", ["other_three", "other_six", "gate_read_elsewhere", "other_input"])
def test_hard_swish_lookalikes_are_left_alone(context, case):
    b = webnn.MLGraphBuilder(context)
    a = b.input("x", data_type="float32", shape=[2, 8])
    outputs = {}
    if case == "other_three":
        outputs["y"] = _hard_swish_chain(b, a, "plain", three=2.0)
    elif case == "other_six":
        outputs["y"] = _hard_swish_chain(b, a, "plain", six=5.0)
    elif case == "gate_read_elsewhere":
        gate = b.clamp(b.add(a, b.constant("float32", 3.0)), min_value=0.0, max_value=6.0)
        outputs["y"] = b.div(b.mul(a, gate), b.constant("float32", 6.0))
        outputs["gate"] = gate
    else:  # the gate of one tensor times another
        z = b.input("z", data_type="float32", shape=[2, 8])
        gate = b.clamp(b.add(a, b.constant("float32", 3.0)), min_value=0.0, max_value=6.0)
        outputs["y"] = b.div(b.mul(z, gate), b.constant("float32", 6.0))
    graph = b.build(outputs)
    assert _recognized(graph) == 0
    x = (RNG.standard_normal((2, 8)) * 4).astype(np.float32)
    got = graph.compute({"x": x, "z": x + 1} if case == "other_input" else {"x": x})["y"]
    gate = np.clip(x.astype(np.float64) + (2 if case == "other_three" else 3), 0, 5 if case == "other_six" else 6)
    want = (x + 1 if case == "other_input" else x) * gate / 6
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    if case != "other_input":
        assert "hardSwish" not in _core.plan_steps(graph)
