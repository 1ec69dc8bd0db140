// quantizedConv2d (made by the compiler, not a builder method: compiler/passes/quantized_ops.cc):
// conv2d(dequantizeLinear(input, inputScale, inputZeroPoint), dequantizeLinear(filter, filterScale,
// filterZeroPoint)) with a float32 result, on integers (a dynamically quantized model's ConvInteger ->
// Cast -> Mul). The input is 8-bit with one scale and one zero point, constants or values computed at
// run time (read at each dispatch); the filter an 8-bit constant with per-tensor or per-output-channel
// constant parameters; conv2d's options. Depthwise convolutions stay in float. As quantizedMatmul:
// exact int32 sums, each multiplied by sx * sw once.
#include "graph/ops/quantized_common.h"
#include "kernels/int8/int8_conv.h"

namespace webnn {

namespace {

std::vector<OperandDescriptor> infer_quantized_conv2d(const OpView& op) {
  std::vector<uint32_t> shape;
  Conv2dParams params = conv2d_parameters(op, shape);
  if (int8_conv2d_is_depthwise(params)) op.fail("depthwise convolutions run in float");
  if (params.kernel_h * params.kernel_w * (params.in_channels / params.groups) > kInt8MaxExactK)
    op.fail("K is too large for exact int32 sums");
  if (op.has("bias") && !op.info("bias").constant_data) op.fail("bias must be a constant");
  Conv2dQuantization q = float_product_quantization(op, "filter", "filterScale", "filterZeroPoint", params.out_channels);
  params.quantization = std::make_shared<const Conv2dQuantization>(std::move(q));
  op.keep(params);
  return {{DataType::kFloat32, shape}};
}

Kernel lower_quantized_conv2d(const OpView& op, const std::vector<OperandDescriptor>&) {
  for (const char* name : {"filter", "filterScale", "filterZeroPoint"}) op.mark_copied_constant(name);
  const float* bias = nullptr;  // (added to each product, rounded once with it)
  if (op.has("bias")) {
    op.mark_copied_constant("bias");
    bias = reinterpret_cast<const float*>(op.info("bias").constant_data->data());
  }
  Conv2dParams params = op.attributes<Conv2dParams>();
  take_float_epilogue(op, op.has("bias") ? 7 : 6, params);  // the addend after the operands
  return make_int8_conv2d_kernel(params, op.info("filter").constant_data->data(), bias);
}

// Folds y = scale[o] * conv(x) + shift[o] (a batch normalization after a dynamically quantized
// convolution) into new constants: the filter's scales times scale[o] and the bias, scaled and shifted.
bool absorb_channel_affine(Node& node, std::vector<OperandInfo>& operands, const ChannelAffine& map) {
  const Conv2dParams params = OpView(node, operands).attributes<Conv2dParams>();
  const size_t channels = params.out_channels;
  if (!map.uniform() && (map.axis != (params.nhwc ? 3u : 1u) || map.scale.size() != channels)) return false;
  const std::vector<double> scales = float_constant_values(operands[size_t(node.inputs[4])]);
  std::vector<double> bias(channels, 0.0);
  if (params.has_bias) bias = float_constant_values(operands[size_t(node.inputs[6])]);
  if ((scales.size() != 1 && scales.size() != channels) || bias.size() != channels) return false;
  std::vector<double> scaled(channels);
  for (size_t o = 0; o < channels; ++o) {
    scaled[o] = double(float(scales[scales.size() == 1 ? 0 : o] * map.scale_at(o)));
    bias[o] = bias[o] * map.scale_at(o) + map.shift_at(o);
  }
  const OperandDescriptor row{DataType::kFloat32, {uint32_t(channels)}};
  set_operand_argument(node, "filterScale", add_float_constant(operands, row, scaled));
  set_operand_argument(node, "bias", add_float_constant(operands, row, bias));
  revalidate(node, operands);
  return true;
}

}  // namespace

const OpDef& quantized_conv2d_op() {
  static const OpDef def = [] {
    constexpr DataTypeSet k8bit = type_bit(DataType::kUint8) | type_bit(DataType::kInt8);
    constexpr DataTypeSet kFloat32 = type_bit(DataType::kFloat32);
    OpDef d{"quantizedConv2d",
            {{"input", ParamKind::kOperand},
             {"inputScale", ParamKind::kOperand},
             {"inputZeroPoint", ParamKind::kOperand},
             {"filter", ParamKind::kOperand},
             {"filterScale", ParamKind::kOperand},
             {"filterZeroPoint", ParamKind::kOperand}},
            conv2d_options(),
            {{"input", k8bit, 4, 4},
             {"inputScale", kFloat32, 0, 4},
             {"inputZeroPoint", k8bit, 0, 4, "input"},
             {"filter", k8bit, 4, 4},
             {"filterScale", kFloat32, 0, 4},
             {"filterZeroPoint", k8bit, 0, 4, "filter"},
             {"bias", kFloat32, 1, 1},
             {"output", kFloat32, 4, 4}},
            infer_quantized_conv2d,
            lower_quantized_conv2d};
    d.absorb_channel_affine = absorb_channel_affine;
    // Channels-last: the float32 result's epilogue, as conv2d's (rows of channels).
    d.epilogue_support = [](const OpView& op) {
      return op.text("inputLayout") == "nhwc" ? uint32_t(kEpilogueClamp | kEpilogueResidual | kEpilogueActivation)
                                              : uint32_t(kEpilogueNone);
    };
    // NCHW convolutions start channels-last regions (nhwc_regions), as conv2d's do: the 8-bit input is
    // transposed (a byte each), and the gathered im2col rows are whole runs of channels.
    d.nhwc_seed = conv2d_seeds_nhwc;
    d.to_nhwc = [](Node& node, const std::vector<OperandInfo>& operands) {
      if (OpView(node, operands).attributes<Conv2dParams>().nhwc) return false;
      node.args[size_t(node.def->argument_index("inputLayout"))] = std::string("nhwc");
      revalidate(node, operands);
      return true;
    };
    return d;
  }();
  return def;
}

}  // namespace webnn
