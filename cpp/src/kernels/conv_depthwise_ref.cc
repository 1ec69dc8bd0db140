#include "kernels/conv_depthwise.h"
#include "kernels/platform.h"

namespace webnn {
namespace ref {
#include "kernels/conv_depthwise_impl.h"
}  // namespace ref

void depthwise_conv2d(const Conv2dParams& p, const float* weights, const float* bias, const float* in, float* out,
                      ThreadPool* pool) {
#if defined(__x86_64__) || defined(_M_X64)
  switch (kernel_table().isa) {
    case CpuIsa::kAvx512: return avx512::depthwise_conv2d(p, weights, bias, in, out, pool);
    case CpuIsa::kAvx2: return avx2::depthwise_conv2d(p, weights, bias, in, out, pool);
    case CpuIsa::kRef: break;
  }
#endif
  ref::depthwise_conv2d(p, weights, bias, in, out, pool);
}

}  // namespace webnn
