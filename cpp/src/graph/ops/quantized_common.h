// What the compiler-made quantized products (quantizedMatmul, quantizedConv2d) share: a dequantized
// 8-bit input whose scale and zero point are read at each dispatch, a dequantized 8-bit constant
// weight with per-tensor or per-output-channel constant parameters, and a float32 result.
#pragma once
#include "graph/op_def.h"
#include "kernels/conv/conv.h"

namespace webnn {

// The quantization of such a product with `channels` output channels: the weight's scales and zero
// points from the constants "filterScale" / "filterZeroPoint" (or "bScale" / "bZeroPoint"), one value
// or one per output channel. TypeError (the op's label) when they are not such constants.
Conv2dQuantization float_product_quantization(const OpView& op, const char* weight, const char* scale,
                                              const char* zero, size_t channels);

// The epilogue fusion gave the float32 result of `op` (an addend that is the kernel's input
// `addend_input`, a clamp, an activation), copied into `params.quantization` for the kernel.
void take_float_epilogue(const OpView& op, size_t addend_input, Conv2dParams& params);

// Conv2d's options (padding, strides, dilations, groups, inputLayout, filterLayout, bias).
std::vector<ParamSpec> conv2d_options();

// OpDef::nhwc_seed of conv2d: an NCHW convolution with more than one output channel per group.
bool conv2d_seeds_nhwc(const Node& node, const std::vector<OperandInfo>& operands);

// Conv2d's own validation (graph/ops/conv2d.cc) of the operands "input" and "filter" and its
// options: the kernel parameters, and the output shape.
Conv2dParams conv2d_parameters(const OpView& op, std::vector<uint32_t>& output_shape);

}  // namespace webnn
