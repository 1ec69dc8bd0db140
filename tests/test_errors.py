"""The error classes (digest §1.10), and garbage input that must raise, never crash."""
import numpy as np
import pytest

import webnn


# ---------------------------------------------------------------- the class hierarchy
@pytest.mark.parametrize("cls, builtin", [
    (webnn.DataError, ValueError),
    (webnn.InvalidStateError, RuntimeError),
    (webnn.NotSupportedError, NotImplementedError),
    (webnn.OperationError, RuntimeError),
    (webnn.UnknownError, RuntimeError),
])
def test_error_classes(cls, builtin):
    assert issubclass(cls, webnn.MLError)
    assert issubclass(cls, builtin)
    assert issubclass(webnn.MLError, Exception)
    assert not issubclass(cls, TypeError)
    with pytest.raises(webnn.MLError):
        raise cls("x")


def test_error_classes_are_distinct():
    classes = [webnn.DataError, webnn.InvalidStateError, webnn.NotSupportedError, webnn.OperationError,
               webnn.UnknownError]
    for a in classes:
        for b in classes:
            assert (a is b) == issubclass(a, b)


def test_type_error_is_the_builtin(builder):
    x = builder.input("x", data_type="float32", shape=[2])
    with pytest.raises(TypeError) as info:
        builder.add(x, builder.input("y", data_type="int32", shape=[2]), label="my_add")
    assert type(info.value) is TypeError
    assert str(info.value).startswith("[my_add] add:")


def test_invalid_state_error_message(context):
    builder = webnn.MLGraphBuilder(context)
    x = builder.input("x", data_type="float32", shape=[2])
    builder.build({"y": builder.add(x, x)})
    with pytest.raises(webnn.InvalidStateError, match="already built"):
        builder.add(x, x, label="late")


# ---------------------------------------------------------------- garbage never crashes
GARBAGE = [None, 0, -1, 2**70, 1.5, float("nan"), "x", b"x", [], [None], {}, object(), np.zeros((2, 2)),
           np.float64(1.0), np.array(1.0), np.zeros((0,), np.float32), type, print]


@pytest.mark.parametrize("value", GARBAGE, ids=lambda v: type(v).__name__)
def test_garbage_to_builder_ops(builder, value):
    x = builder.input("x", data_type="float32", shape=[2, 2])
    calls = [lambda: builder.add(x, value), lambda: builder.add(value, x), lambda: builder.conv2d(value, value),
             lambda: builder.matmul(x, value), lambda: builder.reshape(x, value)]
    if not isinstance(value, dict):  # relu({}) is the 2022 draft's MLActivation form
        calls.append(lambda: builder.relu(value))
    if value is not None:  # None leaves an option at its default
        image = builder.input("image", data_type="float32", shape=[1, 1, 3, 3])
        calls.append(lambda: builder.conv2d(image, builder.constant(np.ones((1, 1, 2, 2), np.float32)),
                                            padding=value))
    for call in calls:
        with pytest.raises(TypeError):
            call()


@pytest.mark.parametrize("value", GARBAGE, ids=lambda v: type(v).__name__)
def test_garbage_to_context_methods(context, value):
    tensor = context.create_tensor(data_type="float32", shape=[2], readable=True, writable=True)
    calls = [lambda: context.create_tensor(value), lambda: context.create_tensor(data_type=value, shape=[1]),
             lambda: context.create_tensor(data_type="float32", shape=value),
             lambda: context.create_constant_tensor(value), lambda: context.write_tensor(value, value),
             lambda: context.read_tensor(value), lambda: context.read_tensor(tensor, out=value),
             lambda: context.write_tensor(tensor, value), lambda: context.dispatch(value, value, value),
             lambda: webnn.MLGraphBuilder(value)]
    for call in calls:
        try:
            call()
        except TypeError:
            pass  # some values are valid (an empty shape is a scalar); the rest must raise TypeError


