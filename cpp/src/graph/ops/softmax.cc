// softmax: exp(x - max) / sum(exp(x - max)) along one axis.
#include "graph/op_def.h"
#include "kernels/reduce/reduce.h"

namespace webnn {

namespace {

std::vector<OperandDescriptor> infer_softmax(const OpView& op) {
  const auto& input = op.operand("input");
  op.axis("axis", input.shape.size());
  return {input};
}

Kernel lower_softmax(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  return make_softmax_kernel(outputs[0].data_type, split_at_axis(outputs[0].shape, size_t(op.integer("axis"))));
}

}  // namespace

const OpDef& softmax_op() {
  static const OpDef def{"softmax",
                         {{"input", ParamKind::kOperand}, {"axis", ParamKind::kUint}},
                         {},
                         {{"input", kFloatTypes, 1, kAnyRank}, {"output", kFloatTypes, 1, kAnyRank}},
                         infer_softmax,
                         lower_softmax};
  return def;
}

}  // namespace webnn
