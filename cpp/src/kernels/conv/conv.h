// Convolution family.
#pragma once
#include <limits>
#include <vector>

#include "kernels/kernel.h"
#include "kernels/unary/unary.h"

namespace webnn {

struct Conv2dParams {
  size_t batch, in_channels, in_h, in_w;
  size_t out_channels, out_h, out_w;
  size_t kernel_h, kernel_w;
  size_t stride_h, stride_w, dilation_h, dilation_w;
  size_t pad_top, pad_left;
  size_t groups;
  bool nhwc;                  // input and output layout
  std::string filter_layout;  // oihw | hwio | ohwi | ihwo
  bool has_bias;
  // Per output channel, a factor the filter is multiplied by when it is packed (empty: none): a
  // batch normalization or per-channel scale the compiler folded into this convolution.
  std::vector<float> filter_scale{};
  // A fused residual (float32 only): an addend of the output's shape, the kernel's last input, added
  // after the bias and before the activation.
  bool has_residual = false;
  // A fused activation: the result is clamped to [min, max] (relu: [0, inf]).
  float activation_min = -std::numeric_limits<float>::infinity();
  float activation_max = std::numeric_limits<float>::infinity();
  // Then a fused element-wise op (sigmoid, SiLU, hardSwish, ...), float32 only.
  FusedActivation activation{};
  // NCHW only: run as the transposed product [pixels][O] (filter packed as B), then transpose the
  // result, instead of [O][pixels]. The compiler's layout pass decides (conv2d_prefers_transposed).
  bool nchw_transposed = false;
};

// Whether an NCHW convolution is faster as the transposed product on the active kernels: when the
// output pixels fill NR-wide panels much worse than the output channels do.
bool conv2d_prefers_transposed(const Conv2dParams& p);

// Element strides of the filter's o, i, h, w axes for its layout (oihw | hwio | ohwi | ihwo).
struct FilterStrides {
  size_t o, i, h, w;
};
FilterStrides filter_strides(const Conv2dParams& p);
// Element i of a float32 or float16 array, as float.
float load_float(const void* base, DataType type, size_t i);
bool is_depthwise(const Conv2dParams& p);
// [batch][rows][cols] -> [batch][cols][rows] (NCHW <-> NHWC), threaded over `pool`.
void transpose_planes(const float* in, float* out, size_t batch, size_t rows, size_t cols, ThreadPool* pool);

// conv2d for float32/float16 (computed in float32); inputs: input, filter[, bias]. A constant filter
// (and bias) given here is reordered and packed once.
Kernel make_conv2d_kernel(DataType type, const Conv2dParams& params, const void* filter_constant = nullptr,
                          const void* bias_constant = nullptr);

}  // namespace webnn
