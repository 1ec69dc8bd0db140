"""Kernel edge-size sweep, run in a subprocess per ISA level (the level is fixed per process).

Checks matmul (GEMM driver + microkernels: tile edges, K below/at/above the K block, odd sizes,
constant and dynamic B, broadcast batches) and conv2d (1x1, k x k, strided, dilated, grouped,
depthwise, both layouts, float16) against float64 NumPy.
"""
import sys

import numpy as np

import webnn
from webnn import _core


def check(name, actual, reference, rtol):
    scale = max(1.0, float(np.max(np.abs(reference))))
    err = float(np.max(np.abs(actual.astype(np.float64) - reference))) / scale
    if not err <= rtol:
        raise AssertionError(f"{name}: relative error {err:.3g} > {rtol}")


def conv_reference(x, w, b, strides, dilations, padding, groups):
    """NCHW input, OIHW filter, float64."""
    n, c, h, wd = x.shape
    o, ig, kh, kw = w.shape
    x = np.pad(x, ((0, 0), (0, 0), (padding[0], padding[1]), (padding[2], padding[3])))
    oh = (x.shape[2] - ((kh - 1) * dilations[0] + 1)) // strides[0] + 1
    ow = (x.shape[3] - ((kw - 1) * dilations[1] + 1)) // strides[1] + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for g in range(groups):
        xs = x[:, g * ig:(g + 1) * ig]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i * dilations[0]: i * dilations[0] + strides[0] * (oh - 1) + 1: strides[0],
                           j * dilations[1]: j * dilations[1] + strides[1] * (ow - 1) + 1: strides[1]]
                out[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", patch, w[g * og:(g + 1) * og, :, i, j])
    return out + (b[None, :, None, None] if b is not None else 0)


def main():
    rng = np.random.default_rng(1)
    for threads in (1, 2):
        sweep(rng, webnn.ml.create_context(num_threads=threads), threads)
    print("ok")
    return 0


def sweep(rng, context, threads):
    # Sizes around the tiles (MR 4/6/14, NR 16/32), the K block (256) and the thread splits: few row
    # panels (A packed once, columns split), many (row blocks split).
    sizes = [(1, 1, 1), (1, 300, 70), (5, 3, 7), (14, 256, 32), (15, 257, 33), (13, 255, 31), (29, 600, 65),
             (6, 16, 16), (7, 17, 17), (100, 513, 97), (20, 700, 200), (300, 300, 40)]
    for m, k, n in sizes:
        for constant in (False, True):
            for dtype, rtol in (("float32", 1e-5), ("float16", 2e-2)):
                a = rng.standard_normal((m, k)).astype(dtype)
                b = rng.standard_normal((k, n)).astype(dtype)
                builder = webnn.MLGraphBuilder(context)
                ai = builder.input("a", data_type=dtype, shape=[m, k])
                bi = builder.constant(b) if constant else builder.input("b", data_type=dtype, shape=[k, n])
                graph = builder.build({"c": builder.matmul(ai, bi)})
                out = graph.compute({"a": a} if constant else {"a": a, "b": b})["c"]
                check(f"matmul {m}x{k}x{n} {dtype} const={constant} threads={threads}", out,
                      a.astype(np.float64) @ b.astype(np.float64), rtol)
    a = rng.standard_normal((2, 1, 5, 7)).astype(np.float32)
    b = rng.standard_normal((3, 7, 4)).astype(np.float32)
    builder = webnn.MLGraphBuilder(context)
    graph = builder.build({"c": builder.matmul(builder.input("a", data_type="float32", shape=a.shape),
                                                 builder.constant(b))})
    check("matmul broadcast batch", graph.compute({"a": a})["c"], a.astype(np.float64) @ b, 1e-5)

    conv_cases = [  # (N, C, H, W, O, kH, kW, strides, dilations, padding, groups)
        (1, 3, 8, 8, 4, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0), 1),
        (2, 5, 7, 9, 33, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), 1),
        (1, 4, 9, 9, 6, 3, 2, (2, 1), (1, 2), (0, 1, 2, 0), 2),
        (1, 8, 10, 10, 8, 3, 3, (2, 2), (1, 1), (1, 1, 1, 1), 8),
        (1, 6, 6, 6, 12, 5, 5, (1, 1), (1, 1), (2, 2, 2, 2), 3),
        (1, 16, 5, 5, 16, 3, 3, (1, 1), (2, 2), (2, 2, 2, 2), 16),
        (1, 3, 4, 4, 2, 1, 1, (2, 2), (1, 1), (0, 0, 0, 0), 1),
        # large K (several K blocks); 7x7 outputs (NCHW runs the transposed product); 14x14 outputs
        # (few pixel panels: B packed once); 30x30 (pixel blocks split over threads)
        (1, 64, 7, 7, 40, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), 1),
        (1, 300, 14, 14, 20, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0), 1),
        (1, 40, 30, 30, 30, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), 2),
        (1, 32, 15, 15, 48, 3, 3, (2, 2), (1, 1), (0, 1, 1, 0), 1),
    ]
    for index, (n, c, h, w, o, kh, kw, strides, dilations, padding, groups) in enumerate(conv_cases):
        for layout in ("nchw", "nhwc"):
            for constant in (False, True):
                for dtype, rtol in (("float32", 1e-5), ("float16", 2e-2)):
                    x = rng.standard_normal((n, c, h, w)).astype(dtype)
                    f = rng.standard_normal((o, c // groups, kh, kw)).astype(dtype)
                    bias = rng.standard_normal(o).astype(dtype)
                    ref = conv_reference(x.astype(np.float64), f.astype(np.float64), bias.astype(np.float64),
                                         strides, dilations, padding, groups)
                    xin = x if layout == "nchw" else x.transpose(0, 2, 3, 1).copy()
                    fin = f if layout == "nchw" else f.transpose(0, 2, 3, 1).copy()  # ohwi
                    builder = webnn.MLGraphBuilder(context)
                    xi = builder.input("x", data_type=dtype, shape=xin.shape)
                    fi = builder.constant(fin) if constant else builder.input("f", data_type=dtype, shape=fin.shape)
                    y = builder.conv2d(xi, fi, strides=list(strides), dilations=list(dilations),
                                       padding=list(padding), groups=groups, bias=builder.constant(bias),
                                       input_layout=layout, filter_layout="oihw" if layout == "nchw" else "ohwi")
                    if index % 2:  # fused into the GEMM epilogue
                        y = builder.relu(y)
                        ref = np.maximum(ref, 0)
                    feeds = {"x": xin} if constant else {"x": xin, "f": fin}
                    out = builder.build({"y": y}).compute(feeds)["y"]
                    if layout == "nhwc":
                        out = out.transpose(0, 3, 1, 2)
                    check(f"conv2d {(n, c, h, w, o, kh, kw, strides, dilations, padding, groups)} {layout} "
                          f"{dtype} const={constant} threads={threads}", out, ref, rtol)

    # A network's first convolution (few input channels) reads the NCHW input in place when a channels-
    # last region follows (a 1x1 convolution here): tile tails, padding, strides, dilations (dilated
    # columns: one value per tap), several output panels.
    stem_cases = [  # (N, C, H, W, O, kH, kW, strides, dilations, padding)
        (1, 3, 17, 19, 16, 3, 3, (2, 2), (1, 1), (1, 1, 1, 1)),
        (2, 1, 9, 8, 33, 3, 3, (1, 1), (1, 1), (0, 2, 1, 0)),
        (1, 4, 12, 13, 8, 2, 3, (1, 2), (2, 1), (1, 0, 0, 2)),
        (1, 3, 11, 11, 24, 3, 3, (2, 2), (1, 2), (1, 1, 2, 2)),
        (1, 2, 6, 30, 5, 7, 7, (3, 3), (1, 1), (3, 3, 3, 3)),
    ]
    for n, c, h, w, o, kh, kw, strides, dilations, padding in stem_cases:
        for constant in (False, True):
            x = rng.standard_normal((n, c, h, w)).astype(np.float32)
            f = rng.standard_normal((o, c, kh, kw)).astype(np.float32)
            bias = rng.standard_normal(o).astype(np.float32)
            g = rng.standard_normal((7, o, 1, 1)).astype(np.float32)
            stem = np.maximum(conv_reference(x.astype(np.float64), f.astype(np.float64), bias.astype(np.float64),
                                             strides, dilations, padding, 1), 0)
            ref = conv_reference(stem, g.astype(np.float64), None, (1, 1), (1, 1), (0, 0, 0, 0), 1)
            builder = webnn.MLGraphBuilder(context)
            xi = builder.input("x", data_type="float32", shape=x.shape)
            fi = builder.constant(f) if constant else builder.input("f", data_type="float32", shape=f.shape)
            y = builder.relu(builder.conv2d(xi, fi, strides=list(strides), dilations=list(dilations),
                                            padding=list(padding), bias=builder.constant(bias)))
            graph = builder.build({"y": builder.conv2d(y, builder.constant(g))})
            steps = _core.plan_steps(graph)
            assert steps[0] == ("reshape" if c == 1 else "conv2d+transpose+relu"), steps  # one channel: a view
            out = graph.compute({"x": x} if constant else {"x": x, "f": f})["y"]
            check(f"stem conv2d {(n, c, h, w, o, kh, kw, strides, dilations, padding)} const={constant} "
                  f"threads={threads}", out, ref, 1e-5)


if __name__ == "__main__":
    sys.exit(main())
