// cumulativeSum: running sums along one axis, optionally exclusive and/or reversed.
#include "graph/op_def.h"
#include "kernels/reduce/reduce.h"

namespace webnn {

namespace {

constexpr DataTypeSet kCumulativeSumTypes = kFloatTypes | type_bit(DataType::kInt32) | type_bit(DataType::kUint32) |
                                            type_bit(DataType::kInt64) | type_bit(DataType::kUint64);

std::vector<OperandDescriptor> infer_cumulative_sum(const OpView& op) {
  const auto& input = op.operand("input");
  op.axis("axis", input.shape.size());
  return {input};
}

Kernel lower_cumulative_sum(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  return make_cumulative_sum_kernel(outputs[0].data_type, split_at_axis(outputs[0].shape, size_t(op.integer("axis"))),
                                    op.flag("exclusive"), op.flag("reversed"));
}

}  // namespace

const OpDef& cumulativeSum_op() {
  // `axis` has no [EnforceRange]: it wraps modulo 2^32.
  static const OpDef def{"cumulativeSum",
                         {{"input", ParamKind::kOperand}, {"axis", ParamKind::kUintWrap}},
                         {{"exclusive", ParamKind::kBool, false}, {"reversed", ParamKind::kBool, false}},
                         {{"input", kCumulativeSumTypes, 1, kAnyRank}, {"output", kCumulativeSumTypes, 1, kAnyRank}},
                         infer_cumulative_sum,
                         lower_cumulative_sum};
  return def;
}

}  // namespace webnn
