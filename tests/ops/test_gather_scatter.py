"""gather, gatherElements, gatherND, scatterElements and scatterND against NumPy references.

Index values: negative ones count from the end; values still outside [0, n) are clamped to
[0, n-1] (implementation-defined by the spec; never out of bounds). Scatters apply updates in
row-major order, so for duplicate targets the last write wins. Elements are copied, so results
are compared bit for bit."""
import numpy as np
import pytest

import webnn
from conftest import run

ALL_TYPES = ["float32", "float16", "int32", "uint32", "int64", "uint64", "int8", "uint8"]
INDEX_TYPES = ["int32", "uint32", "int64"]
BAD = r"\[bad\]"


def sample(dtype, shape, seed=0):
    """Values of `dtype` including its extremes (ints) or NaN/±Inf/-0 (floats)."""
    dtype = np.dtype(dtype)
    rng = np.random.default_rng(seed)
    size = int(np.prod(shape, dtype=np.int64))
    if dtype.kind == "f":
        values = rng.uniform(-100, 100, size).astype(dtype)
        specials = np.array([np.nan, np.inf, -np.inf, -0.0], dtype=dtype)
    else:
        info = np.iinfo(dtype)
        values = rng.integers(info.min, info.max, size, dtype=dtype, endpoint=True)
        specials = np.array([info.min, info.max, 0, 1], dtype=dtype)
    values[: min(size, 4)] = specials[: min(size, 4)]
    return values.reshape(shape)


def random_indices(index_type, shape, n, seed=1, out_of_range=True):
    """Indices for a dim of size n: in range, negative (signed types) and out of range."""
    rng = np.random.default_rng(seed)
    low = -n if index_type != "uint32" else 0
    high = n + 2 if out_of_range else n - 1
    if out_of_range and index_type != "uint32":
        low -= 2
    return rng.integers(low, high, size=shape, endpoint=True).astype(index_type)


def normalize(indices, n):
    """The kernel's rule: + n when negative, then clamp into [0, n-1]."""
    i = indices.astype(np.int64)
    return np.clip(np.where(i < 0, i + n, i), 0, n - 1)


def assert_same(actual, expected):
    expected = np.asarray(expected)
    assert actual.dtype == expected.dtype
    assert actual.shape == expected.shape
    bits = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[expected.dtype.itemsize]
    np.testing.assert_array_equal(actual.view(bits), np.ascontiguousarray(expected).view(bits))


def compute(builder, op, arrays, **options):
    """Runs op(*operands, **options); arrays are fed as graph inputs named a0, a1, ..."""
    operands = [builder.input(f"a{i}", {"dataType": a.dtype.name, "shape": list(a.shape)}) for i, a in enumerate(arrays)]
    out = getattr(builder, op)(*operands, **options)
    return run(builder, {"y": out}, {f"a{i}": a for i, a in enumerate(arrays)})["y"]


def declare(builder, dtype, shape, name):
    return builder.input(name, {"dataType": dtype, "shape": list(shape)})


# ---------------------------------------------------------------- gather
@pytest.mark.parametrize("dtype", ALL_TYPES)
@pytest.mark.parametrize("index_type", INDEX_TYPES)
@pytest.mark.parametrize("shape,index_shape,axis", [
    ([5], [], 0),
    ([5], [7], 0),
    ([4, 3], [2, 2], 0),
    ([4, 3], [5], 1),
    ([2, 3, 4], [2, 1, 3], 1),
    ([2, 3, 4], [], 2),
    ([1, 3, 1], [4], 2),
])
def test_gather(builder, dtype, index_type, shape, index_shape, axis):
    x = sample(dtype, shape)
    indices = random_indices(index_type, index_shape, shape[axis])
    out = compute(builder, "gather", [x, indices], axis=axis)
    assert_same(out, np.take(x, normalize(indices, shape[axis]), axis=axis))


def test_gather_index_extremes_are_clamped(builder):
    x = sample("int64", [3, 2])
    indices = np.array([np.iinfo(np.int64).min, -4, -3, -1, 2, 3, np.iinfo(np.int64).max], np.int64)
    out = compute(builder, "gather", [x, indices])
    assert_same(out, x[[0, 0, 0, 2, 2, 2, 2]])


def test_gather_validation(builder):
    x = declare(builder, "float32", [3, 4], "x")
    i32 = declare(builder, "int32", [2], "i")
    with pytest.raises(TypeError, match=BAD):
        builder.gather(x, i32, axis=2, label="bad")
    for index_type in ["float32", "uint64", "int8", "float16"]:
        with pytest.raises(TypeError, match=BAD):
            builder.gather(x, declare(builder, index_type, [2], f"bad_{index_type}"), label="bad")
    with pytest.raises(TypeError, match=BAD):
        builder.gather(declare(builder, "float32", [], "s"), i32, label="bad")
    with pytest.raises(TypeError, match=BAD):  # rank 2 + 8 - 1 > 8
        builder.gather(x, declare(builder, "int32", [1] * 8, "deep"), label="bad")
    assert builder.gather(x, declare(builder, "int64", [5, 6], "j"), axis=1).shape == [3, 5, 6]


