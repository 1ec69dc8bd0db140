"""dispatch validation, destroy() semantics and ordering on the context timeline (digest §1.3, §1.4, §1.9)."""
import asyncio

import numpy as np
import pytest

import webnn


def _add_graph(context, data_type="float32", shape=(2,)):
    """z = x + y."""
    builder = webnn.MLGraphBuilder(context)
    x = builder.input("x", data_type=data_type, shape=shape)
    y = builder.input("y", data_type=data_type, shape=shape)
    return builder.build({"z": builder.add(x, y)})


def _tensors(context, count, data_type="float32", shape=(2,), **flags):
    return [context.create_tensor(data_type=data_type, shape=shape, **flags) for _ in range(count)]


def _slow_graph(context, size=256):
    """A matmul big enough that a few queued dispatches keep the timeline busy for a while."""
    builder = webnn.MLGraphBuilder(context)
    x = builder.input("x", data_type="float32", shape=[size, size])
    graph = builder.build({"y": builder.matmul(x, x)})
    a, b = _tensors(context, 2, shape=[size, size])
    return lambda count: [context.dispatch(graph, {"x": a}, {"y": b}) for _ in range(count)]


# ---------------------------------------------------------------- dispatch validation
@pytest.fixture
def setup(context):
    graph = _add_graph(context)
    x, y = _tensors(context, 2, writable=True)
    z, = _tensors(context, 1, readable=True)
    context.write_tensor(x, np.array([1, 2], np.float32))
    context.write_tensor(y, np.array([10, 20], np.float32))
    return context, graph, x, y, z


def test_dispatch_basic(setup):
    context, graph, x, y, z = setup
    assert context.dispatch(graph, {"x": x, "y": y}, {"z": z}) is None
    np.testing.assert_array_equal(context.read_tensor(z), [11, 22])


def test_dispatch_needs_no_flags(context):
    graph = _add_graph(context)
    x, y, z = _tensors(context, 3)  # neither readable nor writable
    context.dispatch(graph, {"x": x, "y": y}, {"z": z})


def test_dispatch_graph_from_another_context(setup):
    context, _, x, y, z = setup
    other_graph = _add_graph(webnn.ml.create_context())
    with pytest.raises(TypeError, match="another context"):
        context.dispatch(other_graph, {"x": x, "y": y}, {"z": z})


def test_dispatch_destroyed_graph(setup):
    context, graph, x, y, z = setup
    graph.destroy()
    graph.destroy()  # idempotent
    assert graph.destroyed
    with pytest.raises(webnn.InvalidStateError):
        context.dispatch(graph, {"x": x, "y": y}, {"z": z})


def test_dispatch_duplicate_tensors(setup):
    context, graph, x, y, z = setup
    with pytest.raises(TypeError, match="more than once"):
        context.dispatch(graph, {"x": x, "y": x}, {"z": z})
    with pytest.raises(TypeError, match="more than once"):
        context.dispatch(graph, {"x": x, "y": y}, {"z": x})


def test_dispatch_tensor_from_another_context(setup):
    context, graph, x, y, _ = setup
    foreign, = _tensors(webnn.ml.create_context(), 1)
    with pytest.raises(TypeError, match="another context"):
        context.dispatch(graph, {"x": x, "y": y}, {"z": foreign})
    with pytest.raises(TypeError, match="another context"):
        context.dispatch(graph, {"x": foreign, "y": y}, {"z": _tensors(context, 1)[0]})


def test_dispatch_destroyed_tensor(setup):
    context, graph, x, y, z = setup
    y.destroy()
    with pytest.raises(TypeError, match="destroyed"):
        context.dispatch(graph, {"x": x, "y": y}, {"z": z})
    z.destroy()
    with pytest.raises(TypeError, match="destroyed"):
        context.dispatch(graph, {"x": x, "y": _tensors(context, 1)[0]}, {"z": z})


def test_dispatch_constant_tensor(setup):
    context, graph, x, y, z = setup
    constant = context.create_constant_tensor(np.zeros(2, np.float32))
    with pytest.raises(TypeError, match="constant"):
        context.dispatch(graph, {"x": x, "y": constant}, {"z": z})
    with pytest.raises(TypeError, match="constant"):
        context.dispatch(graph, {"x": x, "y": y}, {"z": constant})


@pytest.mark.parametrize("data_type, shape", [("float16", (2,)), ("int32", (2,)), ("float32", (3,)),
                                              ("float32", (1, 2)), ("float32", ())])
def test_dispatch_descriptor_mismatch(setup, data_type, shape):
    context, graph, x, y, z = setup
    wrong, = _tensors(context, 1, data_type=data_type, shape=shape)
    with pytest.raises(TypeError, match="expects"):
        context.dispatch(graph, {"x": x, "y": wrong}, {"z": z})
    with pytest.raises(TypeError, match="expects"):
        context.dispatch(graph, {"x": x, "y": y}, {"z": wrong})


