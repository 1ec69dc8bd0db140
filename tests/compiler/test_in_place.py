"""In-place element-wise ops (compiler/passes/in_place.cc): an element-wise step writes over a
same-shape input that nothing reads later; results are bit-identical to the plan without the pass,
the arena shrinks, and graph inputs, outputs and values still read later are never overwritten."""
import re

import numpy as np
import pytest

import webnn
from webnn import _core

RNG = np.random.default_rng(5)
UNARY = ["abs", "ceil", "cos", "erf", "exp", "floor", "log", "neg", "reciprocal", "round_even", "sign", "sin", "sqrt",
         "tan", "elu", "gelu", "hard_sigmoid", "hard_swish", "leaky_relu", "linear", "relu", "sigmoid", "softplus",
         "softsign", "tanh"]
BINARY = ["add", "sub", "mul", "div", "max", "min", "pow"]


@pytest.fixture(autouse=True)
def separate_steps(monkeypatch):
    """Each element-wise op its own step here (a fused chain keeps its inner values in L1:
    test_elementwise_fusion.py covers chains written in place)."""
    monkeypatch.setenv("WEBNN_DISABLE_PASSES", "elementwise_fusion")


def _log(graph, name):
    return dict(_core.plan_passes(graph))[name]


def _arena_bytes(graph):
    return int(re.search(r"(\d+)-byte arena", _log(graph, "memory_plan")).group(1))


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("op", UNARY)
def test_unary_chain_in_place(build_twice, same_results, op, dtype):
    x = (RNG.standard_normal((3, 70)) * 2).astype(dtype)

    def make(b):
        t = b.abs(b.input("x", data_type=dtype, shape=[3, 70]))  # an intermediate
        return b.build({"y": b.neg(getattr(b, op)(getattr(b, op)(t)))})

    graph, plain = build_twice(make, "in_place")
    # neg writes the graph output directly; float16 values are held in float32 between the casts
    # that widen the input and narrow the output, and so do the op after the widening cast and the op before the narrowing one
    assert _log(graph, "in_place").startswith("4 " if dtype == "float16" else "2 ")
    assert _arena_bytes(graph) < _arena_bytes(plain)
    same_results(graph, plain, {"x": x})


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "int64", "int8", "uint8"])
@pytest.mark.parametrize("op", BINARY)
def test_binary_in_place_over_the_full_shape_operand(build_twice, same_results, op, dtype):
    if dtype not in ("float32", "float16") and op in ("div", "pow"):
        pytest.skip("integer division and power by random values")
    x = RNG.integers(1, 5, (4, 6)).astype(dtype)
    w = RNG.integers(1, 3, (6,)).astype(dtype)

    def make(b):
        a = b.input("x", data_type=dtype, shape=[4, 6])
        t = b.max(a, b.constant(dtype, 1))  # intermediates
        u = b.max(b.input("w", data_type=dtype, shape=[6]), b.constant(dtype, 1))
        return b.build({"y": b.identity(getattr(b, op)(u, t))})  # broadcast u: the output takes t's storage

    graph, plain = build_twice(make, "in_place")
    # (float16: held in float32 between widening casts, each max also writes over its cast's result)
    assert _log(graph, "in_place").startswith("3 " if dtype == "float16" else "1 ")
    same_results(graph, plain, {"x": x, "w": w})


def test_clamp_and_chains_through_concat_pieces(build_twice, same_results):
    x = RNG.standard_normal((1, 4, 3)).astype(np.float32)

    def make(b):
        a = b.input("x", data_type="float32", shape=[1, 4, 3])
        joined = b.concat([b.neg(a), b.exp(a)], 1)  # pieces written into `joined`
        y = b.clamp(b.mul(joined, b.constant("float32", 3.0)), min_value=-1.0, max_value=2.0)
        p, q = b.split(b.sigmoid(y), 2, axis=1)  # pieces read in place, then written over
        return b.build({"p": b.tanh(p), "q": b.relu(q)})

    graph, plain = build_twice(make, "in_place")
    # mul over the concat's storage, clamp, sigmoid; tanh(p) is not the last reader of p's storage (relu(q)
    # is), and relu writes a graph output
    assert _log(graph, "in_place").startswith("3 ")
    same_results(graph, plain, {"x": x})


