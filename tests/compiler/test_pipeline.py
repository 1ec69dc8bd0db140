"""The pass pipeline (compiler/pipeline.cc): fixed order, a log line per pass, optional passes that
WEBNN_DISABLE_PASSES skips without changing any result."""
import numpy as np

import webnn
from webnn import _core

PIPELINE = ["batch_split", "dead_code", "quantized_ops", "constant_folding", "half_widening", "op_recognition", "transpose_folding", "scale_folding",
            "attention_fusion", "dead_code", "nhwc_regions", "epilogue_fusion", "transpose_absorption", "layout",
            "elementwise_fusion", "lowering", "copy_elision", "in_place", "memory_plan"]


def _residual_graph(builder, w, shift):
    x = builder.input("x", data_type="float32", shape=[1, 4, 5, 5])
    conv = builder.conv2d(x, builder.reshape(builder.constant(w), [4, 4, 3, 3]), padding=[1, 1, 1, 1])
    y = builder.clamp(builder.add(conv, x), min_value=-1.0, max_value=float(shift))
    return builder.build({"y": y})


def test_passes_run_in_the_documented_order_and_log(context):
    assert _core.compiler_pass_names() == PIPELINE
    w = np.random.default_rng(0).standard_normal(144).astype(np.float32)
    graph = _residual_graph(webnn.MLGraphBuilder(context), w, 2.0)
    log = _core.plan_passes(graph)
    assert [name for name, _ in log] == PIPELINE
    summary = dict(log)
    assert summary["constant_folding"].startswith("1 nodes folded")  # the reshaped filter
    assert summary["epilogue_fusion"] == "2 element-wise ops fused into kernel epilogues"
    assert summary["lowering"] == "1 kernels, 0 views"
    assert _core.plan_steps(graph) == ["conv2d+add+clamp"]


def test_disabling_optional_passes_changes_no_result(context, monkeypatch):
    rng = np.random.default_rng(1)
    w = rng.standard_normal(144).astype(np.float32)
    x = rng.standard_normal((1, 4, 5, 5)).astype(np.float32)
    optimized = _residual_graph(webnn.MLGraphBuilder(context), w, 2.0)
    monkeypatch.setenv("WEBNN_DISABLE_PASSES", "constant_folding,epilogue_fusion")
    plain = _residual_graph(webnn.MLGraphBuilder(context), w, 2.0)
    assert _core.plan_steps(plain) == ["reshape", "conv2d", "elementwise+add+clamp"]
    assert dict(_core.plan_passes(plain))["epilogue_fusion"] == "disabled (WEBNN_DISABLE_PASSES)"
    np.testing.assert_array_equal(optimized.compute({"x": x})["y"], plain.compute({"x": x})["y"])


def test_required_passes_cannot_be_disabled(context, monkeypatch):
    monkeypatch.setenv("WEBNN_DISABLE_PASSES", "dead_code,lowering,memory_plan")
    builder = webnn.MLGraphBuilder(context)
    a = builder.input("a", data_type="float32", shape=[2])
    graph = builder.build({"y": builder.relu(a)})
    assert [name for name, _ in _core.plan_passes(graph)] == PIPELINE
    np.testing.assert_array_equal(graph.compute({"a": np.array([-1, 1], np.float32)})["y"], [0, 1])
