// 2-D pooling family: averagePool2d, l2Pool2d, maxPool2d. Window positions outside the input
// (padding) are skipped: average divides by the in-bounds count. A window with no in-bounds
// element gives 0 (max too: WPT's maxPool2d "outputShapeRounding=ceil and symmetric padding").
#pragma once
#include <cstdint>

#include "kernels/kernel.h"

namespace webnn {

enum class PoolOp { kAverage, kL2, kMax };

struct Pool2dParams {
  size_t batch, channels, in_h, in_w, out_h, out_w;
  size_t window_h, window_w, stride_h, stride_w, dilation_h, dilation_w;
  size_t pad_top, pad_left;
  bool nhwc;  // input and output layout
};

Kernel make_pool2d_kernel(PoolOp op, DataType type, const Pool2dParams& params);

// ---- the float32 / float16 inner loops, one set per ISA level (the kernel picks the active one)

// Pools output rows [begin, end): row = plane * out_h + oy, the planes being n * channels + c
// (nchw) or n (nhwc). `scratch` holds scratch_floats(params) floats.
using PoolRowsFn = void (*)(const Pool2dParams& p, const void* in, void* out, size_t begin, size_t end,
                            float* scratch);
struct PoolLoops {
  PoolRowsFn (*rows)(PoolOp op, DataType type);
  size_t (*scratch_floats)(const Pool2dParams& p);
};
const PoolLoops& pool_loops_ref();
const PoolLoops& pool_loops_avx2();    // x86-64 only
const PoolLoops& pool_loops_avx512();  // x86-64 only

// The window taps [begin, end) whose coordinate start + k * dilation lies in [0, size). (Internal
// linkage: the per-ISA loops include it built with their own flags.)
namespace {
struct TapRange {
  size_t begin, end;
  size_t count() const { return end - begin; }
};
inline TapRange in_bounds_taps(int64_t start, size_t size, size_t window, size_t dilation) {
  const int64_t d = int64_t(dilation);
  const int64_t first = start >= 0 ? 0 : (-start + d - 1) / d;
  const int64_t last_coordinate = int64_t(size) - 1 - start;  // k * d <= this
  if (last_coordinate < 0) return {0, 0};
  const int64_t last = int64_t(window) - 1 < last_coordinate / d ? int64_t(window) - 1 : last_coordinate / d;
  return first > last ? TapRange{0, 0} : TapRange{size_t(first), size_t(last + 1)};
}
}  // namespace

}  // namespace webnn
