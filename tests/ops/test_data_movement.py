"""Data-movement ops (concat, split, slice, transpose, expand, pad, tile, reverse, triangular)
against NumPy references. Elements are copied, never converted, so results are compared bit for
bit (NaN payloads, -0 and int64/uint64 extremes included)."""
import numpy as np
import pytest

import webnn
from conftest import run

ALL_TYPES = ["float32", "float16", "int32", "uint32", "int64", "uint64", "int8", "uint8"]
BAD = r"\[bad\]"


def sample(dtype, shape, seed=0):
    """Distinct-ish values of `dtype`, with the type's extremes and (floats) NaN, ±Inf and -0."""
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


def assert_same(actual, expected):
    expected = np.asarray(expected)
    assert actual.dtype == expected.dtype
    assert actual.shape == expected.shape
    bits = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[expected.dtype.itemsize]
    np.testing.assert_array_equal(actual.view(bits), np.ascontiguousarray(expected).view(bits))


def unary(builder, op, x, *args, **options):
    """Runs `op(input, *args, **options)` on `x` fed as a graph input."""
    operand = builder.input("x", {"dataType": x.dtype.name, "shape": list(x.shape)})
    return run(builder, {"y": getattr(builder, op)(operand, *args, **options)}, {"x": x})["y"]


def declare(builder, dtype, shape, name="x"):
    return builder.input(name, {"dataType": dtype, "shape": list(shape)})


# ---------------------------------------------------------------- concat
@pytest.mark.parametrize("dtype", ALL_TYPES)
@pytest.mark.parametrize("shapes,axis", [
    ([[3], [1], [4]], 0),
    ([[2, 3], [2, 1]], 1),
    ([[1, 2, 3], [4, 2, 3]], 0),
    ([[2, 1, 3, 2], [2, 4, 3, 2], [2, 2, 3, 2]], 1),
    ([[2, 3, 1], [2, 3, 2]], 2),
])
def test_concat(builder, dtype, shapes, axis):
    arrays = [sample(dtype, s, seed=i) for i, s in enumerate(shapes)]
    operands = [declare(builder, dtype, s, f"x{i}") for i, s in enumerate(shapes)]
    out = run(builder, {"y": builder.concat(operands, axis)}, {f"x{i}": a for i, a in enumerate(arrays)})["y"]
    assert_same(out, np.concatenate(arrays, axis))


def test_concat_repeated_operand_and_8192_inputs(builder):
    x = sample("int64", [1, 2])
    operand = declare(builder, "int64", [1, 2])
    out = run(builder, {"y": builder.concat([operand] * 8192, 0)}, {"x": x})["y"]
    assert_same(out, np.concatenate([x] * 8192, 0))


def test_concat_validation(builder, context):
    a = declare(builder, "float32", [2, 3], "a")
    b = declare(builder, "float32", [2, 4], "b")
    with pytest.raises(TypeError, match=BAD):
        builder.concat([], 0, label="bad")
    with pytest.raises(TypeError, match=BAD):
        builder.concat([a] * 8193, 0, label="bad")
    with pytest.raises(TypeError, match=BAD):
        builder.concat([a, a], 2, label="bad")
    with pytest.raises(TypeError, match=BAD):
        builder.concat([a, b], 0, label="bad")  # a dim other than axis differs
    with pytest.raises(TypeError, match=BAD):
        builder.concat([a, declare(builder, "int32", [2, 3], "c")], 0, label="bad")
    with pytest.raises(TypeError, match=BAD):
        builder.concat([a, declare(builder, "float32", [2, 3, 1], "d")], 0, label="bad")
    with pytest.raises(TypeError, match=BAD):
        builder.concat([declare(builder, "float32", [], "s")], 0, label="bad")
    with pytest.raises(TypeError, match=BAD):
        builder.concat([a], -1, label="bad")
    big = declare(builder, "int8", [2 ** 30], "big")
    with pytest.raises(TypeError, match=BAD):
        builder.concat([big, big, big], 0, label="bad")  # the axis size overflows
    other = webnn.MLGraphBuilder(context).input("o", {"dataType": "float32", "shape": [2, 3]})
    with pytest.raises(TypeError):
        builder.concat([a, other], 0)
    assert builder.concat([a, b], 1).shape == [2, 7]


