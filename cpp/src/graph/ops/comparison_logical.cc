// Element-wise ops with a uint8 0/1 result: the comparisons (equal, notEqual, greater,
// greaterOrEqual, lesser, lesserOrEqual), the logical ops (logicalAnd, logicalOr, logicalXor,
// logicalNot) and the float class tests (isNaN, isInfinite).
#include "graph/ops/broadcasting.h"
#include "kernels/elementwise/elementwise.h"

namespace webnn {

namespace {

std::vector<OperandDescriptor> infer_binary_predicate(const OpView& op) {
  return {{DataType::kUint8, broadcast_operand_shapes(op, {"a", "b"})}};
}

template <BinaryPredicate Op>
Kernel lower_binary_predicate(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  const auto& a = op.operand("a");
  return make_binary_predicate_kernel(Op, a.data_type, a.shape, op.operand("b").shape, outputs[0].shape);
}

// (a, b) -> uint8, a of `types`, b the same as a, any rank.
template <BinaryPredicate Op>
OpDef binary_predicate_def(const char* name, DataTypeSet types) {
  return OpDef{name,
               {{"a", ParamKind::kOperand}, {"b", ParamKind::kOperand}},
               {},
               {{"a", types, 0, kAnyRank}, {"b", types, 0, kAnyRank, "a"}, {"output", kUint8Only, 0, kAnyRank}},
               infer_binary_predicate,
               lower_binary_predicate<Op>};
}

std::vector<OperandDescriptor> infer_unary_predicate(const OpView& op) {
  return {{DataType::kUint8, op.operand("a").shape}};
}

template <UnaryPredicate Op>
Kernel lower_unary_predicate(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  return make_unary_predicate_kernel(Op, op.operand("a").data_type, outputs[0].shape);
}

// (a) -> uint8 of the same shape, a of `types`, any rank.
template <UnaryPredicate Op>
OpDef unary_predicate_def(const char* name, DataTypeSet types) {
  return OpDef{name,
               {{"a", ParamKind::kOperand}},
               {},
               {{"a", types, 0, kAnyRank}, {"output", kUint8Only, 0, kAnyRank}},
               infer_unary_predicate,
               lower_unary_predicate<Op>};
}

}  // namespace

const OpDef& equal_op() {
  static const OpDef def = binary_predicate_def<BinaryPredicate::kEqual>("equal", kAnyType);
  return def;
}
const OpDef& greater_op() {
  static const OpDef def = binary_predicate_def<BinaryPredicate::kGreater>("greater", kAnyType);
  return def;
}
const OpDef& greaterOrEqual_op() {
  static const OpDef def = binary_predicate_def<BinaryPredicate::kGreaterOrEqual>("greaterOrEqual", kAnyType);
  return def;
}
const OpDef& lesser_op() {
  static const OpDef def = binary_predicate_def<BinaryPredicate::kLesser>("lesser", kAnyType);
  return def;
}
const OpDef& lesserOrEqual_op() {
  static const OpDef def = binary_predicate_def<BinaryPredicate::kLesserOrEqual>("lesserOrEqual", kAnyType);
  return def;
}
const OpDef& notEqual_op() {
  static const OpDef def = binary_predicate_def<BinaryPredicate::kNotEqual>("notEqual", kAnyType);
  return def;
}

const OpDef& logicalAnd_op() {
  static const OpDef def = binary_predicate_def<BinaryPredicate::kLogicalAnd>("logicalAnd", kUint8Only);
  return def;
}
const OpDef& logicalOr_op() {
  static const OpDef def = binary_predicate_def<BinaryPredicate::kLogicalOr>("logicalOr", kUint8Only);
  return def;
}
const OpDef& logicalXor_op() {
  static const OpDef def = binary_predicate_def<BinaryPredicate::kLogicalXor>("logicalXor", kUint8Only);
  return def;
}
const OpDef& logicalNot_op() {
  static const OpDef def = unary_predicate_def<UnaryPredicate::kLogicalNot>("logicalNot", kUint8Only);
  return def;
}

// The limits table says any dtype; the algorithm requires a float (digest §6 item 9).
const OpDef& isNaN_op() {
  static const OpDef def = unary_predicate_def<UnaryPredicate::kIsNaN>("isNaN", kFloatTypes);
  return def;
}
const OpDef& isInfinite_op() {
  static const OpDef def = unary_predicate_def<UnaryPredicate::kIsInfinite>("isInfinite", kFloatTypes);
  return def;
}

}  // namespace webnn
