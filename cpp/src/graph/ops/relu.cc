// relu: max(0, x).
#include "graph/op_def.h"
#include "kernels/elementwise.h"

namespace webnn {

namespace {
constexpr DataTypeSet kReluTypes = kSignedTypes;

std::vector<OperandDescriptor> infer_same(const OpView& op) { return {op.operand("input")}; }

Kernel lower_relu(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  return make_unary_kernel(UnaryOp::kRelu, outputs[0].data_type, outputs[0].element_count());
}
}  // namespace

const OpDef& relu_op() {
  static const OpDef def{"relu",
                         {{"input", ParamKind::kOperand}},
                         {},
                         {{"input", kReluTypes, 0, kAnyRank}, {"output", kReluTypes, 0, kAnyRank}},
                         infer_same,
                         lower_relu};
  return def;
}

}  // namespace webnn
