"""The layout pass (compiler/passes/layout.cc): the compiler, not the conv kernel, decides how an NCHW
convolution runs: k x k filters through NHWC (the indirect GEMM, no im2col), 1x1 filters as the
transposed product where output pixels fill panels badly (as at 7x7); every plan gives the same
result, and NHWC and depthwise convolutions keep theirs."""
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


@pytest.mark.parametrize("size,layout,groups,k,changed", [
    (7, "nchw", 1, 3, 1),    # k x k: through NHWC
    (14, "nchw", 1, 3, 1),
    (7, "nchw", 2, 3, 1),
    (7, "nhwc", 1, 3, 0),
    (7, "nchw", 64, 3, 0),   # depthwise: its own kernel
    (7, "nchw", 1, 1, 1),    # 49 pixels fill 16- or 32-wide panels badly: the transposed product
    (14, "nchw", 1, 1, 0),
])
def test_conv_plan_chosen_by_the_compiler(build_twice, same_results, size, layout, groups, k, changed):
    x = RNG.standard_normal((1, 64, size, size)).astype(np.float32)
    w = (RNG.standard_normal((64, 64 // groups, k, k)) * 0.1).astype(np.float32)
    bias = RNG.standard_normal(64).astype(np.float32)
    xin = x if layout == "nchw" else x.transpose(0, 2, 3, 1).copy()

    def make(b):
        y = b.conv2d(b.input("x", data_type="float32", shape=list(xin.shape)), b.constant(w), bias=b.constant(bias),
                     padding=[k // 2] * 4, groups=groups, input_layout=layout)
        return b.build({"y": b.relu(y)})

    graph, plain = build_twice(make, "layout")
    assert _laid_out(graph) == (1, changed)
    assert _laid_out(plain) == (0, 0)
    if changed:  # a different summation order: equal to float32 rounding
        got, want = graph.compute({"x": xin})["y"], plain.compute({"x": xin})["y"]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    else:
        got = same_results(graph, plain, {"x": xin})["y"]
    if layout == "nhwc":
        got = got.transpose(0, 3, 1, 2)
    np.testing.assert_allclose(got, _conv_relu_reference(x, w, bias, groups), rtol=1e-4, atol=1e-4)


def _conv_relu_reference(x, w, bias, groups):
    """float64 k x k 'same' convolution + bias + relu, NCHW."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    c, k = x.shape[1], w.shape[2]
    padded = np.pad(x, ((0, 0), (0, 0), (k // 2, k // 2), (k // 2, k // 2)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, (k, k), axis=(2, 3))  # n c h w k k
    cg, og = c // groups, w.shape[0] // groups
    out = np.concatenate([np.einsum("nchwij,ocij->nohw", windows[:, g * cg:(g + 1) * cg], w[g * og:(g + 1) * og])
                          for g in range(groups)], axis=1)
    return np.maximum(out + bias.reshape(1, -1, 1, 1), 0)
