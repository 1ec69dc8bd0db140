"""MLContext creation, opSupportLimits, and MLTensor creation, writes and reads (digest §1.2-§1.5)."""
import numpy as np
import pytest

import webnn

DATA_TYPES = ["float32", "float16", "int32", "uint32", "int64", "uint64", "int8", "uint8", "int4", "uint4"]


# ---------------------------------------------------------------- createContext
def test_create_context_defaults():
    context = webnn.ml.create_context()
    assert isinstance(context, webnn.MLContext)
    assert context.power_preference == "default"
    assert context.accelerated is False
    assert context.num_threads >= 1
    assert not context.is_lost


@pytest.mark.parametrize("preference", ["default", "high-performance", "low-power"])
def test_create_context_power_preference(preference):
    assert webnn.ml.create_context(power_preference=preference).power_preference == preference
    assert webnn.create_context({"powerPreference": preference}).power_preference == preference


@pytest.mark.parametrize("bad", ["fast", "", "Default", None, 1])
def test_create_context_invalid_power_preference(bad):
    with pytest.raises(TypeError, match="power_preference"):
        webnn.ml.create_context(power_preference=bad)
    with pytest.raises(TypeError):
        webnn.ml.create_context({"powerPreference": bad})


@pytest.mark.parametrize("requested", [True, False])
def test_accelerated_is_false_even_when_requested(requested):
    # A CPU engine: the attribute reports that no massively parallel accelerator is used.
    assert webnn.ml.create_context(accelerated=requested).accelerated is False
    assert webnn.ml.create_context({"accelerated": requested}).accelerated is False


@pytest.mark.parametrize("device_type", ["cpu", "gpu"])
def test_device_type_accepted(device_type):
    # Beyond the spec: the 2022 draft's deviceType; both run on the CPU.
    context = webnn.ml.create_context(device_type=device_type)
    assert context.accelerated is False
    assert webnn.ml.create_context({"deviceType": device_type}).accelerated is False


@pytest.mark.parametrize("bad", ["npu", "CPU", "", 0])
def test_device_type_invalid(bad):
    with pytest.raises(TypeError, match="device_type"):
        webnn.ml.create_context(device_type=bad)


def test_num_threads():
    hardware = webnn._core.hardware_threads()
    assert webnn.ml.create_context(num_threads=1).num_threads == 1
    assert webnn.ml.create_context(num_threads=0).num_threads == hardware
    assert webnn.ml.create_context(num_threads=10_000).num_threads == hardware  # capped
    assert webnn.ml.create_context({"numThreads": 1}).num_threads == 1


@pytest.mark.parametrize("bad", [-1, 1.5, "2", True, None, 2**40])
def test_num_threads_invalid(bad):
    with pytest.raises(TypeError):
        webnn.ml.create_context(num_threads=bad)


def test_create_context_unknown_keyword():
    with pytest.raises(TypeError):
        webnn.ml.create_context(power="default")


def test_contexts_are_independent():
    a, b = webnn.ml.create_context(), webnn.ml.create_context()
    a.destroy()
    assert a.is_lost and not b.is_lost
    b.create_tensor(data_type="float32", shape=[1])


# ---------------------------------------------------------------- opSupportLimits
def test_op_support_limits_structure():
    limits = webnn.ml.create_context().op_support_limits()
    assert limits["preferredInputLayout"] in ("nchw", "nhwc")
    assert isinstance(limits["maxTensorByteLength"], int) and limits["maxTensorByteLength"] >= 2**31
    for member in ("input", "constant", "output"):
        assert sorted(limits[member]["dataTypes"]) == sorted(DATA_TYPES)
        assert limits[member]["rankRange"]["min"] == 0
        assert limits[member]["rankRange"]["max"] >= 4
    for op in ("add", "conv2d", "matmul", "relu", "reshape"):
        assert op in limits
    assert set(limits["add"]) == {"a", "b", "output"}
    assert set(limits["conv2d"]) == {"input", "filter", "bias", "output"}
    assert set(limits["relu"]) == {"input", "output"}
    assert limits["conv2d"]["input"]["rankRange"] == {"min": 4, "max": 4}
    for name, value in limits.items():
        if name in ("preferredInputLayout", "maxTensorByteLength"):
            continue
        operands = [value] if name in ("input", "constant", "output") else value.values()
        for operand in operands:
            assert set(operand) == {"dataTypes", "rankRange"}
            assert set(operand["dataTypes"]) <= set(DATA_TYPES)
            assert operand["rankRange"]["min"] <= operand["rankRange"]["max"]


def test_op_support_limits_lists_every_builder_method():
    limits = webnn.ml.create_context().op_support_limits()
    ops = [name for name in limits if name not in ("preferredInputLayout", "maxTensorByteLength", "input",
                                                    "constant", "output")]
    for op in ops:
        assert callable(getattr(webnn.MLGraphBuilder, op)), op


