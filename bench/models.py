"""Whole-network latency: webnn vs ONNX Runtime on the same ONNX model, batch 1, in one run.

ResNet-50 and MobileNetV2 (torchvision layouts, seeded random weights, NCHW 224x224, built by
tests/onnx_models/vision.py) are imported with ``webnn.onnx.load`` and run with dispatch + read into
a preallocated array; ONNX Runtime runs the same model (CPU EP, all graph optimizations, io_binding).
The two run interleaved (bench/kernels.py's timing); ratios are webnn time / ORT time (> 1: webnn
slower), for the medians and for the best rounds. Outputs are checked against each other first.

    python bench/models.py [--threads 1,2] [--rounds N] [--quick]

Needs onnx and onnxruntime.
"""
import argparse
import sys
from pathlib import Path

import numpy as np

import webnn
import webnn.onnx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))
from kernels import interleaved_times  # noqa: E402
from onnx_models import vision  # noqa: E402

MODELS = {"ResNet-50": vision.resnet50, "MobileNetV2": vision.mobilenet_v2}


def webnn_step(model, context, x):
    graph = webnn.onnx.load(model, context, override_dims={"batch": 1})
    (input_name,) = graph.input_descriptors
    (output_name,) = graph.output_descriptors
    out_shape = list(graph.output_descriptors[output_name]["shape"])
    tx = context.create_tensor({"dataType": "float32", "shape": list(x.shape)}, writable=True)
    context.write_tensor(tx, x)
    ty = context.create_tensor({"dataType": "float32", "shape": out_shape}, readable=True)
    out = np.empty(out_shape, np.float32)
    inputs, outputs = {input_name: tx}, {output_name: ty}

    def step():
        context.dispatch(graph, inputs, outputs)
        context.read_tensor(ty, out)

    return step, out


def ort_step(model, x, threads):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    input_name, output_name = session.get_inputs()[0].name, session.get_outputs()[0].name
    out_shape = list(session.run(None, {input_name: x})[0].shape)
    out = np.empty(out_shape, np.float32)
    binding = session.io_binding()
    binding.bind_cpu_input(input_name, x)
    binding.bind_output(output_name, "cpu", 0, np.float32, out_shape, out.ctypes.data)

    def step():
        session.run_with_iobinding(binding)

    return step, out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts (default 1,2)")
    parser.add_argument("--rounds", type=int, help="timed rounds (default 9, 3 with --quick)")
    parser.add_argument("--quick", action="store_true", help="few short rounds")
    args = parser.parse_args(argv)
    threads = [int(t) for t in args.threads.split(",")]
    rounds = args.rounds or (3 if args.quick else 9)
    batch_seconds = 0.05 if args.quick else 0.3
    import onnxruntime as ort

    print(f"webnn {webnn.__version__} vs ONNX Runtime {ort.__version__}: batch 1, 224x224, float32, NCHW;"
          " ms per inference (median); webnn/ORT time ratio of the medians and of the best rounds")
    print(f"{'model':<12} {'thr':>3} | {'webnn ms':>9} {'ORT ms':>9} | {'median':>6} {'best':>6}")
    x = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
    for name, build in MODELS.items():
        model = build()
        for t in threads:
            context = webnn.ml.create_context(num_threads=t)
            webnn_run, webnn_out = webnn_step(model, context, x)
            ort_run, ort_out = ort_step(model, x, t)
            webnn_run()
            ort_run()
            err = float(np.max(np.abs(webnn_out - ort_out))) / max(1e-6, float(np.max(np.abs(ort_out))))
            if not err < 1e-3:
                raise AssertionError(f"{name}: webnn and ORT outputs differ by {err:.3g} (relative to max |value|)")
            times = interleaved_times({"webnn": webnn_run, "ort": ort_run}, rounds, batch_seconds)
            (tw, tw_min), (to, to_min) = times["webnn"], times["ort"]
            print(f"{name:<12} {t:>3} | {tw * 1e3:>9.2f} {to * 1e3:>9.2f} | {tw / to:>6.2f} {tw_min / to_min:>6.2f}")


if __name__ == "__main__":
    main()
