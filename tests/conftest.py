"""Shared fixtures and helpers for the webnn test suite."""
import numpy as np
import pytest

import webnn


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
