"""Dynamic input dimensions: webnn.dynamic(name, max_size) (and the 2022 draft's -1) in the builder,
symbolic shapes in operand and graph descriptors, one build that runs at any size within the bounds
(checked against NumPy float64 and against the same graph built static), per-shape plans in a bounded
cache, the errors, and .webnn files with dynamic dimensions."""
import os
import threading

import numpy as np
import pytest

import webnn

D = webnn.dynamic
RNG = np.random.default_rng(7)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def rss_bytes():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


# ---------------------------------------------------------------- descriptors
def test_descriptors_are_symbolic(context):
    b = webnn.MLGraphBuilder(context)
    x = b.input("x", data_type="float32", shape=[D("batch", 64), D("seq", 128), 16])
    assert x.shape == [D("batch", 64), D("seq", 128), 16]
    w = b.constant(f32(16, 8))
    h = b.matmul(x, w)
    assert h.shape == [D("batch", 64), D("seq", 128), 8]
    t = b.transpose(h, permutation=[2, 0, 1])
    assert t.shape == [8, D("batch", 64), D("seq", 128)]
    r = b.reshape(h, [D("batch"), D("seq"), 2, 4])
    assert r.shape == [D("batch", 64), D("seq", 128), 2, 4]
    pooled = b.reduce_mean(h, axes=[1])
    assert pooled.shape == [D("batch", 64), 8]
    both = b.concat([h, h], axis=1)  # 2 * seq: follows no input dimension
    assert both.shape == [D("batch", 64), webnn.DynamicDimension(None, 256), 8]
    s = b.slice(h, [0, 0, 0], [1, 1, 8])
    assert s.shape == [1, 1, 8]
    g = b.build({"t": t, "r": r, "p": pooled, "both": both})
    assert g.is_dynamic
    assert g.input_descriptors == {"x": {"dataType": "float32", "shape": [D("batch", 64), D("seq", 128), 16]}}
    assert g.output_descriptors["p"] == {"dataType": "float32", "shape": [D("batch", 64), 8]}
    assert g.output_descriptors_for({"x": [3, 5, 16]}) == {
        "t": {"dataType": "float32", "shape": [8, 3, 5]}, "r": {"dataType": "float32", "shape": [3, 5, 2, 4]},
        "p": {"dataType": "float32", "shape": [3, 8]}, "both": {"dataType": "float32", "shape": [3, 10, 8]}}


def test_conv_output_sizes_follow_the_image(context):
    b = webnn.MLGraphBuilder(context)
    x = b.input("x", data_type="float32", shape=[D("n", 8), 3, D("h", 512), D("w", 512)])
    y = b.conv2d(x, b.constant(f32(4, 3, 3, 3)), strides=[2, 2], padding=[1, 1, 1, 1])
    assert y.shape == [D("n", 8), 4, webnn.DynamicDimension(None, 256), webnn.DynamicDimension(None, 256)]
    g = b.build({"y": y})
    assert g.output_descriptors_for({"x": [2, 3, 17, 30]})["y"]["shape"] == [2, 4, 9, 15]


def test_2022_free_dimension(context):
    b = webnn.MLGraphBuilder(context)
    x = b.input("x", {"type": "float32", "dimensions": [-1, 4]})
    assert x.shape == [D("x[0]"), 4]
    g = b.build({"y": b.relu(x)})
    for n in (1, 5, 300):
        v = f32(n, 4)
        np.testing.assert_array_equal(g.compute({"x": v})["y"], np.maximum(v, 0))


def test_static_graphs_are_unchanged(context):
    b = webnn.MLGraphBuilder(context)
    g = b.build({"y": b.relu(b.input("x", data_type="float32", shape=[2, 3]))})
    assert not g.is_dynamic
    assert g.plan_cache_info() == {"plans": 1, "capacity": 1, "compilations": 1, "arena_bytes": 0}
    assert g.output_descriptors_for({"x": [2, 3]})["y"]["shape"] == [2, 3]
    with pytest.raises(TypeError, match=r"input 'x' has shape \[3, 3\]"):
        g.output_descriptors_for({"x": [3, 3]})


