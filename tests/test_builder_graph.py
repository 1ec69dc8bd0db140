"""MLGraphBuilder inputs, constants and build; MLOperand and MLGraph (digest §1.6-§1.8)."""
import numpy as np
import pytest

import webnn


def _eval(builder, operand):
    """Builds `operand` (through an add of zero, so constants and inputs can be read) and runs it."""
    zero = builder.constant(operand.data_type, 0)
    return builder.build({"out": builder.add(operand, zero)}).compute({})["out"]


# ---------------------------------------------------------------- input
@pytest.mark.parametrize("form", ["dict", "dict_snake", "keywords", "dataclass"])
def test_input_descriptor_forms(builder, form):
    if form == "dict":
        x = builder.input("x", {"dataType": "float16", "shape": [2, 3]})
    elif form == "dict_snake":
        x = builder.input("x", {"data_type": "float16", "shape": (2, 3)})
    elif form == "keywords":
        x = builder.input("x", data_type="float16", shape=[2, 3])
    else:
        x = builder.input("x", webnn.MLOperandDescriptor(data_type="float16", shape=[2, 3]))
    assert isinstance(x, webnn.MLOperand)
    assert x.data_type == "float16"
    assert x.shape == [2, 3]
    assert "float16" in repr(x)


def test_scalar_input(builder):
    x = builder.input("x", data_type="int32", shape=[])
    graph = builder.build({"y": builder.add(x, x)})
    assert graph.input_descriptors == {"x": {"dataType": "int32", "shape": []}}
    assert graph.compute({"x": np.int32(21)})["y"] == 42


def test_input_validation(builder):
    builder.input("x", data_type="float32", shape=[1])
    with pytest.raises(TypeError, match="already used"):
        builder.input("x", data_type="float32", shape=[1])
    with pytest.raises(TypeError, match="empty"):
        builder.input("", data_type="float32", shape=[1])
    with pytest.raises(TypeError):
        builder.input(3, data_type="float32", shape=[1])
    with pytest.raises(TypeError):
        builder.input("z", data_type="float32", shape=[0])
    with pytest.raises(TypeError):
        builder.input("z", data_type="float32", shape=[2**31])
    with pytest.raises(TypeError):
        builder.input("z", data_type="double", shape=[1])
    with pytest.raises(TypeError):
        builder.input("z", data_type="float32")
    with pytest.raises(TypeError):
        builder.input("z", shape=[1])


# ---------------------------------------------------------------- constant
def test_constant_descriptor_and_buffer(builder):
    data = np.arange(6, dtype=np.int8).reshape(2, 3)
    c = builder.constant({"dataType": "int8", "shape": [2, 3]}, data)
    assert c.data_type == "int8" and c.shape == [2, 3]
    np.testing.assert_array_equal(_eval(builder, c), data)


def test_constant_bytes_and_uint8_view(context):
    data = np.array([1.5, -2.5], np.float32)
    for source in (data.tobytes(), bytearray(data.tobytes()), data.view(np.uint8), memoryview(data.tobytes())):
        builder = webnn.MLGraphBuilder(context)
        c = builder.constant(webnn.MLOperandDescriptor("float32", [2]), source)
        np.testing.assert_array_equal(_eval(builder, c), data)


def test_constant_numpy_array(builder):
    data = np.array([[1, 2], [3, 4]], np.uint32)
    c = builder.constant(data)
    assert c.data_type == "uint32" and c.shape == [2, 2]
    np.testing.assert_array_equal(_eval(builder, c), data)


def test_constant_strided_array(builder):
    data = np.arange(16, dtype=np.float32).reshape(4, 4)[::2, ::-1]
    np.testing.assert_array_equal(_eval(builder, builder.constant(data)), data)


def test_constant_copies_at_call_time(builder):
    data = np.ones(3, np.float32)
    c = builder.constant(data)
    data[:] = 5
    np.testing.assert_array_equal(_eval(builder, c), np.ones(3, np.float32))


