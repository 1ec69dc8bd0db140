// The depthwise loops built with AVX-512 (see CMakeLists.txt): 16-float vectors, 8-float ones for
// NCHW planes at most 8 columns wide.
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

WEBNN_DEPTHWISE_ITEMS_DECL {
  if (plan.nhwc) f32_dwconv_nhwc<F32x16>(plan, weights, bias, in, out, begin, end);
  else if (plan.lanes >= F32x16::kLanes) f32_dwconv_nchw<F32x16>(plan, weights, bias, in, out, begin, end, scratch);
  else f32_dwconv_nchw<F32x8>(plan, weights, bias, in, out, begin, end, scratch);
}

}  // namespace avx512
}  // namespace webnn
#endif
