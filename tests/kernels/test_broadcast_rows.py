"""Element-wise broadcasting walks its outer rows in order inside each thread's chunk (no division per
row): shapes whose merged loop keeps several outer dims (the offsets carry from one dim into the
next), rows split into several blocks, and chunks starting mid-way, at one and two threads, against
NumPy."""
import numpy as np
import pytest

import webnn

RNG = np.random.default_rng(11)

CASES = [
    ((64, 3, 50, 7), (3, 1, 7)),      # outer dims 64 x 3 x 50 (b repeats over the first and last)
    ((2, 5, 1, 9, 11), (5, 4, 1, 11)),  # both operands broadcast, into (2, 5, 4, 9, 11)
    ((3, 2, 70000), (2, 1)),          # rows of 70000 values: three blocks per row
    ((9, 1, 300), (1, 7, 300)),       # a row repeated for every outer index
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("a_shape,b_shape", CASES)
def test_broadcast_binary_matches_numpy(threads, a_shape, b_shape):
    a = RNG.standard_normal(a_shape).astype(np.float32)
    b = RNG.standard_normal(b_shape).astype(np.float32)
    context = webnn.ml.create_context(num_threads=threads)
    builder = webnn.MLGraphBuilder(context)
    x = builder.input("a", data_type="float32", shape=list(a_shape))
    y = builder.input("b", data_type="float32", shape=list(b_shape))
    graph = builder.build({"sum": builder.add(x, y), "quotient": builder.div(x, y)})
    got = context.compute(graph, {"a": a, "b": b})
    np.testing.assert_array_equal(got["sum"], a + b)
    np.testing.assert_array_equal(got["quotient"], a / b)
