// Depthwise convolution (groups = C = O), float32, in the caller's layout. The implementation is
// compiled once per ISA level (conv_depthwise_impl.h included by the _ref/_avx2/_avx512 files) so
// the compiler vectorizes it for each; depthwise_conv2d() picks the active level.
#pragma once
#include <algorithm>
#include <vector>

#include "kernels/conv.h"
#include "runtime/thread_pool.h"

namespace webnn {

// weights: [kH][kW][C]; bias: C values or null.
void depthwise_conv2d(const Conv2dParams& p, const float* weights, const float* bias, const float* in, float* out,
                      ThreadPool* pool);

namespace ref { void depthwise_conv2d(const Conv2dParams&, const float*, const float*, const float*, float*, ThreadPool*); }
namespace avx2 { void depthwise_conv2d(const Conv2dParams&, const float*, const float*, const float*, float*, ThreadPool*); }
namespace avx512 { void depthwise_conv2d(const Conv2dParams&, const float*, const float*, const float*, float*, ThreadPool*); }

}  // namespace webnn