def test_dispatch_missing_and_extra_names(setup):
    context, graph, x, y, z = setup
    extra, = _tensors(context, 1)
    with pytest.raises(TypeError):
        context.dispatch(graph, {"x": x}, {"z": z})
    with pytest.raises(TypeError):
        context.dispatch(graph, {"x": x, "w": y}, {"z": z})
    with pytest.raises(TypeError):
        context.dispatch(graph, {"x": x, "y": y, "w": extra}, {"z": z})
    with pytest.raises(TypeError):
        context.dispatch(graph, {"x": x, "y": y}, {})
    with pytest.raises(TypeError):
        context.dispatch(graph, {"x": x, "y": y}, {"out": z})
    with pytest.raises(TypeError):
        context.dispatch(graph, {"x": x, "y": y}, {"z": z, "w": extra})


@pytest.mark.parametrize("inputs, outputs", [
    ("x", {}), ([1], {}), (None, {}), ({"x": 1, "y": 2}, {}), ({1: None}, {}), ({"x": np.zeros(2)}, {}),
])
def test_dispatch_garbage(setup, inputs, outputs):
    context, graph, _, _, z = setup
    with pytest.raises(TypeError):
        context.dispatch(graph, inputs, outputs or {"z": z})


def test_dispatch_garbage_graph(setup):
    context, _, x, y, z = setup
    for graph in (None, "graph", webnn.MLGraphBuilder(context)):
        with pytest.raises(TypeError):
            context.dispatch(graph, {"x": x, "y": y}, {"z": z})


def test_failed_dispatch_has_no_effect(setup):
    context, graph, x, y, z = setup
    context.dispatch(graph, {"x": x, "y": y}, {"z": z})
    with pytest.raises(TypeError):
        context.dispatch(graph, {"x": x, "y": x}, {"z": z})
    np.testing.assert_array_equal(context.read_tensor(z), [11, 22])


# ---------------------------------------------------------------- destroy(): tensors
def test_tensor_destroy(setup):
    context, graph, x, y, z = setup
    x.destroy()
    x.destroy()  # idempotent
    assert x.destroyed
    with pytest.raises(TypeError, match="destroyed"):
        context.write_tensor(x, np.zeros(2, np.float32))
    z.destroy()
    with pytest.raises(TypeError, match="destroyed"):
        context.read_tensor(z)
    with pytest.raises(TypeError, match="destroyed"):
        context.read_tensor(z, out=np.zeros(2, np.float32))
    assert x.shape == [2] and x.data_type == "float32"  # attributes stay readable


def test_work_queued_before_a_destroy_completes(setup):
    context, graph, x, y, z = setup
    context.dispatch(graph, {"x": x, "y": y}, {"z": z})
    x.destroy()
    y.destroy()
    np.testing.assert_array_equal(context.read_tensor(z), [11, 22])


def test_pending_read_rejected_by_tensor_destroy():
    context = webnn.ml.create_context()
    slow = _slow_graph(context, size=512)
    tensor, = _tensors(context, 1, readable=True, writable=True)

    async def main():
        slow(100)  # the read below waits behind these (destroying the context drops the rest)
        pending = context.read_tensor_async(tensor)
        tensor.destroy()
        with pytest.raises(webnn.InvalidStateError):
            await pending

    try:
        asyncio.run(main())
    finally:
        context.destroy()


def test_pending_read_into_out_rejected_and_untouched():
    context = webnn.ml.create_context()
    slow = _slow_graph(context, size=512)
    tensor, = _tensors(context, 1, readable=True, writable=True)
    context.write_tensor(tensor, np.array([5, 6], np.float32))
    out = np.full(2, -1, np.float32)
    other, = _tensors(context, 1, readable=True)

    async def main():
        slow(100)
        pending = context.read_tensor_async(tensor, out=out)
        after = context.read_tensor_async(other)
        tensor.destroy()
        with pytest.raises(webnn.InvalidStateError):
            await pending
        context.destroy()  # drops the queued matmuls; the later read is aborted too
        with pytest.raises(webnn.InvalidStateError):
            await after

    asyncio.run(main())
    np.testing.assert_array_equal(out, [-1, -1])


def test_graph_destroy_lets_queued_work_finish(setup):
    context, graph, x, y, z = setup
    context.dispatch(graph, {"x": x, "y": y}, {"z": z})
    graph.destroy()
    np.testing.assert_array_equal(context.read_tensor(z), [11, 22])


