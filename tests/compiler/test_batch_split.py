"""The batch_split pass (compiler/passes/batch_split.cc): a batched graph whose every op keeps batch
items apart compiles for a chunk of the batch, and the executor runs it chunk by chunk (with two
threads, two chunks at once, each on its own thread and working memory). Results match the graph
without the pass and the same graph built for one item and run item by item (float32 rounding: a
chunk's kernels may order their sums differently); graphs with an op that mixes items run whole."""
import numpy as np
import pytest

import webnn
from webnn import _core

RNG = np.random.default_rng(23)


def _weights(*shape):
    return (RNG.standard_normal(shape) / np.sqrt(np.prod(shape[1:]))).astype(np.float32)


W1, B1, W2, B2 = _weights(16, 8, 3, 3), _weights(16), _weights(32, 16, 1, 1), _weights(32)


def _conv_net(b, batch):
    x = b.input("x", data_type="float32", shape=[batch, 8, 24, 24])
    h = b.relu(b.conv2d(x, b.constant(W1), bias=b.constant(B1), padding=[1, 1, 1, 1], label="first"))
    pooled = b.max_pool2d(h, window_dimensions=[2, 2], strides=[2, 2])
    h = b.conv2d(pooled, b.constant(W2), bias=b.constant(B2))
    return b.build({"y": b.softmax(b.reduce_mean(h, axes=[2, 3]), 1), "features": b.sigmoid(h),
                    "pooled": b.reshape(pooled, [batch, 16 * 12 * 12])})  # a view: copied out per chunk


def _split_log(graph):
    return dict(_core.plan_passes(graph))["batch_split"]


def _close(got, want):
    for name in want:
        scale = max(1.0, float(np.abs(want[name]).max()))
        np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-6 * scale, err_msg=name)


def _build(context, make, batch, monkeypatch=None, disable=False, chunk=None):
    if monkeypatch is not None:
        if disable:
            monkeypatch.setenv("WEBNN_DISABLE_PASSES", "batch_split")
        if chunk is not None:
            monkeypatch.setenv("WEBNN_BATCH_CHUNK", str(chunk))
    graph = make(webnn.MLGraphBuilder(context), batch)
    if monkeypatch is not None:
        monkeypatch.delenv("WEBNN_DISABLE_PASSES", raising=False)
        monkeypatch.delenv("WEBNN_BATCH_CHUNK", raising=False)
    return graph


def _item_by_item(context, make, feeds):
    """The graph built for one item, run once per item: the reference a split must reproduce."""
    single = make(webnn.MLGraphBuilder(context), 1)
    batch = next(iter(feeds.values())).shape[0]
    runs = [single.compute({k: v[i:i + 1] for k, v in feeds.items()}) for i in range(batch)]
    return {name: np.concatenate([r[name] for r in runs]) for name in runs[0]}


@pytest.fixture(scope="module", params=[1, 2], ids=["1thread", "2threads"])
def threaded(request):
    return webnn.ml.create_context(num_threads=request.param), request.param


@pytest.mark.parametrize("batch", [3, 4, 6])
def test_conv_net_runs_chunk_by_chunk(threaded, monkeypatch, batch):
    context, threads = threaded
    x = RNG.standard_normal((batch, 8, 24, 24)).astype(np.float32)
    graph = _build(context, _conv_net, batch)
    plain = _build(context, _conv_net, batch, monkeypatch, disable=True)
    workers = threads if batch % threads == 0 else 1
    at_once = " threads at once" if workers > 1 else " thread, one at a time"
    assert _split_log(graph).startswith(f"batch {batch}: {batch} chunks of 1 on {workers}{at_once}")
    assert _split_log(plain) == "disabled (WEBNN_DISABLE_PASSES)"
    got = graph.compute({"x": x})
    _close(got, plain.compute({"x": x}))
    _close(got, _item_by_item(context, _conv_net, {"x": x}))
    np.testing.assert_allclose(got["y"].sum(1), np.ones(batch), rtol=1e-5)  # each item's softmax
    assert got["pooled"].shape == (batch, 16 * 12 * 12) and (got["pooled"] >= 0).all()


@pytest.mark.parametrize("chunk", [2, 3])
def test_forced_chunk_size(threaded, monkeypatch, chunk):
    context, threads = threaded
    x = RNG.standard_normal((6, 8, 24, 24)).astype(np.float32)
    graph = _build(context, _conv_net, 6, monkeypatch, chunk=chunk)
    chunks = 6 // chunk
    workers = threads if chunks % threads == 0 else 1
    assert _split_log(graph).startswith(f"batch 6: {chunks} chunks of {chunk} on {workers}")
    _close(graph.compute({"x": x}), _item_by_item(context, _conv_net, {"x": x}))


