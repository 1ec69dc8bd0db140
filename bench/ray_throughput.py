"""Throughput (items/s) of webnn in a Ray Data pipeline against webnn.BatchRunner in this process, on
the same data in the same run.

In process: `webnn.BatchRunner(model, batch_size=B, cores=A*C).run(data)`. Ray: a local cluster of
A*C CPUs, `ray.data.from_numpy(blocks)` (blocks of a few batches, in the object store) ->
`map_batches(webnn.ray.WebnnPredictor, A actors of C CPUs, batch_size=B)`, iterated to the end on
the driver. Ray's figure counts from the start of the execution (actors start and load the model
then) and in the actors alone (from the first batch's start to the last one's end, the actors' clocks);
the in-process figure is the run alone.

    python bench/ray_throughput.py [--model mobilenet_v2] [--batch 32] [--items 768] [--actors 2]

Needs onnx (the benchmark models are built as ONNX) and Ray Data (pip install ".[ray]").
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models as M  # noqa: E402
import numpy as np  # noqa: E402

import webnn  # noqa: E402


def _runner_options(model, batch):
    """BatchRunner options that give the model the benchmark's item shapes (as bench/throughput.py)."""
    feeds = model.feeds(1)
    if model.dims is None:
        return {"input_shapes": {name: list(value.shape[1:]) for name, value in feeds.items()}}
    return {"dims": {k: v for k, v in model.dims(batch).items() if k != "batch"}, "batch_dimension": "batch"}


def in_process(model_bytes, options, data, batch, cores):
    """(items/s of BatchRunner.run after a warm-up, the runner's description)."""
    with webnn.BatchRunner(model_bytes, batch_size=batch, cores=cores, **options) as runner:
        runner.run({k: v[:batch * runner.workers] for k, v in data.items()})  # warm up
        count = len(next(iter(data.values())))
        start = time.perf_counter()
        runner.run(data)
        return count / (time.perf_counter() - start), repr(runner)


def _timed(predictor):
    """The predictor, writing when each batch began and ended (seconds since the epoch) into its rows."""

    class Timed(predictor):
        def __call__(self, batch):
            begin = time.time()
            out = super().__call__(batch)
            count = len(next(iter(out.values())))
            out["begin"], out["end"] = np.full(count, begin), np.full(count, time.time())
            return out

    return Timed


def through_ray(ray, model_bytes, options, data, batch, actors, cpus, block):
    """(items/s from the start, items/s in the actors, rows) of the Ray pipeline."""
    from webnn.ray import WebnnPredictor

    (name, array), = data.items()
    count = len(array)
    ds = ray.data.from_numpy([array[k:k + block] for k in range(0, count, block)])  # column "data"
    ds = ds.map_batches(_timed(WebnnPredictor),
                        fn_constructor_kwargs={"model": model_bytes, "inputs": {"data": name}, "batch_size": batch,
                                               **options},
                        compute=ray.data.ActorPoolStrategy(size=actors), num_cpus=cpus, batch_size=batch,
                        batch_format="numpy")
    rows, begin, end, start = 0, float("inf"), 0.0, time.perf_counter()
    for out in ds.iter_batches(batch_size=None, batch_format="numpy"):
        rows += len(out["begin"])
        begin, end = min(begin, float(out["begin"].min())), max(end, float(out["end"].max()))
    return rows / (time.perf_counter() - start), rows / (end - begin), rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--model", default="mobilenet_v2", help="one of: " + ", ".join(m.name for m in M.MODELS))
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--items", type=int, default=768, help="items in the data set (default 768)")
    parser.add_argument("--actors", type=int, default=2, help="Ray actors (concurrency; default 2)")
    parser.add_argument("--cpus", type=int, default=1, help="CPUs per actor (num_cpus; default 1)")
    parser.add_argument("--block", type=int, help="items per Ray block (default: 2 batches)")
    args = parser.parse_args(argv)
    import ray
    import ray.data

    model = next((m for m in M.MODELS if m.name == args.model), None)
    if model is None:
        parser.error(f"unknown model {args.model!r}")
    model_bytes = model.bytes()
    if isinstance(model_bytes, str):
        sys.exit(f"{args.model}: {model_bytes}")
    feeds = model.feeds(args.batch)
    if len(feeds) != 1:
        sys.exit(f"{args.model}: this benchmark feeds one-input models; it has {sorted(feeds)}")
    repeat = -(-args.items // args.batch)
    data = {name: np.concatenate([value] * repeat)[:args.items] for name, value in feeds.items()}
    options = _runner_options(model, args.batch)
    cores = args.actors * args.cpus

    print(f"webnn {webnn.__version__}, ray {ray.__version__}: {args.model}, {args.items} items, batch {args.batch}, "
          f"{cores} CPUs ({os.cpu_count()} on this machine)")
    local, description = in_process(model_bytes, options, data, args.batch, cores)
    print(f"in process  {local:9.1f} items/s  {description}")

    ray.init(num_cpus=cores, include_dashboard=False, log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    try:
        total, in_actors, rows = through_ray(ray, model_bytes, options, data, args.batch, args.actors, args.cpus,
                                          args.block or 2 * args.batch)
    finally:
        ray.shutdown()
    assert rows == args.items, (rows, args.items)
    print(f"Ray Data    {total:9.1f} items/s  from the start ({args.actors} actors x {args.cpus} CPU, actors "
          "starting and loading the model included)")
    print(f"Ray Data    {in_actors:9.1f} items/s  in the actors (first batch begun to last batch done)")
    print(f"Ray / in process: {total / local:.2f} from the start, {in_actors / local:.2f} in the actors")


if __name__ == "__main__":
    main()
