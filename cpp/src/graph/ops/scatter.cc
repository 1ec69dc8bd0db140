// scatterElements, scatterND: a copy of the input with elements/slices replaced by updates at
// positions taken from an index tensor. Index values are normalized (negative: + dim size, then
// clamped into range) and updates apply in order: for duplicate targets the last write wins.
#include "graph/op_def.h"
#include "kernels/gather_scatter/gather_scatter.h"

namespace webnn {

namespace {

std::vector<OperandDescriptor> infer_scatter_elements(const OpView& op) {
  const auto& input = op.operand("input");
  const auto& indices = op.operand("indices");
  const auto& updates = op.operand("updates");
  const size_t axis = op.axis("axis", op.operand("input").shape.size());
  if (indices.shape.size() != input.shape.size())
    op.fail(str_cat("indices has rank ", indices.shape.size(), " but the input has rank ", input.shape.size()));
  for (size_t d = 0; d < input.shape.size(); ++d)
    if (d != axis && indices.shape[d] != input.shape[d])
      op.fail(str_cat("indices shape ", shape_to_string(indices.shape), " differs from the input shape ",
                      shape_to_string(input.shape), " outside axis ", axis));
  if (updates.shape != indices.shape)
    op.fail(str_cat("updates shape ", shape_to_string(updates.shape), " differs from the indices shape ",
                    shape_to_string(indices.shape)));
  op.keep(ValidatedAxis{axis});
  return {input};
}

Kernel lower_scatter_elements(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  const auto& indices = op.operand("indices");
  const size_t axis = op.attributes<ValidatedAxis>().axis;
  return make_scatter_elements_kernel(outputs[0].data_type, indices.data_type,
                                      split_at_axis(outputs[0].shape, axis), indices.shape[axis]);
}

// updates must have the shape indices.shape[:-1] ++ input.shape[k:], k = indices.shape[-1].
std::vector<OperandDescriptor> infer_scatter_nd(const OpView& op) {
  const auto& input = op.operand("input");
  const auto& indices = op.operand("indices");
  const auto& updates = op.operand("updates");
  const size_t k = indices.shape.back();
  if (k > input.shape.size())
    op.fail(str_cat("the last dim of indices (", k, ") exceeds the input rank ", input.shape.size()));
  std::vector<uint32_t> expected(indices.shape.begin(), indices.shape.end() - 1);
  expected.insert(expected.end(), input.shape.begin() + k, input.shape.end());
  if (updates.shape != expected)
    op.fail(str_cat("updates has shape ", shape_to_string(updates.shape), " but must have shape ",
                    shape_to_string(expected)));
  return {input};
}

Kernel lower_scatter_nd(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  const auto& indices = op.operand("indices");
  const size_t k = indices.shape.back();
  return make_scatter_nd_kernel(outputs[0].data_type, indices.data_type, outputs[0].shape, k,
                                indices.element_count() / k);
}

}  // namespace

const OpDef& scatterElements_op() {
  static const OpDef def = with_exact_results(OpDef{"scatterElements",
                                                    {{"input", ParamKind::kOperand},
                                                     {"indices", ParamKind::kOperand},
                                                     {"updates", ParamKind::kOperand}},
                                                    {{"axis", ParamKind::kUint, int64_t(0)}},
                                                    {{"input", kAnyType, 1, kAnyRank},
                                                     {"indices", kIndexTypes, 1, kAnyRank},
                                                     {"updates", kAnyType, 1, kAnyRank, "input"},
                                                     {"output", kAnyType, 1, kAnyRank}},
                                                    infer_scatter_elements,
                                                    lower_scatter_elements});
  return def;
}

const OpDef& scatterND_op() {
  static const OpDef def = with_exact_results(OpDef{"scatterND",
                                                    {{"input", ParamKind::kOperand},
                                                     {"indices", ParamKind::kOperand},
                                                     {"updates", ParamKind::kOperand}},
                                                    {},
                                                    {{"input", kAnyType, 1, kAnyRank},
                                                     {"indices", kIndexTypes, 1, kAnyRank},
                                                     {"updates", kAnyType, 0, kAnyRank, "input"},
                                                     {"output", kAnyType, 1, kAnyRank}},
                                                    infer_scatter_nd,
                                                    lower_scatter_nd});
  return def;
}

}  // namespace webnn
