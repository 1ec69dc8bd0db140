"""Reductions, softmax, normalizations and pooling: webnn vs NumPy, float32, in one run.

Each case is a one-op webnn graph (input written once) against the NumPy equivalent writing into
preallocated arrays where NumPy allows it. The webnn time is dispatch + read into a preallocated
array minus the read alone (like bench/elementwise.py: large outputs are not charged a copy NumPy
does not make). All three run interleaved (bench/kernels.py's interleaved_times); the printed
ratio is webnn time / NumPy time (below 1: webnn is faster), for the median and the best rounds.

    python bench/reductions.py [--threads 1] [--rounds 7] [--batch-seconds 0.05] [--only softmax]
"""
import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kernels import _check_close, interleaved_times  # noqa: E402

import webnn  # noqa: E402

EPS = 1e-5


def _softmax(shape):
    def numpy_fn(x, scratch):
        np.subtract(x, x.max(axis=-1, keepdims=True), out=scratch)
        np.exp(scratch, out=scratch)
        scratch /= scratch.sum(axis=-1, keepdims=True)
        return scratch

    return f"softmax last axis {list(shape)}", shape, lambda b, x: b.softmax(x, axis=len(shape) - 1), numpy_fn


def _reduce(name, axis, shape=(1024, 1024)):
    method = {"sum": "reduce_sum", "mean": "reduce_mean", "max": "reduce_max"}[name]
    numpy_reduce = {"sum": np.sum, "mean": np.mean, "max": np.max}[name]
    return (f"reduce{name.capitalize()} axis {axis} {list(shape)}", shape,
            lambda b, x: getattr(b, method)(x, axes=[axis]), lambda x, scratch: numpy_reduce(x, axis=axis))


def _layer_norm(shape=(128, 768)):
    rng = np.random.default_rng(1)
    scale = rng.standard_normal(shape[-1]).astype(np.float32)
    bias = rng.standard_normal(shape[-1]).astype(np.float32)

    def numpy_fn(x, scratch):
        mean = x.mean(axis=-1, keepdims=True)
        np.subtract(x, mean, out=scratch)
        factor = 1 / np.sqrt(np.mean(scratch * scratch, axis=-1, keepdims=True) + EPS)
        scratch *= factor
        scratch *= scale
        scratch += bias
        return scratch

    return (f"layerNormalization last axis {list(shape)}", shape,
            lambda b, x: b.layer_normalization(x, scale=b.constant(scale), bias=b.constant(bias), axes=[1],
                                               epsilon=EPS), numpy_fn)


def _batch_norm(shape=(1, 64, 112, 112)):
    rng = np.random.default_rng(2)
    c = shape[1]
    mean, scale, bias = (rng.standard_normal(c).astype(np.float32) for _ in range(3))
    variance = rng.uniform(0.5, 2, c).astype(np.float32)
    factor = (scale / np.sqrt(variance + EPS))[:, None, None]
    shift = (bias - mean * scale / np.sqrt(variance + EPS))[:, None, None]

    def numpy_fn(x, scratch):
        np.multiply(x, factor, out=scratch)
        scratch += shift
        return scratch

    return (f"batchNormalization {list(shape)}", shape,
            lambda b, x: b.batch_normalization(x, b.constant(mean), b.constant(variance), scale=b.constant(scale),
                                               bias=b.constant(bias), epsilon=EPS), numpy_fn)


def _max_pool(layout, shape=(1, 64, 112, 112)):
    """3x3, stride 2, padding 1 (ResNet's stem pool)."""
    if layout == "nhwc":
        shape = (shape[0], shape[2], shape[3], shape[1])
    h_axis = 1 if layout == "nhwc" else 2
    out_h = (shape[h_axis] + 2 - 3) // 2 + 1

    def numpy_fn(x, scratch):
        pad = [(0, 0)] * 4
        pad[h_axis] = pad[h_axis + 1] = (1, 1)
        padded = np.pad(x, pad, constant_values=-np.inf)
        out = None
        for i in range(3):
            for j in range(3):
                index = [slice(None)] * 4
                index[h_axis] = slice(i, i + 2 * out_h - 1, 2)
                index[h_axis + 1] = slice(j, j + 2 * out_h - 1, 2)
                window = padded[tuple(index)]
                out = window.copy() if out is None else np.maximum(out, window, out=out)
        return out

    return (f"maxPool2d 3x3 s2 {layout} {list(shape)}", shape,
            lambda b, x: b.max_pool2d(x, window_dimensions=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1],
                                      layout=layout), numpy_fn)


def _global_average_pool(shape=(1, 2048, 7, 7)):
    return (f"averagePool2d global 7x7 {list(shape)}", shape, lambda b, x: b.average_pool2d(x),
            lambda x, scratch: x.mean(axis=(2, 3), keepdims=True))


def _webnn_steps(context, x, build):
    """(dispatch + read, read alone, the array read into) of the graph build(builder, input)."""
    builder = webnn.MLGraphBuilder(context)
    desc = {"dataType": "float32", "shape": list(x.shape)}
    y = build(builder, builder.input("x", desc))
    graph = builder.build({"y": y})
    tx = context.create_tensor(desc, writable=True)
    ty = context.create_tensor({"dataType": "float32", "shape": y.shape}, readable=True)
    context.write_tensor(tx, x)
    out = np.empty(y.shape, np.float32)
    inputs, outputs = {"x": tx}, {"y": ty}

    def step():
        context.dispatch(graph, inputs, outputs)
        context.read_tensor(ty, out)

    return step, lambda: context.read_tensor(ty, out), out


CASES = [
    _softmax((64, 1000)),
    _softmax((8, 12, 128, 128)),
    *(_reduce(name, axis) for name in ("sum", "mean", "max") for axis in (1, 0)),
    _layer_norm(),
    _batch_norm(),
    _max_pool("nchw"),
    _max_pool("nhwc"),
    _global_average_pool(),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1, help="webnn threads (NumPy runs these on one)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--batch-seconds", type=float, default=0.05)
    parser.add_argument("--only", default="", help="run the cases whose name contains this")
    args = parser.parse_args()
    context = webnn.ml.create_context(num_threads=args.threads)
    rng = np.random.default_rng(0)
    print(f"isa {webnn._core.active_isa()}, webnn threads {args.threads}; ratio = webnn time / NumPy time")
    print(f"{'case':48s} {'webnn ms':>9s} {'numpy ms':>9s} {'ratio':>6s} {'best':>6s}")
    for name, shape, build, numpy_fn in CASES:
        if args.only not in name:
            continue
        x = rng.standard_normal(shape).astype(np.float32)
        scratch = np.empty_like(x)
        step, read, out = _webnn_steps(context, x, build)
        step()
        _check_close(name, out, np.asarray(numpy_fn(x, scratch), np.float64).reshape(out.shape))
        times = interleaved_times({"webnn": step, "read": read, "numpy": lambda: numpy_fn(x, scratch)},
                                  args.rounds, args.batch_seconds)
        (w_med, w_min), (r_med, r_min), (n_med, n_min) = times["webnn"], times["read"], times["numpy"]
        w_med, w_min = w_med - r_med, w_min - r_min
        print(f"{name:48s} {w_med * 1e3:9.3f} {n_med * 1e3:9.3f} {w_med / n_med:6.2f} {w_min / n_min:6.2f}")


if __name__ == "__main__":
    main()
