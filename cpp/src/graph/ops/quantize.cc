// quantizeLinear, dequantizeLinear: scale and zeroPoint have the input's rank and apply
// blockwise (each of their elements covers a contiguous block of the input).
//
// Scale values must be > 0 (#906); they are tensor data, so this is not checked: a zero scale
// saturates (x / 0 = ±inf) and NaN results quantize to 0, never undefined behaviour.
#include <cstring>

#include "graph/op_def.h"
#include "kernels/quantize/quantize.h"

namespace webnn {

namespace {

// int4/uint4 beyond the spec's list (the WPT corpus and Chromium have them; see docs/dtypes).
constexpr DataTypeSet kQuantizedTypes = type_bit(DataType::kUint8) | type_bit(DataType::kInt8) |
                                        type_bit(DataType::kUint32) | type_bit(DataType::kInt32) |
                                        type_bit(DataType::kUint4) | type_bit(DataType::kInt4);

// The shared shape rules: equal ranks, scale.shape == zeroPoint.shape, blockwise broadcastable.
void check_quantization_params(const OpView& op) {
  const auto& input = op.operand("input");
  const auto& scale = op.operand("scale");
  const auto& zero_point = op.operand("zeroPoint");
  if (scale.shape.size() != input.shape.size())
    op.fail(str_cat("scale has rank ", scale.shape.size(), " but the input has rank ", input.shape.size()));
  if (zero_point.shape.size() != input.shape.size())
    op.fail(str_cat("zeroPoint has rank ", zero_point.shape.size(), " but the input has rank ", input.shape.size()));
  if (scale.shape != zero_point.shape)
    op.fail(str_cat("scale shape ", shape_to_string(scale.shape), " differs from zeroPoint shape ",
                    shape_to_string(zero_point.shape)));
  for (size_t d = 0; d < input.shape.size(); ++d)
    if (input.shape[d] % scale.shape[d] != 0)
      op.fail(str_cat("scale shape ", shape_to_string(scale.shape), " is not blockwise broadcastable to the input ",
                      shape_to_string(input.shape), " (dim ", d, ")"));
}

std::vector<OperandDescriptor> infer_quantize(const OpView& op) {
  check_quantization_params(op);
  return {{op.operand("zeroPoint").data_type, op.operand("input").shape}};
}

Kernel lower_quantize(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  const auto& input = op.operand("input");
  return make_quantize_kernel(input.data_type, outputs[0].data_type, input.shape, op.operand("scale").shape);
}

std::vector<OperandDescriptor> infer_dequantize(const OpView& op) {
  check_quantization_params(op);
  return {{op.operand("scale").data_type, op.operand("input").shape}};
}

Kernel lower_dequantize(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  const auto& input = op.operand("input");
  return make_dequantize_kernel(input.data_type, outputs[0].data_type, input.shape, op.operand("scale").shape);
}

// A chain step (compiler/passes/elementwise_fusion.cc) for the per-tensor 8-bit form: float32 scale
// and an int8/uint8 zero point, each one constant value.
bool quantization_chain_step(const OpView& op, ChainStep& step, ChainStep::Kind kind) {
  const OperandInfo& scale = op.info("scale");
  const OperandInfo& zero_point = op.info("zeroPoint");
  const DataType type = zero_point.desc.data_type;
  if (scale.desc.data_type != DataType::kFloat32 || !scale.constant_data || !zero_point.constant_data ||
      (type != DataType::kUint8 && type != DataType::kInt8) || scale.constant_data->size() != sizeof(float) ||
      zero_point.constant_data->size() != 1)
    return false;
  step.kind = kind;
  std::memcpy(&step.scale, scale.constant_data->data(), sizeof(float));
  step.is_signed = type == DataType::kInt8;
  const uint8_t zero = zero_point.constant_data->data()[0];
  step.zero_point = step.is_signed ? int32_t(int8_t(zero)) : int32_t(zero);
  return true;
}

}  // namespace

const OpDef& dequantizeLinear_op() {
  static const OpDef def = [] {
    OpDef d{"dequantizeLinear",
            {{"input", ParamKind::kOperand},
             {"scale", ParamKind::kOperand},
             {"zeroPoint", ParamKind::kOperand}},
            {},
            {{"input", kQuantizedTypes, 0, kAnyRank},
             {"scale", kFloatTypes, 0, kAnyRank},
             {"zeroPoint", kQuantizedTypes, 0, kAnyRank, "input"},
             {"output", kFloatTypes, 0, kAnyRank}},
            infer_dequantize,
            lower_dequantize};
    d.chain_step = [](const OpView& op, ChainStep& step) {
      return op.operand("scale").data_type == DataType::kFloat32 &&
             quantization_chain_step(op, step, ChainStep::Kind::kDequantize);
    };
    // Each element from its own input element and the scale block over it: NHWC regions flow
    // through (the scale and zero point are transposed with the input).
    d.element_wise = true;
    return d;
  }();
  return def;
}

const OpDef& quantizeLinear_op() {
  static const OpDef def = [] {
    OpDef d{"quantizeLinear",
            {{"input", ParamKind::kOperand},
             {"scale", ParamKind::kOperand},
             {"zeroPoint", ParamKind::kOperand}},
            {},
            {{"input", kFloatTypes, 0, kAnyRank},
             {"scale", kFloatTypes, 0, kAnyRank, "input"},
             {"zeroPoint", kQuantizedTypes, 0, kAnyRank},
             {"output", kQuantizedTypes, 0, kAnyRank}},
            infer_quantize,
            lower_quantize};
    d.chain_step = [](const OpView& op, ChainStep& step) {
      return op.operand("input").data_type == DataType::kFloat32 &&
             quantization_chain_step(op, step, ChainStep::Kind::kQuantize);
    };
    // Each element from its own input element and the scale block over it: NHWC regions flow
    // through (the scale and zero point are transposed with the input).
    d.element_wise = true;
    return d;
  }();
  return def;
}

}  // namespace webnn
