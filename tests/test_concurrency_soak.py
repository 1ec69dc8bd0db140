"""Many Python threads on one context and on several, destroy() racing dispatch and read, and
resident memory over long runs (the slack each check allows is stated beside it)."""
import gc
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import webnn

THREADS = 8
DISPATCHES = 1000


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def rss_growth(run, warmup, count):
    """Resident memory gained by run(count) after run(warmup) warmed allocator pools and caches."""
    run(warmup)
    gc.collect()
    before = rss_bytes()
    run(count)
    gc.collect()
    return rss_bytes() - before


needs_proc = pytest.mark.skipif(not os.path.exists("/proc/self/statm") or bool(os.environ.get("WEBNN_SANITIZER")),
                                reason="needs /proc, and no sanitizer (their allocators keep freed memory)")


def affine_graph(context, scale):
    builder = webnn.MLGraphBuilder(context)
    x = builder.input("x", data_type="float32", shape=[64])
    y = builder.add(builder.mul(x, builder.constant(np.full(64, scale, np.float32))), builder.constant("float32", 1.0))
    return builder.build({"y": y})


def run_threads(target, count=THREADS):
    errors = []

    def guarded(i):
        try:
            target(i)
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    assert not errors, errors[:3]


def dispatch_loop(context, graph, i):
    x = context.create_tensor(data_type="float32", shape=[64], writable=True)
    y = context.create_tensor(data_type="float32", shape=[64], readable=True)
    data = np.arange(64, dtype=np.float32) + i
    for n in range(DISPATCHES):
        context.write_tensor(x, data + n)
        context.dispatch(graph, {"x": x}, {"y": y})
        if n % 50 == 49 or n == DISPATCHES - 1:
            np.testing.assert_array_equal(context.read_tensor(y), (data + n) * (i + 1) + 1)


def test_threads_share_one_context(context):
    graphs = [affine_graph(context, i + 1) for i in range(THREADS)]
    run_threads(lambda i: dispatch_loop(context, graphs[i], i))


def test_threads_share_one_graph(context):
    graph = affine_graph(context, 1)
    run_threads(lambda i: dispatch_loop(context, graph, 0))


def test_threads_each_with_a_context():
    def body(i):
        context = webnn.ml.create_context(num_threads=1)
        dispatch_loop(context, affine_graph(context, i + 1), i)
        context.destroy()

    run_threads(body)


DOCUMENTED = (TypeError, webnn.InvalidStateError)


def test_destroy_races_dispatch_and_read():
    """Destroying tensors, graphs and contexts while other threads use them gives documented
    errors only: TypeError (a destroyed tensor) or InvalidStateError (a destroyed graph or context,
    a pending read rejected)."""
    for round_ in range(20):
        context = webnn.ml.create_context(num_threads=2)
        graph = affine_graph(context, 2)
        x = context.create_tensor(data_type="float32", shape=[64], writable=True)
        y = context.create_tensor(data_type="float32", shape=[64], readable=True)
        start = threading.Barrier(3)

        def user(i):
            start.wait()
            for n in range(300):
                try:
                    context.write_tensor(x, np.full(64, n, np.float32))
                    context.dispatch(graph, {"x": x}, {"y": y})
                    out = context.read_tensor(y)
                    assert out.shape == (64,)
                except DOCUMENTED:
                    pass

        def destroyer(_):
            start.wait()
            victims = [y.destroy, graph.destroy, x.destroy, context.destroy]
            victims = victims[round_ % 4:] + victims[:round_ % 4]
            for destroy in victims:
                threading.Event().wait(0.0005 * (round_ % 5))
                destroy()

        run_threads(lambda i: destroyer(i) if i == 2 else user(i), count=3)


@needs_proc
def test_rss_is_flat_over_many_round_trips(context):
    graph = affine_graph(context, 3)
    x = context.create_tensor(data_type="float32", shape=[64], writable=True)
    y = context.create_tensor(data_type="float32", shape=[64], readable=True)
    data = np.ones(64, np.float32)

    def round_trips(n):
        for _ in range(n):
            context.write_tensor(x, data)
            context.dispatch(graph, {"x": x}, {"y": y})
            context.read_tensor(y)

    growth = rss_growth(round_trips, 5000, 100_000)
    # Slack: 4 MiB (allocator noise); a leak of even 64 bytes per round trip would be 6 MiB.
    assert growth < 4 << 20, f"RSS grew by {growth / 2**20:.1f} MiB over 100,000 round trips"


