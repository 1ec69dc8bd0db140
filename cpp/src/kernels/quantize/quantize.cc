// Portable reference kernels for quantizeLinear / dequantizeLinear.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "kernels/kernel_util.h"
#include "kernels/quantize/quantize.h"
#include "kernels/platform.h"
#include "core/thread_pool.h"

namespace webnn {

namespace {

constexpr int64_t kElementGrain = 1 << 15;

// The input walked as runs of elements that share one scale/zeroPoint element.
class BlockwiseLoop {
 public:
  BlockwiseLoop(std::vector<uint32_t> in_shape, std::vector<uint32_t> param_shape) {
    if (in_shape.empty()) in_shape = param_shape = {1};
    // Trailing dims that one parameter covers whole make one run (a per-tensor scale: the tensor).
    while (in_shape.size() > 1 && param_shape.back() == 1 && param_shape[param_shape.size() - 2] == 1) {
      in_shape[in_shape.size() - 2] *= in_shape.back();
      in_shape.pop_back();
      param_shape.pop_back();
    }
    const size_t rank = in_shape.size();
    int64_t stride = 1;
    param_strides_.resize(rank);
    for (size_t d = rank; d-- > 0;) {
      param_strides_[d] = stride;
      stride *= param_shape[d];
    }
    for (size_t d = 0; d + 1 < rank; ++d) {
      outer_shape_.push_back(in_shape[d]);
      outer_blocks_.push_back(in_shape[d] / param_shape[d]);
      rows_ *= in_shape[d];
    }
    inner_ = in_shape.back();
    param_cols_ = param_shape.back();
    block_ = inner_ / param_cols_;
  }

  // Calls fn(first element, element count, param index) for every run (long runs in pieces of at
  // most kElementGrain elements), in parallel.
  template <class Fn>
  void run(ThreadPool* pool, const Fn& fn) const {
    const int64_t pieces = (block_ + kElementGrain - 1) / kElementGrain, piece = (block_ + pieces - 1) / pieces;
    const int64_t units = rows_ * param_cols_ * pieces;
    pool->parallel_for(size_t(units), size_t(std::max<int64_t>(1, kElementGrain / piece)), [&](size_t b, size_t e) {
      int64_t cached_row = -1, param_row = 0;
      for (int64_t u = int64_t(b); u < int64_t(e); ++u) {
        const int64_t run = u / pieces, part = u % pieces;
        const int64_t row = run / param_cols_, col = run % param_cols_;
        if (row != cached_row) {
          param_row = param_row_offset(row);
          cached_row = row;
        }
        fn(row * inner_ + col * block_ + part * piece, std::min(piece, block_ - part * piece), param_row + col);
      }
    });
  }

 private:
  int64_t param_row_offset(int64_t row) const {
    int64_t offset = 0;
    for (size_t d = outer_shape_.size(); d-- > 0;) {
      offset += (row % outer_shape_[d]) / outer_blocks_[d] * param_strides_[d];
      row /= outer_shape_[d];
    }
    return offset;
  }

