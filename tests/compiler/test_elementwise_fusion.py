"""Element-wise fusion (compiler/passes/elementwise_fusion.cc): a connected group of float32
element-wise ops of one shape whose inner values nothing else reads runs as one elementwise step
(kernels/elementwise: block by block, the inner values in L1). Results are bit-identical to the
unfused plan and match float64 references; groups stop at values read elsewhere, graph outputs,
other shapes and other types."""
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import webnn
from webnn import _core

RNG = np.random.default_rng(33)
UNARY = ["abs", "ceil", "cos", "erf", "exp", "floor", "log", "neg", "reciprocal", "round_even", "sign", "sin", "sqrt",
         "tan", "elu", "gelu", "hard_sigmoid", "hard_swish", "leaky_relu", "linear", "relu", "sigmoid", "softplus",
         "softsign", "tanh"]


def _summary(graph, name="elementwise_fusion"):
    return dict(_core.plan_passes(graph))[name]


def _twice(context, monkeypatch, make):
    """(graph, the same graph built without elementwise_fusion)."""
    graph = make(webnn.MLGraphBuilder(context))
    monkeypatch.setenv("WEBNN_DISABLE_PASSES", "elementwise_fusion")
    plain = make(webnn.MLGraphBuilder(context))
    monkeypatch.delenv("WEBNN_DISABLE_PASSES")
    return graph, plain


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape", [[2, 5, 7], [64, 1000], [3, 1, 1, 1030]])
def test_normalize_then_activate_with_broadcast_operands(monkeypatch, same_results, threads, shape):
    # sigmoid((x - mean) / std) * gamma + beta with per-channel (last dim) rows: one step, over rows
    # longer than a 512-element block and a tensor the threads share.
    context = webnn.ml.create_context(num_threads=threads)
    c = shape[-1]
    x = RNG.standard_normal(shape).astype(np.float32)
    mean, gamma, beta = (RNG.standard_normal(c).astype(np.float32) for _ in range(3))
    std = RNG.uniform(0.5, 2, c).astype(np.float32)

    def make(b):
        v = b.input("x", data_type="float32", shape=shape)
        y = b.sigmoid(b.div(b.sub(v, b.constant(mean)), b.constant(std)))
        return b.build({"y": b.add(b.mul(y, b.constant(gamma)), b.constant(beta))})

    graph, plain = _twice(context, monkeypatch, make)
    assert _core.plan_steps(graph) == ["elementwise+sub+div+sigmoid+mul+add"]
    assert _summary(graph) == "1 element-wise groups (5 ops) run as one pass each"
    assert _core.plan_steps(plain) == ["sub", "div", "sigmoid", "mul", "add"]
    got = same_results(graph, plain, {"x": x})["y"]
    want = _sigmoid((x.astype(np.float64) - mean) / std) * gamma + beta
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_a_value_read_twice_inside_the_group(context, monkeypatch, same_results):
    # SiLU of a sum outside any kernel epilogue: x = a + b is read by sigmoid and by mul, both inside.
    a, c = (RNG.standard_normal((4, 33)).astype(np.float32) for _ in range(2))

    def make(b):
        s = b.add(b.input("a", data_type="float32", shape=[4, 33]), b.input("c", data_type="float32", shape=[4, 33]))
        return b.build({"y": b.mul(s, b.sigmoid(s))})

    graph, plain = _twice(context, monkeypatch, make)
    assert _core.plan_steps(graph) == ["elementwise+add+sigmoid+mul"]
    s = a.astype(np.float64) + c
    np.testing.assert_allclose(same_results(graph, plain, {"a": a, "c": c})["y"], s * _sigmoid(s), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("op", UNARY + ["clamp"])
def test_every_unary_op_and_clamp_in_a_chain(context, monkeypatch, same_results, op):
    x = (RNG.standard_normal((5, 37)) * 2).astype(np.float32)

    def make(b):
        t = b.abs(b.input("x", data_type="float32", shape=[5, 37]))
        t = b.clamp(t, min_value=0.25, max_value=1.5) if op == "clamp" else getattr(b, op)(t)
        return b.build({"y": b.neg(b.add(t, b.constant("float32", 0.5)))})

    graph, plain = _twice(context, monkeypatch, make)
    steps = _core.plan_steps(graph)
    assert len(steps) == 1 and steps[0].startswith("elementwise+abs+") and steps[0].endswith("+add+neg")
    same_results(graph, plain, {"x": x})


def test_long_chains_and_many_inputs_split_into_groups(context, monkeypatch, same_results):
    # 20 adds of 20 different inputs: groups of at most 16 ops reading at most 8 outside operands.
    xs = [RNG.standard_normal((3, 10)).astype(np.float32) for _ in range(20)]

    def make(b):
        ins = [b.input(f"x{i}", data_type="float32", shape=[3, 10]) for i in range(20)]
        y = b.relu(ins[0])
        for v in ins[1:]:
            y = b.add(y, v)
        return b.build({"y": y})

    graph, plain = _twice(context, monkeypatch, make)
    steps = _core.plan_steps(graph)
    assert len(steps) > 1 and all(s.startswith("elementwise+") for s in steps)
    assert all(s.count("+") <= 16 for s in steps)
    feeds = {f"x{i}": x for i, x in enumerate(xs)}
    want = np.maximum(xs[0].astype(np.float64), 0) + sum(x.astype(np.float64) for x in xs[1:])
    np.testing.assert_allclose(same_results(graph, plain, feeds)["y"], want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", ["inner_is_output", "inner_read_elsewhere", "smaller_inner", "float16", "int32"])
def test_where_groups_stop(context, monkeypatch, same_results, case):
    dtype = {"float16": "float16", "int32": "int32"}.get(case, "float32")
    x = RNG.integers(-4, 5, (4, 6)).astype(dtype)
    w = RNG.integers(-4, 5, (6,)).astype(dtype)
    outputs = {}

    def make(b):
        a = b.input("x", data_type=dtype, shape=[4, 6])
        v = b.input("w", data_type=dtype, shape=[6])
        if case == "smaller_inner":  # relu(w) has w's shape: computed once, then read broadcast
            t = b.relu(v)
            y = b.mul(b.abs(a), t)
            return b.build({"y": b.neg(y)})
        t = b.abs(a)
        y = b.neg(b.add(t, v))
        outs = {"y": y}
        if case == "inner_is_output":
            outs["t"] = t
        if case == "inner_read_elsewhere":
            outs["z"] = b.reduce_sum(t, axes=[1])
        return b.build(outs)

    graph, plain = _twice(context, monkeypatch, make)
    steps = _core.plan_steps(graph)
    if case == "smaller_inner":
        assert steps == ["relu", "elementwise+abs+mul+neg"]
    elif case in ("inner_is_output", "inner_read_elsewhere"):
        assert "abs" in steps and "elementwise+add+neg" in steps
    elif case == "float16":  # held in float32 between widening casts (half_widening): one group
        assert steps == ["cast", "cast", "elementwise+abs+add+neg", "cast"]
    else:
        assert not any(s.startswith("elementwise") for s in steps)
    same_results(graph, plain, {"x": x, "w": w})


def test_a_chain_writes_over_its_input_in_place(context, monkeypatch):
    # The chain's output takes the storage of the transpose's result, which nothing reads later.
    x = RNG.standard_normal((6, 40)).astype(np.float32)

    def make(b):
        t = b.transpose(b.input("x", data_type="float32", shape=[6, 40]))
        return b.build({"y": b.transpose(b.add(b.relu(t), b.constant("float32", 1.0)))})

    graph = make(webnn.MLGraphBuilder(context))
    monkeypatch.setenv("WEBNN_DISABLE_PASSES", "in_place")
    apart = make(webnn.MLGraphBuilder(context))
    assert _core.plan_steps(graph) == ["transpose", "elementwise+relu+add", "transpose"]
    assert _summary(graph, "in_place").startswith("1 ")
    want = np.maximum(x, 0) + 1
    np.testing.assert_array_equal(graph.compute({"x": x})["y"], want)
    np.testing.assert_array_equal(apart.compute({"x": x})["y"], want)


def _quantization(b, scale, zero, dtype, rank):
    one = [1] * rank
    return b.constant(np.full(one, scale, np.float32)), b.constant(np.full(one, zero, dtype))


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype,out_dtype", [("uint8", "uint8"), ("int8", "int8"), ("uint8", "int8")])
@pytest.mark.parametrize("c_shape", [[2, 3, 20, 30], [1, 3, 1, 30]])
def test_quantized_residual_add_is_one_step(monkeypatch, same_results, threads, dtype, out_dtype, c_shape):
    """dequantizeLinear(a) + dequantizeLinear(c) -> relu -> quantizeLinear (a QDQ model's residual
    add): one step reading and writing 8-bit values, the same bits as the ops one by one, over a
    tensor longer than a 512-element block. A c that broadcasts is dequantized on its own (inner
    values of a chain have its output's shape) and read by the chain in float."""
    context = webnn.ml.create_context(num_threads=threads)
    lo, hi = (0, 255) if dtype == "uint8" else (-128, 127)
    a = RNG.integers(lo, hi + 1, (2, 3, 20, 30)).astype(dtype)
    c = RNG.integers(lo, hi + 1, c_shape).astype(dtype)

    def make(b):
        x = b.dequantize_linear(b.input("a", data_type=dtype, shape=[2, 3, 20, 30]), *_quantization(b, 0.031, 7, dtype, 4))
        y = b.dequantize_linear(b.input("c", data_type=dtype, shape=c_shape),
                                *_quantization(b, 0.017, -3 if dtype == "int8" else 200, dtype, 4))
        s = b.relu(b.add(x, y))
        return b.build({"q": b.quantize_linear(s, *_quantization(b, 0.05, 5, out_dtype, 4))})

    graph, plain = _twice(context, monkeypatch, make)
    fused = "elementwise+dequantizeLinear+dequantizeLinear+add+relu+quantizeLinear"
    if c_shape != [2, 3, 20, 30]:
        fused = ["dequantizeLinear", "elementwise+dequantizeLinear+add+relu+quantizeLinear"]
    assert _core.plan_steps(graph) == (fused if isinstance(fused, list) else [fused])
    assert _core.plan_steps(plain) == ["dequantizeLinear", "dequantizeLinear", "add", "relu", "quantizeLinear"]
    got = same_results(graph, plain, {"a": a, "c": c})["q"]
    assert got.dtype == np.dtype(out_dtype)
    za, zc = 7, (-3 if dtype == "int8" else 200)
    s = np.maximum((a.astype(np.float64) - za) * np.float32(0.031) + (c.astype(np.float64) - zc) * np.float32(0.017), 0)
    want = np.clip(np.round(s / np.float32(0.05)) + 5, *((0, 255) if out_dtype == "uint8" else (-128, 127)))
    assert np.abs(got.astype(np.int64) - want).max() <= 1


def test_quantize_with_per_channel_scales_stays_apart(context, monkeypatch, same_results):
    """Only per-tensor (single-value constant) parameters become chain steps."""
    a = RNG.integers(0, 256, (1, 4, 3, 3)).astype(np.uint8)

    def make(b):
        scale = b.constant(np.array([0.1, 0.2, 0.3, 0.4], np.float32).reshape(1, 4, 1, 1))
        x = b.dequantize_linear(b.input("a", data_type="uint8", shape=[1, 4, 3, 3]), scale,
                                b.constant(np.zeros((1, 4, 1, 1), np.uint8)))
        s = b.sigmoid(b.add(x, x))
        return b.build({"q": b.quantize_linear(s, *_quantization(b, 0.01, 0, "uint8", 4))})

    graph, plain = _twice(context, monkeypatch, make)
    assert _core.plan_steps(graph) == ["dequantizeLinear", "elementwise+add+sigmoid+quantizeLinear"]
    same_results(graph, plain, {"a": a})


@pytest.mark.parametrize("sigmoid_output", [False, True])
def test_qdq_silu_is_one_step(context, monkeypatch, same_results, sigmoid_output):
    """QDQ SiLU: x = dequantizeLinear(xq) is read by sigmoid -> quantizeLinear and by the mul of x and
    the dequantized sigmoid. The sigmoid's quantize joins the group (only the group's dequantize reads
    it), so the whole SiLU is one step from xq alone (a 256-entry table). When the quantized sigmoid
    is also a graph output it is written, and its group stays apart: each group dequantizes xq
    itself, and no float32 x is written."""
    xq = RNG.integers(0, 256, (1, 8, 16, 16)).astype(np.uint8)

    def make(b):
        x = b.dequantize_linear(b.input("x", data_type="uint8", shape=[1, 8, 16, 16]), *_quantization(b, 0.05, 128, "uint8", 4))
        sq = b.quantize_linear(b.sigmoid(x), *_quantization(b, 1 / 255, 0, "uint8", 4))
        s = b.dequantize_linear(sq, *_quantization(b, 1 / 255, 0, "uint8", 4))
        outputs = {"y": b.quantize_linear(b.mul(x, s), *_quantization(b, 0.03, 10, "uint8", 4))}
        if sigmoid_output:
            outputs["s"] = sq
        return b.build(outputs)

    graph, plain = _twice(context, monkeypatch, make)
    if sigmoid_output:
        assert _core.plan_steps(graph) == ["elementwise+dequantizeLinear+sigmoid+quantizeLinear",
                                           "elementwise+dequantizeLinear+dequantizeLinear+mul+quantizeLinear"]
    else:
        assert _core.plan_steps(graph) == [
            "elementwise+dequantizeLinear+sigmoid+quantizeLinear+dequantizeLinear+mul+quantizeLinear"]
    same_results(graph, plain, {"x": xq})


@pytest.mark.parametrize("threads", [1, 2])
def test_requantized_values_inside_a_two_input_chain(monkeypatch, same_results, threads):
    """A quantize inside a group of two 8-bit inputs (no table): its bytes stay in the block's buffer
    for the dequantize that reads them; the same bits as the ops one by one, over several blocks."""
    context = webnn.ml.create_context(num_threads=threads)
    aq = RNG.integers(0, 256, (3, 50, 41)).astype(np.uint8)
    cq = RNG.integers(-128, 128, (3, 50, 41)).astype(np.int8)

    def make(b):
        a = b.dequantize_linear(b.input("a", data_type="uint8", shape=[3, 50, 41]), *_quantization(b, 0.05, 128, "uint8", 3))
        c = b.dequantize_linear(b.input("c", data_type="int8", shape=[3, 50, 41]), *_quantization(b, 0.02, -4, "int8", 3))
        t = b.quantize_linear(b.tanh(b.add(a, c)), *_quantization(b, 1 / 127, 0, "int8", 3))
        u = b.dequantize_linear(t, *_quantization(b, 1 / 127, 0, "int8", 3))
        return b.build({"y": b.quantize_linear(b.mul(u, c), *_quantization(b, 0.013, 7, "uint8", 3))})

    graph, plain = _twice(context, monkeypatch, make)
    assert len(_core.plan_steps(graph)) == 1, _core.plan_steps(graph)
    same_results(graph, plain, {"a": aq, "c": cq})


def _fake_quantized(x, scale, zero, dtype):
    """Reference of dequantizeLinear(quantizeLinear(x)): the float32 quotient (the spec divides in the
    input's type), then in float64 round half to even, saturate, NaN to 0."""
    lo, hi = (-128, 127) if dtype == "int8" else (0, 255)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        q = np.clip(np.rint((x / np.float32(scale)).astype(np.float64)) + zero, lo, hi)
    q = np.where(np.isnan(q), 0, q)
    return ((q - zero) * np.float32(scale)).astype(np.float32)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype,zero", [("uint8", 128), ("uint8", 0), ("int8", -3)])
@pytest.mark.parametrize("scale", [0.05, 1e-35])  # 1e-35: the quotient by division (no exact inverse)
def test_quantize_read_by_one_dequantize_is_one_loop(monkeypatch, same_results, threads, dtype, zero, scale):
    """A QDQ pair inside float32 math (a quantized transformer's scores: x -> quantize -> dequantize ->
    div -> ...) runs as one loop without the bytes: the same bits as the ops one by one, and as the
    float64 reference, over NaN, infinities, values past the 8-bit range and halves."""
    context = webnn.ml.create_context(num_threads=threads)
    x = (RNG.standard_normal((3, 40, 130)) * 4 * scale / 0.05).astype(np.float32)
    x.flat[:12] = np.array([np.nan, np.inf, -np.inf, 1e30, -1e30, 0.0, -0.0, 2.5, -2.5, 3.5, 127.5, -128.5],
                           np.float32) * np.float32(scale)
    x.flat[0], x.flat[1], x.flat[2] = np.nan, np.inf, -np.inf
    m = RNG.standard_normal((1, 1, 130)).astype(np.float32)

    def make(b):
        q = b.quantize_linear(b.input("x", data_type="float32", shape=[3, 40, 130]), *_quantization(b, scale, zero, dtype, 3))
        d = b.dequantize_linear(q, *_quantization(b, scale, zero, dtype, 3))
        return b.build({"y": b.add(b.mul(d, b.constant("float32", 2.0)), b.input("m", data_type="float32", shape=[1, 1, 130]))})

    graph, plain = _twice(context, monkeypatch, make)
    assert _core.plan_steps(graph) == ["elementwise+quantizeLinear+dequantizeLinear+mul+add"]
    got = same_results(graph, plain, {"x": x, "m": m})["y"]
    np.testing.assert_array_equal(got, _fake_quantized(x, scale, zero, dtype) * np.float32(2) + m)


def test_a_dequantized_graph_output_is_still_written(context, monkeypatch, same_results):
    xq = RNG.integers(0, 256, (4, 40)).astype(np.uint8)

    def make(b):
        x = b.dequantize_linear(b.input("x", data_type="uint8", shape=[4, 40]), *_quantization(b, 0.05, 3, "uint8", 2))
        return b.build({"x": x, "y": b.quantize_linear(b.relu(x), *_quantization(b, 0.1, 0, "int8", 2))})

    graph, plain = _twice(context, monkeypatch, make)
    assert _core.plan_steps(graph) == ["dequantizeLinear", "elementwise+dequantizeLinear+relu+quantizeLinear"]
    same_results(graph, plain, {"x": xq})


_INT8_BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


@pytest.mark.parametrize("op,scales", [("mul", (2.0 ** 99, 2.0 ** 99, 0.5)), ("add", (2.0 ** 90, 2.0 ** 90, 2.0 ** -90)),
                                       ("sub", (0.05, 0.02, 2.0 ** -99))])
def test_quantized_binary_chain_past_float32_range(context, monkeypatch, same_results, op, scales):
    """The fused 8-bit loop with scales whose values or quotients overflow float32 (products to
    infinity, quotients past it): it takes its NaN- and overflow-safe form, and saturates exactly as
    the ops one by one do."""
    shape = [2, 5, 37]
    rng = np.random.default_rng(11)
    a = rng.integers(0, 256, shape).astype(np.uint8)
    c = rng.integers(-128, 128, shape).astype(np.int8)
    sa, sc, s_out = scales

    def make(b):
        x = b.dequantize_linear(b.input("a", data_type="uint8", shape=shape), *_quantization(b, sa, 100, "uint8", 3))
        y = b.dequantize_linear(b.input("c", data_type="int8", shape=shape), *_quantization(b, sc, 3, "int8", 3))
        return b.build({"q": b.quantize_linear(getattr(b, op)(x, y), *_quantization(b, s_out, 5, "int8", 3))})

    graph, plain = _twice(context, monkeypatch, make)
    assert len(_core.plan_steps(graph)) == 1, _core.plan_steps(graph)
    got = same_results(graph, plain, {"a": a, "c": c})["q"]
    with np.errstate(over="ignore", invalid="ignore"):
        fa = (a.astype(np.int32) - 100).astype(np.float32) * np.float32(sa)
        fc = (c.astype(np.int32) - 3).astype(np.float32) * np.float32(sc)
        q = np.rint((_INT8_BINARY[op](fa, fc).astype(np.float32) / np.float32(s_out)).astype(np.float64)) + 5
    want = np.where(np.isnan(q), 0, np.clip(q, -128, 127)).astype(np.int8)
    np.testing.assert_array_equal(got, want)
    assert np.any((got == -128) | (got == 127))  # the values saturate


@pytest.mark.parametrize("op", list(_INT8_BINARY))
@pytest.mark.parametrize("act", ["none", "relu", "clamp"])
@pytest.mark.parametrize("types", [("uint8", "uint8", "uint8"), ("int8", "uint8", "int8"), ("uint8", "int8", "int8")])
def test_quantized_binary_chain_is_exact(context, monkeypatch, same_results, op, act, types):
    """dequantizeLinear(a) op dequantizeLinear(c) [-> relu | clamp] -> quantizeLinear over same-shape
    8-bit tensors runs as one fused 8-bit loop: the same bits as the ops one by one, and as NumPy's
    float32 arithmetic (dequantize as float32 products, the op in float32, the quotient a float32
    division rounded half to even), including quotients on and next to the halfway points."""
    a_type, c_type, out_type = types
    shape = [3, 7, 61]
    rng = np.random.default_rng(len(op) * 7 + len(act))

    def values(dtype):
        info = np.iinfo(dtype)
        v = rng.integers(info.min, info.max, shape, endpoint=True)
        v.flat[:4] = [info.min, info.max, info.min, info.max]
        return v.astype(dtype)

    a, c = values(a_type), values(c_type)
    (sa, za), (sc, zc) = (0.0371, 3 if a_type == "int8" else 131), (0.02, -7 if c_type == "int8" else 90)
    s_out, z_out = (0.061 if op != "mul" else 0.9), (-2 if out_type == "int8" else 17)
    lo, hi = -0.37, 1.9

    def make(b):
        x = b.dequantize_linear(b.input("a", data_type=a_type, shape=shape), *_quantization(b, sa, za, a_type, 3))
        y = b.dequantize_linear(b.input("c", data_type=c_type, shape=shape), *_quantization(b, sc, zc, c_type, 3))
        t = getattr(b, op)(x, y)
        if act == "relu":
            t = b.relu(t)
        elif act == "clamp":
            t = b.clamp(t, min_value=lo, max_value=hi)
        return b.build({"q": b.quantize_linear(t, *_quantization(b, s_out, z_out, out_type, 3))})

    graph, plain = _twice(context, monkeypatch, make)
    assert len(_core.plan_steps(graph)) == 1, _core.plan_steps(graph)
    got = same_results(graph, plain, {"a": a, "c": c})["q"]
    f32 = np.float32
    fa = (a.astype(np.int32) - za).astype(f32) * f32(sa)
    fc = (c.astype(np.int32) - zc).astype(f32) * f32(sc)
    t = _INT8_BINARY[op](fa, fc).astype(f32)
    if act == "relu":
        t = np.maximum(t, f32(0))
    elif act == "clamp":
        t = np.clip(t, f32(lo), f32(hi))
    info = np.iinfo(out_type)
    want = np.clip(np.rint(t / f32(s_out)).astype(np.float64) + z_out, info.min, info.max).astype(out_type)
    np.testing.assert_array_equal(got, want)


_TABLE_CHAINS = {
    "sigmoid": lambda b, x: b.sigmoid(x),
    "tanh": lambda b, x: b.tanh(x),
    "silu": lambda b, x: b.mul(x, b.sigmoid(x)),
    "exp_clamp": lambda b, x: b.clamp(b.exp(x), min_value=0.5, max_value=3.0),
    "leaky_relu_add": lambda b, x: b.add(b.leaky_relu(x, alpha=0.1), b.constant("float32", 0.25)),
    # single constant values beside the 8-bit input (a QDQ GELU's), and a per-element constant (no table)
    "gelu": lambda b, x: b.mul(b.mul(x, b.constant("float32", 0.5)),
                               b.add(b.erf(b.div(x, b.constant("float32", 1.4142135))), b.constant("float32", 1.0))),
    "add_row": lambda b, x: b.add(x, b.constant(np.linspace(-1, 1, 67, dtype=np.float32))),
}


def _table_chain_graph(b, chain, in_type, out_type, shape):
    x = b.dequantize_linear(b.input("x", data_type=in_type, shape=shape),
                            *_quantization(b, 0.043, -5 if in_type == "int8" else 130, in_type, len(shape)))
    y = _TABLE_CHAINS[chain](b, x)
    return b.build({"q": b.quantize_linear(y, *_quantization(b, 0.0177, 3 if out_type == "int8" else 60,
                                                               out_type, len(shape)))})


@pytest.mark.parametrize("chain", list(_TABLE_CHAINS))
@pytest.mark.parametrize("in_type,out_type", [("uint8", "uint8"), ("int8", "int8"), ("int8", "uint8")])
def test_chain_from_one_8bit_input_runs_as_a_table(context, monkeypatch, same_results, chain, in_type, out_type):
    """dequantizeLinear(x) -> element-wise ops -> quantizeLinear has 256 possible results: the chain is
    tabulated once (by running it over the 256 bytes) and runs as lookups, the same bits as the ops
    one by one. 1005 elements: every byte value, and a partial block of 64 at the end."""
    shape = [3, 5, 67]
    info = np.iinfo(in_type)
    x = np.resize(np.arange(info.min, info.max + 1), 1005)
    np.random.default_rng(3).shuffle(x)
    x = x.reshape(shape).astype(in_type)
    graph, plain = _twice(context, monkeypatch, lambda b: _table_chain_graph(b, chain, in_type, out_type, shape))
    assert len(_core.plan_steps(graph)) == 1, _core.plan_steps(graph)
    same_results(graph, plain, {"x": x})


@pytest.mark.parametrize("in_type", ["uint8", "int8"])
def test_chain_from_one_8bit_input_to_float32_runs_as_a_table(context, monkeypatch, same_results, in_type):
    """A chain from one 8-bit input that ends in float32 (a QDQ SiLU whose result is dequantized for
    a float op) has 256 possible float32 results: a table of floats, the same bits as the ops."""
    shape = [2, 9, 61]
    info = np.iinfo(in_type)
    x = np.resize(np.arange(info.min, info.max + 1), 2 * 9 * 61).reshape(shape).astype(in_type)

    def make(b):
        xd = b.dequantize_linear(b.input("x", data_type=in_type, shape=shape),
                                 *_quantization(b, 0.043, 0, in_type, len(shape)))
        sq = b.quantize_linear(b.sigmoid(xd), *_quantization(b, 1 / 255, 0, "uint8", len(shape)))
        y = b.mul(xd, b.dequantize_linear(sq, *_quantization(b, 1 / 255, 0, "uint8", len(shape))))
        yq = b.quantize_linear(y, *_quantization(b, 0.02, 40, "uint8", len(shape)))
        return b.build({"y": b.dequantize_linear(yq, *_quantization(b, 0.02, 40, "uint8", len(shape)))})

    graph, plain = _twice(context, monkeypatch, make)
    assert len(_core.plan_steps(graph)) == 1, _core.plan_steps(graph)
    got = same_results(graph, plain, {"x": x})["y"]
    assert got.dtype == np.float32


def test_table_lookups_agree_across_kernels(context):
    """The lookup kernel with AVX-512 VBMI (vpermi2b) and without it (WEBNN_CPU_DISABLE=avx512vbmi,
    a subprocess: features are read once per process) give the same bytes."""
    shape = [7, 131]
    x = np.random.default_rng(5).integers(0, 256, shape).astype(np.uint8)
    got = _table_chain_graph(webnn.MLGraphBuilder(context), "silu", "uint8", "uint8", shape).compute({"x": x})["q"]
    script = (
        "import sys, numpy as np, webnn\n"
        f"sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "import test_elementwise_fusion as t\n"
        f"x = np.random.default_rng(5).integers(0, 256, {shape}).astype(np.uint8)\n"
        "b = webnn.MLGraphBuilder(webnn.ml.create_context())\n"
        f"q = t._table_chain_graph(b, 'silu', 'uint8', 'uint8', {shape}).compute({{'x': x}})['q']\n"
        "sys.stdout.write(q.tobytes().hex())\n")
    env = dict(os.environ, WEBNN_CPU_DISABLE="avx512vbmi")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    np.testing.assert_array_equal(np.frombuffer(bytes.fromhex(out.stdout), np.uint8).reshape(shape), got)


@pytest.mark.parametrize("op", ["add", "sub", "mul"])
@pytest.mark.parametrize("act", ["none", "relu"])
@pytest.mark.parametrize("b_kind", ["row_constant", "input"])
def test_quantized_op_with_a_float_operand_is_exact(context, monkeypatch, same_results, op, act, b_kind):
    """dequantizeLinear(a) op b -> quantizeLinear with b float32 (a bias row, as after a QDQ matmul, or
    a float input, NaN and infinities included) runs as one fused loop: the same bits as the ops one
    by one and as NumPy's float32 arithmetic. Rows of 45: every row ends in a partial vector."""
    shape = [4, 9, 45]
    rng = np.random.default_rng(len(op) + len(act) + len(b_kind))
    a = rng.integers(0, 256, shape).astype(np.uint8)
    b_shape = [45] if b_kind == "row_constant" else shape
    b_values = (rng.standard_normal(b_shape) * 2).astype(np.float32)
    if b_kind == "input":
        b_values.flat[:3] = [np.nan, np.inf, -np.inf]

    def make(builder):
        x = builder.dequantize_linear(builder.input("a", data_type="uint8", shape=shape), *_quantization(builder, 0.031, 100, "uint8", 3))
        y = builder.constant(b_values) if b_kind == "row_constant" else builder.input("b", data_type="float32", shape=shape)
        t = getattr(builder, op)(x, y)
        if act == "relu":
            t = builder.relu(t)
        return builder.build({"q": builder.quantize_linear(t, *_quantization(builder, 0.047, 9, "int8", 3))})

    graph, plain = _twice(context, monkeypatch, make)
    assert len(_core.plan_steps(graph)) == 1, _core.plan_steps(graph)
    feeds = {"a": a} if b_kind == "row_constant" else {"a": a, "b": b_values}
    got = same_results(graph, plain, feeds)["q"]
    f32 = np.float32
    with np.errstate(invalid="ignore", over="ignore"):
        t = _INT8_BINARY[op]((a.astype(np.int32) - 100).astype(f32) * f32(0.031), b_values).astype(f32)
        if act == "relu":
            t = np.where(t < 0, f32(0), t)
        q = np.rint(t / f32(0.047)).astype(np.float64) + 9
    want = np.where(np.isnan(q), 0, np.clip(q, -128, 127)).astype(np.int8)
    np.testing.assert_array_equal(got, want)
