// Portable reference pooling: per output pixel, the in-bounds window range is computed up front
// (so padding never costs iterations); nhwc pools whole channel vectors at once.
#include <cmath>
#include <limits>

#include "kernels/kernel_util.h"
#include "kernels/pool.h"
#include "kernels/reduce.h"
#include "runtime/thread_pool.h"

namespace webnn {

namespace {

// The window taps k in [begin, end) whose input coordinate start + k * dilation lies in [0, size).
struct TapRange {
  size_t begin, end;
};
TapRange in_bounds_taps(int64_t start, size_t size, size_t window, size_t dilation) {
  const int64_t d = int64_t(dilation);
  const int64_t first = start >= 0 ? 0 : (-start + d - 1) / d;
  const int64_t last_coordinate = int64_t(size) - 1 - start;  // k * d <= this
  if (last_coordinate < 0) return {0, 0};
  const int64_t last = std::min<int64_t>(int64_t(window) - 1, last_coordinate / d);
  return first > last ? TapRange{0, 0} : TapRange{size_t(first), size_t(last + 1)};
}

template <PoolOp Op, class T>
struct Pooling {
  using Acc = std::conditional_t<Op == PoolOp::kMax, compute_t<T>, double>;
  static Acc identity() {
    if constexpr (Op != PoolOp::kMax) return 0.0;
    else if constexpr (std::is_floating_point_v<Acc>) return -INFINITY;
    else return std::numeric_limits<Acc>::lowest();
  }
  static Acc add(Acc acc, compute_t<T> x) {
    if constexpr (Op == PoolOp::kAverage) return acc + double(x);
    if constexpr (Op == PoolOp::kL2) return acc + double(x) * double(x);
    if constexpr (Op == PoolOp::kMax) {
      if constexpr (std::is_floating_point_v<Acc>)
        if (x != x || acc != acc) return NAN;  // NaN propagates
      return x > acc ? x : acc;
    }
  }
  static void finish(T* out, Acc acc, size_t count) {
    if constexpr (Op == PoolOp::kAverage) store_rounded(out, count ? acc / double(count) : 0.0);
    if constexpr (Op == PoolOp::kL2) store_rounded(out, std::sqrt(acc));
    if constexpr (Op == PoolOp::kMax) store(out, acc);
  }
};

template <PoolOp Op, class T>
Kernel pool2d_kernel(const Pool2dParams& p) {
  return [p](const KernelArgs& args) {
    using P = Pooling<Op, T>;
    const T* input = static_cast<const T*>(args.inputs[0]);
    T* output = static_cast<T*>(args.outputs[0]);
    // nhwc pools a block of C contiguous channels per pixel; nchw one channel plane at a time.
    const size_t block = p.nhwc ? p.channels : 1, planes = p.nhwc ? p.batch : p.batch * p.channels;
    const size_t in_y = p.in_w * block, in_x = block, in_plane = p.in_h * p.in_w * block;
    const size_t out_plane = p.out_h * p.out_w * block;
    // Rows of about 2^14 taps per task (in-bounds taps only: windows may be huge but mostly padding).
    const size_t taps = std::min(p.window_h, p.in_h) * std::min(p.window_w, p.in_w);
    const size_t grain = std::max<size_t>(1, (size_t(1) << 14) / (p.out_w * block * taps));
    args.pool->parallel_for(planes * p.out_h, grain, [&](size_t begin, size_t end) {
      std::vector<typename P::Acc> acc(block);
      for (size_t row = begin; row < end; ++row) {
        const size_t plane = row / p.out_h, oy = row % p.out_h;
        const TapRange ky = in_bounds_taps(int64_t(oy * p.stride_h) - int64_t(p.pad_top), p.in_h, p.window_h,
                                           p.dilation_h);
        for (size_t ox = 0; ox < p.out_w; ++ox) {
          const TapRange kx = in_bounds_taps(int64_t(ox * p.stride_w) - int64_t(p.pad_left), p.in_w, p.window_w,
                                             p.dilation_w);
          std::fill(acc.begin(), acc.end(), P::identity());
          for (size_t ty = ky.begin; ty < ky.end; ++ty) {
            const size_t y = oy * p.stride_h + ty * p.dilation_h - p.pad_top;
            for (size_t tx = kx.begin; tx < kx.end; ++tx) {
              const size_t x = ox * p.stride_w + tx * p.dilation_w - p.pad_left;
              const T* src = input + plane * in_plane + y * in_y + x * in_x;
              for (size_t c = 0; c < block; ++c) acc[c] = P::add(acc[c], load(src[c]));
            }
          }
          const size_t count = (ky.end - ky.begin) * (kx.end - kx.begin);
          T* dst = output + plane * out_plane + (oy * p.out_w + ox) * block;
          for (size_t c = 0; c < block; ++c) P::finish(dst + c, acc[c], count);
        }
      }
    });
  };
}

template <PoolOp Op>
Kernel pool2d_for_type(DataType type, const Pool2dParams& p) {
  return visit_type(type, [&](auto tag) -> Kernel {
    using T = decltype(tag);
    if constexpr (Op == PoolOp::kMax || std::is_floating_point_v<compute_t<T>>) return pool2d_kernel<Op, T>(p);
    else throw_type_error(str_cat("pool2d: unsupported data type ", data_type_name(type)));
  });
}

}  // namespace

Kernel make_pool2d_kernel(PoolOp op, DataType type, const Pool2dParams& params) {
  switch (op) {
    case PoolOp::kAverage: return pool2d_for_type<PoolOp::kAverage>(type, params);
    case PoolOp::kL2: return pool2d_for_type<PoolOp::kL2>(type, params);
    case PoolOp::kMax: return pool2d_for_type<PoolOp::kMax>(type, params);
  }
  throw_type_error("unknown pooling");
}

}  // namespace webnn
