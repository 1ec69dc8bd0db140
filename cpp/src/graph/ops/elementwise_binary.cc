// Element-wise binary ops with bidirectional broadcasting: add, sub, mul, div, max, min, pow.
#include "graph/ops/broadcasting.h"
#include "kernels/elementwise/elementwise.h"

namespace webnn {

namespace {

std::vector<OperandDescriptor> infer_binary(const OpView& op) {
  return {{op.operand("a").data_type, broadcast_operand_shapes(op, {"a", "b"})}};
}

template <BinaryOp Op>
Kernel lower_binary(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  return make_binary_kernel(Op, outputs[0].data_type, op.operand("a").shape, op.operand("b").shape,
                            outputs[0].shape);
}

// Every binary op allows any dtype for a, b the same as a, and any rank.
template <BinaryOp Op>
OpDef binary_def(const char* name) {
  return OpDef{name,
               {{"a", ParamKind::kOperand}, {"b", ParamKind::kOperand}},
               {},
               {{"a", kAnyType, 0, kAnyRank}, {"b", kAnyType, 0, kAnyRank, "a"}, {"output", kAnyType, 0, kAnyRank}},
               infer_binary,
               lower_binary<Op>};
}

}  // namespace

const OpDef& add_op() {
  static const OpDef def = [] {
    OpDef d = binary_def<BinaryOp::kAdd>("add");
    d.epilogue_role = EpilogueRole::kAdd;
    return d;
  }();
  return def;
}
const OpDef& div_op() {
  static const OpDef def = binary_def<BinaryOp::kDiv>("div");
  return def;
}
const OpDef& max_op() {
  static const OpDef def = binary_def<BinaryOp::kMax>("max");
  return def;
}
const OpDef& min_op() {
  static const OpDef def = binary_def<BinaryOp::kMin>("min");
  return def;
}
const OpDef& mul_op() {
  static const OpDef def = binary_def<BinaryOp::kMul>("mul");
  return def;
}
const OpDef& pow_op() {
  static const OpDef def = binary_def<BinaryOp::kPow>("pow");
  return def;
}
const OpDef& sub_op() {
  static const OpDef def = binary_def<BinaryOp::kSub>("sub");
  return def;
}

}  // namespace webnn