@pytest.mark.parametrize("data_type, value, expected", [
    ("float32", 1.5, 1.5),
    ("float32", 1e40, np.inf),
    ("float16", 70000.0, np.inf),
    ("float16", 1.0009765625, 1.0009765625),
    ("int32", 2.5, 2),          # round half to even
    ("int32", 3.5, 4),
    ("int32", -2.5, -2),
    ("int8", 300, 127),          # saturate
    ("int8", -300, -128),
    ("uint8", -5, 0),
    ("uint8", 255.4, 255),
    ("uint32", 2**32 + 5, 2**32 - 1),
    ("uint32", 3_000_000_000, 3_000_000_000),
    ("int32", float("nan"), 0),
    ("int64", 2**63 - 1, 2**63 - 1),   # exact
    ("int64", -(2**63), -(2**63)),
    ("int64", 2**53 + 1, 2**53 + 1),
    ("uint64", 2**64 - 1, 2**64 - 1),
    ("uint64", -1, 0),
])
def test_constant_scalar_cast(builder, data_type, value, expected):
    c = builder.constant(data_type, value)
    assert c.data_type == data_type and c.shape == []
    result = _eval(builder, c)
    assert result.dtype == np.dtype(data_type) and result.shape == ()
    if isinstance(expected, float) and np.isinf(expected):
        assert np.isinf(result) and result > 0
    else:
        assert result.item() == expected


def test_constant_scalar_nan_and_negative_zero(context):
    builder = webnn.MLGraphBuilder(context)
    assert np.isnan(_eval(builder, builder.constant("float32", float("nan"))))
    builder = webnn.MLGraphBuilder(context)
    graph = builder.build({"out": builder.mul(builder.constant("float32", -0.0), builder.constant("float32", 1.0))})
    assert np.signbit(graph.compute({})["out"])


def test_constant_scalar_numpy_type_and_value(builder):
    c = builder.constant(np.int32, np.int64(7))
    assert c.data_type == "int32"
    assert _eval(builder, c) == 7


@pytest.mark.parametrize("value", [np.float16(0.35), np.int8(-3), np.uint32(7), np.float32(1e-3)])
def test_constant_numpy_scalar_keeps_its_dtype(context, value):
    # A NumPy scalar is a 0-d array of its dtype (not the float32 of a Python number).
    builder = webnn.MLGraphBuilder(context)
    c = builder.constant(value)
    assert c.data_type == value.dtype.name and list(c.shape) == []
    out = _eval(builder, c)
    assert out.dtype == value.dtype and out == value


@pytest.mark.parametrize("args", [("float32", "1"), ("float32", True), ("float32", None), ("float64", 1.0),
                                  ("bool", 1), ("float32", [1.0, 2.0])])
def test_constant_scalar_invalid(builder, args):
    with pytest.raises(TypeError):
        builder.constant(*args)


def test_constant_invalid_buffers(builder):
    with pytest.raises(TypeError):
        builder.constant({"dataType": "float32", "shape": [2]}, np.zeros(3, np.float32))
    with pytest.raises(TypeError):
        builder.constant({"dataType": "float32", "shape": [2]}, np.zeros(2, np.float64))
    with pytest.raises(TypeError):
        builder.constant({"dataType": "float32", "shape": [0]}, b"")
    with pytest.raises(TypeError):
        builder.constant(np.zeros(2, np.float64))
    with pytest.raises(TypeError):
        builder.constant(np.zeros(2, bool))
    with pytest.raises(TypeError):
        builder.constant()
    with pytest.raises(TypeError):
        builder.constant([1.0, 2.0])


def test_constant_tensor(context):
    data = np.array([1, 2, 3], np.int32)
    tensor = context.create_constant_tensor(data)
    builder = webnn.MLGraphBuilder(context)
    c = builder.constant(tensor)
    assert c.data_type == "int32" and c.shape == [3]
    np.testing.assert_array_equal(_eval(builder, c), data)


