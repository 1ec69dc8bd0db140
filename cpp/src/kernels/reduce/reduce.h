// Reduction family: reduce*, argMin/argMax, softmax, cumulativeSum, and the strided iteration
// over kept/reduced dims that the normalization kernels share.
#pragma once
#include <algorithm>
#include <cmath>

#include "kernels/kernel.h"
#include "kernels/gather_scatter/gather_scatter.h"  // AxisSplit, split_at_axis
#include "kernels/kernel_util.h"

namespace webnn {

// A row-major walk over `sizes`, tracking two offsets per position: one into the input and one
// into a parameter tensor (scale/bias). Never empty: a walk over no dims has one position.
struct StridedWalk {
  std::vector<size_t> sizes{1}, strides{0}, param_strides{0};

  size_t count() const {
    size_t n = 1;
    for (size_t s : sizes) n *= s;
    return n;
  }
  void offsets(size_t index, size_t* offset, size_t* param_offset) const {
    if (sizes.size() == 1) {  // (no division)
      *offset = index * strides[0];
      *param_offset = index * param_strides[0];
      return;
    }
    *offset = *param_offset = 0;
    for (size_t d = sizes.size(); d-- > 0;) {
      const size_t i = index % sizes[d];
      index /= sizes[d];
      *offset += i * strides[d];
      *param_offset += i * param_strides[d];
    }
  }
  // Calls fn(offset, param_offset, length) for each run of positions in [begin, end) along the
  // innermost dim; within a run, offsets step by strides.back() and param_strides.back().
  template <class Fn>
  void for_each_run(size_t begin, size_t end, Fn&& fn) const {
    if (sizes.size() == 1) {
      if (begin < end) fn(begin * strides[0], begin * param_strides[0], end - begin);
      return;
    }
    const size_t inner = sizes.back();
    while (begin < end) {
      size_t offset, param_offset;
      offsets(begin, &offset, &param_offset);
      const size_t length = std::min(end - begin, inner - begin % inner);
      fn(offset, param_offset, length);
      begin += length;
    }
  }
};

// A contiguous input split into kept and reduced dims (size-1 dims dropped, neighbours merged):
// output element g * block + k is reduced over `reduced`, starting at input offset
// groups.offset(g) + k. `block` is the innermost kept dim when it is the input's last dim
// (contiguous, so reductions run as vector loops over it), else 1.
struct ReductionLayout {
  StridedWalk groups;
  size_t block = 1;
  size_t block_param_stride = 0;
  StridedWalk reduced;
};
// `reduced[d]` marks the dims to reduce; `param_strides` (empty: none) gives each dim's stride
// into a parameter tensor.
ReductionLayout make_reduction_layout(const std::vector<uint32_t>& shape, const std::vector<bool>& reduced,
                                      const std::vector<size_t>& param_strides = {});

// Stores a double result rounded once to T's format (float16 goes through round-to-odd float32,
// which makes the two-step rounding exact).
template <class T>
inline void store_rounded(T* p, double v) {
  if constexpr (std::is_same_v<T, float16>) {
    float f = float(v);
    if (double(f) != v && v == v) {
      uint32_t bits;
      if (std::fabs(double(f)) > std::fabs(v)) f = std::nextafter(f, 0.0f);
      std::memcpy(&bits, &f, 4);
      bits |= 1u;
      std::memcpy(&f, &bits, 4);
    }
    store(p, f);
  } else {
    store(p, compute_t<T>(v));
  }
}

enum class ReduceOp { kL1, kL2, kLogSum, kLogSumExp, kMax, kMean, kMin, kProduct, kSum, kSumSquare };
// Reduces `shape` over the dims marked in `reduced`; the output holds the kept dims in order.
Kernel make_reduce_kernel(ReduceOp op, DataType type, const std::vector<uint32_t>& shape,
                          const std::vector<bool>& reduced);

// Index of the first maximum (minimum) along the axis; a NaN counts as the extreme value.
Kernel make_arg_min_max_kernel(bool is_max, DataType input_type, DataType output_type, AxisSplit split);

Kernel make_softmax_kernel(DataType type, AxisSplit split);

Kernel make_cumulative_sum_kernel(DataType type, AxisSplit split, bool exclusive, bool reversed);

// ---- the float32 / float16 inner loops, one set per ISA level (the kernels pick the active one).
// Elements are in the loop's data type; "columns" are the same columns of `rows` rows, `stride`
// elements apart.

// What the sums add up: x, |x|, x^2, exp(x - shift).
enum class SumMap { kIdentity, kAbs, kSquare, kExp };
// Σ map(in[i]) for i < count, in double.
using SumRowFn = double (*)(const void* in, size_t count, double shift);
// acc[k] += Σ_j map(in[j * stride + k]) for j < rows, k < width; column k shifts by shift[k]
// (shift may be null for maps without one).
using SumColumnsFn = void (*)(const void* in, size_t rows, size_t stride, size_t width, const double* shift,
                              double* acc);
// The maximum (minimum) of in[0, count): NaN if any element is NaN, -inf (+inf) for no elements.
using ExtremeRowFn = float (*)(const void* in, size_t count);
// acc[k] = the maximum (minimum) of acc[k] and in[j * stride + k] over j < rows, for k < width.
using ExtremeColumnsFn = void (*)(const void* in, size_t rows, size_t stride, size_t width, float* acc);
// softmax of `rows` rows of in[0, count), `stride` elements apart, into the same places of out.
using SoftmaxRowsFn = void (*)(const void* in, void* out, size_t rows, size_t count, size_t stride);
// softmax along each column k < width of the rows j < rows (elements j * stride + k).
using SoftmaxColumnsFn = void (*)(const void* in, void* out, size_t rows, size_t stride, size_t width);
struct ReduceLoops {
  SumRowFn (*sum_row)(SumMap map, DataType type);
  SumColumnsFn (*sum_columns)(SumMap map, DataType type);
  ExtremeRowFn (*extreme_row)(bool is_max, DataType type);
  ExtremeColumnsFn (*extreme_columns)(bool is_max, DataType type);
  SoftmaxRowsFn (*softmax_rows)(DataType type);
  SoftmaxColumnsFn (*softmax_columns)(DataType type);
};
const ReduceLoops& reduce_loops_ref();
const ReduceLoops& reduce_loops_avx2();    // x86-64 only
const ReduceLoops& reduce_loops_avx512();  // x86-64 only

}  // namespace webnn