# ---------------------------------------------------------------- gatherElements
@pytest.mark.parametrize("dtype", ALL_TYPES)
@pytest.mark.parametrize("index_type", INDEX_TYPES)
@pytest.mark.parametrize("shape,index_shape,axis", [
    ([5], [3], 0),
    ([4, 3], [2, 3], 0),
    ([4, 3], [4, 6], 1),
    ([2, 3, 4], [2, 5, 4], 1),
    ([1, 2, 1], [1, 2, 3], 2),
])
def test_gather_elements(builder, dtype, index_type, shape, index_shape, axis):
    x = sample(dtype, shape)
    indices = random_indices(index_type, index_shape, shape[axis])
    out = compute(builder, "gatherElements", [x, indices], axis=axis)
    assert_same(out, np.take_along_axis(x, normalize(indices, shape[axis]), axis=axis))


def test_gather_elements_validation(builder):
    x = declare(builder, "float32", [3, 4], "x")
    for index_shape, axis in [([3], 0), ([3, 4, 1], 0), ([2, 3], 0), ([3, 4], 2)]:
        with pytest.raises(TypeError, match=BAD):
            builder.gatherElements(x, declare(builder, "int32", index_shape, f"i{index_shape}{axis}"), axis=axis,
                                   label="bad")
    with pytest.raises(TypeError, match=BAD):
        builder.gather_elements(x, declare(builder, "float32", [3, 4], "f"), label="bad")


# ---------------------------------------------------------------- gatherND
def gather_nd_reference(x, indices):
    k = indices.shape[-1]
    tuples = indices.reshape(-1, k)
    parts = [x[tuple(normalize(t[d], x.shape[d]) for d in range(k))] for t in tuples]
    return np.array(parts, dtype=x.dtype).reshape(indices.shape[:-1] + x.shape[k:])


@pytest.mark.parametrize("dtype", ALL_TYPES)
@pytest.mark.parametrize("index_type", INDEX_TYPES)
@pytest.mark.parametrize("shape,index_shape", [
    ([5], [1]),
    ([5], [3, 1]),
    ([3, 4], [2]),
    ([3, 4], [2, 2, 1]),
    ([2, 3, 4], [4, 2]),
    ([2, 3, 4], [3]),
])
def test_gather_nd(builder, dtype, index_type, shape, index_shape):
    x = sample(dtype, shape)
    indices = random_indices(index_type, index_shape, min(shape))
    out = compute(builder, "gatherND", [x, indices])
    assert_same(out, gather_nd_reference(x, indices))


def test_gather_nd_validation(builder):
    x = declare(builder, "float32", [3, 4], "x")
    with pytest.raises(TypeError, match=BAD):
        builder.gatherND(x, declare(builder, "int32", [2, 3], "i"), label="bad")
    with pytest.raises(TypeError, match=BAD):
        builder.gather_nd(x, declare(builder, "int32", [], "s"), label="bad")
    assert builder.gatherND(x, declare(builder, "uint32", [2], "t")).shape == []


# ---------------------------------------------------------------- scatterElements
def scatter_elements_reference(x, indices, updates, axis):
    out = x.copy()
    target = normalize(indices, x.shape[axis])
    for p in np.ndindex(*indices.shape):  # row-major: the last write wins
        q = list(p)
        q[axis] = target[p]
        out[tuple(q)] = updates[p]
    return out


@pytest.mark.parametrize("dtype", ALL_TYPES)
@pytest.mark.parametrize("index_type", INDEX_TYPES)
@pytest.mark.parametrize("shape,index_shape,axis", [
    ([5], [3], 0),
    ([5], [9], 0),
    ([4, 3], [2, 3], 0),
    ([4, 3], [4, 5], 1),
    ([2, 3, 4], [2, 2, 4], 1),
])
def test_scatter_elements(builder, dtype, index_type, shape, index_shape, axis):
    x = sample(dtype, shape)
    indices = random_indices(index_type, index_shape, shape[axis])
    updates = sample(dtype, index_shape, seed=5)
    out = compute(builder, "scatterElements", [x, indices, updates], axis=axis)
    assert_same(out, scatter_elements_reference(x, indices, updates, axis))


def test_scatter_elements_validation(builder):
    x = declare(builder, "float32", [3, 4], "x")
    i = declare(builder, "int32", [2, 4], "i")
    with pytest.raises(TypeError, match=BAD):
        builder.scatterElements(x, i, declare(builder, "float32", [2, 3], "u1"), label="bad")
    with pytest.raises(TypeError, match=BAD):
        builder.scatterElements(x, i, declare(builder, "int32", [2, 4], "u2"), label="bad")
    with pytest.raises(TypeError, match=BAD):
        builder.scatterElements(x, declare(builder, "int32", [3, 2], "i2"), declare(builder, "float32", [3, 2], "u3"),
                                label="bad")  # indices differ outside axis 0
    with pytest.raises(TypeError, match=BAD):
        builder.scatterElements(x, i, declare(builder, "float32", [2, 4], "u4"), axis=2, label="bad")
    with pytest.raises(TypeError, match=BAD):
        builder.scatterElements(x, declare(builder, "uint8", [2, 4], "i3"), declare(builder, "float32", [2, 4], "u5"),
                                label="bad")
    assert builder.scatter_elements(x, i, declare(builder, "float32", [2, 4], "u6")).shape == [3, 4]


