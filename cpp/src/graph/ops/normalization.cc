// batchNormalization, instanceNormalization (nchw/nhwc) and layerNormalization (any axes; the
// scale/bias dims follow the order of `axes`).
#include <cmath>

#include "graph/op_def.h"
#include "kernels/norm/norm.h"

namespace webnn {

namespace {

// epsilon is cast to the input's data type when the op is created (§3.0 CR-scalars).
double epsilon_of(const OpView& op) {
  return number_to_double_as(Number::from_double(op.real("epsilon")), op.operand("input").data_type);
}

void check_vector(const OpView& op, const std::string& name, uint32_t length) {
  if (!op.has(name)) return;
  const auto& shape = op.operand(name).shape;
  if (shape.size() != 1 || shape[0] != length)
    op.fail(str_cat(name, " must have shape [", length, "], got ", shape_to_string(shape)));
}

// ---- batchNormalization
std::vector<OperandDescriptor> infer_batch_norm(const OpView& op) {
  const auto& input = op.operand("input");
  const int64_t axis = op.integer("axis");
  if (uint64_t(axis) >= input.shape.size())
    op.fail(str_cat("axis ", axis, " is out of range for rank ", input.shape.size()));
  for (const char* name : {"mean", "variance", "scale", "bias"}) check_vector(op, name, input.shape[axis]);
  return {input};
}

Kernel lower_batch_norm(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  return make_batch_norm_kernel(outputs[0].data_type,
                                {split_at_axis(outputs[0].shape, size_t(op.integer("axis"))), epsilon_of(op),
                                 op.input_index("scale"), op.input_index("bias")});
}

// y = (x - mean) / sqrt(variance + epsilon) * scale + bias, when all four are constants.
bool batch_norm_channel_affine(const OpView& op, ChannelAffine& map) {
  const std::vector<double> mean = float_constant_values(op.info("mean"));
  const std::vector<double> variance = float_constant_values(op.info("variance"));
  const size_t channels = mean.size();
  std::vector<double> scale(channels, 1.0), bias(channels, 0.0);
  if (op.has("scale")) scale = float_constant_values(op.info("scale"));
  if (op.has("bias")) bias = float_constant_values(op.info("bias"));
  if (channels == 0 || variance.size() != channels || scale.size() != channels || bias.size() != channels)
    return false;
  const double epsilon = epsilon_of(op);
  map.input = 0;
  map.axis = size_t(op.integer("axis"));
  map.scale.resize(channels);
  map.shift.resize(channels);
  for (size_t c = 0; c < channels; ++c) {
    map.scale[c] = scale[c] / std::sqrt(variance[c] + epsilon);
    map.shift[c] = bias[c] - mean[c] * map.scale[c];
  }
  return true;
}

// ---- instanceNormalization
std::vector<OperandDescriptor> infer_instance_norm(const OpView& op) {
  const auto& input = op.operand("input");
  const uint32_t channels = input.shape[op.text("layout") == "nhwc" ? 3 : 1];
  check_vector(op, "scale", channels);
  check_vector(op, "bias", channels);
  return {input};
}

Kernel lower_instance_norm(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  const bool nhwc = op.text("layout") == "nhwc";
  const std::vector<bool> reduced = nhwc ? std::vector<bool>{false, true, true, false}
                                         : std::vector<bool>{false, false, true, true};
  const std::vector<size_t> param_strides = nhwc ? std::vector<size_t>{0, 0, 0, 1} : std::vector<size_t>{0, 1, 0, 0};
  return make_mean_variance_norm_kernel(outputs[0].data_type,
                                        {make_reduction_layout(outputs[0].shape, reduced, param_strides),
                                         epsilon_of(op), op.input_index("scale"), op.input_index("bias")});
}

// ---- layerNormalization
std::vector<int64_t> layer_norm_axes(const OpView& op) {
  const size_t rank = op.operand("input").shape.size();
  if (!op.has("axes")) {
    std::vector<int64_t> axes;
    for (size_t d = 1; d < rank; ++d) axes.push_back(int64_t(d));
    return axes;
  }
  op.axes_mask("axes", rank);
  return op.integers("axes");
}

std::vector<OperandDescriptor> infer_layer_norm(const OpView& op) {
  const auto& input = op.operand("input");
  const std::vector<int64_t> axes = layer_norm_axes(op);
  op.keep(axes);
  std::vector<uint32_t> expected;
  for (int64_t axis : axes) expected.push_back(input.shape[axis]);
  for (const char* name : {"scale", "bias"}) {
    if (op.has(name) && op.operand(name).shape != expected)
      op.fail(str_cat(name, " must have shape ", shape_to_string(expected), " (the input dims at axes, in order), got ",
                      shape_to_string(op.operand(name).shape)));
  }
  return {input};
}

Kernel lower_layer_norm(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  const auto& shape = outputs[0].shape;
  const std::vector<int64_t>& axes = op.attributes<std::vector<int64_t>>();
  std::vector<bool> reduced(shape.size(), false);
  std::vector<size_t> param_strides(shape.size(), 0);
  size_t stride = 1;
  for (size_t i = axes.size(); i-- > 0;) {
    reduced[axes[i]] = true;
    param_strides[axes[i]] = stride;
    stride *= shape[axes[i]];
  }
  return make_mean_variance_norm_kernel(outputs[0].data_type,
                                        {make_reduction_layout(shape, reduced, param_strides), epsilon_of(op),
                                         op.input_index("scale"), op.input_index("bias")});
}

}  // namespace

const OpDef& batchNormalization_op() {
  static const OpDef def = [] {
    OpDef d{"batchNormalization",
            {{"input", ParamKind::kOperand}, {"mean", ParamKind::kOperand}, {"variance", ParamKind::kOperand}},
            {{"scale", ParamKind::kOptionalOperand},
             {"bias", ParamKind::kOptionalOperand},
             {"axis", ParamKind::kUint, int64_t(1)},
             {"epsilon", ParamKind::kDouble, 1e-5}},
            {{"input", kFloatTypes, 1, kAnyRank},
             {"mean", kFloatTypes, 1, 1, "input"},
             {"variance", kFloatTypes, 1, 1, "input"},
             {"scale", kFloatTypes, 1, 1, "input"},
             {"bias", kFloatTypes, 1, 1, "input"},
             {"output", kFloatTypes, 1, kAnyRank}},
            infer_batch_norm,
            lower_batch_norm};
    d.channel_affine = batch_norm_channel_affine;
    d.to_nhwc = to_nhwc_along_axis;  // inside a channels-last region: the channel axis moves last
    return d;
  }();
  return def;
}

const OpDef& instanceNormalization_op() {
  static const OpDef def{"instanceNormalization",
                         {{"input", ParamKind::kOperand}},
                         {{"scale", ParamKind::kOptionalOperand},
                          {"bias", ParamKind::kOptionalOperand},
                          {"epsilon", ParamKind::kDouble, 1e-5},
                          {"layout", ParamKind::kEnum, std::string("nchw"), {"nchw", "nhwc"}}},
                         {{"input", kFloatTypes, 4, 4},
                          {"scale", kFloatTypes, 1, 1, "input"},
                          {"bias", kFloatTypes, 1, 1, "input"},
                          {"output", kFloatTypes, 4, 4}},
                         infer_instance_norm,
                         lower_instance_norm};
  return def;
}

const OpDef& layerNormalization_op() {
  static const OpDef def{"layerNormalization",
                         {{"input", ParamKind::kOperand}},
                         {{"scale", ParamKind::kOptionalOperand},
                          {"bias", ParamKind::kOptionalOperand},
                          {"axes", ParamKind::kUintList},
                          {"epsilon", ParamKind::kDouble, 1e-5}},
                         {{"input", kFloatTypes, 0, kAnyRank},
                          {"scale", kFloatTypes, 0, kAnyRank, "input"},
                          {"bias", kFloatTypes, 0, kAnyRank, "input"},
                          {"output", kFloatTypes, 0, kAnyRank}},
                         infer_layer_norm,
                         lower_layer_norm};
  return def;
}

}  // namespace webnn
