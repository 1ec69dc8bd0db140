"""Throughput (items/s) on all cores: webnn's batch API against ONNX Runtime's best configuration.

webnn runs through `webnn.BatchRunner` (the batch size and core split it picks itself, and the
same batch size as ONNX Runtime with the split it picks), timed over `BatchRunner.run` on a data
set of a few seconds' worth of items. ONNX Runtime runs batches of the benchmark batch size in
its two configurations: one session with every thread, and one session per thread run
concurrently from Python threads (ORT releases the GIL); its faster configuration counts. Rounds
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
import numpy as np  # noqa: E402

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


def _ort_configurations(model_bytes, feeds, cores):
    """name -> list of per-thread step functions; `keep` holds what they write into."""
    configs, keep = {}, []
    for workers, threads in ((1, cores), (cores, 1)):
        steps = []
        for _ in range(workers):
            step, arrays = M.ort_step(M.ort_session(model_bytes, threads), feeds)
            keep.append(arrays)  # ORT's binding writes into these arrays: they must outlive it
            steps.append(step)
        configs[f"{workers} x {threads} thread{'s' if threads > 1 else ''}"] = steps
    return configs, keep


def _runner_options(model, batch):
    """BatchRunner options that give the model the benchmark's item shapes."""
    feeds = model.feeds(1)
    if model.dims is None:
        return {"input_shapes": {name: list(value.shape[1:]) for name, value in feeds.items()}}
    return {"dims": {k: v for k, v in model.dims(batch).items() if k != "batch"}, "batch_dimension": "batch"}


def _batch_api_items_per_second(runner, data, seconds):
    """BatchRunner.run over `data` (repeated until `seconds` have passed): items per second."""
    count = len(next(iter(data.values())))
    done, start = 0, time.perf_counter()
    while True:
        runner.run(data)
        done += count
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return done / elapsed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--models", help="comma-separated names (default: " + ", ".join(n for n, _ in CASES) + ")")
    parser.add_argument("--seconds", type=float, default=2.0, help="per configuration and round")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    cores = os.cpu_count() or 1
    wanted = set(args.models.split(",")) if args.models else None
    print(f"webnn {webnn.__version__} vs ONNX Runtime, float32, {cores} cores: items/s (best round of {args.rounds})")
    print(f"{'model':14} {'batch':>5} | {'webnn batch API best (config)':>37} | {'ORT best (config)':>28} | webnn/ORT")
    for name, batch in CASES:
        if wanted and name not in wanted:
            continue
        model = next(m for m in M.MODELS if m.name == name)
        model_bytes = model.bytes()
        if isinstance(model_bytes, str):
            print(f"{name:14} skipped: {model_bytes}")
            continue
        feeds = model.feeds(batch)
        configs, outputs = _ort_configurations(model_bytes, feeds, cores)
        options = _runner_options(model, batch)
        runners = {"its choice": webnn.BatchRunner(model_bytes, **options),
                   f"batch {batch}": webnn.BatchRunner(model_bytes, batch_size=batch, **options)}
        # A data set of a few batches per worker, made of the benchmark inputs.
        largest = max(r.batch_size * r.workers for r in runners.values())
        repeat = -(-4 * largest // batch)
        data = {name: np.concatenate([value] * repeat) for name, value in feeds.items()}
        for steps in configs.values():  # warm up (first runs fault in memory)
            _items_per_second(steps, batch, 0.3)
        for runner in runners.values():
            runner.run(data)
        best = {}
        for _ in range(args.rounds):
            for key, steps in configs.items():
                best[("ort", key)] = max(best.get(("ort", key), 0.0), _items_per_second(steps, batch, args.seconds))
            for key, runner in runners.items():
                label = f"{key}: b{runner.batch_size} {runner.workers}x{runner.threads_per_worker}"
                best[("webnn", label)] = max(best.get(("webnn", label), 0.0),
                                             _batch_api_items_per_second(runner, data, args.seconds))
        top = {engine: max((k for k in best if k[0] == engine), key=best.get) for engine in ("webnn", "ort")}
        w, o = best[top["webnn"]], best[top["ort"]]
        print(f"{name:14} {batch:5} | {w:10.1f} ({top['webnn'][1]:>24}) | {o:10.1f} ({top['ort'][1]:>15}) | "
              f"{w / o:6.2f}")
        for key in sorted(best):
            print(f"{'':22}{key[0]:6} {key[1]:>24}: {best[key]:10.1f} items/s")
        for runner in runners.values():
            runner.close()
        del configs, outputs


if __name__ == "__main__":
    main()