  std::vector<int64_t> outer_shape_, outer_blocks_, param_strides_;
  int64_t rows_ = 1, inner_ = 1, param_cols_ = 1, block_ = 1;
};

template <class Fn>
Kernel visit_float_type(DataType type, Fn&& fn) {
  if (type == DataType::kFloat16) return fn(float16{});
  return fn(float{});
}
// The storage type and the value range of a quantized type (int4/uint4 are stored one per byte).
template <class Z, int64_t Lo, int64_t Hi>
struct Quantized {
  using type = Z;
  static constexpr double lo = double(Lo), hi = double(Hi);
};
template <class Z>
using FullRange = Quantized<Z, int64_t(std::numeric_limits<Z>::min()), int64_t(std::numeric_limits<Z>::max())>;

template <class Fn>
Kernel visit_quantized_type(DataType type, Fn&& fn) {
  switch (type) {
    case DataType::kUint8: return fn(FullRange<uint8_t>{});
    case DataType::kInt8: return fn(FullRange<int8_t>{});
    case DataType::kUint4: return fn(Quantized<uint8_t, 0, 15>{});
    case DataType::kInt4: return fn(Quantized<int8_t, -8, 7>{});
    case DataType::kUint32: return fn(FullRange<uint32_t>{});
    default: return fn(FullRange<int32_t>{});
  }
}

// float32 to an 8- or 4-bit type in float32 arithmetic, in loops the compiler vectorizes; the same
// numbers as the general loop: x / scale rounded to nearest even, plus the zero point, clamped, NaN
// to 0. Below 2^22 adding and subtracting 1.5 * 2^23 rounds to an integer, ties to even (the default
// rounding mode); larger quotients are clamped to 2^22 first, which the final clamp maps to the same
// bound (|zero point| < 2^8, so the sums stay exact).
template <class Q>
void quantize_narrow_f32(const float* x, float s, float zp, typename Q::type* y, int64_t count) {
  constexpr float kMagic = 12582912.0f, kLimit = 4194304.0f;
  constexpr float lo = float(Q::lo), hi = float(Q::hi);
  for (int64_t i = 0; i < count; ++i) {
    const float q = x[i] / s;
    const float bounded = q < -kLimit ? -kLimit : (q > kLimit ? kLimit : q);
    float v = ((bounded + kMagic) - kMagic) + zp;
    v = v < lo ? lo : (v > hi ? hi : v);
    y[i] = q == q ? typename Q::type(int32_t(v)) : typename Q::type(0);
  }
}

template <class T, class Q>
Kernel quantize_kernel(const BlockwiseLoop& loop) {
  using Z = typename Q::type;
  if constexpr (std::is_same_v<T, float> && sizeof(Z) == 1) {
    return [loop](const KernelArgs& args) {
      const float* x = static_cast<const float*>(args.inputs[0]);
      const float* scale = static_cast<const float*>(args.inputs[1]);
      const Z* zero_point = static_cast<const Z*>(args.inputs[2]);
      Z* y = static_cast<Z*>(args.outputs[0]);
      const QuantizeRunFn run = kernel_table().int8.quantize;
      constexpr bool kSigned = std::is_same_v<Z, int8_t>;
      loop.run(args.pool, [&](int64_t first, int64_t count, int64_t p) {
        if constexpr (Q::lo == double(std::numeric_limits<Z>::min()) && Q::hi == double(std::numeric_limits<Z>::max()))
          run(x + first, scale[p], quantize_inverse(scale[p]), int32_t(zero_point[p]), kSigned,
              reinterpret_cast<uint8_t*>(y + first), size_t(count));
        else
          quantize_narrow_f32<Q>(x + first, scale[p], float(zero_point[p]), y + first, count);
      });
    };
  }
  return [loop](const KernelArgs& args) {
    const T* x = static_cast<const T*>(args.inputs[0]);
    const T* scale = static_cast<const T*>(args.inputs[1]);
    const Z* zero_point = static_cast<const Z*>(args.inputs[2]);
    Z* y = static_cast<Z*>(args.outputs[0]);
    constexpr double lo = Q::lo, hi = Q::hi;
    loop.run(args.pool, [&](int64_t first, int64_t count, int64_t p) {
      const float s = load(scale[p]);
      const double zp = double(zero_point[p]);
      for (int64_t i = first; i < first + count; ++i) {
        const double v = double(std::nearbyint(load(x[i]) / s)) + zp;  // ties to even (default mode)
        y[i] = std::isnan(v) ? Z(0) : Z(std::clamp(v, lo, hi));
      }
    });
  };
}

template <class Q, class S>
Kernel dequantize_kernel(const BlockwiseLoop& loop) {
  using X = typename Q::type;
  if constexpr (std::is_same_v<S, float> && sizeof(X) == 1) {
    // (x - zero point) is an integer below 2^9, exact in float32, so one float32 product rounds the
    // exact value as the general loop's double product does: the same numbers, vectorized.
    return [loop](const KernelArgs& args) {
      const X* x = static_cast<const X*>(args.inputs[0]);
      const float* scale = static_cast<const float*>(args.inputs[1]);
      const X* zero_point = static_cast<const X*>(args.inputs[2]);
      float* y = static_cast<float*>(args.outputs[0]);
      const DequantizeRunFn run = kernel_table().int8.dequantize;
      constexpr bool kSigned = std::is_same_v<X, int8_t>;
      loop.run(args.pool, [&](int64_t first, int64_t count, int64_t p) {
        const float s = scale[p];
        const int32_t zp = zero_point[p];
        if constexpr (Q::lo == double(std::numeric_limits<X>::min()) && Q::hi == double(std::numeric_limits<X>::max()))
          run(reinterpret_cast<const uint8_t*>(x + first), kSigned, zp, s, y + first, size_t(count));
        else
          for (int64_t i = first; i < first + count; ++i) y[i] = float(int32_t(x[i]) - zp) * s;
      });
    };
  }
  return [loop](const KernelArgs& args) {
    const X* x = static_cast<const X*>(args.inputs[0]);
    const S* scale = static_cast<const S*>(args.inputs[1]);
    const X* zero_point = static_cast<const X*>(args.inputs[2]);
    S* y = static_cast<S*>(args.outputs[0]);
    loop.run(args.pool, [&](int64_t first, int64_t count, int64_t p) {
      const double s = load(scale[p]);
      const int64_t zp = zero_point[p];
      for (int64_t i = first; i < first + count; ++i) store(y + i, float(double(int64_t(x[i]) - zp) * s));
    });
  };
}

}  // namespace

Kernel make_quantize_kernel(DataType input_type, DataType zero_point_type, const std::vector<uint32_t>& input_shape,
                            const std::vector<uint32_t>& param_shape) {
  BlockwiseLoop loop(input_shape, param_shape);
  return visit_float_type(input_type, [&](auto t) {
    return visit_quantized_type(zero_point_type, [&](auto z) { return quantize_kernel<decltype(t), decltype(z)>(loop); });
  });
}

Kernel make_dequantize_kernel(DataType input_type, DataType scale_type, const std::vector<uint32_t>& input_shape,
                              const std::vector<uint32_t>& param_shape) {
  BlockwiseLoop loop(input_shape, param_shape);
  return visit_quantized_type(input_type, [&](auto x) {
    return visit_float_type(scale_type, [&](auto s) { return dequantize_kernel<decltype(x), decltype(s)>(loop); });
  });
}

void dequantize_8bit(const uint8_t* x, size_t stride, bool is_signed, float scale, int32_t zero_point, float* y,
                     size_t n) {
  if (stride == 0) {
    const int32_t v = is_signed ? int32_t(int8_t(x[0])) : int32_t(x[0]);
    std::fill(y, y + n, float(v - zero_point) * scale);
    return;
  }
  kernel_table().int8.dequantize(x, is_signed, zero_point, scale, y, n);
}

void quantize_8bit(const float* x, float scale, float inverse, int32_t zero_point, bool is_signed, uint8_t* y,
                   size_t n) {
  kernel_table().int8.quantize(x, scale, inverse, zero_point, is_signed, y, n);
}

float quantize_inverse(float scale) {
  if (!(scale >= 0x1p-100f && scale <= 0x1p100f)) return 0.0f;
  // The double quotient rounded to float, then checked exactly against its neighbours (a float
  // times a float is exact in double).
  float inverse = float(1.0 / double(scale));
  for (float candidate : {std::nextafter(inverse, 0.0f), std::nextafter(inverse, 2.0f * inverse)})
    if (std::fabs(double(candidate) * scale - 1.0) < std::fabs(double(inverse) * scale - 1.0)) inverse = candidate;
  return inverse;
}

}  // namespace webnn