def test_values_read_later_inputs_and_outputs_are_not_overwritten(context):
    x = RNG.standard_normal((2, 5)).astype(np.float32)
    b = webnn.MLGraphBuilder(context)
    a = b.input("x", data_type="float32", shape=[2, 5])
    t = b.exp(a)  # a graph input: never written over
    u = b.sigmoid(t)  # t is read again below
    v = b.add(u, t)  # the last read of u and t: v takes one of them
    kept = b.relu(v)  # v is a graph output: relu must not write over it
    graph = b.build({"v": v, "kept": kept, "t_again": b.neg(t)})
    context_x = context.create_tensor({"dataType": "float32", "shape": [2, 5]}, writable=True, readable=True)
    context.write_tensor(context_x, x)
    outputs = {name: context.create_tensor({"dataType": "float32", "shape": [2, 5]}, readable=True)
               for name in ("v", "kept", "t_again")}
    context.dispatch(graph, {"x": context_x}, outputs)
    np.testing.assert_array_equal(context.read_tensor(context_x), x)
    e = np.exp(x.astype(np.float64))
    want_v = 1 / (1 + np.exp(-e)) + e
    np.testing.assert_allclose(context.read_tensor(outputs["v"]), want_v, rtol=1e-6)
    np.testing.assert_allclose(context.read_tensor(outputs["kept"]), np.maximum(want_v, 0), rtol=1e-6)
    np.testing.assert_allclose(context.read_tensor(outputs["t_again"]), -e, rtol=1e-6)


def _conv_nhwc(x, w, bias, groups=1, pad=1):
    """float64 reference: NHWC input, ohwi filter, stride 1, symmetric padding."""
    n, h, wd, c = x.shape
    o, kh, kw, _ = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    out = np.zeros((n, h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1, o))
    ci, co = c // groups, o // groups
    for g in range(groups):
        for i in range(kh):
            for j in range(kw):
                patch = xp[:, i:i + out.shape[1], j:j + out.shape[2], g * ci:(g + 1) * ci]
                out[..., g * co:(g + 1) * co] += patch @ w[g * co:(g + 1) * co, i, j, :].astype(np.float64).T
    return out + bias


def _residual_block(b, c, groups, shared, weights, biases):
    """t = relu(conv_a(x)); y = relu(conv_b(t if shared else s) + t), s = conv_c(x); mean over pixels."""
    x = b.input("x", data_type="float32", shape=[1, 9, 7, c])

    def conv(v, k):
        return b.conv2d(v, b.constant(weights[k]), bias=b.constant(biases[k]), groups=groups,
                        padding=[1, 1, 1, 1], input_layout="nhwc", filter_layout="ohwi")

    t = b.relu(conv(x, "a"))
    y = b.relu(b.add(conv(t if shared else conv(x, "c"), "b"), t))
    return b.reduce_mean(y, axes=[1, 2])


@pytest.mark.parametrize("groups", [1, 12], ids=["dense", "depthwise"])
@pytest.mark.parametrize("shared", [False, True], ids=["addend_apart", "addend_is_the_input"])
def test_convolution_writes_over_its_residual_addend(build_twice, same_results, groups, shared):
    """A convolution with a fused residual add writes over the addend when nothing reads it later, but
    not when its own input is the addend (a 3x3 filter would read pixels already overwritten)."""
    c = 12
    x = RNG.standard_normal((1, 9, 7, c)).astype(np.float32)
    w = {k: RNG.standard_normal((c, 3, 3, c // groups)).astype(np.float32) * 0.3 for k in "abc"}
    bias = {k: RNG.standard_normal(c).astype(np.float32) for k in "abc"}

    def make(b):
        return b.build({"y": _residual_block(b, c, groups, shared, w, bias)})

    graph, plain = build_twice(make, "in_place")
    assert _log(graph, "in_place").startswith("0 " if shared else "1 ")
    if not shared:
        assert _arena_bytes(graph) < _arena_bytes(plain)
    got = same_results(graph, plain, {"x": x})["y"]
    t = np.maximum(_conv_nhwc(x, w["a"], bias["a"], groups), 0)
    s = t if shared else _conv_nhwc(x, w["c"], bias["c"], groups)
    want = np.maximum(_conv_nhwc(s, w["b"], bias["b"], groups) + t, 0).mean(axis=(1, 2))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_convolution_keeps_an_addend_read_later(build_twice, same_results):
    c = 8
    x = RNG.standard_normal((1, 6, 6, c)).astype(np.float32)

    filter_ = RNG.standard_normal((c, 1, 1, c)).astype(np.float32)

    def make(b):
        v = b.input("x", data_type="float32", shape=[1, 6, 6, c])
        w = b.constant(filter_)
        t = b.sigmoid(v)
        y = b.add(b.conv2d(b.neg(v), w, input_layout="nhwc", filter_layout="ohwi"), t)
        return b.build({"y": b.reduce_sum(y, axes=[3]), "t": b.reduce_max(t, axes=[3])})  # t read after the add

    graph, plain = build_twice(make, "in_place")
    assert _log(graph, "in_place").startswith("0 ")
    got = same_results(graph, plain, {"x": x})
    np.testing.assert_allclose(got["t"], (1 / (1 + np.exp(-x.astype(np.float64)))).max(axis=3), rtol=1e-6)
