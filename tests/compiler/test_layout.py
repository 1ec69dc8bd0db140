"""The layout pass (compiler/passes/layout.cc): the compiler, not the conv kernel, decides an NCHW
convolution's GEMM orientation (the transposed product where output pixels fill panels badly, as at
7x7); either orientation gives the same result, and NHWC and depthwise convolutions keep theirs."""
import re

import numpy as np
import pytest

from webnn import _core

RNG = np.random.default_rng(21)


def _laid_out(graph):
    summary = dict(_core.plan_passes(graph))["layout"]
    if summary.startswith("disabled"):
        return 0, 0
    nodes, changed = re.match(r"(\d+) nodes laid out, (\d+) other", summary).groups()
    return int(nodes), int(changed)


@pytest.mark.parametrize("size,layout,groups,transposed", [
    (7, "nchw", 1, 1),     # 49 pixels fill 16- or 32-wide panels badly: the transposed product
    (14, "nchw", 1, 0),
    (7, "nhwc", 1, 0),
    (7, "nchw", 2, 1),
    (7, "nchw", 64, 0),    # depthwise: its own kernel
])
def test_conv_orientation_chosen_by_the_compiler(build_twice, same_results, size, layout, groups, transposed):
    x = RNG.standard_normal((1, 64, size, size)).astype(np.float32)
    w = (RNG.standard_normal((64, 64 // groups, 3, 3)) * 0.1).astype(np.float32)
    bias = RNG.standard_normal(64).astype(np.float32)
    xin = x if layout == "nchw" else x.transpose(0, 2, 3, 1).copy()

    def make(b):
        y = b.conv2d(b.input("x", data_type="float32", shape=list(xin.shape)), b.constant(w), bias=b.constant(bias),
                     padding=[1, 1, 1, 1], groups=groups, input_layout=layout)
        return b.build({"y": b.relu(y)})

    graph, plain = build_twice(make, "layout")
    assert _laid_out(graph) == (1, transposed)
    assert _laid_out(plain) == (0, 0)
    if transposed:  # a different summation order: equal to float32 rounding
        got, want = graph.compute({"x": xin})["y"], plain.compute({"x": xin})["y"]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    else:
        got = same_results(graph, plain, {"x": xin})["y"]
    if layout == "nhwc":
        got = got.transpose(0, 3, 1, 2)
    np.testing.assert_allclose(got, _conv_relu_reference(x, w, bias, groups), rtol=1e-4, atol=1e-4)


def _conv_relu_reference(x, w, bias, groups):
    """float64 3x3 'same' convolution + bias + relu, NCHW."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    n, c, h, wd = x.shape
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(2, 3))  # n c h w 3 3
    cg, og = c // groups, w.shape[0] // groups
    out = np.concatenate([np.einsum("nchwij,ocij->nohw", windows[:, g * cg:(g + 1) * cg], w[g * og:(g + 1) * og])
                          for g in range(groups)], axis=1)
    return np.maximum(out + bias.reshape(1, -1, 1, 1), 0)