# ---------------------------------------------------------------- results at many sizes
def mlp(context, dynamic):
    """matmul + bias + gelu + layer norm + reshape + softmax; batch and seq dynamic or fixed."""
    def build(batch, seq):
        b = webnn.MLGraphBuilder(context)
        shape = [D("batch", 32), D("seq", 64), 8] if dynamic else [batch, seq, 8]
        x = b.input("x", data_type="float32", shape=shape)
        h = b.add(b.matmul(x, b.constant(W1)), b.constant(B1))
        h = b.layer_normalization(b.gelu(h), axes=[2])
        heads = b.reshape(h, [D("batch") if dynamic else batch, D("seq") if dynamic else seq, 4, 4])
        att = b.softmax(b.transpose(heads, permutation=[0, 2, 1, 3]), axis=3)
        pooled = b.reduce_sum(x, axes=[1])
        return b.build({"att": att, "pooled": pooled})
    return build


W1, B1 = f32(8, 16), f32(16)


def mlp_reference(x):
    x = x.astype(np.float64)
    h = x @ W1.astype(np.float64) + B1
    from math import erf, sqrt
    h = h * 0.5 * (1 + np.vectorize(lambda v: erf(v / sqrt(2)))(h))
    h = (h - h.mean(axis=2, keepdims=True)) / np.sqrt(h.var(axis=2, keepdims=True) + 1e-5)
    heads = h.reshape(x.shape[0], x.shape[1], 4, 4).transpose(0, 2, 1, 3)
    e = np.exp(heads - heads.max(axis=3, keepdims=True))
    return {"att": e / e.sum(axis=3, keepdims=True), "pooled": x.sum(axis=1)}


def test_one_graph_at_many_sizes_matches_numpy_and_static(context):
    graph = mlp(context, True)(0, 0)
    for batch, seq in [(1, 1), (2, 7), (32, 64), (5, 33), (2, 7)]:
        x = f32(batch, seq, 8)
        out = graph.compute({"x": x})
        ref = mlp_reference(x)
        static = mlp(context, False)(batch, seq).compute({"x": x})
        for name in ("att", "pooled"):
            np.testing.assert_allclose(out[name], ref[name], rtol=1e-4, atol=1e-5)
            np.testing.assert_array_equal(out[name], static[name])  # the same plan as a static build
    assert graph.plan_cache_info()["compilations"] == 4


def test_dispatch_with_tensors_at_two_sizes(context):
    b = webnn.MLGraphBuilder(context)
    x = b.input("x", data_type="float32", shape=[D("n", 16), 3])
    g = b.build({"y": b.mul(x, b.constant("float32", 2.0))})
    results = []
    for n in (4, 9):
        t_in = context.create_tensor(data_type="float32", shape=[n, 3], writable=True)
        t_out = context.create_tensor(data_type="float32", shape=[n, 3], readable=True)
        v = f32(n, 3)
        context.write_tensor(t_in, v)
        context.dispatch(g, {"x": t_in}, {"y": t_out})
        results.append((v, t_out))
    for v, t_out in results:
        np.testing.assert_array_equal(context.read_tensor(t_out), v * 2)
    with pytest.raises(TypeError, match=r"output 'y' is .*\[4, 3\].* expects .*\[9, 3\]"):
        context.dispatch(g, {"x": context.create_tensor(data_type="float32", shape=[9, 3], writable=True)},
                         {"y": context.create_tensor(data_type="float32", shape=[4, 3], readable=True)})


def test_threads_at_different_sizes(context):
    graph = mlp(context, True)(0, 0)
    errors = []

    def work(seed):
        rng = np.random.default_rng(seed)
        try:
            for _ in range(10):
                batch, seq = int(rng.integers(1, 6)), int(rng.integers(1, 9))
                x = rng.standard_normal((batch, seq, 8)).astype(np.float32)
                np.testing.assert_allclose(graph.compute({"x": x})["pooled"], x.sum(axis=1), rtol=1e-5, atol=1e-5)
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


