#include <algorithm>
#include <vector>

#include "kernels/conv_depthwise.h"
#include "kernels/platform.h"
#include "runtime/thread_pool.h"

namespace webnn {
namespace ref {
#include "kernels/conv_depthwise_impl.h"
}  // namespace ref

void depthwise_conv2d(const Conv2dParams& p, const float* weights, const float* bias, const float* in, float* out,
                      ThreadPool* pool) {
  auto rows = ref::depthwise_rows;
#if defined(__x86_64__) || defined(_M_X64)
  if (kernel_table().isa == CpuIsa::kAvx512) rows = avx512::depthwise_rows;
  else if (kernel_table().isa == CpuIsa::kAvx2) rows = avx2::depthwise_rows;
#endif
  const size_t count = p.nhwc ? p.batch * p.out_h : p.batch * p.in_channels;
  const size_t scratch = std::max(p.out_w, p.in_channels);
  pool->parallel_for(count, 1, [&](size_t begin, size_t end) {
    std::vector<float> buffer(scratch);
    rows(p, weights, bias, in, out, begin, end, buffer.data());
  });
}

}  // namespace webnn
