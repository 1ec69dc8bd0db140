// Convolution family.
#pragma once
#include <limits>
#include <memory>
#include <vector>

#include "kernels/kernel.h"
#include "kernels/unary/unary.h"

namespace webnn {

// A conv2d on 8-bit integers (made by the compiler's quantized_ops pass from dequantizeLinear ->
// conv2d [-> relu/clamp] -> quantizeLinear): the input and output are quantized uint8/int8 values,
// the filter a uint8/int8 constant, the bias (optional) a float32 constant in the float domain.
struct Conv2dQuantization {
  DataType input_type, filter_type, output_type;
  float input_scale;
  int32_t input_zero;
  std::vector<float> filter_scale;  // per output channel
  std::vector<int32_t> filter_zero;  // per output channel
  float output_scale;
  int32_t output_zero;
  // The float result is clamped to [min, max] before it is quantized (an absorbed relu or clamp).
  float min = -std::numeric_limits<float>::infinity();
  float max = std::numeric_limits<float>::infinity();
  // A product (NHWC, ungrouped: matmul and gemm) whose float32 result is the output, not quantized
  // again: output_type, output_scale and output_zero unused. Its epilogue may add an addend (the
  // kernel's last input: a residual of the output's shape, or a row of N values) to the rounded
  // product, then clamp to [min, max], then apply `activation`.
  bool float_output = false;
  enum class Addend : uint8_t { kNone, kResidual, kRow };
  Addend addend = Addend::kNone;
  size_t addend_input = 0;  // the addend's index among the kernel's inputs
  FusedActivation activation{};
  // The input's scale and zero point are the kernel's inputs 1 and 2 (one value each, read at each
  // dispatch: a dynamically quantized input), not input_scale and input_zero.
  bool runtime_input_parameters = false;
};

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
  // NCHW only: how the product runs. The compiler's layout pass decides (conv2d_nchw_plan).
  enum class NchwPlan : uint8_t {
    kDirect,      // [O][pixels] = the filter x im2col columns
    kTransposed,  // [pixels][O] = im2col rows x the filter, then the result transposed
    kViaNhwc,     // the input transposed to NHWC, the indirect GEMM, the result transposed back
  };
  NchwPlan nchw_plan = NchwPlan::kDirect;
  // NHWC only: the input is read in NCHW (a transpose into channels-last absorbed by the compiler;
  // conv2d_reads_nchw_input says when the kernel can).
  bool nchw_input = false;
  // Set: the convolution runs on integers (kernels/int8/int8_conv.h).
  std::shared_ptr<const Conv2dQuantization> quantization{};
};

// Whether an NHWC float32 convolution can read its input in NCHW instead: ungrouped, with few input
// channels (a network's first convolution reads the image's planes; a transposed copy costs more).
bool conv2d_reads_nchw_input(const Conv2dParams& p);

// The fastest way to run an NCHW convolution on the active kernels (kDirect for NHWC and depthwise).
Conv2dParams::NchwPlan conv2d_nchw_plan(const Conv2dParams& p);

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

struct PackedB;
struct GemmEpilogue;
// An NHWC convolution as an indirect GEMM (conv2d_indirect.cc): the filter packed per group as
// B = [kH*kW*I/g][O/g]; bias (O values) and residual (the output's shape) may be null; the epilogue's
// clamp and activation apply. Threaded over `pool`.
void conv_indirect_nhwc(const Conv2dParams& p, const std::vector<PackedB>& filter, const float* bias, const float* in,
                        const float* residual, float* out, const GemmEpilogue& epilogue, ThreadPool* pool);

// An NHWC-output convolution from an NCHW input (Conv2dParams::nchw_input; conv2d_indirect.cc): the
// same indirect GEMM, A's rows read from zero-padded copies of the input rows each output row reads,
// the filter packed as B = [I*kH*kW][O] in (i, kh, kw) order.
void conv_indirect_nchw_input(const Conv2dParams& p, const PackedB& filter, const float* bias, const float* in,
                              const float* residual, float* out, const GemmEpilogue& epilogue, ThreadPool* pool);

// conv2d for float32/float16 (computed in float32); inputs: input, filter[, bias]. A constant filter
// (and bias) given here is reordered and packed once.
Kernel make_conv2d_kernel(DataType type, const Conv2dParams& params, const void* filter_constant = nullptr,
                          const void* bias_constant = nullptr);

}  // namespace webnn
