"""webnn.BatchRunner: many items through one model on several contexts, results in item order."""
import numpy as np
import pytest

import webnn
from webnn import _core

RNG = np.random.default_rng(7)
W = RNG.standard_normal((24, 5))
BIAS = RNG.standard_normal(5)


def build_mlp(context, batch):
    """y = relu(x @ W + b) and s = sum(x) per item: outputs that depend on every item's values."""
    b = webnn.MLGraphBuilder(context)
    x = b.input("x", data_type="float32", shape=[batch, 24])
    y = b.relu(b.add(b.matmul(x, b.constant(W.astype(np.float32))), b.constant(BIAS.astype(np.float32))))
    return b.build({"y": y, "s": b.reduce_sum(x, axes=[1])})


def reference(x):
    x = np.asarray(x, np.float64)
    return {"y": np.maximum(x @ W + BIAS, 0), "s": x.sum(axis=1)}


def check(outputs, x):
    expected = reference(x)
    assert set(outputs) == set(expected)
    for name, value in expected.items():
        assert outputs[name].dtype == np.float32 and outputs[name].shape == value.shape
        np.testing.assert_allclose(outputs[name], value, rtol=1e-5, atol=1e-4, err_msg=name)


def build_two_inputs(context, batch):
    """Two inputs of different types and item shapes; outputs of different item shapes."""
    b = webnn.MLGraphBuilder(context)
    a = b.input("a", data_type="float32", shape=[batch, 3, 4])
    i = b.input("i", data_type="int32", shape=[batch, 2])
    scale = b.cast(b.reduce_sum(i, axes=[1], keep_dimensions=True), "float32")  # [batch, 1]
    flat = b.reshape(a, [batch, 12])
    return b.build({"p": b.mul(flat, scale), "q": b.add(i, b.constant("int32", 1))})


@pytest.mark.parametrize("count", [1, 5, 16, 17, 100, 257])
@pytest.mark.parametrize("split", [dict(), dict(batch_size=1), dict(batch_size=7, workers=3, threads_per_worker=1),
                                   dict(batch_size=16, workers=1, threads_per_worker=2), dict(workers=2)])
def test_run_matches_the_reference_in_item_order(count, split):
    x = RNG.standard_normal((count, 24)).astype(np.float32)
    with webnn.BatchRunner(build_mlp, items=count, **split) as runner:
        if "batch_size" in split:
            assert runner.batch_size == split["batch_size"]
        if "workers" in split:
            assert runner.workers <= split["workers"]
        check(runner.run(x), x)
        check(runner.run({"x": x[::-1]}), x[::-1])  # the runner is reused; a strided view is fine


