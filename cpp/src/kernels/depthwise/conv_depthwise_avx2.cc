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

WEBNN_DEPTHWISE_ITEMS_DECL {
  if (plan.nhwc) f32_dwconv_nhwc<F32x8>(plan, weights, bias, in, out, begin, end);
  else f32_dwconv_nchw<F32x8>(plan, weights, bias, in, out, begin, end, scratch);
}

}  // namespace avx2
}  // namespace webnn
#endif
