// Transposed convolution family.
#pragma once
#include "kernels/kernel.h"

namespace webnn {

struct ConvTranspose2dParams {
  size_t batch, in_channels, in_h, in_w;
  size_t out_channels, out_h, out_w;
  size_t kernel_h, kernel_w;
  size_t stride_h, stride_w, dilation_h, dilation_w;
  size_t pad_top, pad_left;
  size_t groups;
  bool nhwc;  // input and output layout
  // Element strides of the filter along (input channel, output channel in group, kH, kW).
  size_t filter_stride_c, filter_stride_o, filter_stride_h, filter_stride_w;
  bool has_bias;
};

// convTranspose2d for float32/float16 (computed in float32); inputs: input, filter[, bias]. A constant
// filter given here is packed once.
Kernel make_conv_transpose2d_kernel(DataType type, const ConvTranspose2dParams& params,
                                    const void* filter_constant = nullptr);

}  // namespace webnn
