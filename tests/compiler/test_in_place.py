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
    assert _log(graph, "in_place").startswith("2 ")  # neg writes the graph output directly
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
    assert _log(graph, "in_place").startswith("1 ")
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
