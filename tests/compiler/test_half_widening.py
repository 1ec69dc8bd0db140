"""Half widening (compiler/passes/half_widening.cc): float16 values between nodes are held in float32,
each step rounding its results to float16 values. Unfused steps give the same bits as the float16
kernels (checked against the plan without the pass and against NumPy's float16 arithmetic); fused
steps round once, at their output. Graph inputs and outputs keep their types."""
import numpy as np
import pytest

import webnn
from webnn import _core

RNG = np.random.default_rng(16)
F16 = "float16"


def _summary(graph):
    return dict(_core.plan_passes(graph))["half_widening"]


def _ulps(a, b):
    """Distance in float16 steps between two float16 arrays of finite values."""
    def ordered(x):
        bits = x.astype(np.float16).view(np.int16).astype(np.int32)
        return np.where(bits < 0, -32768 - bits, bits)
    return np.abs(ordered(a) - ordered(b))


def _no_fusion(monkeypatch):
    # The plan without half_widening fuses nothing in float16; so that both run one op per step:
    monkeypatch.setenv("WEBNN_DISABLE_PASSES", "epilogue_fusion,elementwise_fusion,op_recognition,attention_fusion")


def test_arithmetic_rounds_each_op_like_numpy_float16(context):
    # NumPy's float16 +, -, *, / are correctly rounded: so is each step here, fused into one chain.
    x, y, z = (RNG.standard_normal((5, 33)).astype(np.float16) for _ in range(3))
    b = webnn.MLGraphBuilder(context)
    a, c, d = (b.input(n, data_type=F16, shape=[5, 33]) for n in "xyz")
    t = b.div(b.add(b.mul(a, a), c), b.add(b.abs(d), b.constant(F16, 0.5)))
    graph = b.build({"out": b.max(b.sub(t, a), b.neg(c))})
    assert _summary(graph).startswith("8 float16 nodes compute in float32")
    assert any(step.startswith("elementwise") for step in _core.plan_steps(graph))
    got = graph.compute({"x": x, "y": y, "z": z})["out"]
    want = np.maximum((x * x + y) / (np.abs(z) + np.float16(0.5)) - x, -y)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, want)


UNARY = ["abs", "ceil", "cos", "erf", "exp", "floor", "neg", "reciprocal", "round_even", "sign", "sin", "tan", "elu",
         "gelu", "hard_sigmoid", "hard_swish", "leaky_relu", "linear", "relu", "sigmoid", "softplus", "softsign", "tanh"]


@pytest.mark.parametrize("op", UNARY)
def test_unary_steps_equal_the_float16_kernels(build_twice, same_results, monkeypatch, op):
    _no_fusion(monkeypatch)
    x = (RNG.standard_normal((4, 37)) * 2).astype(np.float16)

    def make(b):
        t = b.mul(b.input("x", data_type=F16, shape=[4, 37]), b.constant(F16, 1.3))  # inexact: rounds
        return b.build({"y": b.add(getattr(b, op)(t), b.constant(F16, 0.1))})

    graph, plain = build_twice(make, "half_widening")
    assert "3 float16 nodes" in _summary(graph) and _summary(plain).startswith("disabled")
    same_results(graph, plain, {"x": x})


@pytest.mark.parametrize("fused", [False, True])
def test_chains_round_each_op_as_its_own_step_does(build_twice, same_results, monkeypatch, fused):
    # A fused chain rounds after each op (a rounding step of its own): the bits of one op per step.
    if not fused:
        _no_fusion(monkeypatch)
    x = (RNG.standard_normal((3, 50)) * 3).astype(np.float16)

    def make(b):
        a = b.input("x", data_type=F16, shape=[3, 50])
        t = b.sigmoid(b.mul(a, b.constant(F16, 0.7)))
        u = b.sub(b.exp(b.neg(b.abs(t))), b.tanh(a))
        return b.build({"y": b.div(u, b.add(b.mul(t, t), b.constant(F16, 1.0)))})

    graph, plain = build_twice(make, "half_widening")
    if fused:
        assert [s for s in _core.plan_steps(graph) if s != "cast"] == [
            "elementwise+mul+sigmoid+abs+neg+exp+tanh+sub+mul+add+div"]
    same_results(graph, plain, {"x": x})