# ---------------------------------------------------------------- createTensor
@pytest.mark.parametrize("form", ["dict", "dict_snake", "keywords", "dataclass", "dict_and_keywords"])
def test_create_tensor_descriptor_forms(context, form):
    if form == "dict":
        tensor = context.create_tensor({"dataType": "int32", "shape": [2, 3], "readable": True})
    elif form == "dict_snake":
        tensor = context.create_tensor({"data_type": "int32", "shape": [2, 3], "readable": True})
    elif form == "keywords":
        tensor = context.create_tensor(data_type="int32", shape=[2, 3], readable=True)
    elif form == "dataclass":
        tensor = context.create_tensor(webnn.MLTensorDescriptor("int32", [2, 3], readable=True))
    else:
        tensor = context.create_tensor({"dataType": "int32", "shape": [2, 3]}, readable=True)
    assert isinstance(tensor, webnn.MLTensor)
    assert tensor.data_type == "int32"
    assert tensor.shape == [2, 3]
    assert tensor.readable and not tensor.writable and not tensor.constant and not tensor.destroyed
    np.testing.assert_array_equal(context.read_tensor(tensor), np.zeros((2, 3), np.int32))  # zero-filled


def test_create_tensor_flags_default_false(context):
    tensor = context.create_tensor(webnn.MLOperandDescriptor("float32", [1]))
    assert not tensor.readable and not tensor.writable
    with pytest.raises(TypeError, match="not readable"):
        context.read_tensor(tensor)
    with pytest.raises(TypeError, match="not writable"):
        context.write_tensor(tensor, np.zeros(1, np.float32))


def test_create_tensor_dtype_as_numpy_type(context):
    assert context.create_tensor(data_type=np.float16, shape=[2]).data_type == "float16"
    assert context.create_tensor(data_type=np.dtype("uint64"), shape=[2]).data_type == "uint64"


def test_create_tensor_scalar(context):
    tensor = context.create_tensor(data_type="float32", shape=[], readable=True, writable=True)
    assert tensor.shape == []
    context.write_tensor(tensor, np.float32(2.5))
    result = context.read_tensor(tensor)
    assert result.shape == () and result.dtype == np.float32 and result == 2.5


@pytest.mark.parametrize("shape", [[0], [2, 0], [-1], [2**32], [2**31], [65536, 65536], [1] * 9, [1.5], [True],
                                   "ab", 3, None, [None], [[2]]])
def test_create_tensor_invalid_shape(context, shape):
    with pytest.raises(TypeError):
        context.create_tensor(data_type="float32", shape=shape)


@pytest.mark.parametrize("data_type", ["float64", "bool", "int16", "bfloat16", "", None, 3, np.float64, "Float32"])
def test_create_tensor_invalid_data_type(context, data_type):
    with pytest.raises(TypeError):
        context.create_tensor(data_type=data_type, shape=[1])


@pytest.mark.parametrize("descriptor", [{"shape": [1]}, {"dataType": "float32"}, [1], "float32", 5])
def test_create_tensor_invalid_descriptor(context, descriptor):
    with pytest.raises(TypeError):
        context.create_tensor(descriptor)


def test_create_tensor_accepts_numpy_shape(context):
    tensor = context.create_tensor(data_type="int8", shape=np.array([2, 3]))
    assert tensor.shape == [2, 3]
    assert context.create_tensor(data_type="int8", shape=(4,)).shape == [4]


# ---------------------------------------------------------------- createConstantTensor
@pytest.mark.parametrize("form", ["desc_data", "array", "keywords", "dataclass", "bytes"])
def test_create_constant_tensor_forms(context, form):
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    if form == "desc_data":
        tensor = context.create_constant_tensor({"dataType": "float32", "shape": [2, 3]}, data)
    elif form == "array":
        tensor = context.create_constant_tensor(data)
    elif form == "keywords":
        tensor = context.create_constant_tensor(data_type="float32", shape=[2, 3], data=data)
    elif form == "dataclass":
        tensor = context.create_constant_tensor(webnn.MLOperandDescriptor("float32", [2, 3]), data)
    else:
        tensor = context.create_constant_tensor({"dataType": "float32", "shape": [2, 3]}, data.tobytes())
    assert tensor.constant and not tensor.readable and not tensor.writable
    assert tensor.data_type == "float32" and tensor.shape == [2, 3]
    # Its contents are observable through a graph.
    builder = webnn.MLGraphBuilder(context)
    out = builder.add(builder.constant(tensor), builder.constant(np.zeros((2, 3), np.float32)))
    np.testing.assert_array_equal(builder.build({"out": out}).compute({})["out"], data)


