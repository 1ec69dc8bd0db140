// conv2d on 8-bit integers: the int8 GEMM family (int8_gemm.h) over im2col tiles of the input, or the
// depthwise loop, with the requantize epilogue. Any input and filter layout and any grouping.
#pragma once
#include "kernels/conv/conv.h"
#include "kernels/int8/int8_gemm.h"

namespace webnn {

// The largest K (taps x input channels per group) whose int32 sums cannot overflow: |x - zx| and
// |w - zw| are at most 255.
constexpr size_t kInt8MaxExactK = ((size_t(1) << 31) - 1) / (255 * 255);  // 33,025

// Whether the convolution runs in the depthwise loops (one output channel per input channel, any
// layout) rather than on a GEMM microkernel.
bool int8_conv2d_is_depthwise(const Conv2dParams& p);

// The microkernel that runs this convolution on the active kernels: the uint8 x int8 dot products
// when the CPU has them and every filter value minus its zero point fits int8, else int16 x int16.
const Int8GemmUkernel& int8_conv2d_ukernel(const Conv2dParams& p, const void* filter);

// The kernel for a quantized conv2d (p.quantization set); inputs: input[, filter, bias] (the filter
// and bias are the constants given here, packed once). `bias` is float32, or null.
Kernel make_int8_conv2d_kernel(const Conv2dParams& p, const void* filter, const float* bias);

}  // namespace webnn
