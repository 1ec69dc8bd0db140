// The ten reductions: reduceL1, reduceL2, reduceLogSum, reduceLogSumExp, reduceMax, reduceMean,
// reduceMin, reduceProduct, reduceSum, reduceSumSquare. Absent axes reduce every dim; an empty
// list reduces none (the function then applies to each element alone).
#include "graph/op_def.h"
#include "kernels/reduce/reduce.h"

namespace webnn {

namespace {

constexpr DataTypeSet kWideNumericTypes = kFloatTypes | type_bit(DataType::kInt32) | type_bit(DataType::kUint32) |
                                          type_bit(DataType::kInt64) | type_bit(DataType::kUint64);

// The dims that `axes` marks for reduction, after validating the list.
struct ReducedDims {
  std::vector<bool> mask;
};

std::vector<bool> reduced_dims(const OpView& op) {
  const size_t rank = op.operand("input").shape.size();
  if (!op.has("axes")) return std::vector<bool>(rank, true);
  return op.axes_mask("axes", rank);
}

std::vector<OperandDescriptor> infer_reduce(const OpView& op) {
  const auto& input = op.operand("input");
  const std::vector<bool> reduced = reduced_dims(op);
  op.keep(ReducedDims{reduced});
  const bool keep = op.flag("keepDimensions");
  std::vector<uint32_t> shape;
  for (size_t d = 0; d < input.shape.size(); ++d) {
    if (!reduced[d]) shape.push_back(input.shape[d]);
    else if (keep) shape.push_back(1);
  }
  return {{input.data_type, shape}};
}

template <ReduceOp Op>
Kernel lower_reduce(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  return make_reduce_kernel(Op, outputs[0].data_type, op.operand("input").shape, op.attributes<ReducedDims>().mask);
}

// Inside a channels-last region (its input made NHWC): the same dims reduced, at their NHWC places.
// Only with keepDimensions (the region needs a rank-4 result).
bool reduce_to_nhwc(Node& node, const std::vector<OperandInfo>& operands) {
  if (!OpView(node, operands).flag("keepDimensions")) return false;
  Attr& axes = node.args[size_t(node.def->argument_index("axes"))];
  if (auto* list = std::get_if<std::vector<int64_t>>(&axes))
    for (int64_t& axis : *list) {
      if (axis < 0 || axis > 3) return false;
      axis = nhwc_axis(axis);
    }
  revalidate(node, operands);
  return true;
}

template <ReduceOp Op>
OpDef reduce_def(const char* name, DataTypeSet types) {
  OpDef def{name,
            {{"input", ParamKind::kOperand}},
            {{"axes", ParamKind::kUintList}, {"keepDimensions", ParamKind::kBool, false}},
            {{"input", types, 0, kAnyRank}, {"output", types, 0, kAnyRank}},
            infer_reduce,
            lower_reduce<Op>};
  def.to_nhwc = reduce_to_nhwc;
  return def;
}

}  // namespace

const OpDef& reduceL1_op() {
  static const OpDef def = reduce_def<ReduceOp::kL1>("reduceL1", kWideNumericTypes);
  return def;
}
const OpDef& reduceL2_op() {
  static const OpDef def = reduce_def<ReduceOp::kL2>("reduceL2", kFloatTypes);
  return def;
}
const OpDef& reduceLogSum_op() {
  static const OpDef def = reduce_def<ReduceOp::kLogSum>("reduceLogSum", kFloatTypes);
  return def;
}
const OpDef& reduceLogSumExp_op() {
  static const OpDef def = reduce_def<ReduceOp::kLogSumExp>("reduceLogSumExp", kFloatTypes);
  return def;
}
const OpDef& reduceMax_op() {
  static const OpDef def = with_exact_results(reduce_def<ReduceOp::kMax>("reduceMax", kAnyType));
  return def;
}
const OpDef& reduceMean_op() {
  static const OpDef def = reduce_def<ReduceOp::kMean>("reduceMean", kFloatTypes);
  return def;
}
const OpDef& reduceMin_op() {
  static const OpDef def = with_exact_results(reduce_def<ReduceOp::kMin>("reduceMin", kAnyType));
  return def;
}
const OpDef& reduceProduct_op() {
  static const OpDef def = reduce_def<ReduceOp::kProduct>("reduceProduct", kWideNumericTypes);
  return def;
}
const OpDef& reduceSum_op() {
  static const OpDef def = reduce_def<ReduceOp::kSum>("reduceSum", kWideNumericTypes);
  return def;
}
const OpDef& reduceSumSquare_op() {
  static const OpDef def = reduce_def<ReduceOp::kSumSquare>("reduceSumSquare", kWideNumericTypes);
  return def;
}

}  // namespace webnn