@needs_proc
def test_rss_is_flat_over_build_destroy_cycles(context):
    weights = np.random.default_rng(0).normal(size=(64, 64)).astype(np.float32)

    def cycles(n):
        for _ in range(n):
            builder = webnn.MLGraphBuilder(context)
            x = builder.input("x", data_type="float32", shape=[8, 64])
            y = builder.relu(builder.matmul(x, builder.constant(weights)))
            graph = builder.build({"y": y})
            graph.compute({"x": np.ones((8, 64), np.float32)})
            graph.destroy()

    growth = rss_growth(cycles, 200, 2000)
    # Slack: 8 MiB; each cycle holds 16 KiB of weights, so keeping even a quarter of them would
    # exceed it.
    assert growth < 8 << 20, f"RSS grew by {growth / 2**20:.1f} MiB over 2,000 build/destroy cycles"


def test_first_calls_from_many_threads_do_not_deadlock(tmp_path):
    """Threads whose first webnn calls race (a fresh process): nothing lazily made under the GIL
    may wait on another thread (the NumPy dtype table is made at import)."""
    import subprocess
    import sys

    script = tmp_path / "first_calls.py"
    script.write_text(
        "import threading, numpy as np, webnn\n"
        "def first(i):\n"
        "    c = webnn.ml.create_context(num_threads=1)\n"
        "    t = c.create_tensor(data_type='int32', shape=[2], readable=True, writable=True)\n"
        "    c.write_tensor(t, np.array([i, i], np.int32))\n"
        "    assert c.read_tensor(t).tolist() == [i, i]\n"
        "threads = [threading.Thread(target=first, args=(i,)) for i in range(8)]\n"
        "[t.start() for t in threads]; [t.join() for t in threads]\n"
        "print('ok')\n")
    for _ in range(3):
        result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
        assert result.returncode == 0 and "ok" in result.stdout, result.stderr[-2000:]


def pool_graph(context):
    """A matmul and a convolution large enough to split over the pool on every dispatch."""
    rng = np.random.default_rng(7)
    builder = webnn.MLGraphBuilder(context)
    a = builder.input("a", data_type="float32", shape=[192, 256])
    x = builder.input("x", data_type="float32", shape=[1, 16, 40, 40])
    m = builder.matmul(a, builder.constant(rng.standard_normal((256, 160)).astype(np.float32)))
    c = builder.conv2d(x, builder.constant(rng.standard_normal((32, 16, 3, 3)).astype(np.float32)), padding=[1, 1, 1, 1])
    return builder.build({"m": builder.relu(m), "c": c})


# Burns a core until its parent is gone (so a crashed test leaves nothing behind), 60 s at most.
SPINNER = """
import os, time
parent, end = os.getppid(), time.monotonic() + 60
while os.getppid() == parent and time.monotonic() < end:
    for _ in range(100000):
        pass
"""


def test_pool_results_unchanged_while_other_processes_hold_the_cores():
    """Busy processes preempt the pool's helper in the middle of its chunks, so regions stall and
    the pool drops to its caller alone for a while; every result must equal the one-thread run."""
    rng = np.random.default_rng(8)
    inputs = {"a": rng.standard_normal((192, 256)).astype(np.float32),
              "x": rng.standard_normal((1, 16, 40, 40)).astype(np.float32)}
    one = webnn.ml.create_context(num_threads=1)
    expected = pool_graph(one).compute(inputs)
    two = webnn.ml.create_context(num_threads=2)
    graph = pool_graph(two)
    spinners = [subprocess.Popen([sys.executable, "-c", SPINNER]) for _ in range(2)]
    try:
        for _ in range(60 if os.environ.get("WEBNN_SANITIZER") else 300):
            got = graph.compute(inputs)
            for name, value in expected.items():
                np.testing.assert_array_equal(got[name], value)
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
