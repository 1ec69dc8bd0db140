// cast: converts every element to `dataType` (any pair of the 8 data types). The conversion
// rules, including the implementation-defined float -> integer cases, are in
// kernels/unary/unary_impl.h.
#include "graph/op_def.h"
#include "kernels/unary/unary.h"

namespace webnn {

namespace {

std::vector<OperandDescriptor> infer_cast(const OpView& op) {
  return {{op.data_type("dataType"), op.operand("input").shape}};
}

Kernel lower_cast(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  return make_cast_kernel(op.operand("input").data_type, outputs[0].data_type, outputs[0].element_count());
}

}  // namespace

const OpDef& cast_op() {
  static const OpDef def{"cast",
                         {{"input", ParamKind::kOperand}, {"dataType", ParamKind::kDataType}},
                         {},
                         {{"input", kAnyType, 0, kAnyRank}, {"output", kAnyType, 0, kAnyRank}},
                         infer_cast,
                         lower_cast};
  return def;
}

}  // namespace webnn
