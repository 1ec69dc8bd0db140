"""The GIL is released while webnn waits or computes, and contexts work from many threads."""
import sys
import threading

import numpy as np
import pytest

import webnn

SIZE = 384


def _matmul_graph(context):
    builder = webnn.MLGraphBuilder(context)
    x = builder.input("x", data_type="float32", shape=[SIZE, SIZE])
    return builder.build({"y": builder.matmul(x, x)})


def _progress_while(blocking_call):
    """Runs `blocking_call` on a second thread and counts the main thread's loop iterations while
    that call is inside webnn. The switch interval is made huge, so the GIL changes hands only when
    a thread releases it: if webnn held the GIL for the whole call, the count would be exactly 0."""
    started = threading.Event()
    finished = threading.Event()
    failure = []

    def worker():
        started.set()
        try:
            blocking_call()
        except BaseException as error:  # reported below
            failure.append(error)
        finished.set()

    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(1000.0)
    try:
        thread = threading.Thread(target=worker)
        thread.start()
        started.wait()
        count = 0
        while not finished.is_set():
            count += 1
            finished.wait(0.001)  # blocks without the GIL, so the worker can take it back
        thread.join()
    finally:
        sys.setswitchinterval(old_interval)
    assert not failure, failure
    return count


def _one_thread_context():
    # One compute thread leaves a core free, so the main thread wakes while webnn works.
    return webnn.ml.create_context(num_threads=1)


def test_gil_released_while_reading_behind_a_long_dispatch():
    context = _one_thread_context()
    graph = _matmul_graph(context)
    a = context.create_tensor(data_type="float32", shape=[SIZE, SIZE], writable=True)
    b = context.create_tensor(data_type="float32", shape=[SIZE, SIZE], readable=True)
    context.write_tensor(a, np.eye(SIZE, dtype=np.float32))

    def long_work():
        for _ in range(10):
            context.dispatch(graph, {"x": a}, {"y": b})
        context.read_tensor(b)

    progress = _progress_while(long_work)
    assert progress > 0
    np.testing.assert_array_equal(context.read_tensor(b), np.eye(SIZE, dtype=np.float32))


def test_gil_released_by_compute_and_build():
    context = _one_thread_context()
    x = np.eye(SIZE, dtype=np.float32)

    def build_and_compute():
        graph = _matmul_graph(context)
        for _ in range(5):
            graph.compute({"x": x})

    assert _progress_while(build_and_compute) > 0


def _dispatch_loop(context, graph, seed, iterations, results):
    rng = np.random.default_rng(seed)
    tx = context.create_tensor(data_type="float32", shape=[8, 8], writable=True)
    tb = context.create_tensor(data_type="float32", shape=[8, 8], writable=True)
    ty = context.create_tensor(data_type="float32", shape=[8, 8], readable=True)
    ok = True
    for _ in range(iterations):
        x = rng.standard_normal((8, 8)).astype(np.float32)
        b = rng.standard_normal((8, 8)).astype(np.float32)
        context.write_tensor(tx, x)
        context.write_tensor(tb, b)
        context.dispatch(graph, {"x": tx, "b": tb}, {"y": ty})
        ok = ok and np.allclose(context.read_tensor(ty), np.maximum(x @ x + b, 0), rtol=1e-5, atol=1e-5)
    results[seed] = ok


def _mm_add_relu(context):
    builder = webnn.MLGraphBuilder(context)
    x = builder.input("x", data_type="float32", shape=[8, 8])
    b = builder.input("b", data_type="float32", shape=[8, 8])
    return builder.build({"y": builder.relu(builder.add(builder.matmul(x, x), b))})


def _run_threads(targets):
    threads = [threading.Thread(target=t) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
        assert not t.is_alive()


def test_threads_dispatching_on_one_context():
    context = webnn.ml.create_context()
    graph = _mm_add_relu(context)  # one graph, dispatched from every thread
    results = {}
    _run_threads([lambda s=s: _dispatch_loop(context, graph, s, 100, results) for s in range(6)])
    assert results == {s: True for s in range(6)}


def test_threads_on_separate_contexts():
    results = {}

    def target(seed):
        context = webnn.ml.create_context(num_threads=1 + seed % 2)
        _dispatch_loop(context, _mm_add_relu(context), seed, 100, results)

    _run_threads([lambda s=s: target(s) for s in range(6)])
    assert results == {s: True for s in range(6)}


def test_threads_building_on_one_context():
    context = webnn.ml.create_context()
    graphs = {}

    def target(index):
        builder = webnn.MLGraphBuilder(context)
        x = builder.input("x", data_type="int32", shape=[2])
        y = x
        for _ in range(50):
            y = builder.add(y, builder.constant("int32", index))
        graphs[index] = builder.build({"y": y})

    _run_threads([lambda i=i: target(i) for i in range(6)])
    for index, graph in graphs.items():
        np.testing.assert_array_equal(graph.compute({"x": np.array([1, 2], np.int32)})["y"],
                                      [1 + 50 * index, 2 + 50 * index])


@pytest.mark.parametrize("destroy", ["tensor", "context"])
def test_destroy_while_another_thread_waits(destroy):
    """A blocked read ends with an error, not a hang, when its tensor or context goes away."""
    context = webnn.ml.create_context()
    graph = _matmul_graph(context)
    a = context.create_tensor(data_type="float32", shape=[SIZE, SIZE])
    b = context.create_tensor(data_type="float32", shape=[SIZE, SIZE], readable=True)
    outcome = []
    started = threading.Event()

    def reader():
        for _ in range(20):
            context.dispatch(graph, {"x": a}, {"y": b})
        started.set()
        try:
            context.read_tensor(b)
            outcome.append("read")
        except (webnn.InvalidStateError, TypeError) as error:
            outcome.append(type(error))

    thread = threading.Thread(target=reader)
    thread.start()
    started.wait()
    (b.destroy if destroy == "tensor" else context.destroy)()
    thread.join(timeout=120)
    assert not thread.is_alive()
    assert outcome and outcome[0] in ("read", webnn.InvalidStateError, TypeError)