def test_several_inputs_and_outputs_and_dtype_conversion():
    a = RNG.standard_normal((45, 3, 4))  # float64: converted per chunk
    i = RNG.integers(-5, 5, (45, 2))      # int64 that fits int32
    with webnn.BatchRunner(build_two_inputs, batch_size=4, workers=2) as runner:
        assert runner.input_descriptors == {"a": {"dataType": "float32", "shape": [3, 4]},
                                            "i": {"dataType": "int32", "shape": [2]}}
        assert runner.output_descriptors["p"] == {"dataType": "float32", "shape": [12]}
        out = runner.run({"a": a, "i": i})
    np.testing.assert_allclose(out["p"], a.reshape(45, 12) * i.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(out["q"], i + 1)
    assert out["q"].dtype == np.int32


def test_stream_yields_each_batch_in_order():
    x = RNG.standard_normal((300, 24)).astype(np.float32)
    cuts = [0, 1, 9, 40, 41, 200, 300]
    pieces = (x[a:b] for a, b in zip(cuts, cuts[1:]))  # a generator of uneven batches
    with webnn.BatchRunner(build_mlp, batch_size=8, workers=2) as runner:
        results = list(runner.stream(pieces))
        assert [len(r["y"]) for r in results] == [b - a for a, b in zip(cuts, cuts[1:])]
        check({k: np.concatenate([r[k] for r in results]) for k in ("y", "s")}, x)
        # Leaving a stream early drops what it read ahead; the runner goes on.
        stream = runner.stream(x[k:k + 10] for k in range(0, 300, 10))
        check(next(stream), x[:10])
        stream.close()
        check(runner.run(x[:50]), x[:50])


def test_progress_is_reported_and_ends_at_the_total():
    seen = []
    x = RNG.standard_normal((2000, 24)).astype(np.float32)
    with webnn.BatchRunner(build_mlp, batch_size=4, workers=2) as runner:
        check(runner.run(x, progress=lambda done, total: seen.append((done, total))), x)
    assert seen[-1] == (2000, 2000)
    assert all(t == 2000 and 0 <= d <= 2000 for d, t in seen)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_a_non_finite_item_is_named_and_the_runner_goes_on():
    x = RNG.standard_normal((500, 24)).astype(np.float32)
    bad = x.copy()
    bad[321, 7] = np.inf
    with webnn.BatchRunner(build_mlp, batch_size=8, workers=2) as runner:
        with pytest.raises(webnn.DataError, match=r"item 321 of input 'x' is not finite \(inf at \[7\]\)"):
            runner.run(bad)
        out = runner.run(bad, check_finite=False)  # asked for: it runs
        assert np.isinf(out["s"][321]) and np.isfinite(np.delete(out["s"], 321)).all()
        with pytest.raises(webnn.DataError, match="item 80 of input 'x'"):
            list(runner.stream([x[:40], bad[281:330]]))  # numbered across the stream
        check(runner.run(x), x)


def test_an_integer_item_out_of_range_is_named():
    a = np.zeros((10, 3, 4))
    i = np.zeros((10, 2), np.int64)
    i[6, 1] = 2**40
    with webnn.BatchRunner(build_two_inputs, batch_size=4) as runner:
        with pytest.raises(webnn.DataError, match=r"item 6 of input 'i' holds 1099511627776, outside the int32"):
            runner.run({"a": a, "i": i})


def test_an_int4_item_out_of_range_is_named_by_the_engine():
    def build(context, batch):
        b = webnn.MLGraphBuilder(context)
        q = b.input("q", data_type="int4", shape=[batch, 4])
        zero = b.constant({"dataType": "int4", "shape": [1, 4]}, np.zeros((1, 4), np.int8))
        return b.build({"y": b.dequantize_linear(q, b.constant(np.ones((1, 4), np.float32)), zero)})

    q = RNG.integers(-8, 8, (30, 4)).astype(np.int8)
    with webnn.BatchRunner(build, batch_size=4, workers=2) as runner:
        np.testing.assert_array_equal(runner.run(q)["y"], q.astype(np.float32))
        q[13, 2] = 9
        with pytest.raises(TypeError, match=r"item 13 of input 'q'.*outside the int4 range"):
            runner.run(q)
        q[13, 2] = 0
        np.testing.assert_array_equal(runner.run(q)["y"], q.astype(np.float32))


@pytest.mark.parametrize("inputs, message", [
    (np.zeros((4, 23), np.float32), r"items of shape \[23\].*takes \[24\]"),
    (np.zeros((4, 24), np.complex64), "is complex64, the model takes float32"),
    ({"x": np.zeros((4, 24)), "z": np.zeros(4)}, r"unknown \['z'\]"),
    ({}, r"missing \['x'\]"),
])
def test_malformed_inputs_raise_type_error(inputs, message):
    with webnn.BatchRunner(build_mlp, batch_size=2) as runner:
        with pytest.raises(TypeError, match=message):
            runner.run(inputs)


def test_inputs_of_different_lengths_and_a_dict_needed():
    with webnn.BatchRunner(build_two_inputs, batch_size=2) as runner:
        with pytest.raises(TypeError, match="different numbers of items"):
            runner.run({"a": np.zeros((5, 3, 4)), "i": np.zeros((4, 2), np.int32)})
        with pytest.raises(TypeError, match="pass a dict"):
            runner.run(np.zeros((5, 3, 4)))


def test_ctrl_c_stops_the_run_and_the_runner_goes_on():
    x = RNG.standard_normal((20000, 24)).astype(np.float32)
    calls = []

    def interrupt(done, total):
        calls.append(done)
        raise KeyboardInterrupt

    with webnn.BatchRunner(build_mlp, batch_size=1, workers=2) as runner:
        with pytest.raises(KeyboardInterrupt):
            runner.run(x, progress=interrupt)
        assert runner._runner.items_done < runner._runner.items_submitted or calls == [20000]
        check(runner.run(x[:100]), x[:100])


def test_an_error_in_the_iterable_stops_the_stream():
    x = RNG.standard_normal((64, 24)).astype(np.float32)

    def batches():
        yield x[:32]
        raise OSError("disk gone")

    with webnn.BatchRunner(build_mlp, batch_size=4, workers=2) as runner:
        with pytest.raises(OSError, match="disk gone"):
            list(runner.stream(batches()))
        check(runner.run(x), x)


def test_a_built_graph_runs_as_one_worker():
    context = webnn.create_context()
    graph = build_mlp(context, 6)
    x = RNG.standard_normal((20, 24)).astype(np.float32)
    with webnn.BatchRunner(graph) as runner:
        assert (runner.batch_size, runner.workers) == (6, 1)
        check(runner.run(x), x)
    with pytest.raises(TypeError, match="one worker"):
        webnn.BatchRunner(graph, workers=2)
    with pytest.raises(TypeError, match="batch size is 6, not 4"):
        webnn.BatchRunner(graph, batch_size=4)


def test_a_model_file_with_a_dynamic_batch(tmp_path):
    context = webnn.create_context()
    b = webnn.MLGraphBuilder(context)
    x = b.input("x", data_type="float32", shape=[3, 24])
    y = b.relu(b.add(b.matmul(x, b.constant(W.astype(np.float32))), b.constant(BIAS.astype(np.float32))))
    path = tmp_path / "mlp.webnn"
    webnn.save(path, {"y": y})
    text = path.read_text().replace("x: f32[3, 24]", 'x: f32[dyn("batch", 4096), 24]')
    assert text != path.read_text(), path.read_text()
    path.write_text(text)
    x = RNG.standard_normal((77, 24)).astype(np.float32)
    with webnn.BatchRunner(path, batch_size=10, workers=2) as runner:
        assert runner.batch_size == 10
        out = runner.run(x)
    np.testing.assert_allclose(out["y"], reference(x)["y"], rtol=1e-5, atol=1e-4)
    assert webnn.run_batches(str(path), x[:3])["y"].shape == (3, 5)
    with pytest.raises(TypeError, match="no dynamic input dimension 'seq'"):
        webnn.BatchRunner(path, batch_dimension="seq")


def test_an_onnx_model_with_a_symbolic_batch():
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Sigmoid", ["m"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 24])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 5])],
        [numpy_helper.from_array(W.astype(np.float32), "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = RNG.standard_normal((33, 24)).astype(np.float32)
    for source in (model, model.SerializeToString()):
        with webnn.BatchRunner(source, batch_size=8, workers=2) as runner:
            assert runner.batch_size == 8
            y = runner.run(x)["y"]
        np.testing.assert_allclose(y, 1 / (1 + np.exp(-(x.astype(np.float64) @ W))), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kwargs, message", [
    (dict(batch_size=0), "batch_size must be a positive integer"),
    (dict(workers=-1), "workers must be a positive integer"),
    (dict(threads_per_worker=True), "threads_per_worker must be a positive integer"),
])
def test_bad_options(kwargs, message):
    with pytest.raises(TypeError, match=message):
        webnn.BatchRunner(build_mlp, **kwargs)


def test_a_model_that_is_not_one():
    with pytest.raises(TypeError, match="model must be a path"):
        webnn.BatchRunner(42)
    with pytest.raises(TypeError, match="returned int, not an MLGraph"):
        webnn.BatchRunner(lambda context, batch: 3)


def test_a_closed_runner_raises():
    runner = webnn.BatchRunner(build_mlp, batch_size=2)
    runner.close()
    runner.close()
    with pytest.raises(AttributeError):
        runner.run(np.zeros((2, 24), np.float32))


def test_graphs_that_do_not_match_are_rejected():
    c1, c2 = webnn.create_context(), webnn.create_context()
    with pytest.raises(TypeError, match="share a context"):
        _core.BatchRunner([build_mlp(c1, 2), build_mlp(c1, 2)])
    with pytest.raises(TypeError, match="other operands than graph 0"):
        _core.BatchRunner([build_mlp(c1, 2), build_mlp(c2, 3)])
    b = webnn.MLGraphBuilder(c1)
    s = b.input("s", data_type="float32", shape=[])
    with pytest.raises(TypeError, match="'s' is a scalar"):
        _core.BatchRunner([b.build({"t": b.relu(s)})])
    b = webnn.MLGraphBuilder(c1)
    x = b.input("x", data_type="float32", shape=[4, 3])
    with pytest.raises(TypeError, match=r"output 'y' has first dimension 3, but the batch size is 4"):
        _core.BatchRunner([b.build({"y": b.transpose(x)})])


def test_the_engine_checks_what_it_is_given():
    runner = _core.BatchRunner([build_mlp(webnn.create_context(), 4)])
    x = np.zeros((8, 24), np.float32)
    outs = {"y": np.zeros((8, 5), np.float32), "s": np.zeros(8, np.float32)}
    with pytest.raises(TypeError, match="holds 768 bytes, 7 items need 672"):
        runner.submit(7, {"x": x}, outs)
    with pytest.raises(TypeError, match="is float64, expected float32"):
        runner.submit(8, {"x": x.astype(np.float64)}, outs)
    with pytest.raises(TypeError, match="not C-contiguous"):
        runner.submit(4, {"x": x[::2]}, {k: v[:4] for k, v in outs.items()})
    with pytest.raises(TypeError, match="read-only"):
        ro = np.zeros(8, np.float32)
        ro.flags.writeable = False
        runner.submit(8, {"x": x}, {"y": outs["y"], "s": ro})
    with pytest.raises(TypeError, match="missing output 's'"):
        runner.submit(8, {"x": x}, {"y": outs["y"]})
    with pytest.raises(TypeError, match="no job 5"):
        runner.wait(5)
    job = runner.submit(0, {"x": x[:0]}, {k: v[:0] for k, v in outs.items()})
    assert runner.wait(job)
    runner.close()
    with pytest.raises(webnn.InvalidStateError, match="closed"):
        runner.wait(0)


@pytest.mark.parametrize("items, model_batch, asked, expected", [
    (0, 0, (0, 0, 0), (8, 2, 1)),        # many items: batches of 8, a worker per core
    (10, 0, (0, 0, 0), (5, 2, 1)),       # few: one batch per core
    (1, 0, (0, 0, 0), (1, 1, 2)),        # one item: one worker with both cores
    (0, 6, (0, 0, 0), (6, 2, 1)),        # the model's fixed batch
    (0, 0, (8, 1, 0), (8, 1, 2)),
    (0, 0, (0, 0, 2), (8, 1, 2)),
    (0, 0, (4, 4, 1), (4, 4, 1)),        # more workers than cores when asked
])
def test_the_split_it_chooses(items, model_batch, asked, expected):
    assert _core.choose_batch_split(items, model_batch, *asked, 2) == expected


def test_the_split_refuses_a_batch_the_model_does_not_take():
    with pytest.raises(TypeError, match="fixed at 6, but batch_size 4"):
        _core.choose_batch_split(0, 6, 4, 0, 0, 2)


def test_the_gil_is_released_while_it_runs():
    from test_gil import _progress_while

    x = RNG.standard_normal((4000, 24)).astype(np.float32)
    with webnn.BatchRunner(build_mlp, batch_size=1, workers=1, threads_per_worker=1) as runner:
        assert _progress_while(lambda: runner.run(x)) > 0


def test_threads_sharing_a_runner_get_their_own_results_and_errors():
    import threading

    xs = [RNG.standard_normal((700 + 13 * k, 24)).astype(np.float32) for k in range(4)]
    xs[2][333, 0] = np.nan
    results, errors = {}, {}
    with webnn.BatchRunner(build_mlp, batch_size=3, workers=2) as runner:
        def work(k):
            try:
                results[k] = runner.run(xs[k])
            except webnn.DataError as error:
                errors[k] = error

        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert sorted(results) == [0, 1, 3] and sorted(errors) == [2]
    assert "item 333 of input 'x'" in str(errors[2])
    for k in (0, 1, 3):
        check(results[k], xs[k])


def test_a_failing_job_leaves_the_other_jobs_alone():
    runner = _core.BatchRunner([build_mlp(webnn.create_context(), 4), build_mlp(webnn.create_context(), 4)])
    x = RNG.standard_normal((40, 24)).astype(np.float32)
    outs = [{"y": np.zeros((40, 5), np.float32), "s": np.zeros(40, np.float32)} for _ in range(3)]
    jobs = [runner.submit(40, {"x": x}, o) for o in outs]
    runner.cancel(jobs[1])
    assert runner.wait(jobs[0]) and runner.wait(jobs[2])
    try:
        runner.wait(jobs[1])  # cancelled, unless it had finished before the cancel
    except webnn.OperationError as error:
        assert "cancelled (items 40-79)" in str(error)  # numbered across jobs by default
    assert runner.wait(jobs[1])  # reported once
    for k in (0, 2):
        check(outs[k], x)
    runner.close()
