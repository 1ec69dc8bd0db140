"""The compiled plan and the profiler: MLGraph.describe_plan(), set_profiling(), profile(),
webnn.profiling's reports, and the CLI's `webnn plan` and `webnn bench --profile`."""
import numpy as np
import pytest

import webnn
from webnn import cli, models


def _graph(context):
    builder = webnn.MLGraphBuilder(context)
    x = builder.input("x", data_type="float32", shape=[1, 4, 8, 8])
    w = np.random.default_rng(0).standard_normal((6, 4, 3, 3)).astype(np.float32)
    conv = builder.relu(builder.conv2d(x, builder.constant(w), padding=[1, 1, 1, 1], label="stem"))
    flat = builder.reshape(conv, [6, 64])
    return builder.build({"y": builder.softmax(flat, axis=1)})


def test_describe_plan_lists_steps_passes_and_memory(context):
    plan = _graph(context).describe_plan()
    assert [(s["op"], s["fused"], s["view"]) for s in plan["steps"]] == [
        ("conv2d", ["relu"], False), ("reshape", [], True), ("softmax", [], False)]
    stem = plan["steps"][0]
    assert stem["label"] == "stem"
    assert stem["inputs"][0] == {"dataType": "float32", "shape": [1, 4, 8, 8]}
    assert stem["outputs"] == [{"dataType": "float32", "shape": [1, 6, 8, 8]}]
    assert [name for name, _ in plan["passes"]] == webnn._core.compiler_pass_names()
    assert plan["arena_bytes"] >= 6 * 64 * 4
    assert plan["constant_bytes"] == 0  # the filter is packed by its kernel


def test_profile_counts_runs_and_time_per_step(context):
    graph = _graph(context)
    x = np.ones((1, 4, 8, 8), np.float32)
    graph.compute({"x": x})
    assert graph.profile()["runs"] == 0  # off by default
    graph.set_profiling(True)
    for _ in range(3):
        graph.compute({"x": x})
    profile = graph.profile()
    assert profile["runs"] == 3
    assert [index for index, _ in profile["steps"]] == [0, 1, 2]
    assert profile["steps"][0][1] > 0 and profile["steps"][1][1] == 0  # a view runs no kernel
    graph.set_profiling(False)
    graph.compute({"x": x})
    assert graph.profile()["runs"] == 3
    graph.set_profiling(True)  # restarting resets
    assert graph.profile()["runs"] == 0


def test_reports_are_text(context):
    graph = _graph(context)
    assert "conv2d+relu" in webnn.profiling.format_plan(graph)
    assert "no profiled runs" in webnn.profiling.format_profile(graph)
    graph.set_profiling(True)
    graph.compute({"x": np.ones((1, 4, 8, 8), np.float32)})
    report = webnn.profiling.format_profile(graph)
    assert "profile of 1 run(s)" in report and "by op kind:" in report and "'stem'" in report
    kinds, steps, runs = webnn.profiling.profile_rows(graph)
    assert runs == 1 and {name for _, name, _ in kinds} == {"conv2d+relu", "softmax"}


def test_destroyed_graph_raises(context):
    graph = _graph(context)
    graph.destroy()
    for call in (graph.describe_plan, graph.profile, lambda: graph.set_profiling(True)):
        with pytest.raises(webnn.InvalidStateError, match="destroyed"):
            call()


def test_cli_plan_and_bench_profile(capsys):
    assert cli.main(["plan", models.DIGITS, "--batch", "2"]) == 0
    out = capsys.readouterr().out
    assert "steps" in out and "passes:" in out and "arena:" in out
    assert cli.main(["bench", models.DIGITS, "--batch", "2", "--iterations", "3", "--warmup", "1", "--profile"]) == 0
    out = capsys.readouterr().out
    assert "profile of 3 run(s)" in out and "slowest steps:" in out


def test_cli_plan_reports_a_missing_file(capsys):
    assert cli.main(["plan", "/nonexistent/model.webnn"]) == 1
    assert "no such model file" in capsys.readouterr().err
