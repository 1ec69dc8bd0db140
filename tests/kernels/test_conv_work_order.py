"""The NHWC convolution splits its work into items of (a group of pixel tiles) x (a chunk of filter
panels); consecutive items share the chunk, or, when the input is larger than the filter times the
tile groups, the tile group (conv2d_indirect.cc, group_major). These shapes take each order, with
several chunks and tile groups, partial tiles and panels, padding and stride 2, at 1 and 2 threads,
against float64."""
import numpy as np
import pytest

from conv_cases import run_nhwc_conv

# (channels in, channels out, input size, kernel, stride, groups, batch)
CONVS = {
    "group_major_stride2": (128, 80, 30, 3, 2, 1, 2),  # 0.6 MB filter in 3 chunks, 0.9 MB input
    "group_major_stride1": (128, 72, 40, 3, 1, 1, 1),
    "chunk_major": (256, 72, 7, 3, 1, 1, 1),           # 0.6 MB filter, 50 KB input
    "grouped_group_major": (256, 128, 32, 3, 1, 2, 1),  # group-major at 1 thread
    "grouped_chunk_major": (256, 128, 9, 3, 1, 2, 1),
}


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("conv", CONVS)
def test_nhwc_conv_work_order(threads, conv):
    got, want = run_nhwc_conv(threads, *CONVS[conv])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
