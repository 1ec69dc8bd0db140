"""DLPack (MLTensor.__dlpack__, __dlpack_device__; DLPack producers as write and read buffers): the
export is zero-copy, waits for the work queued before it, pins the tensor's bytes until the
consumer releases them (destroying the tensor or losing the context meanwhile is safe), and bad
requests raise BufferError / TypeError."""
import gc

import numpy as np
import pytest

import webnn

DTYPES = {"float32": np.float32, "float16": np.float16, "int32": np.int32, "uint32": np.uint32,
          "int64": np.int64, "uint64": np.uint64, "int8": np.int8, "uint8": np.uint8}


class Producer:
    """A DLPack producer without the buffer protocol (like a PyTorch CPU tensor)."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, **keywords):
        return self.array.__dlpack__(**keywords)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def _tensor(context, dtype="float32", shape=(2, 3), readable=True, writable=True):
    return context.create_tensor({"dataType": dtype, "shape": list(shape)}, readable=readable, writable=writable)


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_export_shares_the_tensors_bytes(context, dtype):
    t = _tensor(context, dtype, (3, 4, 5))
    values = np.arange(60).reshape(3, 4, 5).astype(DTYPES[dtype])
    context.write_tensor(t, values)
    a, b = np.from_dlpack(t), np.from_dlpack(t)
    assert a.dtype == DTYPES[dtype] and a.shape == (3, 4, 5) and a.flags.c_contiguous
    np.testing.assert_array_equal(a, values)
    assert np.shares_memory(a, b)
    assert t.__dlpack_device__() == (1, 0)
    context.write_tensor(t, values[::-1].copy())  # the view aliases the tensor
    np.testing.assert_array_equal(a, values[::-1])


def test_int4_exports_the_int8_values_it_is_held_in(context):
    t = _tensor(context, "int4", (5,))
    context.write_tensor(t, np.array([-8, -1, 0, 3, 7], np.int8))
    a = np.from_dlpack(t)
    assert a.dtype == np.int8
    np.testing.assert_array_equal(a, [-8, -1, 0, 3, 7])


def test_export_waits_for_queued_work(context):
    b = webnn.MLGraphBuilder(context)
    x = b.input("x", data_type="float32", shape=[256, 256])
    graph = b.build({"y": b.matmul(x, x)})
    xt, yt = _tensor(context, shape=(256, 256)), _tensor(context, shape=(256, 256))
    value = np.random.default_rng(0).standard_normal((256, 256)).astype(np.float32)
    context.write_tensor(xt, value)
    for _ in range(3):
        context.dispatch(graph, {"x": xt}, {"y": yt})
    np.testing.assert_allclose(np.from_dlpack(yt), value @ value, rtol=1e-4, atol=1e-3)


def test_the_export_outlives_the_tensor_and_the_context():
    context = webnn.ml.create_context()
    t = _tensor(context)
    context.write_tensor(t, np.full((2, 3), 4.0, np.float32))
    a = np.from_dlpack(t)
    capsule = t.__dlpack__()  # never consumed: its own destructor releases it
    t.destroy()
    context.destroy()
    gc.collect()
    np.testing.assert_array_equal(a, np.full((2, 3), 4.0))
    del a, capsule
    gc.collect()


# NumPy before 2.1 (the last for Python 3.9 is 2.0) imports every DLPack tensor read-only, and its
# from_dlpack has no copy=.
NUMPY_WRITABLE_DLPACK = np.lib.NumpyVersion(np.__version__) >= "2.1.0"


@pytest.mark.skipif(not NUMPY_WRITABLE_DLPACK, reason="NumPy before 2.1 imports DLPack tensors read-only")
def test_copies_and_read_only_exports(context):
    t = _tensor(context)
    context.write_tensor(t, np.ones((2, 3), np.float32))
    copy = np.from_dlpack(t, copy=True)
    assert not np.shares_memory(copy, np.from_dlpack(t)) and copy.flags.writeable
    read_only = _tensor(context, writable=False)
    assert not np.from_dlpack(read_only).flags.writeable
    assert np.from_dlpack(t).flags.writeable
    assert "dltensor" in repr(t.__dlpack__()) and "dltensor_versioned" in repr(t.__dlpack__(max_version=(1, 0)))


def test_bad_exports_raise(context):
    t = _tensor(context)
    with pytest.raises(BufferError, match="stream"):
        t.__dlpack__(stream=1)
    with pytest.raises(BufferError, match="CPU memory"):
        t.__dlpack__(dl_device=(2, 0))
    assert "dltensor_versioned" in repr(t.__dlpack__(max_version=(2**70, 0)))
    with pytest.raises(BufferError, match="CPU memory"):
        t.__dlpack__(dl_device=(2**70, 0))
    for bad in ({"max_version": 1}, {"max_version": (1,)}, {"dl_device": "cpu"}, {"copy": "yes"}):
        with pytest.raises(TypeError, match="__dlpack__"):
            t.__dlpack__(**bad)
    with pytest.raises(TypeError, match="not readable"):
        np.from_dlpack(_tensor(context, readable=False))
    t.destroy()
    with pytest.raises(TypeError, match="destroyed"):
        np.from_dlpack(t)
    lost = webnn.ml.create_context()
    u = _tensor(lost)
    lost.destroy()
    with pytest.raises(TypeError, match="destroyed"):  # a lost context's tensors are destroyed
        np.from_dlpack(u)


def test_dlpack_producers_are_written_and_read_in_place(context):
    t = _tensor(context, "int32", (3,))
    context.write_tensor(t, Producer(np.array([7, 8, 9], np.int32)))
    np.testing.assert_array_equal(context.read_tensor(t), [7, 8, 9])
    out = np.zeros(3, np.int32)
    if NUMPY_WRITABLE_DLPACK:
        assert context.read_tensor(t, Producer(out)) is not None
        np.testing.assert_array_equal(out, [7, 8, 9])
    else:
        with pytest.raises(TypeError, match="NumPy before 2.1 imports DLPack memory read-only"):
            context.read_tensor(t, Producer(out))
    with pytest.raises(TypeError, match="does not match int32"):
        context.write_tensor(t, Producer(np.zeros(3, np.float32)))
    constant = context.create_constant_tensor({"dataType": "float32", "shape": [3]},
                                              Producer(np.array([1, 2, 3], np.float32)))
    b = webnn.MLGraphBuilder(context)
    x = b.input("x", data_type="float32", shape=[3])
    graph = b.build({"y": b.add(x, b.constant(constant))})
    y = graph.compute({"x": Producer(np.array([10, 20, 30], np.float32))})["y"]
    np.testing.assert_array_equal(y, [11, 22, 33])
    # an MLTensor is a DLPack producer too
    np.testing.assert_array_equal(graph.compute({"x": t_float(context, [5, 6, 7])})["y"], [6, 8, 10])


def t_float(context, values):
    t = _tensor(context, "float32", (len(values),))
    context.write_tensor(t, np.array(values, np.float32))
    return t


def test_pytorch_round_trip(context):
    torch = pytest.importorskip("torch")
    t = _tensor(context)
    context.write_tensor(t, torch.arange(6, dtype=torch.float32).reshape(2, 3))
    view = torch.from_dlpack(t)
    assert view.shape == (2, 3) and view.dtype == torch.float32
    np.testing.assert_array_equal(view.numpy(), np.arange(6).reshape(2, 3))
