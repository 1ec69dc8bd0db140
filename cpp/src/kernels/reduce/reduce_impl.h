// The reduction family's float loops (ReduceLoops), compiled once per ISA level (see kernel_isa.h):
// sums, maxima and minima over contiguous rows and over columns, and softmax, on reduce_lanes.h.
#include "kernels/reduce/reduce.h"
#include "kernels/reduce/reduce_lanes.h"

namespace webnn {
namespace WEBNN_KERNEL_ISA {
namespace {

// map(x) of SumMap kMap, given the lanes' shifts.
template <SumMap kMap>
inline auto map_for_sum(Lanes x, Wide shift) {
  if constexpr (kMap == SumMap::kIdentity) return x;
  if constexpr (kMap == SumMap::kAbs) return abs_lanes(x);
  if constexpr (kMap == SumMap::kSquare) return as_wide(x) * as_wide(x);
  if constexpr (kMap == SumMap::kExp) return exp_lanes(x - narrow(shift));
}

template <SumMap kMap, class T>
double sum_row_loop(const void* in, size_t count, double shift) {
  const Wide shifts = splat_wide(shift);
  return sum_row(static_cast<const T*>(in), count,
                 [&](Lanes x, size_t, size_t) { return map_for_sum<kMap>(x, shifts); });
}

template <SumMap kMap, class T>
void sum_columns_loop(const void* in, size_t rows, size_t stride, size_t width, const double* shift, double* acc) {
  sum_columns(static_cast<const T*>(in), rows, stride, width, [&](Lanes x, size_t, size_t k, size_t n) {
    return map_for_sum<kMap>(x, shift ? load_wide(shift + k, n) : Wide{});
  }, acc);
}

template <bool kMax, class T>
float extreme_row_loop(const void* in, size_t count) {
  return extreme_row<kMax>(static_cast<const T*>(in), count);
}

template <bool kMax, class T>
void extreme_columns_loop(const void* in, size_t rows, size_t stride, size_t width, float* acc) {
  extreme_columns<kMax>(static_cast<const T*>(in), rows, stride, width, acc);
}

// softmax: e = exp(x - max), out = e * (1 / Σe). Float32 outputs hold e between the passes;
// float16 ones recompute it (rounding once).
template <class T>
constexpr bool kKeepsExp = std::is_same_v<T, float>;

// Float32 e values summed in float32 lanes (four accumulators): softmax's tolerance is 3 n + 3 ulp
// for a row of n, far above the few ulp this loses against a double sum.
inline float exp_sum_row(const float* in, float* out, size_t count, Lanes max) {
  Lanes a0 = splat_lanes(0.0f), a1 = a0, a2 = a0, a3 = a0;
  size_t i = 0;
  for (; i + 4 * kWidth <= count; i += 4 * kWidth) {
    const Lanes e0 = exp_lanes(load_lanes(in + i) - max), e1 = exp_lanes(load_lanes(in + i + kWidth) - max);
    const Lanes e2 = exp_lanes(load_lanes(in + i + 2 * kWidth) - max);
    const Lanes e3 = exp_lanes(load_lanes(in + i + 3 * kWidth) - max);
    store_lanes(out + i, e0);
    store_lanes(out + i + kWidth, e1);
    store_lanes(out + i + 2 * kWidth, e2);
    store_lanes(out + i + 3 * kWidth, e3);
    a0 = a0 + e0;
    a1 = a1 + e1;
    a2 = a2 + e2;
    a3 = a3 + e3;
  }
  for (; i < count; i += kWidth) {
    const size_t n = min_size(kWidth, count - i);
    // Lanes past the row load -inf: e^-inf adds 0.
    const Lanes e = exp_lanes(load_lanes(in + i, n, -__builtin_inff()) - max);
    store_lanes(out + i, e, n);
    a0 = a0 + e;
  }
  return float(sum_of_lanes(as_wide((a0 + a1) + (a2 + a3))));
}

template <class T>
void softmax_row_loop(const void* in_ptr, void* out_ptr, size_t count) {
  const T* in = static_cast<const T*>(in_ptr);
  T* out = static_cast<T*>(out_ptr);
  const Lanes max = splat_lanes(extreme_row<true>(in, count));
  if constexpr (std::is_same_v<T, float>) {
    const Lanes scale = splat_lanes(1.0f / exp_sum_row(in, out, count, max));
    size_t i = 0;
    for (; i + kWidth <= count; i += kWidth) store_lanes(out + i, load_lanes(out + i) * scale);
    if (i < count) store_lanes(out + i, load_lanes(out + i, count - i) * scale, count - i);
    return;
  }
  const double sum = sum_row(in, count, [&](Lanes x, size_t, size_t) { return exp_lanes(x - max); });
  const Lanes scale = splat_lanes(float(1.0 / sum));
  for (size_t i = 0; i < count; i += kWidth) {
    const size_t n = min_size(kWidth, count - i);
    store_lanes(out + i, exp_lanes(load_lanes(in + i, n) - max) * scale, n);
  }
}

// softmax of `rows` rows of `count` elements, `stride` apart (in place allowed). Float32 rows go in
// blocks, each pass over every row of the block before the next: a short row's exponentials form
// one dependency chain ending in its sum, and rows taken one at a time left the core waiting on it.
template <class T>
void softmax_rows_loop(const void* in_ptr, void* out_ptr, size_t rows, size_t count, size_t stride) {
  const T* in = static_cast<const T*>(in_ptr);
  T* out = static_cast<T*>(out_ptr);
  if constexpr (!std::is_same_v<T, float>) {
    for (size_t r = 0; r < rows; ++r) softmax_row_loop<T>(in + r * stride, out + r * stride, count);
  } else {
    constexpr size_t kBlock = 16;
    float max[kBlock], scale[kBlock];
    for (size_t r0 = 0; r0 < rows; r0 += kBlock) {
      const size_t block = min_size(kBlock, rows - r0);
      const T* block_in = in + r0 * stride;
      T* block_out = out + r0 * stride;
      for (size_t r = 0; r < block; ++r) max[r] = extreme_row<true>(block_in + r * stride, count);
      for (size_t r = 0; r < block; ++r)
        scale[r] = 1.0f / exp_sum_row(block_in + r * stride, block_out + r * stride, count, splat_lanes(max[r]));
      for (size_t r = 0; r < block; ++r) {
        T* row = block_out + r * stride;
        const Lanes factor = splat_lanes(scale[r]);
        size_t i = 0;
        for (; i + kWidth <= count; i += kWidth) store_lanes(row + i, load_lanes(row + i) * factor);
        if (i < count) store_lanes(row + i, load_lanes(row + i, count - i) * factor, count - i);
      }
    }
  }
}

constexpr size_t kSoftmaxTile = 256;  // columns whose statistics live on the stack

template <class T>
void softmax_columns_loop(const void* in_ptr, void* out_ptr, size_t rows, size_t stride, size_t width) {
  for (size_t k0 = 0; k0 < width; k0 += kSoftmaxTile) {
    const size_t tile = min_size(kSoftmaxTile, width - k0);
    const T* in = static_cast<const T*>(in_ptr) + k0;
    T* out = static_cast<T*>(out_ptr) + k0;
    float max[kSoftmaxTile], scale[kSoftmaxTile];
    double sum[kSoftmaxTile] = {};
    for (float& m : max) m = kExtremeIdentity<true>;
    extreme_columns<true>(in, rows, stride, tile, max);
    sum_columns(in, rows, stride, tile, [&](Lanes x, size_t j, size_t k, size_t n) {
      const Lanes e = exp_lanes(x - load_lanes(max + k));
      if constexpr (kKeepsExp<T>) store_lanes(out + j * stride + k, e, n);
      return e;
    }, sum);
    for (size_t k = 0; k < tile; ++k) scale[k] = float(1.0 / sum[k]);
    for (size_t j = 0; j < rows; ++j) {
      for (size_t k = 0; k < tile; k += kWidth) {
        const size_t n = min_size(kWidth, tile - k);
        Lanes e;
        if constexpr (kKeepsExp<T>) e = load_lanes(out + j * stride + k, n);
        else e = exp_lanes(load_lanes(in + j * stride + k, n) - load_lanes(max + k));
        store_lanes(out + j * stride + k, e * load_lanes(scale + k, n), n);
      }
    }
  }
}

// ---- the table

template <SumMap kMap>
using MapTag = std::integral_constant<SumMap, kMap>;

// pick(MapTag<map>{}).
template <class Pick>
auto for_sum_map(SumMap map, const Pick& pick) {
  switch (map) {
    case SumMap::kAbs: return pick(MapTag<SumMap::kAbs>{});
    case SumMap::kSquare: return pick(MapTag<SumMap::kSquare>{});
    case SumMap::kExp: return pick(MapTag<SumMap::kExp>{});
    case SumMap::kIdentity: break;
  }
  return pick(MapTag<SumMap::kIdentity>{});
}

SumRowFn sum_row_fn(SumMap map, DataType type) {
  return for_sum_map(map, [&](auto m) {
    return for_float_type(type, [](auto t) -> SumRowFn { return sum_row_loop<decltype(m)::value, decltype(t)>; });
  });
}

SumColumnsFn sum_columns_fn(SumMap map, DataType type) {
  return for_sum_map(map, [&](auto m) {
    return for_float_type(type, [](auto t) -> SumColumnsFn { return sum_columns_loop<decltype(m)::value, decltype(t)>; });
  });
}

ExtremeRowFn extreme_row_fn(bool is_max, DataType type) {
  return for_float_type(type, [&](auto t) -> ExtremeRowFn {
    return is_max ? extreme_row_loop<true, decltype(t)> : extreme_row_loop<false, decltype(t)>;
  });
}

ExtremeColumnsFn extreme_columns_fn(bool is_max, DataType type) {
  return for_float_type(type, [&](auto t) -> ExtremeColumnsFn {
    return is_max ? extreme_columns_loop<true, decltype(t)> : extreme_columns_loop<false, decltype(t)>;
  });
}

SoftmaxRowsFn softmax_rows_fn(DataType type) {
  return for_float_type(type, [](auto t) -> SoftmaxRowsFn { return softmax_rows_loop<decltype(t)>; });
}

SoftmaxColumnsFn softmax_columns_fn(DataType type) {
  return for_float_type(type, [](auto t) -> SoftmaxColumnsFn { return softmax_columns_loop<decltype(t)>; });
}

constexpr ReduceLoops kReduceLoops = {sum_row_fn,     sum_columns_fn, extreme_row_fn,     extreme_columns_fn,
                                      softmax_rows_fn, softmax_columns_fn};

}  // namespace
}  // namespace WEBNN_KERNEL_ISA
}  // namespace webnn