# ---------------------------------------------------------------- split
@pytest.mark.parametrize("dtype", ALL_TYPES)
@pytest.mark.parametrize("shape,splits,axis", [
    ([6], 3, 0),
    ([6], [1, 2, 3], 0),
    ([2, 6, 2], 2, 1),
    ([2, 5, 3], [4, 1], 1),
    ([2, 3, 4], [4], 2),
    ([4, 2], 1, 0),
])
def test_split(builder, dtype, shape, splits, axis):
    x = sample(dtype, shape)
    outs = builder.split(declare(builder, dtype, shape), splits, axis=axis)
    results = run(builder, {f"y{i}": o for i, o in enumerate(outs)}, {"x": x})
    sizes = [shape[axis] // splits] * splits if isinstance(splits, int) else splits
    expected = np.split(x, np.cumsum(sizes)[:-1], axis)
    assert len(outs) == len(expected)
    for i, e in enumerate(expected):
        assert outs[i].shape == list(e.shape)
        assert_same(results[f"y{i}"], e)


def test_split_trailing_options_dict(builder):
    x = sample("float32", [2, 4])
    outs = builder.split(declare(builder, "float32", [2, 4]), 2, {"axis": 1, "label": "s"})
    results = run(builder, {"a": outs[0], "b": outs[1]}, {"x": x})
    assert_same(results["b"], x[:, 2:])


def test_split_validation(builder):
    x = declare(builder, "float32", [6, 4])
    for splits, axis in [(4, 0), (0, 0), (8193, 0), ([], 0), ([2, 0, 4], 0), ([2, 3], 0), ([7], 0), (2, 2),
                         (-1, 0), (2.5e10, 0)]:
        with pytest.raises(TypeError, match=BAD):
            builder.split(x, splits, axis=axis, label="bad")
    with pytest.raises(TypeError, match=BAD):
        builder.split(declare(builder, "float32", [], "s"), 1, label="bad")
    with pytest.raises(TypeError, match=BAD):
        builder.split(x, [1] * 8193, label="bad")
    assert len(builder.split(declare(builder, "uint8", [8192], "wide"), 8192)) == 8192


# ---------------------------------------------------------------- slice
@pytest.mark.parametrize("dtype", ALL_TYPES)
@pytest.mark.parametrize("shape,starts,sizes,strides", [
    ([], [], [], None),
    ([7], [2], [4], None),
    ([7], [1], [6], [2]),
    ([4, 5], [1, 0], [3, 5], None),
    ([4, 5, 6], [0, 1, 2], [4, 3, 4], [3, 1, 2]),
    ([3, 1, 4], [2, 0, 3], [1, 1, 1], [5, 1, 4]),
])
def test_slice(builder, dtype, shape, starts, sizes, strides):
    x = sample(dtype, shape)
    options = {} if strides is None else {"strides": strides}
    out = unary(builder, "slice", x, starts, sizes, **options)
    steps = strides or [1] * len(shape)
    index = tuple(slice(b, b + n, s) for b, n, s in zip(starts, sizes, steps))
    assert_same(out, x[index])


def test_slice_validation(builder):
    x = declare(builder, "float32", [4, 5])
    for starts, sizes, options in [
        ([0], [4], {}), ([0, 0], [4], {}), ([0, 0], [4, 0], {}), ([4, 0], [1, 5], {}), ([2, 0], [3, 5], {}),
        ([0, 0], [4, 5], {"strides": [1]}), ([0, 0], [4, 5], {"strides": [1, 0]}), ([-1, 0], [1, 1], {}),
    ]:
        with pytest.raises(TypeError, match=BAD):
            builder.slice(x, starts, sizes, label="bad", **options)


# ---------------------------------------------------------------- transpose
@pytest.mark.parametrize("dtype", ALL_TYPES)
@pytest.mark.parametrize("shape,permutation", [
    ([], None),
    ([5], None),
    ([2, 3], None),
    ([2, 3, 4], [1, 2, 0]),
    ([2, 3, 4], [0, 2, 1]),
    ([2, 1, 3, 4], None),
    ([2, 3, 1, 2, 1, 2, 3, 2], [7, 0, 6, 1, 5, 2, 4, 3]),
])
def test_transpose(builder, dtype, shape, permutation):
    x = sample(dtype, shape)
    options = {} if permutation is None else {"permutation": permutation}
    assert_same(unary(builder, "transpose", x, **options), np.transpose(x, permutation))


@pytest.mark.parametrize("dtype", ["uint8", "int8"])
@pytest.mark.parametrize("pixels", [1, 15, 16, 17, 31, 32, 33, 47, 50, 224 * 7 + 5])
def test_transpose_three_planes_to_channels_last(builder, dtype, pixels):
    """An image's 3 planes into channels-last triples (the byte shuffle path, 16 pixels a step, with
    the remainder by element), at widths around the step and the 32-row tiles."""
    x = sample(dtype, [2, 3, 1, pixels], seed=pixels)
    assert_same(unary(builder, "transpose", x, permutation=[0, 2, 3, 1]), np.transpose(x, [0, 2, 3, 1]))


def test_transpose_validation(builder):
    x = declare(builder, "float32", [2, 3, 4])
    for permutation in [[0, 1], [0, 1, 2, 3], [0, 1, 3], [0, 1, 1], [-1, 0, 1]]:
        with pytest.raises(TypeError, match=BAD):
            builder.transpose(x, permutation=permutation, label="bad")


# ---------------------------------------------------------------- expand
@pytest.mark.parametrize("dtype", ALL_TYPES)
@pytest.mark.parametrize("shape,new_shape", [
    ([], [3, 2]),
    ([], []),
    ([1], [5]),
    ([3, 1], [3, 4]),
    ([3, 1], [2, 3, 4]),
    ([2, 1, 4], [3, 2, 5, 4]),
    ([2, 3], [2, 3]),
])
def test_expand(builder, dtype, shape, new_shape):
    x = sample(dtype, shape)
    assert_same(unary(builder, "expand", x, new_shape), np.broadcast_to(x, new_shape))


def test_expand_validation(builder):
    x = declare(builder, "float32", [3, 2])
    for new_shape in [[3, 4], [2], [3, 0], [1], [2 ** 31, 3, 2], [1] * 7 + [3, 2], [-1, 2]]:
        with pytest.raises(TypeError, match=BAD):
            builder.expand(x, new_shape, label="bad")


# ---------------------------------------------------------------- pad
@pytest.mark.parametrize("dtype", ALL_TYPES)
@pytest.mark.parametrize("mode", ["constant", "edge", "reflection"])
@pytest.mark.parametrize("shape,begin,end", [
    ([4], [2], [3]),
    ([3, 4], [1, 0], [2, 3]),
    ([2, 3, 4], [1, 2, 0], [0, 1, 3]),
    ([5, 1, 3], [0, 0, 2], [4, 0, 1]),
])
def test_pad(builder, dtype, mode, shape, begin, end):
    if mode == "reflection" and any(max(b, e) >= s for s, b, e in zip(shape, begin, end)):
        pytest.skip("reflection padding must be smaller than the dim")
    x = sample(dtype, shape)
    value = 7
    out = unary(builder, "pad", x, begin, end, mode=mode, value=value)
    widths = list(zip(begin, end))
    if mode == "constant":
        expected = np.pad(x, widths, mode="constant", constant_values=np.array(value, dtype=dtype))
    else:
        expected = np.pad(x, widths, mode={"edge": "edge", "reflection": "reflect"}[mode])
    assert_same(out, expected)


@pytest.mark.parametrize("dtype,value,expected", [
    ("uint8", 300, 255), ("uint8", -5, 0), ("int8", -1.5, -2), ("int8", 2.5, 2), ("int32", float("nan"), 0),
    ("uint64", 2 ** 64 - 1, 2 ** 64 - 1), ("int64", -(2 ** 63), -(2 ** 63)), ("int64", 2 ** 63 + 5, 2 ** 63 - 1),
    ("float16", 70000, np.inf), ("float32", float("-inf"), -np.inf), ("float32", float("nan"), np.nan),
    ("float16", 0.1, np.float16(0.1)),
])
def test_pad_value_is_cast_to_the_input_type(builder, dtype, value, expected):
    x = sample(dtype, [2])
    out = unary(builder, "pad", x, [1], [1], value=value)
    assert_same(out, np.concatenate([np.array([expected], dtype), x, np.array([expected], dtype)]))


def test_pad_default_value_and_scalar(context):
    x = sample("float32", [2, 2])
    assert_same(unary(webnn.MLGraphBuilder(context), "pad", x, [1, 0], [0, 1]), np.pad(x, [(1, 0), (0, 1)]))
    s = np.array(3.5, np.float32)
    assert_same(unary(webnn.MLGraphBuilder(context), "pad", s, [], [], mode="reflection"), s)


def test_pad_validation(builder):
    x = declare(builder, "float32", [3, 4])
    for begin, end, options in [
        ([1], [1, 1], {}), ([1, 1], [1], {}), ([3, 0], [0, 0], {"mode": "reflection"}),
        ([0, 0], [0, 4], {"mode": "reflection"}), ([2 ** 31, 0], [0, 0], {}), ([-1, 0], [0, 0], {}),
        ([1, 1], [1, 1], {"mode": "symmetric"}), ([1, 1], [1, 1], {"value": "x"}),
    ]:
        with pytest.raises(TypeError, match=BAD):
            builder.pad(x, begin, end, label="bad", **options)
    assert builder.pad(x, [2, 3], [2, 3], mode="edge").shape == [7, 10]  # edge allows any size


# ---------------------------------------------------------------- tile
@pytest.mark.parametrize("dtype", ALL_TYPES)
@pytest.mark.parametrize("shape,reps", [
    ([], []),
    ([3], [4]),
    ([2, 3], [1, 1]),
    ([2, 3], [3, 2]),
    ([1, 2, 3], [2, 1, 3]),
    ([2, 1, 2, 1], [1, 3, 2, 2]),
])
def test_tile(builder, dtype, shape, reps):
    x = sample(dtype, shape)
    assert_same(unary(builder, "tile", x, reps), np.tile(x, reps))


def test_tile_repetitions_wrap_modulo_2_32(builder):
    # sequence<unsigned long> without [EnforceRange]: 2^32 + 2 converts to 2.
    x = sample("int32", [3])
    assert_same(unary(builder, "tile", x, [2 ** 32 + 2]), np.tile(x, 2))


def test_tile_validation(builder):
    x = declare(builder, "float32", [3, 4])
    for reps in [[2], [1, 1, 1], [0, 1], [2 ** 32, 1], [1, 2 ** 30], [-1, 1]]:
        with pytest.raises(TypeError, match=BAD):
            builder.tile(x, reps, label="bad")


# ---------------------------------------------------------------- reverse
@pytest.mark.parametrize("dtype", ALL_TYPES)
@pytest.mark.parametrize("shape,axes", [
    ([], None),
    ([], []),
    ([5], None),
    ([3, 4], [1]),
    ([3, 4], []),
    ([2, 3, 4], [0, 2]),
    ([2, 1, 3, 4], None),
    ([2, 3, 4], [2, 1, 0]),
])
def test_reverse(builder, dtype, shape, axes):
    x = sample(dtype, shape)
    options = {} if axes is None else {"axes": axes}
    expected = x if axes == [] else np.flip(x, axis=None if axes is None else tuple(axes))
    assert_same(unary(builder, "reverse", x, **options), expected)


def test_reverse_validation(builder):
    x = declare(builder, "float32", [2, 3])
    for axes in [[2], [0, 0], [1, 0, 1], [-1]]:
        with pytest.raises(TypeError, match=BAD):
            builder.reverse(x, axes=axes, label="bad")


# ---------------------------------------------------------------- triangular
@pytest.mark.parametrize("dtype", ALL_TYPES)
@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("diagonal", [0, 1, -1, 2, -3, 100, -100])
def test_triangular(builder, dtype, upper, diagonal):
    x = sample(dtype, [2, 3, 4])
    out = unary(builder, "triangular", x, upper=upper, diagonal=diagonal)
    rows, cols = np.indices(x.shape[-2:])
    keep = (cols - rows >= diagonal) if upper else (cols - rows <= diagonal)
    assert_same(out, np.where(keep, x, np.zeros((), dtype)))


def test_triangular_defaults_and_size_1_dims(builder):
    x = sample("float32", [1, 5, 1])
    assert_same(unary(builder, "triangular", x), np.triu(x))


def test_triangular_validation(builder):
    with pytest.raises(TypeError, match=BAD):
        builder.triangular(declare(builder, "float32", [4]), label="bad")
    x = declare(builder, "float32", [4, 4], "m")
    for diagonal in [2 ** 31, -(2 ** 31) - 1, float("nan")]:
        with pytest.raises(TypeError, match=BAD):
            builder.triangular(x, diagonal=diagonal, label="bad")


# ---------------------------------------------------------------- capability data
def test_op_support_limits(context):
    limits = context.op_support_limits()
    any_rank = {"min": 0, "max": 8}
    for op in ["expand", "pad", "reverse", "slice", "tile", "transpose"]:
        assert set(limits[op]) == {"input", "output"}
        assert limits[op]["input"] == {"dataTypes": ALL_TYPES, "rankRange": any_rank}
    assert limits["concat"]["inputs"]["rankRange"] == {"min": 1, "max": 8}
    assert set(limits["split"]) == {"input", "outputs"}
    assert limits["triangular"]["output"]["rankRange"] == {"min": 2, "max": 8}


# ---------------------------------------------------------------- sizes that split across threads
def test_large_tensors(builder):
    x = sample("float32", [192, 320])
    y = sample("float32", [100, 320], seed=1)
    ops = {
        "transpose": (lambda o: builder.transpose(o), x.T),
        "slice": (lambda o: builder.slice(o, [1, 3], [190, 317], strides=[1, 2]), x[1:191, 3:320:2]),
        "concat": (lambda o: builder.concat([o, builder.input("y", {"dataType": "float32", "shape": [100, 320]}), o], 0),
                   np.concatenate([x, y, x], 0)),
        "tile": (lambda o: builder.tile(o, [2, 3]), np.tile(x, [2, 3])),
        "pad": (lambda o: builder.pad(o, [5, 7], [6, 8], mode="edge"), np.pad(x, [(5, 6), (7, 8)], mode="edge")),
        "reverse": (lambda o: builder.reverse(o), x[::-1, ::-1]),
        "expand": (lambda o: builder.expand(builder.slice(o, [0, 0], [1, 320]), [400, 320]),
                   np.broadcast_to(x[:1], [400, 320])),
        "triangular": (lambda o: builder.triangular(o, upper=False, diagonal=-5), np.tril(x, -5)),
        "transpose021": (lambda o: builder.transpose(builder.reshape(o, [40, 48, 32]), permutation=[0, 2, 1]),
                         x.reshape(40, 48, 32).transpose(0, 2, 1)),
        "transpose201": (lambda o: builder.transpose(builder.reshape(o, [64, 32, 30]), permutation=[2, 0, 1]),
                         x.reshape(64, 32, 30).transpose(2, 0, 1)),
    }
    operand = declare(builder, "float32", x.shape)
    outputs = {name: make(operand) for name, (make, _) in ops.items()}
    parts = builder.split(operand, [100, 92], axis=0)
    outputs.update(split0=parts[0], split1=parts[1])
    results = run(builder, outputs, {"x": x, "y": y})
    for name, (_, expected) in ops.items():
        assert_same(results[name], expected)
    assert_same(results["split1"], x[100:])
