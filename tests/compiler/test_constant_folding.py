"""Constant folding (compiler/passes/constant_folding.cc): nodes whose inputs are all constants run
once at build, with the kernels they would run with at dispatch, so results are bit-identical to an
unfolded build (WEBNN_DISABLE_PASSES=constant_folding)."""
import numpy as np
import pytest

import webnn
from webnn import _core


def _folded_count(graph):
    summary = dict(_core.plan_passes(graph))["constant_folding"]
    return int(summary.split()[0])


def test_dequantized_weights_fold_into_the_matmul(context, build_twice):
    rng = np.random.default_rng(1)
    q = rng.integers(-8, 8, size=(16, 8)).astype(np.int8)
    scale = rng.uniform(0.01, 0.1, size=(1, 8)).astype(np.float32)
    zero = rng.integers(-2, 3, size=(1, 8)).astype(np.int8)

    def make(builder):
        x = builder.input("x", data_type="float32", shape=[3, 16])
        w = builder.dequantize_linear(builder.constant({"dataType": "int4", "shape": [16, 8]}, q),
                                      builder.constant(scale), builder.constant({"dataType": "int4", "shape": [1, 8]},
                                                                                zero))
        return builder.build({"y": builder.relu(builder.matmul(x, w))})

    folded, unfolded = build_twice(make, "constant_folding")
    assert _core.plan_steps(folded) == ["matmul+relu"]
    assert _core.plan_steps(unfolded) == ["dequantizeLinear", "matmul+relu"]
    assert _folded_count(folded) == 1
    x = rng.standard_normal((3, 16)).astype(np.float32)
    y = folded.compute({"x": x})["y"]
    np.testing.assert_array_equal(y, unfolded.compute({"x": x})["y"])
    w = (q.astype(np.float64) - zero) * scale
    np.testing.assert_allclose(y, np.maximum(x.astype(np.float64) @ w, 0), rtol=1e-5, atol=1e-5)


def test_chains_views_and_multi_output_nodes_fold(context, build_twice):
    rng = np.random.default_rng(2)
    w = rng.standard_normal((4, 6)).astype(np.float32)

    def make(builder):
        x = builder.input("x", data_type="float32", shape=[2, 6])
        wt = builder.transpose(builder.mul(builder.constant(w), builder.constant("float32", 2.0)))  # [6, 4]
        left, right = builder.split(builder.reshape(wt, [6, 2, 2]), 2, axis=2)
        b = builder.reshape(builder.concat([right, left], 2), [6, 4])
        return builder.build({"y": builder.matmul(x, b)})

    folded, unfolded = build_twice(make, "constant_folding")
    assert _core.plan_steps(folded) == ["matmul"]
    assert _folded_count(folded) == 6  # mul, transpose, reshape, split, concat, reshape
    x = rng.standard_normal((2, 6)).astype(np.float32)
    expected = (2 * w.T).reshape(6, 2, 2)[:, :, ::-1].reshape(6, 4)
    np.testing.assert_allclose(folded.compute({"x": x})["y"], x @ expected, rtol=1e-5)
    np.testing.assert_array_equal(folded.compute({"x": x})["y"], unfolded.compute({"x": x})["y"])


@pytest.mark.parametrize("data_type", ["float32", "float16", "int32", "int64", "uint8"])
def test_folded_elementwise_is_bit_identical(context, build_twice, data_type):
    rng = np.random.default_rng(3)
    dtype = webnn.numpy_dtype(data_type)
    a = (rng.uniform(10, 50, size=(3, 5))).astype(dtype)
    b = (rng.uniform(1, 5, size=(5,))).astype(dtype)

    def make(builder):
        x = builder.input("x", data_type=data_type, shape=[3, 5])
        c = builder.div(builder.sub(builder.constant(a), builder.constant(b)), builder.constant(b))
        return builder.build({"y": builder.add(x, builder.mul(c, c))})

    folded, unfolded = build_twice(make, "constant_folding")
    assert _core.plan_steps(folded) == ["add"]
    x = np.ones((3, 5), dtype)
    np.testing.assert_array_equal(folded.compute({"x": x})["y"], unfolded.compute({"x": x})["y"])


def test_constant_tensor_operands_fold(context):
    w = np.arange(12, dtype=np.float32).reshape(3, 4)
    tensor = context.create_constant_tensor(w)
    builder = webnn.MLGraphBuilder(context)
    x = builder.input("x", data_type="float32", shape=[2, 4])
    graph = builder.build({"y": builder.matmul(x, builder.transpose(builder.constant(tensor)))})
    assert _core.plan_steps(graph) == ["matmul"]
    x_value = np.ones((2, 4), np.float32)
    np.testing.assert_array_equal(graph.compute({"x": x_value})["y"], x_value @ w.T)


def test_graph_outputs_made_of_constants_are_computed_at_dispatch(context):
    builder = webnn.MLGraphBuilder(context)
    a = builder.constant(np.array([1.0, -2.0, 3.0], np.float32))
    doubled = builder.mul(a, builder.constant("float32", 2.0))
    graph = builder.build({"doubled": doubled, "relu": builder.relu(doubled)})
    assert sorted(_core.plan_steps(graph)) == ["mul", "relu"]
    out = graph.compute({})
    np.testing.assert_array_equal(out["doubled"], [2, -4, 6])
    np.testing.assert_array_equal(out["relu"], [2, 0, 6])


def test_results_much_larger_than_their_inputs_stay_run_time_ops(context):
    builder = webnn.MLGraphBuilder(context)
    x = builder.input("x", data_type="float32", shape=[512, 1024])
    big = builder.expand(builder.constant("float32", 1.5), [512, 1024])  # 2 MiB from 4 bytes: not folded
    small = builder.expand(builder.constant("float32", 0.5), [1, 1024])  # 4 KiB, under the 1 MiB floor: folded
    graph = builder.build({"y": builder.add(builder.add(x, big), small)})
    assert _core.plan_steps(graph) == ["expand", "elementwise+add+add"]
    assert _folded_count(graph) == 1
    x_value = np.zeros((512, 1024), np.float32)
    np.testing.assert_array_equal(graph.compute({"x": x_value})["y"], np.full((512, 1024), 2.0, np.float32))