# ---------------------------------------------------------------- destroy(): contexts
def test_context_destroy():
    context = webnn.ml.create_context()
    graph = _add_graph(context)
    x, y = _tensors(context, 2, writable=True)
    z, = _tensors(context, 1, readable=True)
    constant = context.create_constant_tensor(np.zeros(2, np.float32))
    builder = webnn.MLGraphBuilder(context)
    w = builder.input("w", data_type="float32", shape=[2])
    lost = context.lost
    assert not lost.done() and not context.is_lost

    context.destroy()
    info = lost.result(timeout=30)
    assert isinstance(info, webnn.MLContextLostInfo) and isinstance(info.message, str) and info.message
    assert context.is_lost
    assert context.lost.result(timeout=30).message == info.message
    context.destroy()  # nothing happens the second time

    assert graph.destroyed and x.destroyed and z.destroyed and constant.destroyed
    with pytest.raises(webnn.InvalidStateError):
        context.dispatch(graph, {"x": x, "y": y}, {"z": z})
    with pytest.raises(TypeError):
        context.write_tensor(x, np.zeros(2, np.float32))
    with pytest.raises(TypeError):
        context.read_tensor(z)
    with pytest.raises(webnn.InvalidStateError):
        context.create_tensor(data_type="float32", shape=[1])
    with pytest.raises(webnn.InvalidStateError):
        context.create_constant_tensor(np.zeros(1, np.float32))
    with pytest.raises(webnn.InvalidStateError):
        webnn.MLGraphBuilder(context)
    with pytest.raises(webnn.InvalidStateError):
        builder.add(w, w)
    with pytest.raises(webnn.InvalidStateError):
        builder.input("v", data_type="float32", shape=[1])
    with pytest.raises(webnn.InvalidStateError):
        builder.constant("float32", 1.0)
    with pytest.raises(webnn.InvalidStateError):
        builder.build({"w": w})
    # Reading attributes of dead objects stays safe.
    assert x.shape == [2] and context.power_preference == "default"
    assert graph.input_descriptors == {"x": {"dataType": "float32", "shape": [2]},
                                       "y": {"dataType": "float32", "shape": [2]}}


def test_context_destroy_rejects_pending_reads_and_builds():
    context = webnn.ml.create_context()
    slow = _slow_graph(context, size=512)
    tensor, = _tensors(context, 1, readable=True)
    builder = webnn.MLGraphBuilder(context)
    x = builder.input("x", data_type="float32", shape=[2])
    y = builder.add(x, x)

    async def main():
        slow(100)
        read = context.read_tensor_async(tensor)
        build = builder.build_async({"y": y})
        context.destroy()
        with pytest.raises(webnn.InvalidStateError):
            await read
        with pytest.raises(webnn.InvalidStateError):
            await build

    asyncio.run(main())


def test_lost_future_from_another_thread():
    context = webnn.ml.create_context()
    lost = context.lost
    import threading
    threading.Thread(target=context.destroy).start()
    assert lost.result(timeout=30).message


def test_lost_awaitable():
    context = webnn.ml.create_context()

    async def main():
        waiter = asyncio.ensure_future(asyncio.wrap_future(context.lost))
        await asyncio.sleep(0)
        assert not waiter.done()
        context.destroy()
        return await waiter

    assert isinstance(asyncio.run(main()), webnn.MLContextLostInfo)


# ---------------------------------------------------------------- ordering on the timeline
def test_fibonacci_chained_inference():
    """The MLTensor explainer's example: three tensors rotated, no reads in between."""
    context = webnn.ml.create_context()
    builder = webnn.MLGraphBuilder(context)
    fn1 = builder.input("F_n-1", {"dataType": "int32", "shape": [1]})
    fn2 = builder.input("F_n-2", {"dataType": "int32", "shape": [1]})
    graph = builder.build({"F_n": builder.add(fn1, fn2)})

    n_max = 40
    descriptors = [{"dataType": "int32", "shape": [1], "writable": True},
                   {"dataType": "int32", "shape": [1], "writable": True},
                   {"dataType": "int32", "shape": [1]}]
    descriptors[n_max % 3]["readable"] = True
    tensors = [context.create_tensor(d) for d in descriptors]
    context.write_tensor(tensors[0], np.array([0], np.int32))
    context.write_tensor(tensors[1], np.array([1], np.int32))
    for n in range(2, n_max + 1):
        context.dispatch(graph, {"F_n-1": tensors[(n - 1) % 3], "F_n-2": tensors[(n - 2) % 3]},
                         {"F_n": tensors[n % 3]})
    assert context.read_tensor(tensors[n_max % 3])[0] == 102334155


