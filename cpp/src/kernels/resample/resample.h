// resample2d: nearest-neighbour or bilinear resampling of two axes of a 4-D tensor.
#pragma once
#include "kernels/kernel.h"

namespace webnn {

struct Resample2dParams {
  std::vector<uint32_t> input_shape, output_shape;  // rank 4
  size_t axes[2];                                   // the resampled axes, distinct
  double scales[2];                                 // output/input scale used for the coordinate mapping
  bool linear;
};

// Output coordinate o maps to u = clamp((o + 0.5) / scale - 0.5, 0, in - 1) (half-pixel);
// nearest takes ceil(u - 0.5) (round half down), linear weighs floor(u) and ceil(u).
// Integer outputs of linear mode round half to even.
Kernel make_resample2d_kernel(DataType type, const Resample2dParams& params);

}  // namespace webnn
