"""Concat and split along the innermost axis copy many short rows (a channels-last network's channel
slices); data_movement's copy_rows moves rows of 32 to 512 bytes inline, in 32-byte moves with an
overlapping last one, and longer or shorter rows by memcpy. Every row length in bytes around those
bounds, each element size, outer dims that make runs end mid-range, at 1 and 2 threads (the pool
splits the rows), against NumPy: exact, as copies must be."""
import numpy as np
import pytest

import webnn

RNG = np.random.default_rng(29)

DTYPES = ["int8", "float16", "float32", "int64"]
# row lengths in bytes: below, at and above 32; odd; around 512; long
ROW_BYTES = [8, 31, 32, 33, 40, 63, 64, 65, 96, 100, 511, 512, 513, 1024]


def every_row_length(test):
    for name, values in (("row_bytes", ROW_BYTES), ("dtype", DTYPES), ("threads", [1, 2])):
        test = pytest.mark.parametrize(name, values)(test)
    return test


def _values(shape, dtype):
    if np.dtype(dtype).kind == "f":
        return RNG.standard_normal(shape).astype(dtype)
    return RNG.integers(-100, 100, size=shape).astype(dtype)


def _lengths(row_bytes, dtype):
    """Three inner lengths whose sum is about three rows of `row_bytes`."""
    size = np.dtype(dtype).itemsize
    n = max(1, row_bytes // size)
    return [n, n + (1 if n > 1 else 0), max(1, n - 1)]


@every_row_length
def test_concat_innermost(threads, dtype, row_bytes):
    context = webnn.ml.create_context(num_threads=threads)
    builder = webnn.MLGraphBuilder(context)
    outer = [3, 7, 97]  # runs of 97 rows; 2,037 rows over the pool
    parts = [_values(outer + [n], dtype) for n in _lengths(row_bytes, dtype)]
    inputs = [builder.input(f"x{i}", data_type=dtype, shape=list(p.shape)) for i, p in enumerate(parts)]
    graph = builder.build({"y": builder.concat(inputs, 3)})
    got = context.compute(graph, {f"x{i}": p for i, p in enumerate(parts)})["y"]
    np.testing.assert_array_equal(got, np.concatenate(parts, axis=3))


@every_row_length
def test_split_innermost(threads, dtype, row_bytes):
    context = webnn.ml.create_context(num_threads=threads)
    builder = webnn.MLGraphBuilder(context)
    sizes = _lengths(row_bytes, dtype)
    x = _values([5, 401, sum(sizes)], dtype)
    parts = builder.split(builder.input("x", data_type=dtype, shape=list(x.shape)), sizes, axis=2)
    graph = builder.build({f"y{i}": p for i, p in enumerate(parts)})
    got = context.compute(graph, {"x": x})
    for i, want in enumerate(np.split(x, np.cumsum(sizes)[:-1], axis=2)):
        np.testing.assert_array_equal(got[f"y{i}"], want)
