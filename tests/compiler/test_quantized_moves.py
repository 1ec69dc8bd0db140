"""Data movement between quantize ops runs on the 8-bit values (compiler pass quantized_ops):
dequantizeLinear(x_i) -> concat | transpose | reshape -> quantizeLinear with one per-tensor scale and
zero point everywhere gives exactly the moved x_i, so the op moves them and the float32 copies go."""
import numpy as np
import pytest

import webnn

RNG = np.random.default_rng(11)


def _params(b, scale, zero, dtype, rank=4):
    one = [1] * rank
    return b.constant(np.full(one, scale, np.float32)), b.constant(np.full(one, zero, dtype))


def _summary(graph):
    return dict(graph.describe_plan()["passes"])["quantized_ops"]


@pytest.mark.parametrize("dtype,zero,scale", [("uint8", 128, 0.02), ("int8", -5, 0.37), ("uint8", 0, 3.0e-6)])
def test_concat_of_equally_quantized_values_moves_bytes(context, dtype, zero, scale):
    lo, hi = (0, 255) if dtype == "uint8" else (-128, 127)
    a = RNG.integers(lo, hi + 1, (1, 3, 4, 5)).astype(dtype)
    c = RNG.integers(lo, hi + 1, (1, 6, 4, 5)).astype(dtype)
    b = webnn.MLGraphBuilder(context)
    x = b.dequantize_linear(b.input("a", data_type=dtype, shape=[1, 3, 4, 5]), *_params(b, scale, zero, dtype))
    y = b.dequantize_linear(b.input("c", data_type=dtype, shape=[1, 6, 4, 5]), *_params(b, scale, zero, dtype))
    q = b.quantize_linear(b.concat([x, y], 1), *_params(b, scale, zero, dtype))
    graph = b.build({"q": q})
    steps = [s for s in graph.describe_plan()["steps"] if not s["view"]]
    assert [(s["op"], s["fused"]) for s in steps] == [("concat", ["dequantizeLinear", "quantizeLinear"])]
    assert "1 data movements on 8-bit values" in _summary(graph)
    np.testing.assert_array_equal(context.compute(graph, {"a": a, "c": c})["q"], np.concatenate([a, c], 1))


def test_transpose_moves_bytes(context):
    a = RNG.integers(0, 256, (2, 3, 4)).astype(np.uint8)
    b = webnn.MLGraphBuilder(context)
    x = b.dequantize_linear(b.input("a", data_type="uint8", shape=[2, 3, 4]), *_params(b, 0.1, 9, "uint8", 3))
    q = b.quantize_linear(b.transpose(x, permutation=[2, 0, 1]), *_params(b, 0.1, 9, "uint8", 3))
    graph = b.build({"q": q})
    assert [s["op"] for s in graph.describe_plan()["steps"] if not s["view"]] == ["transpose"]
    np.testing.assert_array_equal(context.compute(graph, {"a": a})["q"], a.transpose(2, 0, 1))


@pytest.mark.parametrize("case", ["other_scale", "other_zero", "other_type", "float_read_elsewhere"])
def test_anything_else_stays_float(context, case):
    a = RNG.integers(0, 128, (1, 2, 3, 3)).astype(np.uint8)
    b = webnn.MLGraphBuilder(context)
    x = b.dequantize_linear(b.input("a", data_type="uint8", shape=[1, 2, 3, 3]), *_params(b, 0.5, 3, "uint8"))
    y = b.dequantize_linear(b.input("c", data_type="uint8", shape=[1, 2, 3, 3]),
                            *_params(b, 0.25 if case == "other_scale" else 0.5, 4 if case == "other_zero" else 3, "uint8"))
    joined = b.concat([x, y], 1)
    out_type = "int8" if case == "other_type" else "uint8"
    outputs = {"q": b.quantize_linear(joined, *_params(b, 0.5, 3, out_type))}
    if case == "float_read_elsewhere":
        outputs["f"] = b.relu(joined)
    graph = b.build(outputs)
    assert "data movements" not in _summary(graph)
    got = context.compute(graph, {"a": a, "c": a})["q"]
    sy = 0.5
    want = np.concatenate([(a.astype(np.float64) - 3) * 0.5,
                           (a.astype(np.float64) - (4 if case == "other_zero" else 3)) * (0.25 if case == "other_scale" else 0.5)], 1)
    want = np.clip(np.round(want / sy) + 3, *((-128, 127) if out_type == "int8" else (0, 255)))
    np.testing.assert_array_equal(got, want.astype(out_type))
