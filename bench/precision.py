"""Lower precision: each model in float32, QDQ int8, dynamic int8 and float16, webnn against ONNX Runtime.

The variants are made inside the benchmark with ONNX Runtime's own tools from the float32 model:
- "qdq-int8": onnxruntime.quantization.quantize_static, QDQ format, per-channel, QUInt8 activations
  and QInt8 weights, calibrated on a few random inputs, after ORT's quant_pre_process (which folds
  batch normalizations into the convolutions, as ORT's quantization guide tells users to);
- "dynamic-int8": quantize_dynamic (DynamicQuantizeLinear + ConvInteger / MatMulInteger);
- "float16": onnxruntime.transformers.float16.convert_float_to_float16(keep_io_types=True).
For every variant and thread count, webnn and ORT run the same file, timed interleaved (bench/kernels.py's
timing). Columns: webnn / ORT time, webnn's speed-up over its own float32, ORT's over its own float32,
the largest difference from ORT's output (relative to the output's largest value) and, for the
classifiers, top-1 agreement with ORT. A variant webnn cannot load yet is listed with the reason.
The CPU and its integer/half instructions are printed first.

    python bench/precision.py [--models resnet50,mobilenet_v2] [--threads 1,2] [--rounds 5]
"""
import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

import webnn
import webnn.onnx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))
from kernels import interleaved_times  # noqa: E402
from models import MODELS, ort_session, ort_step, webnn_load, webnn_step  # noqa: E402

VARIANTS = ["float32", "qdq-int8", "dynamic-int8", "float16"]
DEFAULT_MODELS = ["resnet50", "mobilenet_v2", "yolov8-320", "minilm-l6"]
CLASSIFIERS = {"resnet50", "mobilenet_v2", "mobilenet_v3"}
FLAGS = ["avx2", "fma", "f16c", "avx512f", "avx512_vnni", "avx_vnni", "avx512_bf16", "avx512_fp16", "amx_int8"]


def cpu_description():
    name, flags = "unknown CPU", set()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
            elif line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
    return f"{name}; {' '.join(f for f in FLAGS if f in flags) or 'no listed flags'}"


def make_variant(fp32_bytes, variant, feeds, folder):
    """The variant's serialized model, or a str saying why ORT's tool could not make it."""
    if variant == "float32":
        return fp32_bytes
    import onnx

    source = Path(folder) / "fp32.onnx"
    source.write_bytes(fp32_bytes)
    target = Path(folder) / f"{variant}.onnx"
    try:
        if variant == "float16":
            from onnxruntime.transformers.float16 import convert_float_to_float16
            onnx.save(convert_float_to_float16(onnx.load(str(source)), keep_io_types=True), str(target))
        elif variant == "dynamic-int8":
            from onnxruntime.quantization import QuantType, quantize_dynamic
            quantize_dynamic(str(source), str(target), weight_type=QuantType.QInt8)
        else:
            from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

            class Reader(CalibrationDataReader):
                def __init__(self):
                    rng = np.random.default_rng(1)
                    self.items = iter([{k: (rng.standard_normal(v.shape).astype(v.dtype) if v.dtype.kind == "f"
                                            else v) for k, v in feeds.items()} for _ in range(4)])

                def get_next(self):
                    return next(self.items, None)

            # ORT's recommended pre-processing (ONNX shape inference, then its graph optimizer, which folds
            # batch normalizations into the convolutions), as its quantization guide tells users.
            from onnxruntime.quantization.shape_inference import quant_pre_process
            prepared = Path(folder) / "prepared.onnx"
            quant_pre_process(str(source), str(prepared), skip_symbolic_shape=True)  # static shapes: no sympy
            quantize_static(str(prepared), str(target), Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                            activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    except Exception as error:  # a tool that does not support the model: say so and go on
        return f"ORT's tool failed: {type(error).__name__}: {str(error)[:120]}"
    return target.read_bytes()


def compare(name, webnn_out, ort_out):
    worst, top1 = 0.0, None
    for key, expected in ort_out.items():
        expected = expected.astype(np.float64)
        actual = webnn_out[key].astype(np.float64)
        worst = max(worst, float(np.max(np.abs(actual - expected))) / max(1e-6, float(np.max(np.abs(expected)))))
        if name in CLASSIFIERS and expected.ndim == 2:
            top1 = float(np.mean(np.argmax(actual, 1) == np.argmax(expected, 1)))
    return worst, top1


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--models", default=",".join(DEFAULT_MODELS))
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--batch-seconds", type=float, default=0.3)
    args = parser.parse_args(argv)
    import onnxruntime as ort

    print(f"webnn {webnn.__version__} ({webnn._core.detected_isa()}) vs ONNX Runtime {ort.__version__}")
    print(f"CPU: {cpu_description()}")
    by_name = {m.name: m for m in MODELS}
    for name in args.models.split(","):
        model = by_name[name]
        fp32 = model.bytes()
        if isinstance(fp32, str):
            print(f"\n{name}: skipped ({fp32})")
            continue
        feeds = model.feeds(model.batches[0])
        with tempfile.TemporaryDirectory() as folder:
            variants = {v: make_variant(fp32, v, feeds, folder) for v in VARIANTS}
        for threads in (int(t) for t in args.threads.split(",")):
            print(f"\n{name}, batch {model.batches[0]}, {threads} thread(s)")
            print(f"  {'variant':<14} {'webnn/ORT':>9} {'webnn vs fp32':>13} {'ORT vs fp32':>11} {'max diff':>9} "
                  f"{'top-1':>6}")
            own_fp32 = {}
            for variant, data in variants.items():
                if isinstance(data, str):
                    print(f"  {variant:<14} not made: {data}")
                    continue
                session = ort_session(data, threads)
                ort_run, ort_arrays = ort_step(session, feeds)
                try:
                    context = webnn.ml.create_context(num_threads=threads)
                    graph = webnn_load(data, model, feeds, context)
                except Exception as error:
                    print(f"  {variant:<14} webnn cannot load it: {type(error).__name__}: {str(error)[:110]}")
                    continue
                webnn_run, webnn_arrays = webnn_step(graph, context, feeds)
                webnn_run()
                ort_run()
                worst, top1 = compare(name, webnn_arrays, ort_arrays)
                times = interleaved_times({"webnn": webnn_run, "ort": ort_run}, args.rounds, args.batch_seconds)
                ours, theirs = times["webnn"][0], times["ort"][0]
                if variant == "float32":
                    own_fp32 = {"webnn": ours, "ort": theirs}
                speedup = (f"{own_fp32['webnn'] / ours:13.2f} {own_fp32['ort'] / theirs:11.2f}" if own_fp32
                           else f"{'-':>13} {'-':>11}")
                print(f"  {variant:<14} {ours / theirs:9.2f} {speedup} {worst:9.2g} "
                      f"{'-' if top1 is None else f'{top1:.2f}':>6}")


if __name__ == "__main__":
    main()
