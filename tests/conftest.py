"""Shared fixtures and helpers for the webnn test suite."""
import os

import numpy as np
import pytest

import webnn

# The ONNX importer cross-checks every converted shape against ONNX shape inference in the tests.
os.environ.setdefault("WEBNN_ONNX_SHAPE_CHECK", "1")


@pytest.fixture(scope="session")
def context():
    """One context for tests that only build and run graphs."""
    return webnn.ml.create_context()


@pytest.fixture
def builder(context):
    return webnn.MLGraphBuilder(context)


def run(builder, outputs, inputs=None):
    """Builds ``{name: operand}`` outputs and runs them with ``{name: array}`` inputs."""
    graph = builder.build(outputs)
    return graph.compute(inputs or {})


# ---- compiler pass tests: the same graph built with every pass and without one
@pytest.fixture
def build_twice(context, monkeypatch):
    """build_twice(make, pass_name) -> (graph with every pass, graph without pass_name), each made by
    make(builder) on a fresh builder."""
    def build(make, pass_name):
        graph = make(webnn.MLGraphBuilder(context))
        disabled = os.environ.get("WEBNN_DISABLE_PASSES")  # what the test disabled for both
        monkeypatch.setenv("WEBNN_DISABLE_PASSES", f"{disabled},{pass_name}" if disabled else pass_name)
        plain = make(webnn.MLGraphBuilder(context))
        if disabled:
            monkeypatch.setenv("WEBNN_DISABLE_PASSES", disabled)
        else:
            monkeypatch.delenv("WEBNN_DISABLE_PASSES")
        return graph, plain
    return build


@pytest.fixture
def same_results():
    """same_results(graph, plain, feeds) -> graph's outputs, after checking them bit-equal to plain's."""
    def check(graph, plain, feeds):
        got, want = graph.compute(feeds), plain.compute(feeds)
        for name in want:
            np.testing.assert_array_equal(got[name], want[name], err_msg=name)
        return got
    return check


@pytest.fixture
def checked_twice(build_twice, same_results):
    """checked_twice(make, feeds, pass_name) -> (graph with every pass, its outputs), the outputs
    checked bit-equal to those of the graph without pass_name."""
    def run(make, feeds, pass_name):
        graph, plain = build_twice(make, pass_name)
        return graph, same_results(graph, plain, feeds)
    return run
