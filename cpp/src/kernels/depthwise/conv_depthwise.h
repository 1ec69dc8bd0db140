// Depthwise convolution (groups = C = O), float32, in the caller's layout.
//
// NCHW: each work item is a band of output rows of one plane. The input rows it needs are copied
// to a scratch band, zero-padded and, for stride_w > 1, split into stride_w phase rows (phase r
// holds padded columns stride_w * j + r), so every filter tap reads a contiguous run: an output
// tile of rows x one vector of columns is a sum of plain vector loads times a broadcast weight.
// NHWC: each work item is an output row and a block of channels, vectorized over channels, with
// pixels clipped against the input borders.
//
// The loops live in conv_depthwise_impl.h, compiled once per ISA level (the _ref/_avx2/_avx512
// files) and picked through the kernel table (platform.h); they use no std containers or
// std::function, so no inline library code is ever emitted with AVX flags. Each tile ends like a
// GEMM tile: bias (the accumulators' start), a residual addend, then the clamp.
#pragma once
#include <cstddef>

#include "kernels/conv/conv.h"

namespace webnn {

struct DepthwiseLoops;

// The conv2d kernel for depthwise convolutions (groups = C = O), float32 or float16 (computed in
// float32); inputs: input, filter[, bias][, residual]. A constant filter (and bias) is reordered
// once. `loops`: a level's loops (null: the active level's).
Kernel make_depthwise_conv2d_kernel(DataType type, const Conv2dParams& p, const void* filter_constant,
                                    const void* bias_constant, const DepthwiseLoops* loops = nullptr);

// One depthwise convolution's shape and work split, fixed at kernel creation.
struct DepthwisePlan {
  size_t batch, channels, in_h, in_w, out_h, out_w;
  size_t kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w, pad_top, pad_left;
  float activation_min, activation_max;
  bool round_to_half = false;  // after the clamp: float16 results held in float32
  bool nhwc;
  // NCHW: output columns per vector (an upper bound: a level may use narrower vectors), floats per
  // scratch phase row (a multiple of lanes), output rows per work item, work items per plane, and
  // per filter tap (kh, kw) its scratch offset from the tile's base.
  size_t lanes, phase_len, band_rows, bands;
  const size_t* tap_offsets;
  // NHWC: floats per tap in the weights (channels rounded up to a vector), channels per work item.
  size_t channel_stride, channel_block;

  size_t row_pitch() const { return stride_w * phase_len; }
  size_t channel_blocks() const { return (channels + channel_block - 1) / channel_block; }
  size_t work_items() const { return nhwc ? batch * out_h * channel_blocks() : batch * channels * bands; }
  // Scratch floats one thread needs (NCHW: a band of padded rows).
  size_t scratch_floats() const {
    return nhwc ? 0 : ((band_rows - 1) * stride_h + (kernel_h - 1) * dilation_h + 1) * row_pitch();
  }
};

// Work items [begin, end) of the plan. Weights: NCHW [C][kH * kW]; NHWC [kH * kW][channel_stride].
// bias: C (NCHW) or channel_stride (NHWC) values, zeros without a bias. residual: null, or an
// addend of the output's shape and layout. scratch: 64-byte aligned, plan.scratch_floats() floats.
using DepthwiseItemsFn = void (*)(const DepthwisePlan& plan, const float* weights, const float* bias, const float* in,
                                  float* out, const float* residual, size_t begin, size_t end, float* scratch);

// One ISA level's depthwise loops. NCHW vectors are `lanes` floats wide, `narrow_lanes` for planes
// at most narrow_lanes columns wide.
struct DepthwiseLoops {
  DepthwiseItemsFn f32_items;
  size_t lanes, narrow_lanes;
};
const DepthwiseLoops& depthwise_loops_ref();
const DepthwiseLoops& depthwise_loops_avx2();    // x86-64 only
const DepthwiseLoops& depthwise_loops_avx512();  // x86-64 only

}  // namespace webnn
