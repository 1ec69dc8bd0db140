// The normalization family's loops (NormLoops), compiled once per ISA level (see kernel_isa.h):
// shifted moments and the normalized value, in double lanes (rounded once to float32).
#include "kernels/norm/norm.h"
#include "kernels/reduce/reduce_lanes.h"

namespace webnn {
namespace WEBNN_KERNEL_ISA {
namespace {

// Lanes k..k + n of a parameter row whose columns are `step` elements apart.
template <class T>
inline Wide param_lanes(const T* p, size_t step, size_t k, size_t n) {
  if (step == 0) return splat_wide(cload(*p));
  if (step == 1) return widen(load_lanes(p + k, n));
  float staged[kWidth] = {};
  for (size_t i = 0; i < n; ++i) staged[i] = cload(p[(k + i) * step]);
  return widen(load_lanes(staged));
}

// Every term constant along each row j: out = (x - mean) * (factor * scale_j) + bias_j.
template <class T>
void normalize_constant_rows(const T* in, T* out, size_t rows, size_t stride, size_t width, const NormTerms& terms) {
  const T* scale = static_cast<const T*>(terms.scale);
  const T* bias = static_cast<const T*>(terms.bias);
  const Wide mean = splat_wide(*terms.mean);
  for (size_t j = 0; j < rows; ++j, in += stride, out += stride) {
    const double row_scale = scale ? double(cload(scale[j * terms.param_row_step])) : 1.0;
    const Wide factor = splat_wide(*terms.factor * row_scale);
    const Wide offset = splat_wide(bias ? double(cload(bias[j * terms.param_row_step])) : 0.0);
    for (size_t k = 0; k < width; k += kWidth) {
      const size_t n = min_size(kWidth, width - k);
      store_lanes(out + k, narrow((widen(load_lanes(in + k, n)) - mean) * factor + offset), n);
    }
  }
}

template <class T>
void normalize_loop(const void* in_ptr, void* out_ptr, size_t rows, size_t stride, size_t width,
                    const NormTerms& terms) {
  if (terms.stat_step == 0 && (terms.param_col_step == 0 || (!terms.scale && !terms.bias)))
    return normalize_constant_rows(static_cast<const T*>(in_ptr), static_cast<T*>(out_ptr), rows, stride, width, terms);
  const T* scale = static_cast<const T*>(terms.scale);
  const T* bias = static_cast<const T*>(terms.bias);
  const size_t col_step = terms.param_col_step;
  for (size_t j = 0; j < rows; ++j) {
    const T* in = static_cast<const T*>(in_ptr) + j * stride;
    T* out = static_cast<T*>(out_ptr) + j * stride;
    const T* scale_row = scale ? scale + j * terms.param_row_step : nullptr;
    const T* bias_row = bias ? bias + j * terms.param_row_step : nullptr;
    for (size_t k = 0; k < width; k += kWidth) {
      const size_t n = min_size(kWidth, width - k);
      const Wide mean = terms.stat_step ? load_wide(terms.mean + k, n) : splat_wide(*terms.mean);
      const Wide factor = terms.stat_step ? load_wide(terms.factor + k, n) : splat_wide(*terms.factor);
      Wide y = (widen(load_lanes(in + k, n)) - mean) * factor;
      if (scale_row) y = y * param_lanes(scale_row, col_step, k, n);
      if (bias_row) y = y + param_lanes(bias_row, col_step, k, n);
      store_lanes(out + k, narrow(y), n);
    }
  }
}

template <class T>
void moments_row_loop(const void* in, size_t count, double shift, double* sums) {
  const T* p = static_cast<const T*>(in);
  const Wide s = splat_wide(shift);
  Wide sum0{}, sum1{}, squares0{}, squares1{};
  size_t i = 0;
  for (; i + 2 * kWidth <= count; i += 2 * kWidth) {
    const Wide d0 = widen(load_lanes(p + i)) - s, d1 = widen(load_lanes(p + i + kWidth)) - s;
    sum0 = sum0 + d0;
    squares0 = squares0 + d0 * d0;
    sum1 = sum1 + d1;
    squares1 = squares1 + d1 * d1;
  }
  for (; i < count; i += kWidth) {
    const size_t n = min_size(kWidth, count - i);
    const Wide d = keep_first(widen(load_lanes(p + i, n)) - s, n);
    sum0 = sum0 + d;
    squares0 = squares0 + d * d;
  }
  sums[0] += sum_of_lanes(sum0 + sum1);
  sums[1] += sum_of_lanes(squares0 + squares1);
}

template <class T>
void moments_columns_loop(const void* in, size_t rows, size_t stride, size_t width, const double* shift, double* sum,
                          double* sum_sq) {
  const T* p = static_cast<const T*>(in);
  for (size_t j = 0; j < rows; j += 2) {  // rows in pairs (two sequential streams)
    const T* row = p + j * stride;
    const bool pair = j + 1 < rows;
    for (size_t k = 0; k < width; k += kWidth) {
      const size_t n = min_size(kWidth, width - k);
      const Wide s = load_wide(shift + k, n);
      const Wide d0 = widen(load_lanes(row + k, n)) - s;
      const Wide d1 = pair ? widen(load_lanes(row + stride + k, n)) - s : Wide{};
      store_wide(sum + k, load_wide(sum + k, n) + (d0 + d1), n);
      store_wide(sum_sq + k, load_wide(sum_sq + k, n) + (d0 * d0 + d1 * d1), n);
    }
  }
}

NormalizeFn normalize_fn(DataType type) {
  return for_float_type(type, [](auto t) -> NormalizeFn { return normalize_loop<decltype(t)>; });
}

MomentsRowFn moments_row_fn(DataType type) {
  return for_float_type(type, [](auto t) -> MomentsRowFn { return moments_row_loop<decltype(t)>; });
}

MomentsColumnsFn moments_columns_fn(DataType type) {
  return for_float_type(type, [](auto t) -> MomentsColumnsFn { return moments_columns_loop<decltype(t)>; });
}

constexpr NormLoops kNormLoops = {normalize_fn, moments_row_fn, moments_columns_fn};

}  // namespace
}  // namespace WEBNN_KERNEL_ISA
}  // namespace webnn