# ---------------------------------------------------------------- errors
def test_dispatch_errors_name_the_dimension_and_the_op(context):
    b = webnn.MLGraphBuilder(context)
    x = b.input("x", data_type="float32", shape=[D("batch", 8), 4])
    y = b.input("y", data_type="float32", shape=[D("rows", 8), 4])
    z = b.input("z", data_type="float32", shape=[D("batch", 8), 1])
    g = b.build({"s": b.add(b.add(x, y, label="sum"), z)})  # only valid when rows == batch (or 1)
    ok = {"x": f32(3, 4), "y": f32(3, 4), "z": f32(3, 1)}
    np.testing.assert_allclose(g.compute(ok)["s"], ok["x"] + ok["y"] + ok["z"], rtol=1e-6)
    with pytest.raises(TypeError, match=r"compute: at batch=3, rows=2: \[sum\] add: .*broadcast"):
        g.compute({**ok, "y": f32(2, 4)})
    with pytest.raises(TypeError, match=r"dynamic dimension 'batch' is 3 in input 'x' but 2 in input 'z'"):
        g.compute({**ok, "z": f32(2, 1)})
    with pytest.raises(TypeError, match=r"size 9 in its dynamic dimension 'batch', outside \[1, 8\]"):
        g.compute({"x": f32(9, 4), "y": f32(9, 4), "z": f32(9, 1)})
    with pytest.raises(TypeError, match=r"input 'x' has shape \[3, 5\].*dimension 1 is static"):
        g.compute({**ok, "x": f32(3, 5)})
    with pytest.raises(TypeError, match=r"compute: input 'x' has shape \[3\]"):
        g.compute({**ok, "x": f32(3)})


def test_build_errors(context):
    b = webnn.MLGraphBuilder(context)
    x = b.input("x", data_type="float32", shape=[D("batch", 8), 4])
    with pytest.raises(TypeError, match=r"'batch' has max_size 9 here but 8 in an earlier input"):
        b.input("y", data_type="float32", shape=[D("batch", 9)])
    with pytest.raises(TypeError, match=r"\[r\] reshape: newShape \[3, 4\].*representative sizes batch=8"):
        b.reshape(x, [3, 4], label="r")
    with pytest.raises(TypeError, match=r"newShape\[0\] names the dynamic dimension 'rows', which no input"):
        b.reshape(x, [D("rows"), 4])
    with pytest.raises(TypeError, match="permutation cannot hold dynamic dimensions"):
        b.transpose(x, permutation=[D("batch"), 0])
    with pytest.raises(TypeError, match="only allowed in graph inputs"):
        context.create_tensor(data_type="float32", shape=[D("batch", 8)])
    with pytest.raises(TypeError, match="only allowed in graph inputs"):
        b.constant({"dataType": "float32", "shape": [D("batch", 8)]}, np.zeros(8, np.float32))
    with pytest.raises(TypeError, match="name must be a non-empty string"):
        D("", 3)
    with pytest.raises(TypeError, match="max_size must be an integer"):
        D("n", 0)
    with pytest.raises(TypeError, match="needs a name"):
        D(None)


def test_descriptors_report_unbounded_and_rank_errors(context):
    b = webnn.MLGraphBuilder(context)
    x = b.input("x", data_type="float32", shape=[D("n"), 2])
    assert x.shape == [D("n"), 2]
    g = b.build({"y": b.relu(x)})
    assert g.input_descriptors["x"]["shape"] == [D("n"), 2]
    np.testing.assert_array_equal(g.compute({"x": np.ones((1000, 2), np.float32)})["y"], np.ones((1000, 2)))


# ---------------------------------------------------------------- plans per shape
def test_plans_are_reused_and_the_cache_is_bounded(context):
    graph = mlp(context, True)(0, 0)
    sizes = [(1, 2), (2, 2), (3, 2), (1, 2), (2, 2), (3, 2)]
    for batch, seq in sizes:
        graph.compute({"x": f32(batch, seq, 8)})
    info = graph.plan_cache_info()
    assert info["compilations"] == 3 and info["plans"] == 3 and info["capacity"] == 8
    graph.plan_cache_capacity = 2  # the least recently used goes: (1, 2)
    assert graph.plan_cache_info()["plans"] == 2
    graph.compute({"x": f32(3, 2, 8)})
    assert graph.plan_cache_info()["compilations"] == 3
    graph.compute({"x": f32(1, 2, 8)})  # evicted: compiled again
    assert graph.plan_cache_info() == {**graph.plan_cache_info(), "plans": 2, "compilations": 4}
    with pytest.raises(TypeError, match="at least 1"):
        graph.plan_cache_capacity = 0


