"""Resident memory of a loaded model: webnn vs ONNX Runtime, each in a fresh process.

ResNet-50 (tests/onnx_models/vision.py, seeded random weights, written to an .onnx file first) is
loaded from that file, run once, and measured: the steady RSS after the run (minus the RSS of the
process after its imports), the peak RSS of the process, what a second context (webnn) or
session (ONNX Runtime) on the same file adds, and the process's RSS with four loaded against one
(webnn shares packed weights and constants between contexts: core/shared_constants.h). Ratios are webnn / ONNX Runtime.

    python bench/memory.py [--model resnet50|mobilenet_v2] [--threads 1]

Needs onnx and onnxruntime.
"""
import argparse
import gc
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
MIB = 1 << 20


def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def child(engine, path, threads):
    """Runs in its own process; prints one JSON line of byte counts."""
    x = np.random.default_rng(0).normal(size=(1, 3, 224, 224)).astype(np.float32)
    if engine == "webnn":
        import webnn
        import webnn.onnx  # noqa: F401 - the importer's own imports count as baseline

        def load():
            context = webnn.ml.create_context(num_threads=threads)
            graph = webnn.onnx.load(path, context, override_dims={"batch": 1})
            graph.compute({next(iter(graph.input_descriptors)): x})
            return context, graph
    else:
        import onnxruntime as ort

        def load():
            options = ort.SessionOptions()
            options.intra_op_num_threads = threads
            session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
            session.run(None, {session.get_inputs()[0].name: x})
            return session
    gc.collect()
    baseline = rss()
    first = load()
    gc.collect()
    steady = rss()
    second = load()
    gc.collect()
    both = rss()
    more = [load(), load()]
    gc.collect()
    four = rss()
    del first, second, more
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"baseline": baseline, "steady": steady - baseline, "second": both - steady, "peak": peak,
                      "one_process": steady, "four_process": four}))


def measure(engine, path, threads):
    result = subprocess.run([sys.executable, __file__, "--child", engine, "--path", path, "--threads", str(threads)],
                            capture_output=True, text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="resnet50", choices=["resnet50", "mobilenet_v2"])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--child", choices=["webnn", "ort"], help=argparse.SUPPRESS)
    parser.add_argument("--path", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.path, args.threads)
        return
    sys.path.insert(0, str(ROOT / "tests"))
    import onnx

    from onnx_models import vision

    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, f"{args.model}.onnx")
        onnx.save(getattr(vision, args.model)(), path)
        weights = os.path.getsize(path)
        results = {engine: measure(engine, path, args.threads) for engine in ("webnn", "ort")}
    print(f"{args.model}: .onnx file {weights / MIB:.1f} MiB; RSS in MiB, each engine in a fresh process")
    print(f"{'':8} {'after imports':>14} {'model (steady)':>15} {'2nd context':>12} {'peak':>8}  "
          f"{'process RSS with 4 loaded / with 1':>35}")
    for engine, r in results.items():
        print(f"{engine:8} {r['baseline'] / MIB:14.1f} {r['steady'] / MIB:15.1f} {r['second'] / MIB:12.1f} "
              f"{r['peak'] / MIB:8.1f}  {r['four_process'] / MIB:10.1f} / {r['one_process'] / MIB:.1f} = "
              f"{r['four_process'] / r['one_process']:.2f}x")
    w, o = results["webnn"], results["ort"]
    print(f"ratio webnn/ORT: model steady {w['steady'] / o['steady']:.2f}, second {w['second'] / max(o['second'], 1):.2f}, "
          f"peak {w['peak'] / o['peak']:.2f}")


if __name__ == "__main__":
    main()
