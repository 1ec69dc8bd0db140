// conv2d: 2-D convolution, any input/filter layout, groups, strides, dilations, padding, bias.
#include "graph/op_def.h"
#include "graph/ops/quantized_common.h"
#include "kernels/conv/conv.h"
#include "kernels/int8/int8_conv.h"

namespace webnn {

namespace {

// Filter dims as (O, I/g, kH, kW) for a layout.
struct FilterDims {
  uint32_t o, i, h, w;
};
FilterDims filter_dims(const std::vector<uint32_t>& s, const std::string& layout) {
  if (layout == "hwio") return {s[3], s[2], s[0], s[1]};
  if (layout == "ohwi") return {s[0], s[3], s[1], s[2]};
  if (layout == "ihwo") return {s[3], s[0], s[1], s[2]};
  return {s[0], s[1], s[2], s[3]};
}

struct Conv2dShape {
  Conv2dParams params;
  std::vector<uint32_t> output;
};

Conv2dShape conv2d_shape(const OpView& op) {
  const auto& input = op.operand("input");
  const auto& filter = op.operand("filter");
  const auto& padding = op.integers("padding");
  const auto& strides = op.integers("strides");
  const auto& dilations = op.integers("dilations");
  const int64_t groups = op.integer("groups");
  const bool nhwc = op.text("inputLayout") == "nhwc";
  const std::string& filter_layout = op.text("filterLayout");

  if (padding.size() != 4) op.fail(str_cat("padding must have 4 values, got ", padding.size()));
  if (strides.size() != 2) op.fail(str_cat("strides must have 2 values, got ", strides.size()));
  if (dilations.size() != 2) op.fail(str_cat("dilations must have 2 values, got ", dilations.size()));
  if (strides[0] == 0 || strides[1] == 0) op.fail("strides must be at least 1");
  if (dilations[0] == 0 || dilations[1] == 0) op.fail("dilations must be at least 1");
  if (groups == 0) op.fail("groups must be at least 1");

  const auto& s = input.shape;
  const uint32_t N = s[0], C = nhwc ? s[3] : s[1], H = nhwc ? s[1] : s[2], W = nhwc ? s[2] : s[3];
  const FilterDims f = filter_dims(filter.shape, filter_layout);
  if (C % groups != 0) op.fail(str_cat("input channels (", C, ") must be a multiple of groups (", groups, ")"));
  if (C / groups != f.i)
    op.fail(str_cat("input channels / groups (", C / groups, ") must equal the filter's input channels (", f.i, ")"));
  if (f.o % groups != 0)
    op.fail(str_cat("output channels (", f.o, ") must be a multiple of groups (", groups, ")"));
  if (op.has("bias")) {
    const auto& bias = op.operand("bias");
    if (bias.shape.size() != 1 || bias.shape[0] != f.o)
      op.fail(str_cat("bias must have shape [", f.o, "], got ", shape_to_string(bias.shape)));
  }
  auto out_size = [&](uint32_t in, uint32_t k, int64_t stride, int64_t dilation, int64_t pad_begin, int64_t pad_end,
                       const char* axis) -> uint32_t {
    const int64_t effective = (int64_t(k) - 1) * dilation + 1;
    const int64_t span = int64_t(in) + pad_begin + pad_end - effective;
    if (span < 0)
      op.fail(str_cat("the dilated filter (", effective, ") is larger than the padded input ", axis, " (",
                      int64_t(in) + pad_begin + pad_end, ")"));
    const int64_t out = span / stride + 1;
    if (out > int64_t(kMaxDimension)) op.fail(str_cat("the output ", axis, " is too large"));
    return uint32_t(out);
  };
  const uint32_t OH = out_size(H, f.h, strides[0], dilations[0], padding[0], padding[1], "height");
  const uint32_t OW = out_size(W, f.w, strides[1], dilations[1], padding[2], padding[3], "width");

  Conv2dShape r;
  r.params = {N, C, H, W, f.o, OH, OW, f.h, f.w,
              size_t(strides[0]), size_t(strides[1]), size_t(dilations[0]), size_t(dilations[1]),
              size_t(padding[0]), size_t(padding[2]), size_t(groups), nhwc, filter_layout, op.has("bias")};
  r.output = nhwc ? std::vector<uint32_t>{N, OH, OW, f.o} : std::vector<uint32_t>{N, f.o, OH, OW};
  return r;
}

}  // namespace

std::vector<ParamSpec> conv2d_options() {
  return {{"padding", ParamKind::kUintList, std::vector<int64_t>{0, 0, 0, 0}},
          {"strides", ParamKind::kUintList, std::vector<int64_t>{1, 1}},
          {"dilations", ParamKind::kUintList, std::vector<int64_t>{1, 1}},
          {"groups", ParamKind::kUint, int64_t(1)},
          {"inputLayout", ParamKind::kEnum, std::string("nchw"), {"nchw", "nhwc"}},
          {"filterLayout", ParamKind::kEnum, std::string("oihw"), {"oihw", "hwio", "ohwi", "ihwo"}},
          {"bias", ParamKind::kOptionalOperand}};
}

bool conv2d_seeds_nhwc(const Node& node, const std::vector<OperandInfo>& operands) {
  const Conv2dParams p = OpView(node, operands).attributes<Conv2dParams>();
  return !p.nhwc && p.out_channels / p.groups > 1;
}

Conv2dParams conv2d_parameters(const OpView& op, std::vector<uint32_t>& output_shape) {
  Conv2dShape shape = conv2d_shape(op);
  output_shape = shape.output;
  return shape.params;
}

namespace {

std::vector<OperandDescriptor> infer_conv2d(const OpView& op) {
  Conv2dShape shape = conv2d_shape(op);
  op.keep(shape.params);
  return {{op.operand("input").data_type, shape.output}};
}

Kernel lower_conv2d(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  const OperandInfo& filter = op.info("filter");
  const OperandInfo* bias = op.has("bias") ? &op.info("bias") : nullptr;
  Conv2dParams params = op.attributes<Conv2dParams>();
  params.activation_min = op.epilogue().clamp_min;
  params.activation_max = op.epilogue().clamp_max;
  params.activation = op.epilogue().activation;
  params.has_residual = op.epilogue().has_residual();
  params.nchw_input = op.input_untransposed();
  if (params.quantization) {  // the quantized_ops pass checked that the filter and bias are constants
    if (!filter.constant_data || (bias && (!bias->constant_data || bias->desc.data_type != DataType::kFloat32)))
      op.fail("internal: a quantized conv2d needs a constant filter and a float32 constant bias");
    op.mark_copied_constant("filter");
    if (bias) op.mark_copied_constant("bias");
    return make_int8_conv2d_kernel(params, filter.constant_data->data(),
                                   bias ? reinterpret_cast<const float*>(bias->constant_data->data()) : nullptr);
  }
  if (filter.constant_data && (!bias || bias->constant_data)) {  // the kernel packs both at build
    op.mark_copied_constant("filter");
    if (bias) op.mark_copied_constant("bias");
  }
  return make_conv2d_kernel(outputs[0].data_type, params,
                            filter.constant_data ? filter.constant_data->data() : nullptr,
                            bias && bias->constant_data ? bias->constant_data->data() : nullptr);
}

// float32 kernels add a residual, clamp and apply an activation.
uint32_t conv2d_epilogue_support(const OpView& op) {
  return op.operand("input").data_type == DataType::kFloat32
             ? kEpilogueClamp | kEpilogueResidual | kEpilogueActivation
             : kEpilogueNone;
}

// Folds y = scale[o] * conv(x) + shift[o] into the filter (each output channel's weights scaled: for
// float32, by the kernel as it packs them, Conv2dParams::filter_scale; for float16, a new constant)
// and the bias (scaled and shifted, in float64: a new constant of the filter's type).
bool conv2d_absorb_channel_affine(Node& node, std::vector<OperandInfo>& operands, const ChannelAffine& map) {
  Conv2dParams params = OpView(node, operands).attributes<Conv2dParams>();
  if (params.quantization) return false;  // its filter is quantized integers
  const size_t channels = params.out_channels;
  if (!map.uniform() && (map.axis != (params.nhwc ? 3u : 1u) || map.scale.size() != channels)) return false;
  std::vector<double> bias(channels, 0.0);
  if (params.has_bias) bias = float_constant_values(operands[size_t(node.inputs[2])]);
  if (bias.size() != channels) return false;
  const OperandInfo& filter_info = operands[size_t(node.inputs[1])];
  const OperandDescriptor filter_desc = filter_info.desc;
  if (filter_info.kind != OperandInfo::Kind::kConstant || !filter_info.constant_data) return false;
  if (filter_desc.data_type == DataType::kFloat32) {
    // The kernel scales the filter as it packs it: no scaled copy of the weights.
    if (params.filter_scale.empty()) params.filter_scale.assign(channels, 1.0f);
    for (size_t o = 0; o < channels; ++o) params.filter_scale[o] = float(params.filter_scale[o] * map.scale_at(o));
  } else {
    const bool channel_major = params.filter_layout == "oihw" || params.filter_layout == "ohwi";
    const int filter = add_channel_scaled_constant(operands, node.inputs[1], map, channels, channel_major);
    if (filter < 0) return false;
    set_operand_argument(node, "filter", filter);
  }
  for (size_t o = 0; o < channels; ++o) bias[o] = bias[o] * map.scale_at(o) + map.shift_at(o);
  set_operand_argument(node, "bias", add_float_constant(operands, {filter_desc.data_type, {uint32_t(channels)}}, bias));
  params.has_bias = true;
  node.attributes = std::make_shared<KeptAs<Conv2dParams>>(params);
  return true;
}

}  // namespace

const OpDef& conv2d_op() {
  static const OpDef def = [] {
    OpDef d{
      "conv2d",
      {{"input", ParamKind::kOperand}, {"filter", ParamKind::kOperand}},
      conv2d_options(),
      {{"input", kFloatTypes, 4, 4},
       {"filter", kFloatTypes, 4, 4, "input"},
       {"bias", kFloatTypes, 1, 1, "input"},
       {"output", kFloatTypes, 4, 4}},
      infer_conv2d,
      lower_conv2d,
      1,
      false,
      conv2d_epilogue_support};
    d.absorb_channel_affine = conv2d_absorb_channel_affine;
    // The NHWC indirect GEMM and the depthwise loops finish each output element in one store, the
    // residual read there; NCHW products accumulate over K blocks in the output, or add it after a
    // transpose.
    d.writes_over_addend = [](const OpView& op) {
      const Conv2dParams params = op.attributes<Conv2dParams>();
      return params.nhwc || is_depthwise(params);
    };
    // A convolution with one output channel (per group; YOLO's DFL: 16 -> 1) does not start a
    // channels-last region: in NCHW its output rows are pixels, while channels-last fills a GEMM
    // panel of 16-32 columns with one, after a transpose of its input (YOLOv8 at 640x640: 386 ->
    // 80 us). Inside a region it still follows.
    d.nhwc_seed = conv2d_seeds_nhwc;
    d.to_nhwc = [](Node& node, const std::vector<OperandInfo>& operands) {
      if (OpView(node, operands).attributes<Conv2dParams>().nhwc) return false;
      node.args[size_t(node.def->argument_index("inputLayout"))] = std::string("nhwc");
      // The kept parameters carry what earlier passes folded in (filter scales): updated, not re-derived.
      Conv2dParams params = OpView(node, operands).attributes<Conv2dParams>();
      params.nhwc = true;
      params.nchw_plan = Conv2dParams::NchwPlan::kDirect;
      node.attributes = std::make_shared<KeptAs<Conv2dParams>>(params);
      return true;
    };
    d.absorbs_input_transpose = [](const OpView& op) {
      return op.operand("input").data_type == DataType::kFloat32 &&
             conv2d_reads_nchw_input(op.attributes<Conv2dParams>());
    };
    d.assign_layout = [](Node& node, const std::vector<OperandInfo>& operands) {
      Conv2dParams params = OpView(node, operands).attributes<Conv2dParams>();
      if (params.quantization) return false;  // the int8 kernel reads either layout itself
      params.nchw_plan = conv2d_nchw_plan(params);
      node.attributes = std::make_shared<KeptAs<Conv2dParams>>(params);
      return params.nchw_plan != Conv2dParams::NchwPlan::kDirect;
    };
    return d;
  }();
  return def;
}

}  // namespace webnn
