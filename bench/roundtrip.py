"""Round-trip latency of a tiny graph: webnn vs ONNX Runtime, measured in one run.

The graph is ``z = add(x, y)`` on two [1, 4] float32 tensors. One webnn round trip writes both
inputs, dispatches and reads the output; one ONNX Runtime round trip is ``session.run`` on the
same graph built with ``onnx.helper``. Per variant it prints the median over batches of the
per-round-trip time (the lower of two interleaved rounds, after a warm-up) and the ratio webnn/ORT.

    python bench/roundtrip.py [--iterations 20000] [--warmup 2000] [--threads 1]
"""
import argparse
import statistics
import time

import numpy as np

import webnn


def _median_us(fn, iterations, warmup, repeats):
    """The median over `repeats` batches of the per-call time of `fn`, in microseconds."""
    for _ in range(warmup):
        fn()
    batch = max(1, iterations // repeats)
    samples = []
    clock = time.perf_counter_ns
    for _ in range(repeats):
        start = clock()
        for _ in range(batch):
            fn()
        samples.append((clock() - start) / batch / 1000.0)
    return statistics.median(samples)


def _webnn_roundtrip(x, y, threads):
    context = webnn.ml.create_context(num_threads=threads)
    builder = webnn.MLGraphBuilder(context)
    desc = {"dataType": "float32", "shape": list(x.shape)}
    graph = builder.build({"z": builder.add(builder.input("x", desc), builder.input("y", desc))})
    tx = context.create_tensor(desc, writable=True)
    ty = context.create_tensor(desc, writable=True)
    tz = context.create_tensor(desc, readable=True)
    inputs, outputs = {"x": tx, "y": ty}, {"z": tz}
    out = np.empty_like(x)
    write, dispatch, read = context.write_tensor, context.dispatch, context.read_tensor

    def step():
        write(tx, x)
        write(ty, y)
        dispatch(graph, inputs, outputs)
        return read(tz)

    def step_out():
        write(tx, x)
        write(ty, y)
        dispatch(graph, inputs, outputs)
        return read(tz, out)

    np.testing.assert_array_equal(step(), x + y)
    np.testing.assert_array_equal(step_out(), x + y)
    return step, step_out


def _ort_roundtrip(x, y, threads):
    try:
        import onnx
        import onnxruntime as ort
        from onnx import TensorProto, helper
    except ImportError as error:
        raise SystemExit(f"roundtrip: {error.name} is missing (pip install onnx onnxruntime)") from None

    shape = list(x.shape)
    model = helper.make_model(
        helper.make_graph(
            [helper.make_node("Add", ["x", "y"], ["z"])], "add",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape),
             helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
            [helper.make_tensor_value_info("z", TensorProto.FLOAT, shape)]),
        opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    feeds = {"x": x, "y": y}
    run = session.run

    def step():
        return run(None, feeds)[0]

    np.testing.assert_array_equal(step(), x + y)
    return step, ort.__version__


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=20000, help="timed round trips per variant")
    parser.add_argument("--warmup", type=int, default=2000, help="untimed round trips first")
    parser.add_argument("--repeats", type=int, default=20, help="batches the median is taken over")
    parser.add_argument("--threads", type=int, default=1, help="intra-op threads for both engines")
    args = parser.parse_args(argv)

    x = np.arange(4, dtype=np.float32).reshape(1, 4)
    y = np.full((1, 4), 0.5, dtype=np.float32)
    webnn_step, webnn_step_out = _webnn_roundtrip(x, y, args.threads)
    ort_step, ort_version = _ort_roundtrip(x, y, args.threads)

    timings = {}
    # Interleave the variants so that machine noise hits them alike.
    for name, fn in [("ort", ort_step), ("webnn", webnn_step), ("webnn_out", webnn_step_out)] * 2:
        t = _median_us(fn, args.iterations // 2, args.warmup, args.repeats)
        timings[name] = min(timings.get(name, t), t)

    print(f"add of two {list(x.shape)} float32 tensors, {args.iterations} round trips per variant, "
          f"threads={args.threads}")
    print(f"  onnxruntime {ort_version:8s} session.run                     median {timings['ort']:7.2f} us")
    print(f"  webnn {webnn.__version__:14s} write+write+dispatch+read        median {timings['webnn']:7.2f} us")
    print(f"  webnn {webnn.__version__:14s} ... read_tensor(t, out=array)    median {timings['webnn_out']:7.2f} us")
    print(f"  ratio webnn/ORT: {timings['webnn'] / timings['ort']:.2f}x "
          f"(out=: {timings['webnn_out'] / timings['ort']:.2f}x); goal <= 0.5x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