def test_garbage_to_builder_methods(builder):
    for call in (lambda: builder.input(None, data_type="float32", shape=[1]),
                 lambda: builder.input("a", None),
                 lambda: builder.input("a", {"dataType": "float32", "shape": None}),
                 lambda: builder.input("a", {"dataType": "float32", "shape": [[1]]}),
                 lambda: builder.input("a", {"dataType": "float32", "shape": ["1"]}),
                 lambda: builder.input("a", {"dataType": "float32", "shape": [2**32]}),
                 lambda: builder.input("a", {"dataType": "float32", "shape": [-(2**70)]}),
                 lambda: builder.constant(None),
                 lambda: builder.constant(None, None),
                 lambda: builder.constant("float32", object()),
                 lambda: builder.constant({"dataType": "float32", "shape": [1]}, object()),
                 lambda: builder.constant({"dataType": "float32", "shape": [1]}, "four"),
                 lambda: builder.build(None and {}),
                 lambda: builder.build({"y": None}),
                 lambda: builder.build("y")):
        with pytest.raises(TypeError):
            call()


@pytest.mark.parametrize("shape", [[2**31 - 1, 2], [65536] * 3, [2**16, 2**16, 2], [1] * 20, [2**32 - 1]])
def test_huge_shapes_are_type_errors(context, builder, shape):
    with pytest.raises(TypeError):
        context.create_tensor(data_type="float32", shape=shape)
    with pytest.raises(TypeError):
        builder.input("x", data_type="float32", shape=shape)
    with pytest.raises(TypeError):
        builder.constant({"dataType": "float32", "shape": shape}, b"")


def test_huge_output_shapes_are_type_errors(builder):
    a = builder.input("a", data_type="float32", shape=[65536, 1])
    b = builder.input("b", data_type="float32", shape=[1, 65536])
    with pytest.raises(TypeError):
        builder.add(a, b)  # 2^32 elements
    with pytest.raises(TypeError):
        builder.matmul(a, b)
    with pytest.raises(TypeError):
        builder.reshape(a, [2**31, 2])


def test_zero_dim_arrays(context, builder):
    scalar = context.create_tensor(data_type="int32", shape=[], readable=True, writable=True)
    context.write_tensor(scalar, np.array(7, np.int32))
    assert context.read_tensor(scalar) == 7
    out = np.array(0, np.int32)
    context.read_tensor(scalar, out=out)
    assert out == 7
    c = builder.constant(np.array(3.5, np.float32))
    assert c.shape == []


def test_wrong_dtype_arrays(context):
    for data_type, wrong in [("float32", np.float64), ("float16", np.float32), ("int64", np.uint64),
                             ("uint32", np.int32), ("int8", np.uint16)]:
        tensor = context.create_tensor(data_type=data_type, shape=[4], readable=True, writable=True)
        with pytest.raises(TypeError, match="does not match"):
            context.write_tensor(tensor, np.zeros(4, wrong))
        with pytest.raises(TypeError):
            context.read_tensor(tensor, out=np.zeros(4, wrong))


def test_readonly_out_array(context):
    tensor = context.create_tensor(data_type="float32", shape=[2], readable=True)
    out = np.zeros(2, np.float32)
    out.flags.writeable = False
    with pytest.raises(TypeError):
        context.read_tensor(tensor, out=out)
    with pytest.raises(TypeError):
        context.read_tensor(tensor, out=b"\0" * 8)


def test_non_native_byte_order(context, builder):
    tensor = context.create_tensor(data_type="float32", shape=[2], readable=True, writable=True)
    with pytest.raises(TypeError):
        context.write_tensor(tensor, np.array([1, 2], ">f4"))
    with pytest.raises(TypeError):
        builder.constant(np.array([1, 2], ">i4"))
    context.write_tensor(tensor, np.array([1, 2], "<f4"))
    np.testing.assert_array_equal(context.read_tensor(tensor), [1, 2])


def test_objects_cannot_be_constructed_directly():
    for cls in (webnn.MLTensor, webnn.MLGraph, webnn.MLOperand):
        with pytest.raises(TypeError):
            cls()
