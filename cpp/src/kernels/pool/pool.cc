// The pooling family: the kernels (the loops per ISA level are in pool_impl.h). A window covering
// the whole input (global pooling) runs as a reduction over the spatial dims; float types pool on
// the PoolLoops; integer max pooling runs here.
#include <limits>

#include "kernels/platform.h"
#include "kernels/pool/pool.h"
#include "kernels/reduce/reduce.h"
#include "core/thread_pool.h"

namespace webnn {

namespace {

// One output pixel whose in-bounds taps are exactly the input's pixels (distinct taps in [0, size)
// numbering `size` cover it).
bool is_global(const Pool2dParams& p) {
  return p.out_h == 1 && p.out_w == 1 &&
         in_bounds_taps(-int64_t(p.pad_top), p.in_h, p.window_h, p.dilation_h).count() == p.in_h &&
         in_bounds_taps(-int64_t(p.pad_left), p.in_w, p.window_w, p.dilation_w).count() == p.in_w;
}

Kernel global_pool_kernel(PoolOp op, DataType type, const Pool2dParams& p) {
  const ReduceOp reduce = op == PoolOp::kAverage ? ReduceOp::kMean : op == PoolOp::kL2 ? ReduceOp::kL2 : ReduceOp::kMax;
  const auto dim = [](size_t size) { return uint32_t(size); };
  if (p.nhwc)
    return make_reduce_kernel(reduce, type, {dim(p.batch), dim(p.in_h), dim(p.in_w), dim(p.channels)},
                              {false, true, true, false});
  return make_reduce_kernel(reduce, type, {dim(p.batch), dim(p.channels), dim(p.in_h), dim(p.in_w)},
                            {false, false, true, true});
}

// Output rows (plane * out_h + oy) and rows per task: about 2^14 in-bounds taps each (windows
// may be huge but mostly padding).
size_t output_rows(const Pool2dParams& p) { return (p.nhwc ? p.batch : p.batch * p.channels) * p.out_h; }
size_t row_grain(const Pool2dParams& p) {
  const size_t taps = std::min(p.window_h, p.in_h) * std::min(p.window_w, p.in_w);
  return std::max<size_t>(1, (size_t(1) << 14) / (p.out_w * (p.nhwc ? p.channels : 1) * taps));
}

Kernel float_pool_kernel(PoolOp op, DataType type, const Pool2dParams& p) {
  const PoolLoops& loops = *kernel_table().pool;
  const PoolRowsFn rows = loops.rows(op, type);
  const size_t scratch_floats = loops.scratch_floats(p);
  return [p, rows, scratch_floats](const KernelArgs& args) {
    args.pool->parallel_for(output_rows(p), row_grain(p), [&](size_t begin, size_t end) {
      constexpr size_t kStackFloats = 4096;
      float stack[kStackFloats];
      std::vector<float> heap(scratch_floats > kStackFloats ? scratch_floats : 0);
      rows(p, args.inputs[0], args.outputs[0], begin, end, heap.empty() ? stack : heap.data());
    });
  };
}

// Max pooling of integers: per output pixel, a block of C contiguous channels (nhwc) or one
// channel plane at a time (nchw).
template <class T>
Kernel int_max_pool_kernel(const Pool2dParams& p) {
  return [p](const KernelArgs& args) {
    const T* input = static_cast<const T*>(args.inputs[0]);
    T* output = static_cast<T*>(args.outputs[0]);
    const size_t block = p.nhwc ? p.channels : 1;
    const size_t in_y = p.in_w * block, in_plane = p.in_h * p.in_w * block, out_plane = p.out_h * p.out_w * block;
    args.pool->parallel_for(output_rows(p), row_grain(p), [&](size_t begin, size_t end) {
      std::vector<T> acc(block);
      for (size_t row = begin; row < end; ++row) {
        const size_t plane = row / p.out_h, oy = row % p.out_h;
        const TapRange ky = in_bounds_taps(int64_t(oy * p.stride_h) - int64_t(p.pad_top), p.in_h, p.window_h,
                                           p.dilation_h);
        for (size_t ox = 0; ox < p.out_w; ++ox) {
          const TapRange kx = in_bounds_taps(int64_t(ox * p.stride_w) - int64_t(p.pad_left), p.in_w, p.window_w,
                                             p.dilation_w);
          // A window wholly in the padding gives 0 (as floats do, and WPT expects).
          std::fill(acc.begin(), acc.end(), ky.count() && kx.count() ? std::numeric_limits<T>::lowest() : T(0));
          for (size_t ty = ky.begin; ty < ky.end; ++ty) {
            const size_t y = oy * p.stride_h + ty * p.dilation_h - p.pad_top;
            for (size_t tx = kx.begin; tx < kx.end; ++tx) {
              const T* src = input + plane * in_plane + y * in_y + (ox * p.stride_w + tx * p.dilation_w - p.pad_left) * block;
              for (size_t c = 0; c < block; ++c) acc[c] = std::max(acc[c], src[c]);
            }
          }
          std::copy(acc.begin(), acc.end(), output + plane * out_plane + (oy * p.out_w + ox) * block);
        }
      }
    });
  };
}

}  // namespace

Kernel make_pool2d_kernel(PoolOp op, DataType type, const Pool2dParams& params) {
  if (is_global(params)) return global_pool_kernel(op, type, params);
  if (type == DataType::kFloat32 || type == DataType::kFloat16) return float_pool_kernel(op, type, params);
  if (op != PoolOp::kMax) throw_type_error(str_cat("pool2d: unsupported data type ", data_type_name(type)));
  return visit_type(type, [&](auto tag) -> Kernel {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) return int_max_pool_kernel<T>(params);
    else throw_type_error("pool2d: unexpected float type");
  });
}

}  // namespace webnn
