// Element-wise binary ops with bidirectional broadcasting: add, sub, mul, div, max, min, pow.
#include "graph/op_def.h"
#include "kernels/elementwise.h"

namespace webnn {

namespace {

std::vector<OperandDescriptor> infer_binary(const OpView& op) {
  const auto& a = op.operand("a");
  const auto& b = op.operand("b");
  std::vector<uint32_t> shape;
  if (!broadcast_shapes(a.shape, b.shape, &shape))
    op.fail(str_cat("shapes ", shape_to_string(a.shape), " and ", shape_to_string(b.shape), " do not broadcast"));
  return {{a.data_type, shape}};
}

template <BinaryOp Op>
Kernel lower_binary(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  return make_binary_kernel(Op, outputs[0].data_type, op.operand("a").shape, op.operand("b").shape,
                            outputs[0].shape);
}

template <BinaryOp Op>
OpDef binary_def(const char* name, DataTypeSet types) {
  return OpDef{name,
               {{"a", ParamKind::kOperand}, {"b", ParamKind::kOperand}},
               {},
               {{"a", types, 0, kAnyRank}, {"b", types, 0, kAnyRank, "a"}, {"output", types, 0, kAnyRank}},
               infer_binary,
               lower_binary<Op>};
}

}  // namespace

const OpDef& add_op() {
  static const OpDef def = binary_def<BinaryOp::kAdd>("add", kAnyType);
  return def;
}
const OpDef& mul_op() {
  static const OpDef def = binary_def<BinaryOp::kMul>("mul", kAnyType);
  return def;
}

}  // namespace webnn