def test_scalar_options_keep_their_float16_values(build_twice, same_results, monkeypatch):
    # clamp's bounds, pad's value, alpha and beta are cast to float16 (0.1 is 0.0999755859375), not to float32.
    _no_fusion(monkeypatch)
    x = (RNG.standard_normal((2, 3, 6)) * 0.2).astype(np.float16)

    def make(b):
        a = b.mul(b.input("x", data_type=F16, shape=[2, 3, 6]), b.constant(F16, 1.1))
        t = b.clamp(a, min_value=-0.1, max_value=0.1)
        t = b.leaky_relu(b.linear(t, alpha=0.3, beta=0.1), alpha=0.1)
        t = b.pad(t, [0, 1, 1], [0, 1, 1], value=0.1)
        return b.build({"y": b.mul(b.elu(t, alpha=0.3), b.constant(F16, 1.7)),
                        "z": b.layer_normalization(b.mul(a, a), axes=[2], epsilon=0.1)})

    graph, plain = build_twice(make, "half_widening")
    got = same_results(graph, plain, {"x": x})
    assert got["y"][0, 0, 0] == np.float16(np.float16(0.1) * np.float16(1.7))  # the padding


def test_conv_and_matmul_round_in_their_epilogues(build_twice, same_results, monkeypatch):
    # One op per step: the widened convolution and matmul give the float16 kernels' bits.
    _no_fusion(monkeypatch)
    x = RNG.standard_normal((1, 5, 9, 9)).astype(np.float16)
    w = (RNG.standard_normal((7, 5, 3, 3)) / 4).astype(np.float16)
    m = (RNG.standard_normal((9, 11)) / 3).astype(np.float16)

    def make(b):
        a = b.mul(b.input("x", data_type=F16, shape=[1, 5, 9, 9]), b.constant(F16, 1.5))
        y = b.conv2d(a, b.constant(w), padding=[1, 1, 1, 1], bias=b.constant(np.linspace(-1, 1, 7).astype(np.float16)))
        return b.build({"y": b.relu(b.matmul(b.relu(y), b.constant(m)))})

    graph, plain = build_twice(make, "half_widening")
    same_results(graph, plain, {"x": x})


def test_fused_steps_round_once_at_their_output(build_twice):
    # conv + residual add + relu in one step rounds once: within a float16 step of the op-by-op plan.
    x = RNG.standard_normal((1, 8, 10, 10)).astype(np.float16)
    w0 = (RNG.standard_normal((8, 8, 3, 3)) / 6).astype(np.float16)
    w1 = (RNG.standard_normal((8, 8, 1, 1)) / 3).astype(np.float16)

    def make(b):
        a = b.input("x", data_type=F16, shape=[1, 8, 10, 10])
        y = b.relu(b.add(b.conv2d(a, b.constant(w0), padding=[1, 1, 1, 1]), a))
        return b.build({"y": b.sigmoid(b.conv2d(y, b.constant(w1)))})

    graph, plain = build_twice(make, "half_widening")
    steps = _core.plan_steps(graph)
    assert "conv2d+add+relu+roundToFloat16" in steps and "conv2d+sigmoid+roundToFloat16" in steps
    got, want = graph.compute({"x": x})["y"], plain.compute({"x": x})["y"]
    assert got.dtype == np.float16 and _ulps(got, want).max() <= 2


def test_graph_inputs_and_outputs_keep_float16(build_twice, same_results, monkeypatch):
    # A float16 output that other nodes also read: its producer writes a float32 twin that they read,
    # and a cast narrows it (exact). A float16 input read by two nodes is widened once.
    _no_fusion(monkeypatch)
    x = RNG.standard_normal((6, 8)).astype(np.float16)

    def make(b):
        a = b.input("x", data_type=F16, shape=[6, 8])
        t = b.mul(a, b.constant(F16, 3.3))
        first, second = b.split(t, 2, axis=0)
        return b.build({"t": t, "u": b.add(t, a), "s": b.sigmoid(second), "f": first})

    graph, plain = build_twice(make, "half_widening")
    assert "cast" in _core.plan_steps(graph)
    got = same_results(graph, plain, {"x": x})
    assert all(v.dtype == np.float16 for v in got.values())
    np.testing.assert_array_equal(got["t"], x * np.float16(3.3))


