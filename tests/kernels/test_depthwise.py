"""Depthwise conv2d (groups = C = O) against float64 NumPy at every ISA level this CPU supports.

The level is fixed per process, so each level runs this file as a script with WEBNN_CPU_ISA set.
Covers both layouts, kernel sizes, strides, dilation, asymmetric and oversized padding, channel
counts off the vector width, widths 1..40, batch 2, bias on/off, fused relu/clamp (NaN passes) and
float16.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

import webnn

LEVELS = ["ref", "avx2", "avx512"]


def reference(x, w, b, strides, dilations, padding):
    """NCHW input, [C, 1, kH, kW] filter, float64."""
    n, c, h, wd = x.shape
    kh, kw = w.shape[2:]
    x = np.pad(x, ((0, 0), (0, 0), (padding[0], padding[1]), (padding[2], padding[3])))
    oh = (x.shape[2] - ((kh - 1) * dilations[0] + 1)) // strides[0] + 1
    ow = (x.shape[3] - ((kw - 1) * dilations[1] + 1)) // strides[1] + 1
    out = np.zeros((n, c, oh, ow))
    for i in range(kh):
        for j in range(kw):
            patch = x[:, :, i * dilations[0]: i * dilations[0] + strides[0] * (oh - 1) + 1: strides[0],
                      j * dilations[1]: j * dilations[1] + strides[1] * (ow - 1) + 1: strides[1]]
            out += patch * w[None, :, 0, i, j, None, None]
    return out + (b[None, :, None, None] if b is not None else 0)


def run_case(context, rng, shape, kernel, strides=(1, 1), dilations=(1, 1), padding=(0, 0, 0, 0), layout="nchw",
             bias=True, activation=None, dtype="float32", nan=False):
    n, c, h, w = shape
    x = rng.standard_normal(shape).astype(dtype)
    if nan:
        x.flat[rng.integers(0, x.size, 3)] = np.nan
    f = rng.standard_normal((c, 1, *kernel)).astype(dtype)
    b = rng.standard_normal(c).astype(dtype) if bias else None
    ref = reference(x.astype(np.float64), f.astype(np.float64), None if b is None else b.astype(np.float64),
                    strides, dilations, padding)
    if activation == "relu":
        ref = np.where(np.isnan(ref), ref, np.maximum(ref, 0))
    elif activation == "clamp":
        ref = np.where(np.isnan(ref), ref, np.clip(ref, -0.5, 0.75))
    nhwc = layout == "nhwc"
    xin = x.transpose(0, 2, 3, 1).copy() if nhwc else x
    fin = f.transpose(1, 2, 3, 0).copy() if nhwc else f  # ihwo for NHWC
    builder = webnn.MLGraphBuilder(context)
    xi = builder.input("x", data_type=dtype, shape=list(xin.shape))
    options = dict(strides=list(strides), dilations=list(dilations), padding=list(padding), groups=c,
                   input_layout=layout, filter_layout="ihwo" if nhwc else "oihw")
    if b is not None:
        options["bias"] = builder.constant(b)
    y = builder.conv2d(xi, builder.constant(fin), **options)
    if activation == "relu":
        y = builder.relu(y)
    elif activation == "clamp":
        y = builder.clamp(y, min_value=-0.5, max_value=0.75)
    out = builder.build({"y": y}).compute({"x": xin})["y"]
    if nhwc:
        out = out.transpose(0, 3, 1, 2)
    label = (f"{shape} k{kernel} s{strides} d{dilations} p{padding} {layout} bias={bias} {activation} {dtype}"
             f" nan={nan}")
    assert out.shape == ref.shape, f"{label}: shape {out.shape} != {ref.shape}"
    assert np.array_equal(np.isnan(out), np.isnan(ref)), f"{label}: NaN positions differ"
    finite = ~np.isnan(ref)
    err = float(np.max(np.abs(out[finite].astype(np.float64) - ref[finite]), initial=0.0))
    rtol = 2e-2 if dtype == "float16" else 1e-5
    assert err <= rtol * max(1.0, float(np.max(np.abs(ref[finite]), initial=0.0))), f"{label}: error {err:.3g}"


def cases():
    layouts = ("nchw", "nhwc")
    for layout in layouts:
        for c in (1, 3, 17, 33):
            yield dict(shape=(1, c, 9, 11), kernel=(3, 3), padding=(1, 1, 1, 1), layout=layout)
        for kernel, padding in (((1, 1), (0, 0, 0, 0)), ((5, 5), (2, 2, 2, 2)), ((3, 2), (0, 2, 1, 0)),
                                ((2, 5), (1, 0, 3, 1))):
            for strides in ((1, 1), (2, 2), (3, 3), (2, 1)):
                yield dict(shape=(1, 17, 13, 19), kernel=kernel, strides=strides, padding=padding, layout=layout)
        yield dict(shape=(1, 5, 12, 14), kernel=(3, 3), dilations=(2, 2), padding=(2, 2, 2, 2), layout=layout)
        yield dict(shape=(1, 5, 12, 14), kernel=(3, 3), strides=(2, 2), dilations=(2, 3), padding=(1, 3, 2, 0),
                   layout=layout)
        # Padding larger than the kernel reach: whole output rows and columns see only padding.
        yield dict(shape=(1, 3, 4, 5), kernel=(3, 3), padding=(5, 4, 6, 7), layout=layout)
        yield dict(shape=(1, 3, 4, 5), kernel=(2, 2), strides=(3, 3), padding=(4, 4, 4, 4), layout=layout)
        for width in list(range(1, 41)):
            for strides in ((1, 1), (2, 2)):
                yield dict(shape=(1, 18, 3, width), kernel=(3, 3), strides=strides, padding=(1, 1, 1, 1),
                           layout=layout)
        # Wide and tall planes: whole-vector tiles, both row edges, several row bands per plane.
        for k in (3, 5):
            for width in (64, 77, 129):
                for strides in ((1, 1), (2, 2)):
                    for pad in ((k // 2,) * 4, (0, 1, 0, 1), (1, 2, 2, 0)):
                        yield dict(shape=(1, 2, 11, width), kernel=(k, k), strides=strides, padding=pad, layout=layout)
        yield dict(shape=(1, 2, 150, 150), kernel=(3, 3), padding=(1, 1, 1, 1), layout=layout)
        yield dict(shape=(1, 3, 20, 30), kernel=(3, 3), padding=(2, 2, 20, 20), layout=layout)  # pad_left >= lanes
        yield dict(shape=(1, 20, 1, 1), kernel=(3, 3), padding=(1, 1, 1, 1), layout=layout)  # out_w = 1
        yield dict(shape=(2, 33, 10, 23), kernel=(3, 3), padding=(1, 1, 1, 1), layout=layout)
        yield dict(shape=(2, 6, 40, 70), kernel=(3, 3), strides=(2, 2), padding=(0, 1, 0, 1), layout=layout)
        yield dict(shape=(1, 4, 7, 9), kernel=(3, 3), padding=(1, 1, 1, 1), layout=layout, bias=False)
        for activation in ("relu", "clamp"):
            yield dict(shape=(2, 19, 8, 21), kernel=(3, 3), padding=(1, 1, 1, 1), layout=layout,
                       activation=activation, nan=True)
            yield dict(shape=(1, 19, 8, 21), kernel=(3, 3), strides=(2, 2), padding=(1, 1, 1, 1), layout=layout,
                       activation=activation)
        for strides in ((1, 1), (2, 2)):
            yield dict(shape=(2, 17, 9, 12), kernel=(3, 3), strides=strides, padding=(1, 1, 1, 1), layout=layout,
                       dtype="float16")
        yield dict(shape=(1, 17, 9, 12), kernel=(3, 3), padding=(1, 1, 1, 1), layout=layout, dtype="float16",
                   activation="relu", nan=True)


def main():
    context = webnn.ml.create_context()
    rng = np.random.default_rng(7)
    count = 0
    for case in cases():
        run_case(context, rng, **case)
        count += 1
    print(f"{count} cases ok")
    return 0


def supported(level):
    return LEVELS.index(level) <= LEVELS.index(webnn._core.detected_isa())


@pytest.mark.parametrize("level", LEVELS)
def test_depthwise_at_isa_level(level):
    if not supported(level):
        pytest.skip(f"this CPU does not support {level}")
    env = dict(os.environ, WEBNN_CPU_ISA=level)
    result = subprocess.run([sys.executable, __file__], env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "cases ok" in result.stdout


if __name__ == "__main__":
    sys.exit(main())
