// Normalization family: batchNormalization (given statistics) and the instance/layer
// normalizations (statistics computed over some dims).
#pragma once
#include "kernels/kernel.h"
#include "kernels/reduce/reduce.h"

namespace webnn {

// y = scale * (x - mean) / sqrt(variance + epsilon) + bias, the 1-D tensors indexed along the
// split's axis. Inputs: input, mean, variance, then scale and bias at the given positions (-1: absent).
struct BatchNormParams {
  AxisSplit split;
  double epsilon;
  int scale_index, bias_index;
};
Kernel make_batch_norm_kernel(DataType type, const BatchNormParams& params);

// Normalizes each group of `layout` over its reduced dims (mean and population variance), then
// applies scale and bias at the layout's parameter offsets. Inputs: input, then scale and bias
// at the given positions (-1: absent).
struct MeanVarianceNormParams {
  ReductionLayout layout;
  double epsilon;
  int scale_index, bias_index;
};
Kernel make_mean_variance_norm_kernel(DataType type, const MeanVarianceNormParams& params);

// ---- the float32 / float16 inner loops, one set per ISA level (the kernels pick the active one)

// The terms of out(j, k) = (in(j, k) - mean_k) * factor_k * scale(j, k) + bias(j, k).
struct NormTerms {
  const double* mean;    // one value (stat_step 0) or one per column k (stat_step 1)
  const double* factor;  // laid out like mean
  size_t stat_step;
  const void* scale;  // elements of the data type, or null (1)
  const void* bias;   // or null (0)
  size_t param_row_step, param_col_step;  // scale(j, k) = scale[j * param_row_step + k * param_col_step]
};
// out(j, k) for j < rows, k < width, computed in double: element (j, k) is at j * stride + k.
using NormalizeFn = void (*)(const void* in, void* out, size_t rows, size_t stride, size_t width,
                             const NormTerms& terms);
// Shifted moments, in double: sums[0] += Σ d, sums[1] += Σ d^2 with d = in[i] - shift, i < count.
using MomentsRowFn = void (*)(const void* in, size_t count, double shift, double* sums);
// The same per column k < width over the rows j < rows (elements j * stride + k): sum[k] and
// sum_sq[k], with d = in(j, k) - shift[k].
using MomentsColumnsFn = void (*)(const void* in, size_t rows, size_t stride, size_t width, const double* shift,
                                  double* sum, double* sum_sq);
struct NormLoops {
  NormalizeFn (*normalize)(DataType type);
  MomentsRowFn (*moments_row)(DataType type);
  MomentsColumnsFn (*moments_columns)(DataType type);
};
const NormLoops& norm_loops_ref();
const NormLoops& norm_loops_avx2();    // x86-64 only
const NormLoops& norm_loops_avx512();  // x86-64 only

}  // namespace webnn