# ---------------------------------------------------------------- scatterND
def scatter_nd_reference(x, indices, updates):
    out = x.copy()
    k = indices.shape[-1]
    tuples = indices.reshape(-1, k)
    slices = updates.reshape((len(tuples),) + x.shape[k:])
    for t, u in zip(tuples, slices):  # in order: the last write wins
        out[tuple(normalize(t[d], x.shape[d]) for d in range(k))] = u
    return out


@pytest.mark.parametrize("dtype", ALL_TYPES)
@pytest.mark.parametrize("index_type", INDEX_TYPES)
@pytest.mark.parametrize("shape,index_shape", [
    ([5], [3, 1]),
    ([5], [8, 1]),
    ([3, 4], [2]),
    ([3, 4], [5, 1]),
    ([2, 3, 4], [2, 2, 2]),
    ([2, 3, 4], [4, 3]),
])
def test_scatter_nd(builder, dtype, index_type, shape, index_shape):
    x = sample(dtype, shape)
    indices = random_indices(index_type, index_shape, min(shape))
    k = index_shape[-1]
    updates = sample(dtype, index_shape[:-1] + shape[k:], seed=5)
    out = compute(builder, "scatterND", [x, indices, updates])
    assert_same(out, scatter_nd_reference(x, indices, updates))


def test_scatter_nd_duplicates_last_write_wins(builder):
    x = np.zeros([3, 2], np.float32)
    indices = np.array([[1], [-2], [1]], np.int64)
    updates = np.array([[1, 2], [3, 4], [5, 6]], np.float32)
    out = compute(builder, "scatterND", [x, indices, updates])
    assert_same(out, np.array([[0, 0], [5, 6], [0, 0]], np.float32))


def test_scatter_nd_validation(builder):
    x = declare(builder, "float32", [3, 4], "x")
    with pytest.raises(TypeError, match=BAD):
        builder.scatterND(x, declare(builder, "int32", [2, 3], "i1"), declare(builder, "float32", [2], "u1"),
                          label="bad")
    with pytest.raises(TypeError, match=BAD):
        builder.scatterND(x, declare(builder, "int32", [2, 1], "i2"), declare(builder, "float32", [2, 3], "u2"),
                          label="bad")
    with pytest.raises(TypeError, match=BAD):
        builder.scatterND(x, declare(builder, "int32", [2, 1], "i3"), declare(builder, "int32", [2, 4], "u3"),
                          label="bad")
    assert builder.scatter_nd(x, declare(builder, "int64", [2], "i4"), declare(builder, "float32", [], "u4")).shape == [3, 4]


def test_op_support_limits(context):
    limits = context.op_support_limits()
    for op in ["gather", "gatherElements", "gatherND"]:
        assert set(limits[op]) == {"input", "indices", "output"}
        assert limits[op]["indices"]["dataTypes"] == INDEX_TYPES
        assert limits[op]["input"] == {"dataTypes": ALL_TYPES, "rankRange": {"min": 1, "max": 8}}
    for op in ["scatterElements", "scatterND"]:
        assert set(limits[op]) == {"input", "indices", "updates", "output"}
    assert limits["scatterND"]["updates"]["rankRange"] == {"min": 0, "max": 8}


def test_uint32_indices_above_int32_range_are_clamped(builder):
    x = sample("float32", [4])
    out = compute(builder, "gather", [x, np.array([4294967295, 2147483648, 3], np.uint32)])
    assert_same(out, x[[3, 3, 3]])


def test_large_tensors(context):
    """Sizes that split across threads."""
    x = sample("int64", [300, 400])
    rows = random_indices("int32", [500], 300)
    assert_same(compute(webnn.MLGraphBuilder(context), "gather", [x, rows]), x[normalize(rows, 300)])
    cols = random_indices("int64", [300, 450], 400)
    assert_same(compute(webnn.MLGraphBuilder(context), "gatherElements", [x, cols], axis=1),
                np.take_along_axis(x, normalize(cols, 400), axis=1))
    updates = sample("int64", [300, 450], seed=9)
    assert_same(compute(webnn.MLGraphBuilder(context), "scatterElements", [x, cols, updates], axis=1),
                scatter_elements_reference(x, cols, updates, 1))
    wide = sample("uint8", [4, 50000])
    tuples = np.array([[1], [3], [-3], [0], [1], [9]], np.int32)
    slices = sample("uint8", [6, 50000], seed=2)
    assert_same(compute(webnn.MLGraphBuilder(context), "scatterND", [wide, tuples, slices]),
                scatter_nd_reference(wide, tuples, slices))
