// prelu: x < 0 ? slope * x : x, slope and input broadcast bidirectionally.
#include "graph/ops/broadcasting.h"
#include "kernels/elementwise/elementwise.h"

namespace webnn {

namespace {

constexpr DataTypeSet kPreluTypes = kFloatTypes | type_bit(DataType::kInt64) | type_bit(DataType::kInt32) |
                                    type_bit(DataType::kInt8);

std::vector<OperandDescriptor> infer_prelu(const OpView& op) {
  return {{op.operand("input").data_type, broadcast_operand_shapes(op, {"input", "slope"})}};
}

Kernel lower_prelu(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  return make_binary_kernel(BinaryOp::kPrelu, outputs[0].data_type, op.operand("input").shape,
                            op.operand("slope").shape, outputs[0].shape);
}

}  // namespace

const OpDef& prelu_op() {
  static const OpDef def{"prelu",
                         {{"input", ParamKind::kOperand}, {"slope", ParamKind::kOperand}},
                         {},
                         {{"input", kPreluTypes, 0, kAnyRank},
                          {"slope", kPreluTypes, 0, kAnyRank, "input"},
                          {"output", kPreluTypes, 0, kAnyRank}},
                         infer_prelu,
                         lower_prelu};
  return def;
}

}  // namespace webnn