def test_repeated_dispatches_into_tensors(threaded):
    context, _ = threaded
    graph = _build(context, _conv_net, 4)
    assert _split_log(graph).startswith("batch 4: 4 chunks of 1")
    x_tensor = context.create_tensor({"dataType": "float32", "shape": [4, 8, 24, 24]}, writable=True)
    y_tensor = context.create_tensor({"dataType": "float32", "shape": [4, 32]}, readable=True)
    f_tensor = context.create_tensor({"dataType": "float32", "shape": [4, 32, 12, 12]}, readable=True)
    p_tensor = context.create_tensor({"dataType": "float32", "shape": [4, 16 * 12 * 12]}, readable=True)
    for _ in range(3):
        x = RNG.standard_normal((4, 8, 24, 24)).astype(np.float32)
        context.write_tensor(x_tensor, x)
        context.dispatch(graph, {"x": x_tensor}, {"y": y_tensor, "features": f_tensor, "pooled": p_tensor})
        _close({"y": context.read_tensor(y_tensor), "features": context.read_tensor(f_tensor),
                "pooled": context.read_tensor(p_tensor)}, _item_by_item(context, _conv_net, {"x": x}))


def test_profiling_counts_dispatches_not_chunks(threaded):
    context, _ = threaded
    graph = _build(context, _conv_net, 4)
    x = RNG.standard_normal((4, 8, 24, 24)).astype(np.float32)
    graph.set_profiling(True)
    for _ in range(3):
        graph.compute({"x": x})
    profile = graph.profile()
    assert profile["runs"] == 3
    steps = graph.describe_plan()["steps"]
    assert len(profile["steps"]) == len(steps)
    assert all(ms > 0 for (index, ms) in profile["steps"] if not steps[index]["view"])


def _attention(b, batch):
    """A transformer block in the MiniLM pattern: per-item products, heads split by transposes."""
    rng = np.random.default_rng(5)
    x = b.input("x", data_type="float32", shape=[batch, 64, 64])

    def heads(w):
        h = b.reshape(b.matmul(x, b.constant((rng.standard_normal((64, 64)) / 8).astype(np.float32))), [batch, 64, 4, 16])
        return b.transpose(h, permutation=[0, 2, 1, 3])

    q, k, v = heads(0), heads(1), heads(2)
    scores = b.softmax(b.mul(b.matmul(q, b.transpose(k, permutation=[0, 1, 3, 2])), b.constant(np.float32(0.25))), 3)
    mixed = b.reshape(b.transpose(b.matmul(scores, v), permutation=[0, 2, 1, 3]), [batch, 64, 64])
    return b.build({"y": b.layer_normalization(b.add(mixed, x), axes=[2])})


def _moved_batch_attention(b, batch):
    """PP-OCR's SVTR attention: one projection cut into q, k, v along an axis the transpose puts
    before the batch, so the batch sits on axis 1 between the transposes."""
    rng = np.random.default_rng(7)
    x = b.input("x", data_type="float32", shape=[batch, 64, 64])
    qkv = b.matmul(x, b.constant((rng.standard_normal((64, 192)) / 8).astype(np.float32)))
    parts = b.transpose(b.reshape(qkv, [batch, 64, 3, 4, 16]), permutation=[2, 0, 3, 1, 4])  # [3, batch, 4, 64, 16]
    q, k, v = (b.gather(parts, b.constant(np.array(i, np.int32)), axis=0) for i in range(3))
    scores = b.softmax(b.matmul(q, b.transpose(k, permutation=[0, 1, 3, 2])), 3)
    mixed = b.reshape(b.transpose(b.matmul(scores, v), permutation=[0, 2, 1, 3]), [batch, 64, 64])
    return b.build({"y": b.add(mixed, x)})


def _embedding(b, batch):
    rng = np.random.default_rng(6)
    ids = b.input("ids", data_type="int32", shape=[batch, 128])
    table = b.constant(rng.standard_normal((500, 64)).astype(np.float32))
    h = b.layer_normalization(b.gather(table, ids, axis=0), axes=[2])
    return b.build({"y": b.reduce_mean(h, axes=[1])})