def test_read_while_many_dispatches_are_queued(context):
    """1000 chained increments (ping-pong between two tensors), then one read."""
    builder = webnn.MLGraphBuilder(context)
    x = builder.input("x", data_type="int64", shape=[3])
    graph = builder.build({"y": builder.add(x, builder.constant(np.array([1, 2, 3], np.int64)))})
    a, b = _tensors(context, 2, data_type="int64", shape=[3], readable=True, writable=True)
    context.write_tensor(a, np.array([0, 0, 2**40], np.int64))
    for i in range(1000):
        src, dst = (a, b) if i % 2 == 0 else (b, a)
        context.dispatch(graph, {"x": src}, {"y": dst})
    np.testing.assert_array_equal(context.read_tensor(a), [1000, 2000, 2**40 + 3000])
    np.testing.assert_array_equal(context.read_tensor(b), [999, 1998, 2**40 + 2997])


def test_reads_observe_their_point_in_the_timeline(context):
    """Reads queued between dispatches and writes see exactly the state at that point."""
    builder = webnn.MLGraphBuilder(context)
    x = builder.input("x", data_type="int32", shape=[1])
    graph = builder.build({"y": builder.add(x, builder.constant("int32", 1))})
    a, b = _tensors(context, 2, data_type="int32", shape=[1], readable=True, writable=True)
    slow = _slow_graph(context, size=128)

    async def main():
        slow(4)  # later work queues behind this
        pending = []
        context.write_tensor(a, np.array([0], np.int32))
        for i in range(50):
            src, dst = (a, b) if i % 2 == 0 else (b, a)
            context.dispatch(graph, {"x": src}, {"y": dst})
            pending.append(context.read_tensor_async(dst))
            if i == 25:
                context.write_tensor(dst, np.array([1000], np.int32))
                pending.append(context.read_tensor_async(dst))
        return [int(r[0]) for r in await asyncio.gather(*pending)]

    values = asyncio.run(main())
    expected = list(range(1, 27)) + [1000] + list(range(1001, 1025))
    assert values == expected


def test_write_then_dispatch_then_write(context):
    graph = _add_graph(context, "int32")
    x, y = _tensors(context, 2, data_type="int32", writable=True)
    z1, z2 = _tensors(context, 2, data_type="int32", readable=True)
    context.write_tensor(y, np.array([0, 0], np.int32))
    context.write_tensor(x, np.array([1, 1], np.int32))
    context.dispatch(graph, {"x": x, "y": y}, {"z": z1})
    context.write_tensor(x, np.array([2, 2], np.int32))  # must not affect the dispatch above
    context.dispatch(graph, {"x": x, "y": y}, {"z": z2})
    np.testing.assert_array_equal(context.read_tensor(z1), [1, 1])
    np.testing.assert_array_equal(context.read_tensor(z2), [2, 2])


def test_same_tensor_in_consecutive_dispatches(context):
    """An output of one dispatch feeds the next at once (chained inference with float16)."""
    builder = webnn.MLGraphBuilder(context)
    x = builder.input("x", data_type="float16", shape=[4])
    graph = builder.build({"y": builder.add(x, x)})
    a, b = _tensors(context, 2, data_type="float16", shape=[4], readable=True, writable=True)
    context.write_tensor(a, np.array([1, 0.5, -0.25, 3], np.float16))
    for _ in range(5):
        context.dispatch(graph, {"x": a}, {"y": b})
        context.dispatch(graph, {"x": b}, {"y": a})
    result = context.read_tensor(a)
    assert result.dtype == np.float16
    np.testing.assert_array_equal(result, np.array([1, 0.5, -0.25, 3], np.float16) * 1024)


@pytest.mark.parametrize("shape,runs", [([64], 50), ([4096, 4096], 5)])
def test_destroy_rejects_every_read_already_queued(context, shape, runs):
    """WPT read_before_destroy: readTensor(t), then t.destroy() before the promise settles, rejects
    it with InvalidStateError, however far the copy got (the promise settles on the event loop)."""
    async def main():
        outcomes = []
        for _ in range(runs):
            t = context.create_tensor({"dataType": "float32", "shape": shape}, readable=True, writable=True)
            reads = [context.read_tensor_async(t), context.read_tensor_async(t)]
            t.destroy()
            for read in reads:
                try:
                    await read
                    outcomes.append("resolved")
                except webnn.InvalidStateError as error:
                    assert "destroyed" in str(error)
                    outcomes.append("rejected")
        return outcomes

    assert asyncio.run(main()) == ["rejected"] * (2 * runs)


def test_a_read_settled_before_destroy_keeps_its_value(context):
    async def main():
        t = context.create_tensor({"dataType": "float32", "shape": [3]}, readable=True, writable=True)
        context.write_tensor(t, np.array([1, 2, 3], np.float32))
        value = await context.read_tensor_async(t)
        t.destroy()
        return value

    np.testing.assert_array_equal(asyncio.run(main()), [1, 2, 3])
