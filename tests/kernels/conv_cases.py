"""An NHWC convolution with a fused bias, residual add and relu, run through webnn and against a
float64 reference: the kernel tests' shapes choose the driver paths."""
import math

import numpy as np

import webnn

RNG = np.random.default_rng(23)


def conv_nhwc_reference(x, w, bias, stride, pad, groups):
    """float64 conv2d, NHWC input, OHWI filter."""
    x64 = np.pad(x.astype(np.float64), ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    kh, kw = w.shape[1:3]
    windows = np.lib.stride_tricks.sliding_window_view(x64, (kh, kw), axis=(1, 2))[:, ::stride, ::stride]
    cg, og = x.shape[3] // groups, w.shape[0] // groups
    out = np.concatenate([np.einsum("nhwcij,oijc->nhwo", windows[..., g * cg:(g + 1) * cg, :, :],
                                    w[g * og:(g + 1) * og].astype(np.float64)) for g in range(groups)], axis=3)
    return out + bias


def run_nhwc_conv(threads, cin, cout, size, k, stride, groups, batch=1):
    """(webnn's relu(conv(x) + bias + r), the float64 reference) for random x, filter and r."""
    pad = k // 2
    out_size = (size + 2 * pad - k) // stride + 1
    x = RNG.standard_normal((batch, size, size, cin)).astype(np.float32)
    w = (RNG.standard_normal((cout, k, k, cin // groups)) / math.sqrt(k * k * cin // groups)).astype(np.float32)
    bias = RNG.standard_normal(cout).astype(np.float32)
    residual = RNG.standard_normal((batch, out_size, out_size, cout)).astype(np.float32)
    context = webnn.ml.create_context(num_threads=threads)
    builder = webnn.MLGraphBuilder(context)
    inp = builder.input("x", data_type="float32", shape=list(x.shape))
    skip = builder.input("r", data_type="float32", shape=list(residual.shape))
    conv_out = builder.conv2d(inp, builder.constant(w), input_layout="nhwc", filter_layout="ohwi",
                              strides=[stride, stride], padding=[pad] * 4, groups=groups,
                              bias=builder.constant(bias))
    y = builder.relu(builder.add(conv_out, skip))
    got = context.compute(builder.build({"y": y}), {"x": x, "r": residual})["y"]
    want = np.maximum(conv_nhwc_reference(x, w, bias, stride, pad, groups) + residual, 0)
    return got, want