def test_create_constant_tensor_copies_data(context):
    data = np.ones(4, np.int32)
    tensor = context.create_constant_tensor(data)
    data[:] = 7
    builder = webnn.MLGraphBuilder(context)
    out = builder.add(builder.constant(tensor), builder.constant(np.zeros(4, np.int32)))
    np.testing.assert_array_equal(builder.build({"out": out}).compute({})["out"], np.ones(4, np.int32))


@pytest.mark.parametrize("data", [np.zeros(5, np.float32), np.zeros(4, np.float64), np.zeros(4, np.int32), b"abc",
                                  "text", None, [1.0, 2.0, 3.0, 4.0]])
def test_create_constant_tensor_bad_data(context, data):
    with pytest.raises(TypeError):
        context.create_constant_tensor({"dataType": "float32", "shape": [4]}, data)


def test_create_constant_tensor_bad_descriptor(context):
    with pytest.raises(TypeError):
        context.create_constant_tensor({"dataType": "float32", "shape": [0]}, b"")
    with pytest.raises(TypeError):
        context.create_constant_tensor(np.zeros(3, np.float64))  # float64 is no MLOperandDataType
    with pytest.raises(TypeError):
        context.create_constant_tensor()


# ---------------------------------------------------------------- writeTensor / readTensor
def _tensor(context, data_type, shape, **flags):
    return context.create_tensor(data_type=data_type, shape=shape, **flags)


@pytest.mark.parametrize("data_type", DATA_TYPES)
def test_write_read_round_trip_every_dtype(context, data_type):
    rng = np.random.default_rng(1)
    dtype = webnn.numpy_dtype(data_type)  # int4/uint4: one value per int8/uint8 element
    if dtype.kind == "f":
        data = rng.standard_normal((3, 4)).astype(dtype)
    else:
        low, high = {"int4": (-8, 7), "uint4": (0, 15)}.get(data_type, (np.iinfo(dtype).min, np.iinfo(dtype).max))
        data = rng.integers(low, high, size=(3, 4), dtype=dtype, endpoint=True)
    tensor = _tensor(context, data_type, [3, 4], readable=True, writable=True)
    context.write_tensor(tensor, data)
    result = context.read_tensor(tensor)
    assert result.dtype == dtype and result.shape == (3, 4)
    np.testing.assert_array_equal(result, data)


def test_read_float16_is_numpy_float16(context):
    tensor = _tensor(context, "float16", [3], readable=True, writable=True)
    context.write_tensor(tensor, np.array([0.5, -2.0, 65504.0], np.float16))
    result = context.read_tensor(tensor)
    assert result.dtype == np.float16
    np.testing.assert_array_equal(result, np.array([0.5, -2.0, 65504.0], np.float16))


def test_int64_exact(context):
    values = np.array([2**63 - 1, -(2**63), 2**53 + 1, -(2**53) - 1], np.int64)
    tensor = _tensor(context, "int64", [4], readable=True, writable=True)
    context.write_tensor(tensor, values)
    assert context.read_tensor(tensor).tolist() == values.tolist()
    unsigned = np.array([2**64 - 1, 2**53 + 1], np.uint64)
    tensor = _tensor(context, "uint64", [2], readable=True, writable=True)
    context.write_tensor(tensor, unsigned)
    assert context.read_tensor(tensor).tolist() == [2**64 - 1, 2**53 + 1]


def test_write_copies_before_return(context):
    tensor = _tensor(context, "float32", [1000], readable=True, writable=True)
    source = np.arange(1000, dtype=np.float32)
    context.write_tensor(tensor, source)
    source[:] = -1  # mutating the source afterwards must not change what was written
    np.testing.assert_array_equal(context.read_tensor(tensor), np.arange(1000, dtype=np.float32))


def test_write_copies_before_return_while_timeline_busy(context):
    # The write lands behind queued work, yet the caller's buffer is free at once.
    busy = _busy_graph(context)
    tensor = _tensor(context, "float32", [1000], readable=True, writable=True)
    busy()
    source = np.arange(1000, dtype=np.float32)
    context.write_tensor(tensor, source)
    source[:] = -1
    np.testing.assert_array_equal(context.read_tensor(tensor), np.arange(1000, dtype=np.float32))


def _busy_graph(context, size=192, count=4):
    """Returns a function that queues a few matmul dispatches on `context`."""
    builder = webnn.MLGraphBuilder(context)
    x = builder.input("x", data_type="float32", shape=[size, size])
    graph = builder.build({"y": builder.matmul(x, x)})
    a = context.create_tensor(data_type="float32", shape=[size, size])
    b = context.create_tensor(data_type="float32", shape=[size, size])

    def queue():
        for _ in range(count):
            context.dispatch(graph, {"x": a}, {"y": b})
    return queue


