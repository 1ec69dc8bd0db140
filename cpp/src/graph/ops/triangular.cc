// triangular: keeps the upper or lower triangle (shifted by diagonal) of the last two dims.
#include "graph/op_def.h"
#include "kernels/data_movement/data_movement.h"

namespace webnn {

namespace {

std::vector<OperandDescriptor> infer_triangular(const OpView& op) { return {op.operand("input")}; }

Kernel lower_triangular(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  return make_triangular_kernel(outputs[0].data_type, outputs[0].shape, op.flag("upper"), op.integer("diagonal"));
}

}  // namespace

const OpDef& triangular_op() {
  static const OpDef def = with_exact_results(OpDef{"triangular",
                                                    {{"input", ParamKind::kOperand}},
                                                    {{"upper", ParamKind::kBool, true}, {"diagonal", ParamKind::kInt, int64_t(0)}},
                                                    {{"input", kAnyType, 2, kAnyRank}, {"output", kAnyType, 2, kAnyRank}},
                                                    infer_triangular,
                                                    lower_triangular});
  return def;
}

}  // namespace webnn
