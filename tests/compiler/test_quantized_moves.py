"""Data movement between quantize ops runs on the 8-bit values (compiler pass quantized_ops):
dequantizeLinear(x_i) -> concat | transpose | reshape -> quantizeLinear with one per-tensor scale and
zero point everywhere gives exactly the moved x_i, so the op moves them and the float32 copies go. A
concat input with other parameters is requantized (dequantize, quantize: the float path's numbers)."""
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


def _mixed_concat(context, case, threads=None):
    b = webnn.MLGraphBuilder(context)
    x = b.dequantize_linear(b.input("a", data_type="uint8", shape=[1, 2, 3, 3]), *_params(b, 0.5, 3, "uint8"))
    y = b.dequantize_linear(b.input("c", data_type="uint8", shape=[1, 2, 3, 3]),
                            *_params(b, 0.25 if case == "other_scale" else 0.5, 4 if case == "other_zero" else 3, "uint8"))
    joined = b.concat([x, y], 1)
    out_type = "int8" if case == "other_type" else "uint8"
    outputs = {"q": b.quantize_linear(joined, *_params(b, 0.5, 3, out_type))}
    if case == "float_read_elsewhere":
        outputs["f"] = b.relu(joined)
    return b.build(outputs), out_type


def _mixed_concat_reference(a, case, out_type):
    want = np.concatenate([(a.astype(np.float64) - 3) * 0.5,
                           (a.astype(np.float64) - (4 if case == "other_zero" else 3)) * (0.25 if case == "other_scale" else 0.5)], 1)
    return np.clip(np.round(want / 0.5) + 3, *((-128, 127) if out_type == "int8" else (0, 255))).astype(out_type)


@pytest.mark.parametrize("case,requantized", [("other_scale", 1), ("other_zero", 1), ("other_type", 2)])
def test_concat_of_differently_quantized_values_requantizes_them(context, case, requantized):
    """A concat input with other quantization parameters than the output is requantized first, by its
    own dequantizeLinear -> quantizeLinear (the float path's operations: a table lookup once fused),
    and the concat moves bytes: the same values as the float path."""
    a = RNG.integers(0, 256, (1, 2, 3, 3)).astype(np.uint8)
    graph, out_type = _mixed_concat(context, case)
    assert f"1 data movements on 8-bit values ({requantized} concat inputs requantized)" in _summary(graph)
    steps = [(s["op"], s["fused"]) for s in graph.describe_plan()["steps"] if not s["view"]]
    assert steps.count(("elementwise", ["dequantizeLinear", "quantizeLinear"])) == requantized, steps
    assert ("concat", ["dequantizeLinear", "quantizeLinear"]) in steps, steps
    np.testing.assert_array_equal(context.compute(graph, {"a": a, "c": a})["q"], _mixed_concat_reference(a, case, out_type))


def test_anything_else_stays_float(context):
    """The concat's float result also read elsewhere: nothing moves (the float values are needed)."""
    a = RNG.integers(0, 256, (1, 2, 3, 3)).astype(np.uint8)
    graph, out_type = _mixed_concat(context, "float_read_elsewhere")
    assert "data movements" not in _summary(graph)
    np.testing.assert_array_equal(context.compute(graph, {"a": a, "c": a})["q"],
                                  _mixed_concat_reference(a, "float_read_elsewhere", out_type))


def test_transpose_with_other_parameters_stays_float(context):
    a = RNG.integers(0, 256, (2, 3, 4)).astype(np.uint8)
    b = webnn.MLGraphBuilder(context)
    x = b.dequantize_linear(b.input("a", data_type="uint8", shape=[2, 3, 4]), *_params(b, 0.1, 9, "uint8", 3))
    q = b.quantize_linear(b.transpose(x, permutation=[2, 0, 1]), *_params(b, 0.3, 9, "uint8", 3))
    graph = b.build({"q": q})
    assert "data movements" not in _summary(graph)
    want = np.clip(np.round((a.astype(np.float32) - 9) * np.float32(0.1) / np.float32(0.3)) + 9, 0, 255)
    np.testing.assert_array_equal(context.compute(graph, {"a": a})["q"], want.transpose(2, 0, 1).astype(np.uint8))