def test_constant_tensor_validation(context):
    builder = webnn.MLGraphBuilder(context)
    with pytest.raises(TypeError, match="createConstantTensor"):
        builder.constant(context.create_tensor(data_type="float32", shape=[1]))  # not a constant tensor
    other = webnn.ml.create_context().create_constant_tensor(np.zeros(1, np.float32))
    with pytest.raises(TypeError, match="another context"):
        builder.constant(other)
    destroyed = context.create_constant_tensor(np.zeros(1, np.float32))
    destroyed.destroy()
    with pytest.raises(TypeError, match="destroyed"):
        builder.constant(destroyed)


def test_constant_tensor_destroyed_before_build(context):
    tensor = context.create_constant_tensor(np.ones(2, np.float32))
    builder = webnn.MLGraphBuilder(context)
    out = builder.add(builder.constant(tensor), builder.constant(np.ones(2, np.float32)))
    tensor.destroy()
    with pytest.raises(TypeError, match="destroyed"):
        builder.build({"out": out})


def test_constant_tensor_destroyed_after_build_keeps_working(context):
    tensor = context.create_constant_tensor(np.array([1, 2], np.float32))
    builder = webnn.MLGraphBuilder(context)
    x = builder.input("x", data_type="float32", shape=[2])
    graph = builder.build({"y": builder.add(x, builder.constant(tensor))})
    tensor.destroy()
    assert tensor.destroyed
    np.testing.assert_array_equal(graph.compute({"x": np.array([10, 20], np.float32)})["y"], [11, 22])


# ---------------------------------------------------------------- build
def test_build_and_descriptors(builder):
    x = builder.input("x", data_type="float32", shape=[2, 2])
    y = builder.input("y", data_type="float32", shape=[2])
    s = builder.add(x, y)
    graph = builder.build({"sum": s, "relu": builder.relu(s)})
    assert isinstance(graph, webnn.MLGraph)
    assert graph.input_descriptors == {"x": {"dataType": "float32", "shape": [2, 2]},
                                       "y": {"dataType": "float32", "shape": [2]}}
    assert graph.output_descriptors == {"sum": {"dataType": "float32", "shape": [2, 2]},
                                        "relu": {"dataType": "float32", "shape": [2, 2]}}
    assert not graph.destroyed


def test_build_outputs_as_keywords(builder):
    x = builder.input("x", data_type="float32", shape=[1])
    graph = builder.build(y=builder.add(x, x))
    assert list(graph.output_descriptors) == ["y"]


def test_build_empty_outputs(builder):
    builder.input("x", data_type="float32", shape=[1])
    with pytest.raises(TypeError, match="at least one output"):
        builder.build({})


def test_build_input_or_constant_as_output(context):
    builder = webnn.MLGraphBuilder(context)
    x = builder.input("x", data_type="float32", shape=[1])
    with pytest.raises(TypeError, match="input"):
        builder.build({"x": x})
    with pytest.raises(TypeError, match="constant"):
        builder.build({"c": builder.constant("float32", 1)})
    # A failed validation does not spend the builder.
    graph = builder.build({"y": builder.add(x, x)})
    assert list(graph.input_descriptors) == ["x"]


def test_build_bad_output_values(context):
    builder = webnn.MLGraphBuilder(context)
    x = builder.input("x", data_type="float32", shape=[1])
    y = builder.add(x, x)
    with pytest.raises(TypeError):
        builder.build({"y": "not an operand"})
    with pytest.raises(TypeError):
        builder.build({"": y})
    with pytest.raises(TypeError):
        builder.build({1: y})
    with pytest.raises(TypeError):
        builder.build([y])
    other = webnn.MLGraphBuilder(context)
    z = other.input("z", data_type="float32", shape=[1])
    with pytest.raises(TypeError, match="another MLGraphBuilder"):
        builder.build({"z": other.add(z, z)})


