"""Kernel benchmarks, every ratio measured in one run: the FMA peak, GEMM vs NumPy, conv2d vs ORT.

1. The machine's float32 FMA peak, single-threaded (``webnn._core.measure_fma_peak``).
2. GEMM GFLOP/s through a webnn ``matmul`` graph with a constant B against ``np.matmul``, for
   square sizes and inference shapes. One webnn call is dispatch + read of the output into a
   preallocated array (nothing subtracted; the same call on a 1x1x1 matmul is printed as the
   overhead). NumPy's OpenBLAS threads are capped with threadpoolctl.
3. conv2d per-layer times for every distinct conv layer of ResNet-50 (torchvision v1.5: the stride
   sits on the 3x3 conv) and MobileNetV2 at batch 1, 224x224, NCHW: a webnn graph with just that
   conv (constant filter and bias) against ONNX Runtime on the same single-Conv model, then the
   time summed over every conv instance of each network.

Implementations under comparison run interleaved (batches in rotating order, each batch preceded
by one untimed call). Times are the median over rounds of the per-call time; ratios are printed
for the medians and for the best (fastest) rounds, the latter being less sensitive to a shared machine.

    python bench/kernels.py [--quick] [--threads 1,2] [--only gemm|conv] [--rounds N]

Needs numpy and threadpoolctl (GEMM), onnx and onnxruntime (conv). OPENBLAS_CORETYPE and
OPENBLAS_L2_SIZE make OpenBLAS pick a slow kernel: when set, the script re-executes itself once
without them.
"""
import argparse
import math
import os
import statistics
import sys
import time
from collections import namedtuple

import numpy as np

import webnn
from webnn import _core

# The figure for one Zen 5 core: two 512-bit FMA pipes.
NOMINAL_PEAK_GFLOPS = 228.0
OPENBLAS_SLOW_ENV = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
_REEXEC_MARK = "WEBNN_BENCH_UNSET_OPENBLAS"

GEMM_SQUARE = (256, 512, 1024, 2048)
GEMM_INFERENCE = tuple((m, 768, n) for n in (768, 3072) for m in (1, 8, 16, 64))

# One row per distinct conv layer: input channels, height, width; output channels; square kernel,
# stride and symmetric padding; groups; how many times the network has this exact layer.
ConvLayer = namedtuple("ConvLayer", "c h w out k stride pad groups count")

RESNET50 = (
    ConvLayer(3, 224, 224, 64, 7, 2, 3, 1, 1),        # stem
    # layer1: 3 bottlenecks at 56x56, width 64, out 256
    ConvLayer(64, 56, 56, 64, 1, 1, 0, 1, 1),
    ConvLayer(64, 56, 56, 64, 3, 1, 1, 1, 3),
    ConvLayer(64, 56, 56, 256, 1, 1, 0, 1, 4),        # 3 expansions + the downsample
    ConvLayer(256, 56, 56, 64, 1, 1, 0, 1, 2),
    # layer2: 4 bottlenecks, width 128, out 512, 28x28
    ConvLayer(256, 56, 56, 128, 1, 1, 0, 1, 1),
    ConvLayer(128, 56, 56, 128, 3, 2, 1, 1, 1),
    ConvLayer(256, 56, 56, 512, 1, 2, 0, 1, 1),       # downsample
    ConvLayer(128, 28, 28, 512, 1, 1, 0, 1, 4),
    ConvLayer(512, 28, 28, 128, 1, 1, 0, 1, 3),
    ConvLayer(128, 28, 28, 128, 3, 1, 1, 1, 3),
    # layer3: 6 bottlenecks, width 256, out 1024, 14x14
    ConvLayer(512, 28, 28, 256, 1, 1, 0, 1, 1),
    ConvLayer(256, 28, 28, 256, 3, 2, 1, 1, 1),
    ConvLayer(512, 28, 28, 1024, 1, 2, 0, 1, 1),      # downsample
    ConvLayer(256, 14, 14, 1024, 1, 1, 0, 1, 6),
    ConvLayer(1024, 14, 14, 256, 1, 1, 0, 1, 5),
    ConvLayer(256, 14, 14, 256, 3, 1, 1, 1, 5),
    # layer4: 3 bottlenecks, width 512, out 2048, 7x7
    ConvLayer(1024, 14, 14, 512, 1, 1, 0, 1, 1),
    ConvLayer(512, 14, 14, 512, 3, 2, 1, 1, 1),
    ConvLayer(1024, 14, 14, 2048, 1, 2, 0, 1, 1),     # downsample
    ConvLayer(512, 7, 7, 2048, 1, 1, 0, 1, 3),
    ConvLayer(2048, 7, 7, 512, 1, 1, 0, 1, 2),
    ConvLayer(512, 7, 7, 512, 3, 1, 1, 1, 2),
)