def test_describe_plan_and_profile_follow_the_last_dispatch(context):
    graph = mlp(context, True)(0, 0)
    with pytest.raises(webnn.InvalidStateError, match="dispatch it first"):
        graph.describe_plan()
    graph.set_profiling(True)
    graph.compute({"x": f32(2, 3, 8)})
    first = graph.describe_plan()["steps"][0]["inputs"][0]["shape"]
    assert first[:2] == [2, 3]
    assert graph.profile()["runs"] == 1
    graph.compute({"x": f32(4, 5, 8)})
    assert graph.describe_plan()["steps"][0]["inputs"][0]["shape"][:2] == [4, 5]
    assert graph.profile()["runs"] == 1  # the new plan, profiled from its first run


def test_env_sets_the_cache_capacity(context, monkeypatch):
    monkeypatch.setenv("WEBNN_PLAN_CACHE_SIZE", "3")
    graph = mlp(context, True)(0, 0)
    assert graph.plan_cache_info()["capacity"] == 3


@pytest.mark.skipif(bool(os.environ.get("WEBNN_SANITIZER")), reason="RSS is the sanitizer's, and ref kernels are slow")
def test_memory_stays_bounded_over_random_sizes(context):
    """1,000 dispatches at random sizes: at most `capacity` plans live, and RSS levels off."""
    b = webnn.MLGraphBuilder(context)
    x = b.input("x", data_type="float32", shape=[D("n", 64), D("m", 256), 64])
    h = b.relu(b.matmul(x, b.constant(f32(64, 256))))
    graph = b.build({"y": b.reduce_sum(b.matmul(h, b.constant(f32(256, 64))), axes=[1])})
    graph.plan_cache_capacity = 4
    rng = np.random.default_rng(0)
    data = f32(64, 256, 64)
    peak = []
    for i in range(1000):
        n, m = int(rng.integers(1, 65)), int(rng.integers(1, 257))
        out = graph.compute({"x": data[:n, :m]})["y"]
        assert out.shape == (n, 64)
        if i in (199, 999):
            peak.append(rss_bytes())
        assert graph.plan_cache_info()["plans"] <= 4
    info = graph.plan_cache_info()
    assert info["compilations"] > 900  # nearly every size was new
    # After the first 200 dispatches memory no longer grows with the sizes seen (a little allocator noise).
    assert peak[1] - peak[0] < 48 * 2**20, (peak, info)


def test_destroyed_graph(context):
    graph = mlp(context, True)(0, 0)
    graph.compute({"x": f32(1, 1, 8)})
    graph.destroy()
    with pytest.raises(webnn.InvalidStateError):
        graph.compute({"x": f32(1, 1, 8)})
    assert graph.plan_cache_info()["plans"] == 0


# ---------------------------------------------------------------- .webnn files
def test_webnn_file_round_trips_byte_for_byte(context, tmp_path):
    b = webnn.MLGraphBuilder(context)
    x = b.input("x", data_type="float32", shape=[D("batch", 16), 6])
    h = b.matmul(x, b.constant(f32(6, 4)), label="fc")
    y = b.reshape(b.softmax(h, axis=1), [D("batch"), 2, 2], label="r")
    first = tmp_path / "dyn.webnn"
    webnn.save(first, {"y": y})
    text = first.read_text()
    assert 'dyn("batch", 16)' in text and "[batch, 2, 2]" in text
    loaded = webnn.load(first, context)
    assert loaded.is_dynamic and loaded.input_descriptors["x"]["shape"] == [D("batch", 16), 6]
    built = b.build({"y": y})
    for n in (1, 3, 16):
        v = f32(n, 6)
        np.testing.assert_array_equal(loaded.compute({"x": v})["y"], built.compute({"x": v})["y"])
    builder = webnn.MLGraphBuilder(context)
    os.mkdir(tmp_path / "again")
    webnn.save(tmp_path / "again" / "dyn.webnn", webnn.load_into(builder, first))
    for name in ("dyn.webnn", "dyn.manifest.json", "dyn.weights"):
        assert (tmp_path / "again" / name).read_bytes() == (tmp_path / name).read_bytes(), name
    pinned = webnn.load(first, context, dims={"batch": 3})  # dims still pin, the reshape follows
    assert not pinned.is_dynamic and pinned.output_descriptors["y"]["shape"] == [3, 2, 2]
