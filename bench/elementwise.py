"""Element-wise and data-movement kernels at each ISA level vs NumPy, on 4M float32 elements.

Each op runs as a one-op graph on one thread (num_threads=1, like NumPy) with its inputs already
in device tensors; its time is the median of dispatch + read minus the median of the read alone.
NumPy writes into a preallocated output. Every ISA level runs in its own process (WEBNN_CPU_ISA
is read once per process). Prints milliseconds per op and the speed-up over NumPy (numpy / level).

    python bench/elementwise.py [--levels ref,avx2,avx512] [--repeats 15] [--threads 1]
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

import numpy as np

N = 2048  # x: [N, N] = 4M elements; row: [N]; col: [N, 1]
LEVELS = ["ref", "avx2", "avx512"]


def _erf(x):
    try:
        from scipy.special import erf
    except ImportError:  # NumPy has no erf
        return np.vectorize(math.erf, otypes=[np.float32])(x)
    return erf(x)


def _numpy_sigmoid(out, x):
    np.negative(x, out=out)
    np.exp(out, out=out)
    out += 1
    np.reciprocal(out, out=out)


def _numpy_gelu(out, x):
    np.multiply(x, np.float32(1 / math.sqrt(2)), out=out)
    out[...] = _erf(out)
    out += 1
    out *= x
    out *= 0.5


# op -> (its inputs, builder call, NumPy version writing into `out`)
OPS = {
    "add (broadcast row)": (("x", "row"), lambda b, x, row: b.add(x, row), lambda out, x, row: np.add(x, row, out=out)),
    "mul (broadcast col)": (("x", "col"), lambda b, x, col: b.mul(x, col),
                            lambda out, x, col: np.multiply(x, col, out=out)),
    "relu": (("x",), lambda b, x: b.relu(x), lambda out, x: np.maximum(x, 0, out=out)),
    "sigmoid": (("x",), lambda b, x: b.sigmoid(x), _numpy_sigmoid),
    "tanh": (("x",), lambda b, x: b.tanh(x), lambda out, x: np.tanh(x, out=out)),
    "gelu": (("x",), lambda b, x: b.gelu(x), _numpy_gelu),
    "exp": (("x",), lambda b, x: b.exp(x), lambda out, x: np.exp(x, out=out)),
    "transpose": (("x",), lambda b, x: b.transpose(x), lambda out, x: np.copyto(out, x.T)),
}


def _arrays():
    rng = np.random.default_rng(0)
    return {"x": rng.uniform(-4, 4, (N, N)).astype(np.float32), "row": rng.uniform(-4, 4, N).astype(np.float32),
            "col": rng.uniform(-4, 4, (N, 1)).astype(np.float32)}


def _median_ms(fn, repeats):
    fn()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1e3)
    return statistics.median(samples)


def measure_level(repeats, threads):
    """{op: ms} at the ISA level of this process."""
    import webnn

    arrays = _arrays()
    context = webnn.ml.create_context(num_threads=threads)
    host_out = np.empty((N, N), np.float32)
    times = {}
    for name, (names, build, _) in OPS.items():
        builder = webnn.MLGraphBuilder(context)
        descs = {k: {"dataType": "float32", "shape": list(arrays[k].shape)} for k in names}
        graph = builder.build({"y": build(builder, *(builder.input(k, descs[k]) for k in names))})
        inputs = {}
        for k in names:
            inputs[k] = context.create_tensor(descs[k], writable=True)
            context.write_tensor(inputs[k], arrays[k])
        out = context.create_tensor({"dataType": "float32", "shape": [N, N]}, readable=True)

        def run():
            context.dispatch(graph, inputs, {"y": out})
            context.read_tensor(out, host_out)

        times[name] = _median_ms(run, repeats) - _median_ms(lambda: context.read_tensor(out, host_out), repeats)
    return times


def measure_numpy(repeats):
    arrays = _arrays()
    out = np.empty((N, N), np.float32)
    return {name: _median_ms(lambda: ref(out, *(arrays[k] for k in names)), repeats)
            for name, (names, _, ref) in OPS.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", default="ref,avx2,avx512")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure_level(args.repeats, args.threads)))
        return

    import webnn

    best = LEVELS.index(webnn._core.detected_isa())
    levels = [level for level in args.levels.split(",") if LEVELS.index(level) <= best]
    results = {}
    for level in levels:
        child = subprocess.run([sys.executable, __file__, "--child", f"--repeats={args.repeats}",
                                f"--threads={args.threads}"], env=dict(os.environ, WEBNN_CPU_ISA=level),
                               capture_output=True, text=True, check=True)
        results[level] = json.loads(child.stdout)
    numpy_ms = measure_numpy(args.repeats)
    print(f"[{N}, {N}] float32, {args.threads} thread(s), median of {args.repeats} runs")
    print(f"{'op':22}{'numpy ms':>10}" + "".join(f"{level + ' ms':>12}{'speed-up':>10}" for level in levels))
    for name in OPS:
        line = f"{name:22}{numpy_ms[name]:10.2f}"
        for level in levels:
            line += f"{results[level][name]:12.2f}{numpy_ms[name] / results[level][name]:10.2f}"
        print(line)


if __name__ == "__main__":
    main()
