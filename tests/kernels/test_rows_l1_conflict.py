"""A's rows a multiple of 4 KiB apart (1024 or 2048 floats per row, or 512 channels read at stride
2) fall in one L1 set; where the microkernel has more rows than L1 has ways (AVX-512's 14), the GEMM
and the NHWC convolution read them from a copy at a spread stride (gemm_driver.cc,
conv2d_indirect.cc). These shapes take that path where the CPU has AVX-512 (and the plain one
elsewhere): partial row tiles and column panels, several K blocks, padding taps, groups, tiles that
span output rows, a fused bias, residual and relu, at 1 and 2 threads, against float64."""
import math

import numpy as np
import pytest

import webnn
from conv_cases import run_nhwc_conv

RNG = np.random.default_rng(23)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("m,k,n", [(37, 1024, 70), (200, 2048, 33), (15, 1024, 64)])
def test_matmul_rows_4k_apart(threads, m, k, n):
    a = RNG.standard_normal((m, k)).astype(np.float32)
    b = (RNG.standard_normal((k, n)) / math.sqrt(k)).astype(np.float32)
    bias = RNG.standard_normal(n).astype(np.float32)
    context = webnn.ml.create_context(num_threads=threads)
    builder = webnn.MLGraphBuilder(context)
    x = builder.input("a", data_type="float32", shape=[m, k])
    y = builder.relu(builder.add(builder.matmul(x, builder.constant(b)), builder.constant(bias)))
    got = context.compute(builder.build({"y": y}), {"a": a})["y"]
    want = np.maximum(a.astype(np.float64) @ b.astype(np.float64) + bias, 0)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


# (channels in, channels out, input size, kernel, stride, groups)
CONVS = {
    "pointwise_1024": (1024, 72, 9, 1, 1, 1),       # 81 pixels: a partial last tile
    "pointwise_stride2_512": (512, 40, 13, 1, 2, 1),  # 7x7 outputs: tiles span output rows
    "3x3_stride2_512": (512, 48, 14, 3, 2, 1),      # padding taps read zeros
    "3x3_1024": (1024, 16, 5, 3, 1, 1),
    "grouped_2048": (2048, 64, 6, 1, 1, 2),         # 1024 channels per group, 8 KiB apart
}


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("conv", CONVS)
def test_nhwc_conv_rows_4k_apart(threads, conv):
    got, want = run_nhwc_conv(threads, *CONVS[conv])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