@pytest.mark.parametrize("make,feeds", [
    (_attention, lambda n: {"x": RNG.standard_normal((n, 64, 64)).astype(np.float32)}),
    (_moved_batch_attention, lambda n: {"x": RNG.standard_normal((n, 64, 64)).astype(np.float32)}),
    (_embedding, lambda n: {"ids": RNG.integers(0, 500, (n, 128)).astype(np.int32)}),
], ids=["attention", "moved_batch_attention", "embedding_lookup"])
def test_transformer_pieces_split(threaded, monkeypatch, make, feeds):
    context, _ = threaded
    data = feeds(4)
    graph = _build(context, make, 4)
    assert _split_log(graph).startswith("batch 4: 4 chunks of 1")
    got = graph.compute(data)
    _close(got, _build(context, make, 4, monkeypatch, disable=True).compute(data))
    _close(got, _item_by_item(context, make, data))


# Ops that mix batch items: the graph runs whole, and the log names the op.
def _mixing(kind):
    def make(b, batch):
        x = b.input("x", data_type="float32", shape=[batch, 16, 32, 32])
        h = b.relu(x)
        if kind == "reduce_over_batch":
            y = b.reduce_sum(h, axes=[0, 1], keep_dimensions=True, label="mixer")
            y = b.add(h, y)
        elif kind == "softmax_over_batch":
            y = b.softmax(h, 0, label="mixer")
        elif kind == "softmax_over_moved_batch":
            moved = b.transpose(h, permutation=[1, 0, 2, 3])
            y = b.transpose(b.softmax(moved, 1, label="mixer"), permutation=[1, 0, 2, 3])
        elif kind == "reshape_merging_batch":
            y = b.reshape(b.reshape(h, [batch * 16, 32, 32], label="mixer"), [batch, 16, 32, 32])
        elif kind == "slice_of_batch":
            y = b.concat([b.slice(h, [1, 0, 0, 0], [batch - 1, 16, 32, 32], label="mixer"),
                          b.slice(h, [0, 0, 0, 0], [1, 16, 32, 32])], 0)
        elif kind == "gather_along_batch":
            y = b.gather(h, b.constant(np.arange(batch)[::-1].astype(np.int32).copy()), axis=0, label="mixer")
        elif kind == "batch_broadcast":  # per-item values broadcast along another axis (batch = 4)
            means = b.reshape(b.reduce_mean(h, axes=[1, 2, 3]), [batch, 1, 1])
            y = b.reshape(b.add(b.reshape(h, [batch, 4, 4, 1024]), means, label="mixer"), [batch, 16, 32, 32])
        return b.build({"y": b.sigmoid(y)})
    return make


@pytest.mark.parametrize("kind", ["reduce_over_batch", "softmax_over_batch", "softmax_over_moved_batch",
                                  "reshape_merging_batch", "slice_of_batch", "gather_along_batch",
                                  "batch_broadcast"])
def test_ops_mixing_items_run_whole(context, monkeypatch, kind):
    make = _mixing(kind)
    x = RNG.standard_normal((4, 16, 32, 32)).astype(np.float32)
    graph = _build(context, make, 4)
    log = _split_log(graph)
    assert log.startswith("none: ") and "'mixer'" in log, log
    _close(graph.compute({"x": x}), _build(context, make, 4, monkeypatch, disable=True).compute({"x": x}))


def test_small_values_and_batch_one_run_whole(context):
    b = webnn.MLGraphBuilder(context)
    small = b.build({"y": b.relu(b.input("a", data_type="float32", shape=[2, 3]))})
    assert _split_log(small) == "none: one item's values are 24 bytes"
    single = _build(context, _conv_net, 1)
    assert _split_log(single) == "none: no batch"


def test_heavy_weights_make_larger_chunks(context):
    """A classifier whose weights far outweigh one item's values: chunks grow (or the graph runs
    whole) so its weights are not reread from memory for every item."""
    w = _weights(64 * 16 * 16, 250)

    def make(b, batch):
        x = b.input("x", data_type="float32", shape=[batch, 64, 16, 16])
        h = b.reshape(b.relu(x), [batch, 64 * 16 * 16])
        return b.build({"y": b.gemm(h, b.constant(w))})

    graph = _build(context, make, 8)
    log = _split_log(graph)
    assert log.startswith("none: chunks would read the weights for too few items"), log
    x = RNG.standard_normal((8, 64, 16, 16)).astype(np.float32)
    want = np.maximum(x, 0).reshape(8, -1).astype(np.float64) @ w
    np.testing.assert_allclose(graph.compute({"x": x})["y"], want, rtol=1e-4, atol=1e-4)
