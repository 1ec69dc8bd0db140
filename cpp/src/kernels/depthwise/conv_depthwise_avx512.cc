// The depthwise loops built with AVX-512 (see CMakeLists.txt): 16-float vectors, and 8-float ones for
// NCHW planes at most 8 columns wide (conv_depthwise_narrow_avx512.cc).
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
                             float* out, const float* residual, size_t begin, size_t end, float* scratch);

void f32_dwconv_items(const DepthwisePlan& plan, const float* weights, const float* bias, const float* in,
                      float* out, const float* residual, size_t begin, size_t end, float* scratch) {
  if (plan.nhwc) f32_dwconv_nhwc<F32x16>(plan, weights, bias, in, out, residual, begin, end);
  else if (plan.lanes >= F32x16::kLanes)
    f32_dwconv_nchw<F32x16>(plan, weights, bias, in, out, residual, begin, end, scratch);
  else f32_dwconv_narrow_items(plan, weights, bias, in, out, residual, begin, end, scratch);
}

}  // namespace avx512

const DepthwiseLoops& depthwise_loops_avx512() {
  static const DepthwiseLoops loops{avx512::f32_dwconv_items, 16, 8};
  return loops;
}

}  // namespace webnn
#endif