def test_build_twice(builder):
    x = builder.input("x", data_type="float32", shape=[1])
    y = builder.add(x, x)
    builder.build({"y": y})
    with pytest.raises(webnn.InvalidStateError):
        builder.build({"y": y})
    with pytest.raises(webnn.InvalidStateError):
        builder.add(x, x)
    with pytest.raises(webnn.InvalidStateError):
        builder.input("w", data_type="float32", shape=[1])
    with pytest.raises(webnn.InvalidStateError):
        builder.constant("float32", 1)
    # Operands stay inspectable after build.
    assert y.shape == [1] and y.data_type == "float32"


def test_unused_inputs_are_not_graph_inputs(context):
    builder = webnn.MLGraphBuilder(context)
    x = builder.input("x", data_type="float32", shape=[2])
    builder.input("unused", data_type="float32", shape=[2])
    graph = builder.build({"y": builder.relu(x)})
    assert list(graph.input_descriptors) == ["x"]
    tx = context.create_tensor(data_type="float32", shape=[2])
    tu = context.create_tensor(data_type="float32", shape=[2])
    ty = context.create_tensor(data_type="float32", shape=[2])
    with pytest.raises(TypeError):
        context.dispatch(graph, {"x": tx, "unused": tu}, {"y": ty})
    context.dispatch(graph, {"x": tx}, {"y": ty})


def test_graph_without_inputs(builder):
    graph = builder.build({"y": builder.add(builder.constant("int32", 2), builder.constant("int32", 3))})
    assert graph.input_descriptors == {}
    assert graph.compute({})["y"] == 5


def test_two_outputs_share_an_operand(context):
    builder = webnn.MLGraphBuilder(context)
    x = builder.input("x", data_type="float32", shape=[2])
    y = builder.add(x, x)
    graph = builder.build({"a": y, "b": y})
    result = graph.compute({"x": np.array([1, 2], np.float32)})
    np.testing.assert_array_equal(result["a"], [2, 4])
    np.testing.assert_array_equal(result["b"], [2, 4])


def test_input_and_output_names_are_separate(builder):
    x = builder.input("x", data_type="float32", shape=[1])
    graph = builder.build({"x": builder.add(x, x)})
    assert graph.compute({"x": np.array([3], np.float32)})["x"] == 6


def test_operand_from_another_builder(context):
    a, b = webnn.MLGraphBuilder(context), webnn.MLGraphBuilder(context)
    x = a.input("x", data_type="float32", shape=[1])
    y = b.input("y", data_type="float32", shape=[1])
    with pytest.raises(TypeError, match="another MLGraphBuilder"):
        b.add(x, y)


def test_builder_context(context):
    builder = webnn.MLGraphBuilder(context)
    x = builder.input("x", data_type="float32", shape=[1])
    graph = builder.build({"y": builder.add(x, x)})
    tx = context.create_tensor(data_type="float32", shape=[1], writable=True)
    ty = context.create_tensor(data_type="float32", shape=[1], readable=True)
    context.write_tensor(tx, np.array([4], np.float32))
    graph.context.dispatch(graph, {"x": tx}, {"y": ty})  # the graph's context is this context
    assert context.read_tensor(ty) == 8
    with pytest.raises(TypeError):
        webnn.MLGraphBuilder("not a context")


# ---------------------------------------------------------------- a small model, dispatched and computed
def test_conv_relu_add_dispatch_and_compute(context):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 2, 5, 5)).astype(np.float32)
    w = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
    z = rng.standard_normal((1, 3, 3, 3)).astype(np.float32)
    builder = webnn.MLGraphBuilder(context)
    xi = builder.input("x", data_type="float32", shape=x.shape)
    y = builder.add(builder.relu(builder.conv2d(xi, builder.constant(w))), builder.constant(z))
    graph = builder.build({"y": y})

    windows = np.lib.stride_tricks.sliding_window_view(x.astype(np.float64), (3, 3), axis=(2, 3))
    reference = np.maximum(np.einsum("nchwij,ocij->nohw", windows, w.astype(np.float64)), 0) + z

    np.testing.assert_allclose(graph.compute({"x": x})["y"], reference, rtol=1e-5, atol=1e-5)
    tx = context.create_tensor(data_type="float32", shape=x.shape, writable=True)
    ty = context.create_tensor(data_type="float32", shape=y.shape, readable=True)
    context.write_tensor(tx, x)
    context.dispatch(graph, {"x": tx}, {"y": ty})
    np.testing.assert_allclose(context.read_tensor(ty), reference, rtol=1e-5, atol=1e-5)


