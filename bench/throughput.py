"""Throughput (items/s) on all cores: webnn against ONNX Runtime's best configuration, in one run.

Each model runs batches of its benchmark batch size for a few seconds per configuration:
one context (session) with every thread, and one context (session) per thread run concurrently
from Python threads (both engines release the GIL while they run). webnn's contexts share their
packed weights (core/shared_constants.h). Each engine's faster configuration counts; rounds
alternate between configurations and engines, and the best round of each is kept.

    python bench/throughput.py [--models mobilenet_v2,...] [--seconds 2] [--rounds 2]

Needs onnxruntime (and the optional model packages bench/models.py names).
"""
import argparse
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models as M  # noqa: E402

import webnn  # noqa: E402

CASES = [("mobilenet_v2", 32), ("resnet50", 16), ("minilm-l6", 32), ("ppocr-rec", 6)]


def _items_per_second(steps, batch, seconds):
    """Runs each step (one per thread) in a loop for `seconds`; items finished per second."""
    done = [0] * len(steps)
    stop = time.perf_counter() + seconds

    def loop(k):
        while time.perf_counter() < stop:
            steps[k]()
            done[k] += 1

    start = time.perf_counter()
    threads = [threading.Thread(target=loop, args=(k,)) for k in range(len(steps))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(done) * batch / (time.perf_counter() - start)


def _configurations(model, model_bytes, batch, cores):
    """name -> list of per-thread step functions; `keep` holds what they write into."""
    feeds = model.feeds(batch)
    configs, keep = {}, []
    for engine in ("webnn", "ort"):
        for workers, threads in ((1, cores), (cores, 1)):
            steps = []
            for _ in range(workers):
                if engine == "webnn":
                    context = webnn.ml.create_context(num_threads=threads)
                    step, arrays = M.webnn_step(M.webnn_load(model_bytes, model, feeds, context), context, feeds)
                else:
                    step, arrays = M.ort_step(M.ort_session(model_bytes, threads), feeds)
                keep.append(arrays)  # ORT's binding writes into these arrays: they must outlive it
                steps.append(step)
            configs[(engine, f"{workers} x {threads} thread{'s' if threads > 1 else ''}")] = steps
    return configs, keep


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--models", help="comma-separated names (default: " + ", ".join(n for n, _ in CASES) + ")")
    parser.add_argument("--seconds", type=float, default=2.0, help="per configuration and round")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    cores = os.cpu_count() or 1
    wanted = set(args.models.split(",")) if args.models else None
    print(f"webnn {webnn.__version__} vs ONNX Runtime, float32, {cores} cores: items/s (best round of {args.rounds})")
    print(f"{'model':14} {'batch':>5} | {'webnn best (config)':>28} | {'ORT best (config)':>28} | webnn/ORT")
    for name, batch in CASES:
        if wanted and name not in wanted:
            continue
        model = next(m for m in M.MODELS if m.name == name)
        model_bytes = model.bytes()
        if isinstance(model_bytes, str):
            print(f"{name:14} skipped: {model_bytes}")
            continue
        configs, outputs = _configurations(model, model_bytes, batch, cores)
        for steps in configs.values():  # warm up (first runs fault in memory)
            _items_per_second(steps, batch, 0.3)
        best = {}
        for _ in range(args.rounds):
            for key, steps in configs.items():
                best[key] = max(best.get(key, 0.0), _items_per_second(steps, batch, args.seconds))
        top = {engine: max((k for k in best if k[0] == engine), key=best.get) for engine in ("webnn", "ort")}
        w, o = best[top["webnn"]], best[top["ort"]]
        print(f"{name:14} {batch:5} | {w:10.1f} ({top['webnn'][1]:>15}) | {o:10.1f} ({top['ort'][1]:>15}) | "
              f"{w / o:6.2f}")
        for key in sorted(best):
            print(f"{'':22}{key[0]:6} {key[1]:>15}: {best[key]:10.1f} items/s")
        del configs, outputs


if __name__ == "__main__":
    main()
