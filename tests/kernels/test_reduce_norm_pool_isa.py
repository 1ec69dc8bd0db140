"""Reductions, softmax, normalizations and pooling at every ISA level this machine supports.

Each level runs this file as a script in a subprocess with WEBNN_CPU_ISA set (the level is fixed
per process): sizes around the vector widths (1, 7, 8, 15, 16, 17, 31, 33, 100, 1000), reductions
over the inner, outer, middle and several axes (keepDimensions, rank 0, the sliced paths for few
outputs), softmax along inner and outer axes, layer / instance / batch normalization in every
parameter layout, pooling windows, strides, dilations and padding in both layouts, float16, and
NaN propagation, against float64 NumPy references.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

LEVELS = ["ref", "avx2", "avx512"]
SIZES = [1, 7, 8, 15, 16, 17, 31, 33, 100, 1000]
RTOL = {"float32": 1e-5, "float16": 2e-3}


@pytest.mark.parametrize("level", LEVELS)
def test_sweep_at_isa_level(level):
    import webnn

    if LEVELS.index(level) > LEVELS.index(webnn._core.detected_isa()):
        pytest.skip(f"this CPU does not support {level}")
    env = dict(os.environ, WEBNN_CPU_ISA=level)
    result = subprocess.run([sys.executable, __file__, level], env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


# ---------------------------------------------------------------- the sweep (in the subprocess)
def check(name, actual, expected, dtype):
    """Same NaN positions; elsewhere |actual - expected| <= rtol * max(1, max |expected|)."""
    expected = np.asarray(expected, np.float64)
    actual = np.asarray(actual).astype(np.float64)
    assert actual.shape == expected.shape, f"{name}: shape {actual.shape} != {expected.shape}"
    nan = np.isnan(expected)
    if not np.array_equal(np.isnan(actual), nan):
        raise AssertionError(f"{name}: NaN positions differ")
    a, e = actual[~nan], expected[~nan]
    if a.size == 0:
        return
    infinite = np.isinf(e)
    if not np.array_equal(a[infinite], e[infinite]):
        raise AssertionError(f"{name}: infinities differ")
    scale = max(1.0, float(np.max(np.abs(e[~infinite]), initial=0.0)))
    err = float(np.max(np.abs(a[~infinite] - e[~infinite]), initial=0.0)) / scale
    if not err <= RTOL[dtype]:
        raise AssertionError(f"{name}: relative error {err:.3g} > {RTOL[dtype]}")


class Runner:
    def __init__(self, webnn):
        self.webnn = webnn
        self.context = webnn.ml.create_context()

    def run(self, x, make):
        """Outputs of make(builder, input) (a dict of operands) on array x."""
        builder = self.webnn.MLGraphBuilder(self.context)
        operand = builder.input("x", {"dataType": x.dtype.name, "shape": list(x.shape)})
        return builder.build(make(builder, operand)).compute({"x": x})


def logsumexp(x, axis, keepdims):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


# op -> (float64 reference, whether it needs positive inputs)
REDUCTIONS = {
    "reduceSum": (lambda x, a, k: np.sum(x, axis=a, keepdims=k), False),
    "reduceMean": (lambda x, a, k: np.mean(x, axis=a, keepdims=k), False),
    "reduceMax": (lambda x, a, k: np.max(x, axis=a, keepdims=k), False),
    "reduceMin": (lambda x, a, k: np.min(x, axis=a, keepdims=k), False),
    "reduceL1": (lambda x, a, k: np.sum(np.abs(x), axis=a, keepdims=k), False),
    "reduceL2": (lambda x, a, k: np.sqrt(np.sum(x * x, axis=a, keepdims=k)), False),
    "reduceSumSquare": (lambda x, a, k: np.sum(x * x, axis=a, keepdims=k), False),
    "reduceLogSumExp": (logsumexp, False),
    "reduceLogSum": (lambda x, a, k: np.log(np.sum(x, axis=a, keepdims=k)), True),
    "reduceProduct": (lambda x, a, k: np.prod(x, axis=a, keepdims=k), True),
}


def sweep_reductions(runner, rng):
    def reduce_all(name, x, axes, keep=False, ops=REDUCTIONS):
        """Every reduction of x (inputs near 1 for the ops that need positive ones), in two graphs."""
        dtype = x.dtype.name
        positive = (1 + 0.01 * x.astype(np.float64)).astype(x.dtype)  # products stay in range
        options = {"keepDimensions": keep} if axes is None else {"axes": axes, "keepDimensions": keep}
        for inputs, wanted in ((x, False), (positive, True)):
            selected = [op for op in ops if REDUCTIONS[op][1] == wanted]
            if not selected:
                continue
            outputs = runner.run(inputs, lambda b, o: {op: getattr(b, op)(o, **options) for op in selected})
            axis = None if axes is None else tuple(axes)
            x64 = inputs.astype(np.float64)
            for op in selected:
                with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
                    expected = REDUCTIONS[op][0](x64, axis, keep)
                check(f"{op} {name} axes={axes} keep={keep} {dtype}", outputs[op], expected, dtype)

    for dtype in ("float32", "float16"):
        sizes = SIZES if dtype == "float32" else [1, 16, 17, 33, 1000]
        for n in sizes:
            reduce_all(f"[3, {n}]", rng.standard_normal((3, n)).astype(dtype), [1])            # inner
            reduce_all(f"[{n}, 19]", rng.standard_normal((n, 19)).astype(dtype), [0])          # outer
            reduce_all(f"[2, {n}, 5]", rng.standard_normal((2, n, 5)).astype(dtype), [1], True)  # middle
            reduce_all(f"[7, {n}]", rng.standard_normal((7, n)).astype(dtype), [0], True)      # outer, n columns
    x = rng.standard_normal((4, 5, 6, 7)).astype(np.float32)
    for axes in ([0, 2], [1, 3], [0, 1, 2, 3], [1, 2], [], None):
        reduce_all("[4, 5, 6, 7]", x, axes, keep=axes == [1, 3])
    reduce_all("rank 0", np.array(1.5, np.float32), None)
    reduce_all("[1, 1, 3]", rng.standard_normal((1, 1, 3)).astype(np.float32), [0, 1])
    # Few outputs over many elements: the reduced range is split into slices.
    reduce_all("[70000]", rng.standard_normal(70000).astype(np.float32), [0])
    reduce_all("[5000, 40]", rng.standard_normal((5000, 40)).astype(np.float32), [0])
    reduce_all("[3000, 1030]", rng.standard_normal((3000, 1030)).astype(np.float32), [0],
               ops=["reduceSum", "reduceMax", "reduceLogSumExp"])
    # NaN and infinities: first element, a lane boundary, the tail, a whole column.
    for n in (8, 17, 40):
        x = rng.standard_normal((6, n)).astype(np.float32)
        x[0, 0] = x[1, 7] = x[2, n - 1] = np.nan
        x[3, n // 2], x[4, 1] = np.inf, -np.inf
        x[5, :] = -np.inf
        for axes in ([1], [0]):
            reduce_all(f"NaN [6, {n}]", x, axes, ops=["reduceMax", "reduceMin", "reduceSum", "reduceMean",
                                                     "reduceL1", "reduceL2", "reduceLogSumExp"])


def sweep_softmax(runner, rng):
    def softmax(x, axis):
        e = np.exp(x - np.max(x, axis=axis, keepdims=True))
        return e / np.sum(e, axis=axis, keepdims=True)

    cases = []
    for n in SIZES:
        cases += [((3, n), 1), ((n, 19), 0), ((2, n, 17), 1)]
    cases += [((2, 3, 300), 2), ((4, 2, 600), 1)]
    for dtype in ("float32", "float16"):
        for shape, axis in cases:
            if dtype == "float16" and shape[0] not in (3, 4):
                continue
            x = (rng.standard_normal(shape) * 4).astype(dtype)
            out = runner.run(x, lambda b, o: {"y": b.softmax(o, axis=axis)})["y"]
            check(f"softmax {shape} axis {axis} {dtype}", out, softmax(x.astype(np.float64), axis), dtype)
    x = rng.standard_normal((4, 20)).astype(np.float32)
    x[1, 5] = np.nan
    x[2, 3] = np.inf
    for axis in (0, 1):
        out = runner.run(x, lambda b, o: {"y": b.softmax(o, axis=axis)})["y"]
        with np.errstate(invalid="ignore"):
            check(f"softmax NaN axis {axis}", out, softmax(x.astype(np.float64), axis), "float32")


def sweep_normalization(runner, rng):
    def normalize(x, axes, scale, bias, eps):
        mean = np.mean(x, axis=axes, keepdims=True)
        y = (x - mean) / np.sqrt(np.mean((x - mean) ** 2, axis=axes, keepdims=True) + eps)
        return y * (1 if scale is None else scale) + (0 if bias is None else bias)

    def with_params(dtype, shape, use_scale, use_bias):
        scale = rng.uniform(0.5, 2, shape).astype(dtype) if use_scale else None
        bias = rng.standard_normal(shape).astype(dtype) if use_bias else None
        return scale, bias

    def options(b, scale, bias):
        opts = {}
        if scale is not None:
            opts["scale"] = b.constant(scale)
        if bias is not None:
            opts["bias"] = b.constant(bias)
        return opts

    def f64(a):
        return None if a is None else a.astype(np.float64)

    # layerNormalization: (shape, axes); the parameters follow the dims at `axes`, in order.
    layer_cases = [((3, n), [1]) for n in SIZES] + [((2, n, 5), [1]) for n in (1, 8, 17, 33)] + [
        ((2, 3, 17), [1, 2]), ((2, 5, 7), [2, 1]), ((4, 3, 5, 6), [1, 3]), ((5, 3), [0]), ((6,), [0])]
    for dtype in ("float32", "float16"):
        for i, (shape, axes) in enumerate(layer_cases):
            if dtype == "float16" and i % 3:
                continue
            x = (rng.standard_normal(shape) * 3 + 1).astype(dtype)
            scale, bias = with_params(dtype, [shape[a] for a in axes], i % 2 == 0, i % 4 < 2)
            out = runner.run(x, lambda b, o: {"y": b.layer_normalization(o, axes=axes, epsilon=1e-5,
                                                                         **options(b, scale, bias))})["y"]
            # Parameters indexed by the dims at `axes` in order: move them to their input positions.
            order = np.argsort(axes)
            shaped = [None if p is None else np.transpose(p.astype(np.float64), order).reshape(
                [shape[d] if d in axes else 1 for d in range(len(shape))]) for p in (scale, bias)]
            check(f"layerNormalization {shape} axes {axes} {dtype}", out,
                  normalize(x.astype(np.float64), tuple(axes), *shaped, 1e-5), dtype)
    # A constant row: mean exactly its value, the output exactly 0.
    x = np.full((2, 37), 3.1, np.float32)
    out = runner.run(x, lambda b, o: {"y": b.layer_normalization(o, axes=[1])})["y"]
    assert np.array_equal(out, np.zeros_like(x)), "layerNormalization of a constant row is not 0"

    for layout in ("nchw", "nhwc"):
        for c, hw in ((1, 7), (3, 17), (17, 5), (33, 4), (2, 40)):
            for dtype in ("float32", "float16"):
                x = rng.standard_normal((2, c, hw, hw + 1)).astype(dtype)
                scale, bias = with_params(dtype, [c], True, c % 2 == 1)
                given = x if layout == "nchw" else x.transpose(0, 2, 3, 1).copy()
                out = runner.run(given, lambda b, o: {"y": b.instance_normalization(
                    o, layout=layout, epsilon=1e-5, **options(b, scale, bias))})["y"]
                expected = normalize(x.astype(np.float64), (2, 3), f64(scale).reshape(1, c, 1, 1),
                                     None if bias is None else f64(bias).reshape(1, c, 1, 1), 1e-5)
                if layout == "nhwc":
                    expected = expected.transpose(0, 2, 3, 1)
                check(f"instanceNormalization {layout} C={c} HW={hw} {dtype}", out, expected, dtype)

    # batchNormalization: (shape, axis), the parameters along `axis`.
    batch_cases = [((2, c, 5, 9), 1) for c in (1, 3, 17)] + [((n, c), 1) for n in (1, 7) for c in (1, 16, 33, 300)] + [
        ((4, 6, 17), 2), ((1000,), 0)]
    for dtype in ("float32", "float16"):
        for i, (shape, axis) in enumerate(batch_cases):
            c = shape[axis]
            x = rng.standard_normal(shape).astype(dtype)
            mean = rng.standard_normal(c).astype(dtype)
            variance = rng.uniform(0.5, 2, c).astype(dtype)
            scale, bias = with_params(dtype, [c], i % 2 == 0, i % 3 != 1)
            out = runner.run(x, lambda b, o: {"y": b.batch_normalization(
                o, b.constant(mean), b.constant(variance), axis=axis, epsilon=1e-3, **options(b, scale, bias))})["y"]
            along = [c if d == axis else 1 for d in range(len(shape))]
            expected = (x.astype(np.float64) - f64(mean).reshape(along)) / np.sqrt(f64(variance).reshape(along) + 1e-3)
            if scale is not None:
                expected = expected * f64(scale).reshape(along)
            if bias is not None:
                expected = expected + f64(bias).reshape(along)
            check(f"batchNormalization {shape} axis {axis} {dtype}", out, expected, dtype)


def pool_reference(op, x, window, strides, dilations, padding):
    """float64, NCHW; taps in the padding are skipped (a window without taps gives 0, max too, as WPT
    expects)."""
    h, w = x.shape[2:]
    (kh, kw), (sh, sw), (dh, dw), (top, bottom, left, right) = window, strides, dilations, padding
    out_h = (h + top + bottom - (kh - 1) * dh - 1) // sh + 1
    out_w = (w + left + right - (kw - 1) * dw - 1) // sw + 1
    out = np.empty(x.shape[:2] + (out_h, out_w))
    for oy in range(out_h):
        ys = [y for y in (oy * sh + i * dh - top for i in range(kh)) if 0 <= y < h]
        for ox in range(out_w):
            xs = [v for v in (ox * sw + j * dw - left for j in range(kw)) if 0 <= v < w]
            taps = x[:, :, ys][:, :, :, xs].reshape(x.shape[0], x.shape[1], -1)
            if taps.shape[2] == 0:
                out[:, :, oy, ox] = 0.0
            elif op == "max_pool2d":
                out[:, :, oy, ox] = np.max(taps, axis=2)
            elif op == "average_pool2d":
                out[:, :, oy, ox] = np.mean(taps, axis=2)
            else:
                out[:, :, oy, ox] = np.sqrt(np.sum(taps * taps, axis=2))
    return out


def sweep_pooling(runner, rng):
    # (N, C, H, W, window, strides, dilations, padding [top, bottom, left, right])
    cases = [
        (1, 3, 8, 8, (2, 2), (2, 2), (1, 1), (0, 0, 0, 0)),
        (2, 17, 9, 33, (3, 3), (1, 1), (1, 1), (1, 1, 1, 1)),
        (1, 16, 17, 17, (3, 3), (2, 2), (1, 1), (1, 1, 1, 1)),
        (1, 33, 12, 31, (3, 2), (3, 1), (1, 1), (0, 2, 1, 0)),
        (1, 5, 15, 40, (2, 3), (1, 2), (2, 2), (1, 0, 2, 2)),
        (1, 2, 7, 100, (1, 5), (1, 3), (1, 4), (0, 0, 3, 3)),
        (1, 8, 5, 16, (2, 2), (1, 1), (1, 1), (1, 1, 1, 1)),
        (1, 1, 6, 7, (1, 1), (1, 1), (1, 1), (1, 1, 1, 1)),   # corner outputs without taps
        (1, 1, 3, 2, (2, 2), (1, 1), (5, 5), (5, 5, 5, 5)),   # dilated taps around the input
        (1, 7, 9, 1000, (1, 3), (1, 2), (1, 1), (0, 0, 1, 1)),
        (1, 4, 7, 7, (7, 7), (1, 1), (1, 1), (0, 0, 0, 0)),   # global
        (2, 100, 3, 5, (5, 7), (1, 1), (1, 1), (1, 1, 1, 1)),  # global with padding
        (1, 3, 1, 1, (1, 1), (1, 1), (1, 1), (0, 0, 0, 0)),
    ]
    for i, (n, c, h, w, window, strides, dilations, padding) in enumerate(cases):
        for dtype in ("float32", "float16"):
            if dtype == "float16" and i % 3:
                continue
            x = rng.standard_normal((n, c, h, w)).astype(dtype)
            if i % 2:
                x[0, 0, h // 2, w // 2] = np.nan
            for layout in ("nchw", "nhwc"):
                given = x if layout == "nchw" else x.transpose(0, 2, 3, 1).copy()
                ops = ("max_pool2d", "average_pool2d", "l2_pool2d")
                outputs = runner.run(given, lambda b, o: {op: getattr(b, op)(
                    o, window_dimensions=list(window), strides=list(strides), dilations=list(dilations),
                    padding=list(padding), layout=layout) for op in ops})
                for op in ops:
                    expected = pool_reference(op, x.astype(np.float64), window, strides, dilations, padding)
                    if layout == "nhwc":
                        expected = expected.transpose(0, 2, 3, 1)
                    check(f"{op} case {i} {layout} {dtype}", outputs[op], expected, dtype)
    x = rng.integers(-100, 100, (1, 3, 6, 9)).astype(np.int8)
    for layout in ("nchw", "nhwc"):
        given = x if layout == "nchw" else x.transpose(0, 2, 3, 1).copy()
        out = runner.run(given, lambda b, o: {"y": b.max_pool2d(o, window_dimensions=[2, 3], strides=[2, 2],
                                                                 padding=[1, 0, 1, 1], layout=layout)})["y"]
        expected = pool_reference("max_pool2d", x.astype(np.float64), (2, 3), (2, 2), (1, 1), (1, 0, 1, 1))
        if layout == "nhwc":
            expected = expected.transpose(0, 2, 3, 1)
        assert np.array_equal(out, expected.astype(np.int8)), f"int8 max_pool2d {layout}"


def main(level):
    import webnn

    active = webnn._core.active_isa()
    assert active == level, f"WEBNN_CPU_ISA={level} but the active level is {active}"
    runner = Runner(webnn)
    rng = np.random.default_rng(3)
    sweep_reductions(runner, rng)
    sweep_softmax(runner, rng)
    sweep_normalization(runner, rng)
    sweep_pooling(runner, rng)


if __name__ == "__main__":
    main(sys.argv[1])