def test_compute_validation(builder):
    x = builder.input("x", data_type="float32", shape=[2])
    graph = builder.build({"y": builder.add(x, x)})
    with pytest.raises(TypeError, match="missing input"):
        graph.compute({})
    with pytest.raises(TypeError, match="dtype"):
        graph.compute({"x": np.zeros(2, np.float64)})
    with pytest.raises(TypeError, match="shape"):
        graph.compute({"x": np.zeros(3, np.float32)})
    with pytest.raises(TypeError, match="unknown input"):
        graph.compute({"x": np.zeros(2, np.float32), "w": np.zeros(2, np.float32)})


def test_compute_on_destroyed_graph(builder):
    x = builder.input("x", data_type="float32", shape=[2])
    graph = builder.build({"y": builder.add(x, x)})
    graph.destroy()
    with pytest.raises(webnn.InvalidStateError):
        graph.compute({"x": np.zeros(2, np.float32)})


def test_compute_reuses_its_tensors_and_returns_fresh_arrays(context, builder):
    x = builder.input("x", data_type="float32", shape=[3])
    graph = builder.build({"y": builder.mul(x, builder.constant(np.full(3, 2, np.float32)))})
    first = graph.compute({"x": np.array([1, 2, 3], np.float32)})["y"]
    kept = graph._compute_tensors
    second = graph.compute({"x": np.array([4, 5, 6], np.float32)})["y"]
    assert graph._compute_tensors[0]["x"] is kept[0]["x"] and graph._compute_tensors[1]["y"] is kept[1]["y"]
    np.testing.assert_array_equal(first, [2, 4, 6])  # not overwritten by the second call
    np.testing.assert_array_equal(second, [8, 10, 12])


def test_compute_from_threads_at_once(context, builder):
    import threading
    x = builder.input("x", data_type="float32", shape=[64])
    graph = builder.build({"y": builder.add(x, x)})
    failures = []

    def run(seed):
        for i in range(50):
            value = np.full(64, seed * 1000 + i, np.float32)
            if not np.array_equal(graph.compute({"x": value})["y"], value * 2):
                failures.append((seed, i))

    threads = [threading.Thread(target=run, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


def test_compute_after_its_context_is_lost():
    context = webnn.ml.create_context()
    builder = webnn.MLGraphBuilder(context)
    x = builder.input("x", data_type="float32", shape=[2])
    graph = builder.build({"y": builder.add(x, x)})
    graph.compute({"x": np.zeros(2, np.float32)})  # keeps its tensors
    context.destroy()
    with pytest.raises((webnn.InvalidStateError, TypeError)):
        graph.compute({"x": np.zeros(2, np.float32)})


def test_op_methods_have_both_names(context, builder):
    for op in context.op_support_limits():
        if op[0].islower() and any(ch.isupper() for ch in op) and op != "maxTensorByteLength" \
                and op != "preferredInputLayout":
            assert getattr(webnn.MLGraphBuilder, op) is getattr(webnn.MLGraphBuilder, webnn._api.snake_case(op))
    x = builder.input("x", data_type="float32", shape=[1])
    assert builder.add(x, x, label="sum").shape == [1]
    assert builder.add(x, x, {"label": "sum"}).shape == [1]  # a trailing options dict, as in JavaScript
    with pytest.raises(TypeError):
        builder.add(x, x, bogus=1)
    with pytest.raises(TypeError):
        builder.add(x, x, x, x)
    with pytest.raises(AttributeError):
        builder.not_an_op(x)
