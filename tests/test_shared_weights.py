"""Weights shared across graphs and contexts (core/shared_constants.h): a model built again, in the
same or another context, adds no constant bytes; its graphs run concurrently from many threads with
the results of a single-threaded run; entries go with the last graph holding them."""
import gc
import threading

import numpy as np

import webnn
from webnn import _core

RNG = np.random.default_rng(17)
FILTER = RNG.standard_normal((32, 16, 3, 3)).astype(np.float32)  # packed at build
WEIGHTS = RNG.standard_normal((512, 64)).astype(np.float32)      # a matmul's packed B
TABLE = RNG.standard_normal((300, 64)).astype(np.float32)        # read at run time (gather)


def _build(context, scale=1.0):
    b = webnn.MLGraphBuilder(context)
    x = b.input("x", data_type="float32", shape=[1, 16, 8, 8])
    ids = b.input("ids", data_type="int32", shape=[4])
    conv = b.relu(b.conv2d(x, b.constant(FILTER * np.float32(scale)), padding=[1, 1, 1, 1]))
    rows = b.gather(b.constant(TABLE), ids)
    dense = b.matmul(b.reshape(conv, [4, 512]), b.constant(WEIGHTS))
    return b.build({"y": b.add(dense, rows)})


def _feeds(seed):
    rng = np.random.default_rng(seed)
    return {"x": rng.standard_normal((1, 16, 8, 8)).astype(np.float32),
            "ids": rng.integers(0, 300, 4).astype(np.int32)}


def test_a_model_built_again_adds_no_constant_bytes():
    gc.collect()
    base = _core.shared_constant_stats()
    first = _build(webnn.ml.create_context())
    one = _core.shared_constant_stats()
    assert one[1] - base[1] >= FILTER.nbytes + WEIGHTS.nbytes + TABLE.nbytes  # (packed forms pad)
    others = [_build(webnn.ml.create_context(num_threads=1)) for _ in range(3)] + [_build(first.context)]
    assert _core.shared_constant_stats() == one
    different = _build(webnn.ml.create_context(), scale=2.0)  # other filter values: their own copy
    assert _core.shared_constant_stats()[1] > one[1]
    feeds = _feeds(0)
    want = first.compute(feeds)["y"]
    for graph in others:
        np.testing.assert_array_equal(graph.compute(feeds)["y"], want)
    del first, others, different, graph
    gc.collect()
    assert _core.shared_constant_stats() == base


def test_threads_dispatching_on_shared_weights_match_one_thread():
    threads, runs = 8, 1000
    feeds = [_feeds(seed) for seed in range(8)]
    reference_graph = _build(webnn.ml.create_context(num_threads=1))
    want = [reference_graph.compute(f)["y"] for f in feeds]
    failures = []

    def worker(index):
        try:
            run_thread(index)
        except Exception as error:  # a thread's exception would not fail the test by itself
            failures.append((index, repr(error)))

    def run_thread(index):
        context = webnn.ml.create_context(num_threads=1)
        graph = _build(context)
        x = context.create_tensor({"dataType": "float32", "shape": [1, 16, 8, 8]}, writable=True)
        ids = context.create_tensor({"dataType": "int32", "shape": [4]}, writable=True)
        y = context.create_tensor({"dataType": "float32", "shape": [4, 64]}, readable=True)
        for run in range(runs):
            k = (index + run) % len(feeds)
            context.write_tensor(x, feeds[k]["x"])
            context.write_tensor(ids, feeds[k]["ids"])
            context.dispatch(graph, {"x": x, "ids": ids}, {"y": y})
            if run % 10 == 0 or run == runs - 1:
                got = context.read_tensor(y)
                if not np.array_equal(got, want[k]):
                    failures.append((index, run))
                    return
        assert run == runs - 1

    pool = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    assert not failures, f"results differ from the single-threaded run at (thread, run) {failures[:5]}"
