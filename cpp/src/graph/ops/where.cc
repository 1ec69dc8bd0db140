// where: condition != 0 ? trueValue : falseValue, the three broadcast bidirectionally.
#include "graph/ops/broadcasting.h"
#include "kernels/elementwise/elementwise.h"

namespace webnn {

namespace {

std::vector<OperandDescriptor> infer_where(const OpView& op) {
  return {{op.operand("trueValue").data_type, broadcast_operand_shapes(op, {"condition", "trueValue", "falseValue"})}};
}

Kernel lower_where(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  return make_where_kernel(outputs[0].data_type, op.operand("condition").shape, op.operand("trueValue").shape,
                           op.operand("falseValue").shape, outputs[0].shape);
}

}  // namespace

const OpDef& where_op() {
  static const OpDef def = with_exact_results(OpDef{"where",
                                                    {{"condition", ParamKind::kOperand},
                                                     {"trueValue", ParamKind::kOperand},
                                                     {"falseValue", ParamKind::kOperand}},
                                                    {},
                                                    {{"condition", kUint8Only, 0, kAnyRank},
                                                     {"trueValue", kAnyType, 0, kAnyRank},
                                                     {"falseValue", kAnyType, 0, kAnyRank, "trueValue"},
                                                     {"output", kAnyType, 0, kAnyRank}},
                                                    infer_where,
                                                    lower_where});
  return def;
}

}  // namespace webnn