def test_write_accepts_bytes_and_uint8_views(context):
    tensor = _tensor(context, "float32", [2], readable=True, writable=True)
    data = np.array([1.5, -3.0], np.float32)
    context.write_tensor(tensor, data.tobytes())
    np.testing.assert_array_equal(context.read_tensor(tensor), data)
    context.write_tensor(tensor, bytearray((data * 2).tobytes()))
    np.testing.assert_array_equal(context.read_tensor(tensor), data * 2)
    context.write_tensor(tensor, (data * 3).view(np.uint8))
    np.testing.assert_array_equal(context.read_tensor(tensor), data * 3)
    context.write_tensor(tensor, memoryview((data * 4).tobytes()))
    np.testing.assert_array_equal(context.read_tensor(tensor), data * 4)


def test_write_accepts_any_shape_of_the_right_size(context):
    tensor = _tensor(context, "int32", [2, 3], readable=True, writable=True)
    context.write_tensor(tensor, np.arange(6, dtype=np.int32))  # byte length is what counts
    np.testing.assert_array_equal(context.read_tensor(tensor), np.arange(6, dtype=np.int32).reshape(2, 3))


def test_write_strided_array(context):
    tensor = _tensor(context, "float32", [2, 3], readable=True, writable=True)
    source = np.arange(24, dtype=np.float32).reshape(4, 6)[::2, ::2]
    context.write_tensor(tensor, source)
    np.testing.assert_array_equal(context.read_tensor(tensor), source)
    context.write_tensor(tensor, np.asfortranarray(source + 1))
    np.testing.assert_array_equal(context.read_tensor(tensor), source + 1)
    context.write_tensor(tensor, (source + 2)[::-1])
    np.testing.assert_array_equal(context.read_tensor(tensor), (source + 2)[::-1])


@pytest.mark.parametrize("data", [np.zeros(4, np.float64), np.zeros(4, np.int32), np.zeros(3, np.float32),
                                  np.zeros(5, np.float32), np.zeros(4, bool), np.zeros(4, np.float16),
                                  np.zeros(4, ">f4"), np.zeros(2, np.complex64), np.array([None] * 4, object),
                                  b"short", "text", None, 1.0, [1.0, 2.0, 3.0, 4.0]])
def test_write_rejects_bad_data(context, data):
    tensor = _tensor(context, "float32", [4], readable=True, writable=True)
    with pytest.raises(TypeError):
        context.write_tensor(tensor, data)


def test_read_into_out(context):
    tensor = _tensor(context, "int32", [2, 2], readable=True, writable=True)
    context.write_tensor(tensor, np.array([[1, 2], [3, 4]], np.int32))
    out = np.zeros((2, 2), np.int32)
    assert context.read_tensor(tensor, out=out) is out
    np.testing.assert_array_equal(out, [[1, 2], [3, 4]])
    flat = np.zeros(4, np.int32)  # any shape with the right byte length, like a BYOB ArrayBuffer
    context.read_tensor(tensor, flat)
    np.testing.assert_array_equal(flat, [1, 2, 3, 4])
    raw = bytearray(16)
    context.read_tensor(tensor, out=raw)
    assert np.frombuffer(raw, np.int32).tolist() == [1, 2, 3, 4]


@pytest.mark.parametrize("out", [np.zeros((2, 2), np.float32), np.zeros(3, np.int32), np.zeros(8, np.int32)[::2],
                                 bytes(16), np.zeros(0, np.int32), "text", 5,
                                 np.broadcast_to(np.zeros(1, np.int32), (4,))])
def test_read_into_bad_out(context, out):
    tensor = _tensor(context, "int32", [2, 2], readable=True, writable=True)
    with pytest.raises(TypeError):
        context.read_tensor(tensor, out=out)


def test_read_returns_new_array_each_time(context):
    tensor = _tensor(context, "float32", [2], readable=True, writable=True)
    context.write_tensor(tensor, np.array([1, 2], np.float32))
    first = context.read_tensor(tensor)
    first[:] = 9
    np.testing.assert_array_equal(context.read_tensor(tensor), [1, 2])
    assert first.flags.writeable and first.flags.c_contiguous


def test_tensor_repr_and_attributes(context):
    tensor = _tensor(context, "uint8", [3], writable=True)
    assert "uint8" in repr(tensor) and "[3]" in repr(tensor)
    assert tensor.writable and not tensor.readable


def test_tensor_from_other_context(context):
    other = webnn.ml.create_context()
    tensor = _tensor(other, "float32", [1], readable=True, writable=True)
    with pytest.raises(TypeError, match="another context"):
        context.write_tensor(tensor, np.zeros(1, np.float32))
    with pytest.raises(TypeError, match="another context"):
        context.read_tensor(tensor)