MOBILENET_V2 = (
    ConvLayer(3, 224, 224, 32, 3, 2, 1, 1, 1),        # stem
    ConvLayer(32, 112, 112, 32, 3, 1, 1, 32, 1),      # t=1, c=16
    ConvLayer(32, 112, 112, 16, 1, 1, 0, 1, 1),
    ConvLayer(16, 112, 112, 96, 1, 1, 0, 1, 1),       # t=6, c=24, n=2, s=2
    ConvLayer(96, 112, 112, 96, 3, 2, 1, 96, 1),
    ConvLayer(96, 56, 56, 24, 1, 1, 0, 1, 1),
    ConvLayer(24, 56, 56, 144, 1, 1, 0, 1, 2),
    ConvLayer(144, 56, 56, 144, 3, 1, 1, 144, 1),
    ConvLayer(144, 56, 56, 24, 1, 1, 0, 1, 1),
    ConvLayer(144, 56, 56, 144, 3, 2, 1, 144, 1),     # t=6, c=32, n=3, s=2
    ConvLayer(144, 28, 28, 32, 1, 1, 0, 1, 1),
    ConvLayer(32, 28, 28, 192, 1, 1, 0, 1, 3),
    ConvLayer(192, 28, 28, 192, 3, 1, 1, 192, 2),
    ConvLayer(192, 28, 28, 32, 1, 1, 0, 1, 2),
    ConvLayer(192, 28, 28, 192, 3, 2, 1, 192, 1),     # t=6, c=64, n=4, s=2
    ConvLayer(192, 14, 14, 64, 1, 1, 0, 1, 1),
    ConvLayer(64, 14, 14, 384, 1, 1, 0, 1, 4),
    ConvLayer(384, 14, 14, 384, 3, 1, 1, 384, 4),
    ConvLayer(384, 14, 14, 64, 1, 1, 0, 1, 3),
    ConvLayer(384, 14, 14, 96, 1, 1, 0, 1, 1),        # t=6, c=96, n=3, s=1
    ConvLayer(96, 14, 14, 576, 1, 1, 0, 1, 3),
    ConvLayer(576, 14, 14, 576, 3, 1, 1, 576, 2),
    ConvLayer(576, 14, 14, 96, 1, 1, 0, 1, 2),
    ConvLayer(576, 14, 14, 576, 3, 2, 1, 576, 1),     # t=6, c=160, n=3, s=2
    ConvLayer(576, 7, 7, 160, 1, 1, 0, 1, 1),
    ConvLayer(160, 7, 7, 960, 1, 1, 0, 1, 3),
    ConvLayer(960, 7, 7, 960, 3, 1, 1, 960, 3),
    ConvLayer(960, 7, 7, 160, 1, 1, 0, 1, 2),
    ConvLayer(960, 7, 7, 320, 1, 1, 0, 1, 1),         # t=6, c=320, n=1
    ConvLayer(320, 7, 7, 1280, 1, 1, 0, 1, 1),        # head
)

