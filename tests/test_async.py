"""The ``*_async`` forms of the spec's promise-returning methods, on asyncio."""
import asyncio
import threading

import numpy as np
import pytest

import webnn


def run(coroutine):
    return asyncio.run(coroutine)


def test_create_context_async():
    async def main():
        default = await webnn.create_context_async()
        low = await webnn.ml.create_context_async({"powerPreference": "low-power"})
        one = await webnn.ml.create_context_async(num_threads=1)
        return default, low, one

    default, low, one = run(main())
    assert isinstance(default, webnn.MLContext) and default.accelerated is False
    assert low.power_preference == "low-power"
    assert one.num_threads == 1


def test_create_context_async_invalid():
    async def main():
        await webnn.create_context_async(power_preference="turbo")

    with pytest.raises(TypeError):
        run(main())


def test_end_to_end_async():
    async def main():
        context = await webnn.create_context_async()
        builder = webnn.MLGraphBuilder(context)
        x = builder.input("x", data_type="float32", shape=[2, 2])
        w = await context.create_constant_tensor_async(np.eye(2, dtype=np.float32) * 3)
        graph = await builder.build_async({"y": builder.matmul(x, builder.constant(w))})
        tx = await context.create_tensor_async(data_type="float32", shape=[2, 2], writable=True)
        ty = await context.create_tensor_async({"dataType": "float32", "shape": [2, 2], "readable": True})
        context.write_tensor(tx, np.array([[1, 2], [3, 4]], np.float32))
        context.dispatch(graph, {"x": tx}, {"y": ty})
        fresh = await context.read_tensor_async(ty)
        out = np.zeros((2, 2), np.float32)
        filled = await context.read_tensor_async(ty, out=out)
        return fresh, filled, out

    fresh, filled, out = run(main())
    np.testing.assert_array_equal(fresh, [[3, 6], [9, 12]])
    assert filled is out
    np.testing.assert_array_equal(out, [[3, 6], [9, 12]])


def test_create_constant_tensor_async_forms(context):
    async def main():
        a = await context.create_constant_tensor_async({"dataType": "int8", "shape": [2]}, np.array([1, 2], np.int8))
        b = await context.create_constant_tensor_async(np.array([1, 2], np.int8))
        return a, b

    a, b = run(main())
    assert a.constant and b.constant and a.shape == b.shape == [2]


def test_build_async_errors(context):
    builder = webnn.MLGraphBuilder(context)
    x = builder.input("x", data_type="float32", shape=[1])

    async def main():
        with pytest.raises(TypeError):
            await builder.build_async({})
        with pytest.raises(TypeError):
            await builder.build_async({"x": x})
        y = builder.add(x, x)
        graph = await builder.build_async({"y": y})
        with pytest.raises(webnn.InvalidStateError):
            await builder.build_async({"y": y})
        return graph

    assert isinstance(run(main()), webnn.MLGraph)


def test_read_tensor_async_errors(context):
    unreadable = context.create_tensor(data_type="float32", shape=[1])
    destroyed = context.create_tensor(data_type="float32", shape=[1], readable=True)
    destroyed.destroy()

    async def main():
        with pytest.raises(TypeError, match="not readable"):
            await context.read_tensor_async(unreadable)
        with pytest.raises(TypeError, match="destroyed"):
            await context.read_tensor_async(destroyed)
        readable = context.create_tensor(data_type="float32", shape=[2], readable=True)
        with pytest.raises(TypeError):
            await context.read_tensor_async(readable, out=np.zeros(3, np.float32))

    run(main())


def test_many_concurrent_reads(context):
    """Reads of many tensors awaited together resolve each with its own data."""
    tensors = []
    for i in range(64):
        t = context.create_tensor(data_type="int32", shape=[3], readable=True, writable=True)
        context.write_tensor(t, np.full(3, i, np.int32))
        tensors.append(t)

    async def main():
        return await asyncio.gather(*(context.read_tensor_async(t) for t in tensors))

    for i, result in enumerate(run(main())):
        np.testing.assert_array_equal(result, [i, i, i])


def test_async_on_several_loops_and_threads():
    """Each thread runs its own event loop and context; completions reach the right loop."""
    results, errors = {}, []

    def worker(index):
        try:
            async def main():
                context = await webnn.create_context_async()
                builder = webnn.MLGraphBuilder(context)
                x = builder.input("x", data_type="int32", shape=[4])
                graph = await builder.build_async({"y": builder.add(x, builder.constant("int32", index))})
                tx = await context.create_tensor_async(data_type="int32", shape=[4], writable=True)
                ty = await context.create_tensor_async(data_type="int32", shape=[4], readable=True)
                total = 0
                for i in range(20):
                    context.write_tensor(tx, np.full(4, i, np.int32))
                    context.dispatch(graph, {"x": tx}, {"y": ty})
                    total += int((await context.read_tensor_async(ty)).sum())
                return total

            results[index] = asyncio.run(main())
        except BaseException as error:  # reported by the main thread
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    for i in range(4):
        assert results[i] == sum(4 * (k + i) for k in range(20))


def test_read_async_does_not_block_the_loop(context):
    """While a read waits behind queued work, other coroutines on the loop keep running."""
    builder = webnn.MLGraphBuilder(context)
    x = builder.input("x", data_type="float32", shape=[256, 256])
    graph = builder.build({"y": builder.matmul(x, x)})
    a = context.create_tensor(data_type="float32", shape=[256, 256])
    b = context.create_tensor(data_type="float32", shape=[256, 256], readable=True)

    async def main():
        ticks = 0
        for _ in range(20):
            context.dispatch(graph, {"x": a}, {"y": b})
        read = asyncio.ensure_future(context.read_tensor_async(b))
        while not read.done():
            ticks += 1
            await asyncio.sleep(0)
        return ticks, read.result()

    ticks, result = run(main())
    assert ticks >= 1
    assert result.shape == (256, 256)
