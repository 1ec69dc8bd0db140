// Normalization family: batchNormalization (given statistics) and the instance/layer
// normalizations (statistics computed over some dims).
#pragma once
#include "graph/op_def.h"
#include "kernels/reduce.h"

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

}  // namespace webnn
