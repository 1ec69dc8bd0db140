"""Dead-code removal (compiler/passes/dead_code.cc)."""
import numpy as np

import webnn


def test_dead_nodes_and_unused_inputs_are_dropped(context):
    builder = webnn.MLGraphBuilder(context)
    a = builder.input("a", data_type="float32", shape=[2])
    unused = builder.input("unused", data_type="float32", shape=[2])
    builder.mul(unused, unused)  # dead
    graph = builder.build({"y": builder.relu(a)})
    assert set(graph.input_descriptors) == {"a"}
    np.testing.assert_array_equal(graph.compute({"a": np.array([-1, 2], np.float32)})["y"], [0, 2])



def test_dead_code_pass_logs_live_nodes(context):
    builder = webnn.MLGraphBuilder(context)
    a = builder.input("a", data_type="float32", shape=[2])
    builder.sigmoid(builder.tanh(a))  # two dead nodes
    graph = builder.build({"y": builder.relu(a)})
    log = dict(webnn._core.plan_passes(graph))
    assert log["dead_code"] == "1 of 3 nodes live"
    assert webnn._core.plan_steps(graph) == ["relu"]
