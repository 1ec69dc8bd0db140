// gather, gatherElements, gatherND: read input elements at positions taken from an index tensor.
// Index values are normalized by the kernels (negative: + dim size; then clamped into range).
#include "graph/op_def.h"
#include "kernels/gather_scatter/gather_scatter.h"

namespace webnn {

namespace {

// input.shape[:axis] ++ indices.shape ++ input.shape[axis+1:].
std::vector<OperandDescriptor> infer_gather(const OpView& op) {
  const auto& input = op.operand("input");
  const auto& indices = op.operand("indices");
  const size_t axis = op.axis("axis", op.operand("input").shape.size());
  op.keep(ValidatedAxis{axis});
  std::vector<uint32_t> shape(input.shape.begin(), input.shape.begin() + axis);
  shape.insert(shape.end(), indices.shape.begin(), indices.shape.end());
  shape.insert(shape.end(), input.shape.begin() + axis + 1, input.shape.end());
  if (shape.size() > kMaxRank) op.fail(str_cat("the output rank ", shape.size(), " exceeds ", kMaxRank));
  return {{input.data_type, shape}};
}

Kernel lower_gather(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  const auto& indices = op.operand("indices");
  return make_gather_kernel(outputs[0].data_type, indices.data_type,
                            split_at_axis(op.operand("input").shape, op.attributes<ValidatedAxis>().axis),
                            indices.element_count());
}

// The output has the indices' shape, which matches the input's except along the axis.
std::vector<OperandDescriptor> infer_gather_elements(const OpView& op) {
  const auto& input = op.operand("input");
  const auto& indices = op.operand("indices");
  const size_t axis = op.axis("axis", op.operand("input").shape.size());
  if (indices.shape.size() != input.shape.size())
    op.fail(str_cat("indices has rank ", indices.shape.size(), " but the input has rank ", input.shape.size()));
  for (size_t d = 0; d < input.shape.size(); ++d)
    if (d != axis && indices.shape[d] != input.shape[d])
      op.fail(str_cat("indices shape ", shape_to_string(indices.shape), " differs from the input shape ",
                      shape_to_string(input.shape), " outside axis ", axis));
  op.keep(ValidatedAxis{axis});
  return {{input.data_type, indices.shape}};
}

Kernel lower_gather_elements(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  const auto& indices = op.operand("indices");
  const size_t axis = op.attributes<ValidatedAxis>().axis;
  return make_gather_elements_kernel(outputs[0].data_type, indices.data_type,
                                     split_at_axis(op.operand("input").shape, axis), indices.shape[axis]);
}

// indices.shape[:-1] ++ input.shape[k:], k = indices.shape[-1].
std::vector<OperandDescriptor> infer_gather_nd(const OpView& op) {
  const auto& input = op.operand("input");
  const auto& indices = op.operand("indices");
  const size_t k = indices.shape.back();
  if (k > input.shape.size())
    op.fail(str_cat("the last dim of indices (", k, ") exceeds the input rank ", input.shape.size()));
  std::vector<uint32_t> shape(indices.shape.begin(), indices.shape.end() - 1);
  shape.insert(shape.end(), input.shape.begin() + k, input.shape.end());
  if (shape.size() > kMaxRank) op.fail(str_cat("the output rank ", shape.size(), " exceeds ", kMaxRank));
  return {{input.data_type, shape}};
}

Kernel lower_gather_nd(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  const auto& indices = op.operand("indices");
  const size_t k = indices.shape.back();
  return make_gather_nd_kernel(outputs[0].data_type, indices.data_type, op.operand("input").shape, k,
                               indices.element_count() / k);
}

}  // namespace

// A 1-D input with 0-D indices gives a 0-D output, so gather's output rank starts at 0.
const OpDef& gather_op() {
  static const OpDef def = with_exact_results(OpDef{"gather",
                                                    {{"input", ParamKind::kOperand}, {"indices", ParamKind::kOperand}},
                                                    {{"axis", ParamKind::kUint, int64_t(0)}},
                                                    {{"input", kAnyType, 1, kAnyRank},
                                                     {"indices", kIndexTypes, 0, kAnyRank},
                                                     {"output", kAnyType, 0, kAnyRank}},
                                                    infer_gather,
                                                    lower_gather});
  return def;
}

const OpDef& gatherElements_op() {
  static const OpDef def = with_exact_results(OpDef{"gatherElements",
                                                    {{"input", ParamKind::kOperand}, {"indices", ParamKind::kOperand}},
                                                    {{"axis", ParamKind::kUint, int64_t(0)}},
                                                    {{"input", kAnyType, 1, kAnyRank},
                                                     {"indices", kIndexTypes, 1, kAnyRank},
                                                     {"output", kAnyType, 1, kAnyRank}},
                                                    infer_gather_elements,
                                                    lower_gather_elements});
  return def;
}

const OpDef& gatherND_op() {
  static const OpDef def = with_exact_results(OpDef{"gatherND",
                                                    {{"input", ParamKind::kOperand}, {"indices", ParamKind::kOperand}},
                                                    {},
                                                    {{"input", kAnyType, 1, kAnyRank},
                                                     {"indices", kIndexTypes, 1, kAnyRank},
                                                     {"output", kAnyType, 0, kAnyRank}},
                                                    infer_gather_nd,
                                                    lower_gather_nd});
  return def;
}

}  // namespace webnn
