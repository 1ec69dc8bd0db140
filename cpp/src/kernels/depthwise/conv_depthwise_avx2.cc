// The depthwise loops built with AVX2 + FMA (see CMakeLists.txt): 8-float vectors.
#include "kernels/depthwise/conv_depthwise.h"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>

#include <algorithm>
#include <type_traits>
#include <utility>

namespace webnn {
namespace avx2 {
#include "kernels/depthwise/conv_depthwise_x86.h"
#include "kernels/depthwise/conv_depthwise_impl.h"

void f32_dwconv_items(const DepthwisePlan& plan, const float* weights, const float* bias, const float* in,
                      float* out, const float* residual, size_t begin, size_t end, float* scratch) {
  if (plan.nhwc) f32_dwconv_nhwc<F32x8>(plan, weights, bias, in, out, residual, begin, end);
  else f32_dwconv_nchw<F32x8>(plan, weights, bias, in, out, residual, begin, end, scratch);
}

}  // namespace avx2

const DepthwiseLoops& depthwise_loops_avx2() {
  static const DepthwiseLoops loops{avx2::f32_dwconv_items, 8, 8};
  return loops;
}

}  // namespace webnn
#endif