def test_a_float16_model_casts_in_and_out(context):
    # keep_io_types: float32 in, cast to float16, ops, cast to float32 out. The input cast rounds (one
    # pass); the output cast disappears (the last op writes the float32 output, already rounded).
    x = np.concatenate([RNG.standard_normal(40) * 100, [65519.0, 65520.0, -70000.0, 2.0**-25, 2.0**-24 * 1.5,
                                                        1 + 2.0**-11, 1 + 3 * 2.0**-11, np.nan, -0.0]]).astype(np.float32)
    b = webnn.MLGraphBuilder(context)
    h = b.cast(b.input("x", data_type="float32", shape=[x.size]), F16)
    graph = b.build({"y": b.cast(b.neg(h), "float32")})
    assert _core.plan_steps(graph) == ["cast+roundToFloat16", "neg"]
    assert "1 casts dropped" in _summary(graph)
    got = graph.compute({"x": x})["y"]
    with np.errstate(over="ignore"):
        want = -(x.astype(np.float16).astype(np.float32))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, want)  # NaN where NumPy has NaN, -inf past 65520, halfway cases to even


def test_casts_between_integers_and_float16(build_twice, same_results, monkeypatch):
    _no_fusion(monkeypatch)
    x = np.array([-70000, -65504, -2049, -1, 0, 1, 2049, 2051, 4097, 65504, 70000], np.int32)

    def make(b):
        h = b.cast(b.input("x", data_type="int32", shape=[x.size]), F16)  # rounds: 2049 -> 2048, 70000 -> inf
        return b.build({"y": b.cast(b.abs(b.mul(h, b.constant(F16, 0.5))), "int32"),
                        "h": b.cast(h, "float32")})

    graph, plain = build_twice(make, "half_widening")
    got = same_results(graph, plain, {"x": x})
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(got["h"], x.astype(np.float16).astype(np.float32))


def test_nothing_to_widen(context):
    b = webnn.MLGraphBuilder(context)
    a = b.input("x", data_type=F16, shape=[3])
    graph = b.build({"y": b.exp(a)})  # one op: input and output keep float16, nothing between
    assert _summary(graph) == "no float16 values between nodes"
    assert _core.plan_steps(graph) == ["exp"]
    x = np.array([0, 1, -1], np.float16)
    np.testing.assert_array_equal(graph.compute({"x": x})["y"], np.exp(x))


def test_the_pass_can_be_disabled(build_twice):
    x = RNG.standard_normal((2, 9)).astype(np.float16)

    def make(b):
        return b.build({"y": b.sigmoid(b.mul(b.input("x", data_type=F16, shape=[2, 9]), b.constant(F16, 2.0)))})

    graph, plain = build_twice(make, "half_widening")
    assert _summary(plain) == "disabled (WEBNN_DISABLE_PASSES)"
    assert _core.plan_steps(plain) == ["mul", "sigmoid"]
    np.testing.assert_array_equal(graph.compute({"x": x})["y"], plain.compute({"x": x})["y"])


@pytest.mark.parametrize("source", ["input", "constant"])
def test_a_dropped_copy_is_read_by_a_widened_node(context, source):
    # cast(x, float16) of float16 x is a copy: dropped, its readers read x's float32 form instead; a
    # reader whose output keeps float16 is still widened (found by the builder fuzzer: it read the
    # float32 values as float16 ones).
    x = (RNG.standard_normal((7, 2, 3)) * 4).astype(np.float16)
    b = webnn.MLGraphBuilder(context)
    a = b.input("x", data_type=F16, shape=[7, 2, 3]) if source == "input" else b.abs(b.constant(x))
    t = b.cast(a, F16)
    graph = b.build({"r": b.reverse(t), "s": b.relu(t), "n": b.neg(b.cast(t, "float32"))})
    got = graph.compute({"x": x} if source == "input" else {})
    base = x if source == "input" else np.abs(x)
    np.testing.assert_array_equal(got["r"], base[::-1, ::-1, ::-1])
    np.testing.assert_array_equal(got["s"], np.maximum(base, np.float16(0)))
    np.testing.assert_array_equal(got["n"], -base.astype(np.float32))
    assert got["r"].dtype == np.float16 and got["n"].dtype == np.float32