NETWORKS = {"ResNet-50": RESNET50, "MobileNetV2": MOBILENET_V2}


def conv_output_hw(layer):
    """The conv's output (height, width)."""
    out_h = (layer.h + 2 * layer.pad - layer.k) // layer.stride + 1
    out_w = (layer.w + 2 * layer.pad - layer.k) // layer.stride + 1
    return out_h, out_w


def conv_flops(layer):
    """2 x multiply-adds of one instance of the layer."""
    out_h, out_w = conv_output_hw(layer)
    return 2 * out_h * out_w * layer.out * (layer.c // layer.groups) * layer.k * layer.k


def conv_label(layer):
    kind = " dw" if layer.groups == layer.c == layer.out and layer.groups > 1 else ""
    return (f"{layer.c}x{layer.h}x{layer.w}->{layer.out} k{layer.k} s{layer.stride} p{layer.pad}"
            f"{kind}")


# ---------------------------------------------------------------- timing
LEAD_IN_SECONDS = 0.15


def interleaved_times(fns, rounds, batch_seconds):
    """``{name: (median, min)}`` seconds per call of each ``{name: fn}``, the functions timed in turn.

    Each function is warmed up and given a batch size lasting about ``batch_seconds``; every round
    runs one batch of each function (the order rotating between rounds), each batch preceded by
    untimed calls for ``LEAD_IN_SECONDS``: the previous library's idle workers keep spinning for a
    while after its last call (ONNX Runtime's for 40-60 ms on a 2-core Zen 3, OpenBLAS's for 2^28
    cycles, about 90 ms), and a timed batch that shares the cores with them measures the two
    libraries together.
    """
    names = list(fns)
    batch = {}
    for name in names:
        fn = fns[name]
        for _ in range(2):
            fn()
        start = time.perf_counter()
        fn()
        single = max(time.perf_counter() - start, 1e-7)
        batch[name] = max(1, int(batch_seconds / single))
    samples = {name: [] for name in names}
    clock = time.perf_counter
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            fn, n = fns[name], batch[name]
            start = clock()
            fn()
            while clock() - start < LEAD_IN_SECONDS:
                fn()
            start = clock()
            for _ in range(n):
                fn()
            samples[name].append((clock() - start) / n)
    return {name: (statistics.median(s), min(s)) for name, s in samples.items()}


def measure_fma_peak(samples, sample_seconds):
    """(median, max) single-thread GFLOP/s over `samples` runs of the native FMA loop.

    Short samples and the max: on a shared machine some samples run without being preempted.
    """
    iterations = 100_000
    start = time.perf_counter()
    _core.measure_fma_peak(iterations)
    elapsed = time.perf_counter() - start
    iterations = max(iterations, int(iterations * sample_seconds / elapsed))
    results = [_core.measure_fma_peak(iterations) for _ in range(samples)]
    return statistics.median(results), max(results)


# ---------------------------------------------------------------- GEMM
def _webnn_step(context, x, make_output):
    """dispatch + read of a one-input graph ``make_output(builder, input)``, with ``x`` written
    once; returns the step and the array it reads into."""
    builder = webnn.MLGraphBuilder(context)
    desc = {"dataType": "float32", "shape": list(x.shape)}
    y = make_output(builder, builder.input("x", desc))
    graph = builder.build({"y": y})
    tx = context.create_tensor(desc, writable=True)
    ty = context.create_tensor({"dataType": "float32", "shape": y.shape}, readable=True)
    context.write_tensor(tx, x)
    out = np.empty(y.shape, np.float32)
    inputs, outputs = {"x": tx}, {"y": ty}
    dispatch, read = context.dispatch, context.read_tensor

    def step():
        dispatch(graph, inputs, outputs)
        read(ty, out)

    return step, out


def _webnn_matmul(context, a, b):
    return _webnn_step(context, a, lambda builder, x: builder.matmul(x, builder.constant(b)))


def _check_close(name, actual, expected, rtol=1e-3):
    scale = max(1.0, float(np.max(np.abs(expected))))
    err = float(np.max(np.abs(actual.astype(np.float64) - expected))) / scale
    if not err <= rtol:
        raise AssertionError(f"{name}: webnn result off by {err:.3g} (relative to max |value|)")


def openblas_description():
    import threadpoolctl

    lines = []
    for info in threadpoolctl.threadpool_info():
        if info.get("internal_api") == "openblas":
            lines.append(f"{info.get('version')} kernel={info.get('architecture')} "
                         f"threading={info.get('threading_layer')} max_threads={info.get('num_threads')} "
                         f"({os.path.basename(info.get('filepath', ''))})")
    return "; ".join(lines) or "none (NumPy is not linked to OpenBLAS)"


def bench_gemm(threads, rounds, batch_seconds, fma_peak, quick):
    from threadpoolctl import threadpool_limits

    shapes = [(s, s, s) for s in GEMM_SQUARE] + list(GEMM_INFERENCE)
    if quick:
        shapes = [s for s in shapes if max(s) <= 1024]
    rng = np.random.default_rng(0)
    print("\n== GEMM float32: webnn matmul (constant B; one call = dispatch + read) vs np.matmul (OpenBLAS)")
    print("GFLOP/s and us from the median per-call time; webnn/numpy speed ratio of the medians and of the"
          " best rounds")
    print(f"{'thr':>3} {'M':>5} {'K':>5} {'N':>5} | {'webnn GF/s':>10} {'numpy GF/s':>10} | {'median':>6} {'best':>6}"
          f" | {'webnn us':>9} {'numpy us':>9}")
    single_1024 = None
    for t in threads:
        context = webnn.ml.create_context(num_threads=t)
        overhead_step, _ = _webnn_matmul(context, np.ones((1, 1), np.float32), np.ones((1, 1), np.float32))
        with threadpool_limits(limits=t, user_api="blas"):
            overhead = interleaved_times({"webnn": overhead_step}, rounds, batch_seconds)["webnn"][0]
            for m, k, n in shapes:
                a = rng.standard_normal((m, k), np.float32)
                b = rng.standard_normal((k, n), np.float32)
                c = np.empty((m, n), np.float32)
                step, out = _webnn_matmul(context, a, b)
                step()
                _check_close(f"matmul {m}x{k}x{n}", out, a.astype(np.float64) @ b)
                times = interleaved_times({"webnn": step, "numpy": lambda: np.matmul(a, b, out=c)},
                                          rounds, batch_seconds)
                (tw, tw_min), (tn, tn_min) = times["webnn"], times["numpy"]
                flops = 2.0 * m * k * n
                gw, gn = flops / tw * 1e-9, flops / tn * 1e-9
                print(f"{t:>3} {m:>5} {k:>5} {n:>5} | {gw:>10.1f} {gn:>10.1f} | {gw / gn:>6.2f} {tn_min / tw_min:>6.2f}"
                      f" | {tw * 1e6:>9.1f} {tn * 1e6:>9.1f}")
                if t == 1 and (m, k, n) == (1024, 1024, 1024):
                    single_1024 = (gw, gn, flops / tw_min * 1e-9, flops / tn_min * 1e-9)
        print(f"    ({t} thread(s): webnn dispatch + read overhead of a 1x1x1 matmul: {overhead * 1e6:.1f} us per call,"
              f" included above)")
    if single_1024:
        median_peak, best_peak = fma_peak
        gw, gn, gw_best, gn_best = single_1024
        print(f"1024^3 single thread, % of the measured FMA peak ({best_peak:.0f} GFLOP/s best, {median_peak:.0f} median;"
              f" nominal {NOMINAL_PEAK_GFLOPS:.0f}):")
        for name, median, best in (("webnn", gw, gw_best), ("numpy", gn, gn_best)):
            print(f"  {name}: {median:.1f} GFLOP/s median = {100 * median / best_peak:.0f}%, best round {best:.1f} ="
                  f" {100 * best / best_peak:.0f}% ({100 * best / NOMINAL_PEAK_GFLOPS:.0f}% of nominal)")


# ---------------------------------------------------------------- conv2d
def _layer_data(layer, rng):
    x = rng.standard_normal((1, layer.c, layer.h, layer.w), np.float32)
    fan_in = (layer.c // layer.groups) * layer.k * layer.k
    w = (rng.standard_normal((layer.out, layer.c // layer.groups, layer.k, layer.k)) / math.sqrt(fan_in)).astype(np.float32)
    bias = rng.standard_normal(layer.out, np.float32)
    return x, w, bias


def _webnn_conv(context, layer, x, w, bias):
    return _webnn_step(context, x, lambda builder, x: builder.conv2d(
        x, builder.constant(w), bias=builder.constant(bias), padding=[layer.pad] * 4,
        strides=[layer.stride] * 2, groups=layer.groups))


def _ort_conv(layer, x, w, bias, threads):
    """session.run with bound input and a preallocated output (io_binding)."""
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    out_shape = [1, layer.out, *conv_output_hw(layer)]
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], kernel_shape=[layer.k, layer.k],
                            strides=[layer.stride] * 2, pads=[layer.pad] * 4, group=layer.groups)
    model = helper.make_model(
        helper.make_graph([node], "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)],
                          initializer=[numpy_helper.from_array(w, "w"), numpy_helper.from_array(bias, "b")]),
        opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    out = np.empty(out_shape, np.float32)
    binding = session.io_binding()
    binding.bind_cpu_input("x", x)
    binding.bind_output("y", "cpu", 0, np.float32, out_shape, out.ctypes.data)
    run = session.run_with_iobinding

    def step():
        run(binding)

    return step, out


def bench_conv(threads, rounds, batch_seconds):
    import onnxruntime as ort

    print(f"\n== conv2d float32, batch 1, NCHW: webnn (constant filter + bias; dispatch + read) vs ONNX Runtime "
          f"{ort.__version__} (CPU EP, all graph optimizations, io_binding)")
    print("ms per call (median); webnn/ORT time ratio (> 1: webnn slower) of the medians and of the best rounds")
    rng = np.random.default_rng(0)
    summary = []
    for net, layers in NETWORKS.items():
        data = [_layer_data(layer, rng) for layer in layers]
        for t in threads:
            context = webnn.ml.create_context(num_threads=t)
            print(f"\n{net}, {t} thread(s): {len(layers)} distinct layers, {sum(l.count for l in layers)} instances")
            print(f"{'layer':<34} {'n':>2} {'MFLOP':>7} | {'webnn ms':>8} {'ORT ms':>8} | {'median':>6} {'best':>6}"
                  f" | {'webnn GF/s':>10} {'ORT GF/s':>8}")
            total_w = total_o = total_w_min = total_o_min = 0.0
            for layer, (x, w, bias) in zip(layers, data):
                webnn_step, webnn_out = _webnn_conv(context, layer, x, w, bias)
                ort_step, ort_out = _ort_conv(layer, x, w, bias, t)
                webnn_step()
                ort_step()
                _check_close(f"{net} conv {conv_label(layer)}", webnn_out, ort_out.astype(np.float64))
                times = interleaved_times({"webnn": webnn_step, "ort": ort_step}, rounds, batch_seconds)
                (tw, tw_min), (to, to_min) = times["webnn"], times["ort"]
                flops = conv_flops(layer)
                total_w += layer.count * tw
                total_o += layer.count * to
                total_w_min += layer.count * tw_min
                total_o_min += layer.count * to_min
                print(f"{conv_label(layer):<34} {layer.count:>2} {flops * 1e-6:>7.1f} | {tw * 1e3:>8.3f} {to * 1e3:>8.3f}"
                      f" | {tw / to:>6.2f} {tw_min / to_min:>6.2f} | {flops / tw * 1e-9:>10.1f} {flops / to * 1e-9:>8.1f}")
            print(f"{'sum over all instances':<34} {'':>2} {'':>7} | {total_w * 1e3:>8.2f} {total_o * 1e3:>8.2f}"
                  f" | {total_w / total_o:>6.2f} {total_w_min / total_o_min:>6.2f}")
            summary.append((net, t, total_w, total_o, total_w_min / total_o_min))
    print("\nconv2d network sums (ms, every conv instance weighted by its count):")
    for net, t, total_w, total_o, best_ratio in summary:
        print(f"  {net:<12} {t} thread(s): webnn {total_w * 1e3:8.2f}  ORT {total_o * 1e3:8.2f}"
              f"  webnn/ORT {total_w / total_o:.2f} (best rounds: {best_ratio:.2f})")


# ---------------------------------------------------------------- main
def _reexec_without_slow_openblas_env():
    """Re-executes this script once with OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE unset."""
    present = {k: os.environ[k] for k in OPENBLAS_SLOW_ENV if k in os.environ}
    if not present:
        return
    env = {k: v for k, v in os.environ.items() if k not in OPENBLAS_SLOW_ENV}
    env[_REEXEC_MARK] = " ".join(f"{k}={v}" for k, v in present.items())
    sys.stdout.flush()
    os.execve(sys.executable, [sys.executable, os.path.abspath(__file__), *sys.argv[1:]], env)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="few short rounds, small sizes (smoke test)")
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts (default 1,2)")
    parser.add_argument("--only", choices=("gemm", "conv"), help="run one part only")
    parser.add_argument("--rounds", type=int, help="timed rounds per comparison (default 15, 3 with --quick)")
    args = parser.parse_args(argv)
    try:
        args.threads = [int(t) for t in args.threads.split(",")]
    except ValueError:
        parser.error("--threads: expected comma-separated integers")
    if not args.threads or min(args.threads) < 1:
        parser.error("--threads: counts must be >= 1")
    if args.rounds is not None and args.rounds < 1:
        parser.error("--rounds must be >= 1")
    return args


def main(argv=None):
    _reexec_without_slow_openblas_env()
    args = parse_args(argv)
    if args.only in (None, "gemm"):
        try:
            import threadpoolctl  # noqa: F401
        except ImportError:
            sys.exit("bench/kernels.py: the GEMM comparison needs threadpoolctl (pip install \".[bench]\"); "
                     "--only conv runs without it")
    rounds = args.rounds or (3 if args.quick else 15)
    batch_seconds = 0.005 if args.quick else 0.03
    print(f"webnn {_core.version()}: isa={_core.active_isa()} (detected {_core.detected_isa()}), "
          f"gemm microkernel={_core.gemm_kernel()}, hardware threads={_core.hardware_threads()}, "
          f"numpy {np.__version__}")
    if os.environ.get(_REEXEC_MARK):
        print(f"re-executed with {os.environ[_REEXEC_MARK]} unset")
    median_peak, best_peak = fma = measure_fma_peak(21 if args.quick else 201, 0.001)
    print(f"FMA peak, 1 thread ({_core.fma_peak_isa()} loop): {best_peak:.1f} GFLOP/s best, {median_peak:.1f} median"
          f" (nominal {NOMINAL_PEAK_GFLOPS:.0f})")
    if args.only in (None, "gemm"):
        print(f"OpenBLAS: {openblas_description()}")
        bench_gemm(args.threads, rounds, batch_seconds, fma, args.quick)
    if args.only in (None, "conv"):
        bench_conv(args.threads, rounds, batch_seconds)


if __name__ == "__main__":
    main()
