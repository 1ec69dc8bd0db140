// reverse: flips the listed dims (absent axes: every dim; []: none) with negative strides.
#include "graph/op_def.h"
#include "kernels/data_movement/data_movement.h"

namespace webnn {

namespace {

// Which dims are flipped.
std::vector<bool> reversed_dims(const OpView& op) {
  const size_t rank = op.operand("input").shape.size();
  if (!op.has("axes")) return std::vector<bool>(rank, true);
  return op.axes_mask("axes", rank);
}

std::vector<OperandDescriptor> infer_reverse(const OpView& op) {
  op.keep(reversed_dims(op));
  return {op.operand("input")};
}

Kernel lower_reverse(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  const auto& input = op.operand("input");
  const std::vector<bool>& flip = op.attributes<std::vector<bool>>();
  StridedCopy c = contiguous_copy(input.shape);
  for (size_t d = 0; d < flip.size(); ++d) {
    if (!flip[d]) continue;
    c.src_offset += (int64_t(input.shape[d]) - 1) * c.src_strides[d];
    c.src_strides[d] = -c.src_strides[d];
  }
  return make_strided_copy_kernel(input.data_type, {c});
}

}  // namespace

const OpDef& reverse_op() {
  static const OpDef def = with_exact_results(OpDef{"reverse",
                                                    {{"input", ParamKind::kOperand}},
                                                    {{"axes", ParamKind::kUintList}},
                                                    {{"input", kAnyType, 0, kAnyRank}, {"output", kAnyType, 0, kAnyRank}},
                                                    infer_reverse,
                                                    lower_reverse});
  return def;
}

}  // namespace webnn
