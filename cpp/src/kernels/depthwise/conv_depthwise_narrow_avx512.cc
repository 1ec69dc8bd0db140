// The AVX-512 depthwise loops for NCHW planes at most 8 columns wide (8-float vectors with AVX-512VL
// masks and permutes), in a file of their own so that the two halves compile in parallel.
#include "kernels/depthwise/conv_depthwise.h"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>

#include <algorithm>
#include <type_traits>
#include <utility>

namespace webnn {
namespace avx512 {
#include "kernels/depthwise/conv_depthwise_x86.h"
#include "kernels/depthwise/conv_depthwise_impl.h"

void f32_dwconv_narrow_items(const DepthwisePlan& plan, const float* weights, const float* bias, const float* in,
                             float* out, const float* residual, size_t begin, size_t end, float* scratch) {
  f32_dwconv_nchw<F32x8>(plan, weights, bias, in, out, residual, begin, end, scratch);
}

}  // namespace avx512
}  // namespace webnn
#endif
