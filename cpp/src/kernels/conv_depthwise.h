// Depthwise convolution (groups = C = O), float32, in the caller's layout. The row loops are
// compiled once per ISA level (conv_depthwise_impl.h included by the _ref/_avx2/_avx512 files) so
// the compiler vectorizes them for each; depthwise_conv2d() threads them and picks the level.
// The per-ISA files hold only plain loops: no std containers or std::function, so no inline
// library code is ever emitted with AVX flags.
#pragma once
#include "kernels/conv.h"

namespace webnn {

// The conv2d kernel for depthwise convolutions (groups = C = O), float32 or float16 (computed in
// float32). A constant filter (and bias) is reordered once.
Kernel make_depthwise_conv2d_kernel(DataType type, const Conv2dParams& p, const void* filter_constant,
                                    const void* bias_constant);

// weights: [kH][kW][C]; bias: C values or null.
void depthwise_conv2d(const Conv2dParams& p, const float* weights, const float* bias, const float* in, float* out,
                      ThreadPool* pool);

// Rows [begin, end): NCHW planes (n*C + c) or NHWC output rows (n*OH + oy). `scratch` holds
// max(OW, C) floats.
#define WEBNN_DEPTHWISE_ROWS_DECL                                                                            \
  void depthwise_rows(const Conv2dParams& p, const float* weights, const float* bias, const float* in, float* out, \
                      size_t begin, size_t end, float* scratch)
namespace ref { WEBNN_DEPTHWISE_ROWS_DECL; }
namespace avx2 { WEBNN_DEPTHWISE_ROWS_DECL; }
namespace avx512 { WEBNN_DEPTHWISE_ROWS_DECL; }

}  // namespace webnn
