// expand: unidirectional broadcast of the input to newShape (a strided copy with 0 strides).
#include "graph/op_def.h"
#include "kernels/data_movement/data_movement.h"

namespace webnn {

namespace {

std::vector<OperandDescriptor> infer_expand(const OpView& op) {
  const auto& input = op.operand("input");
  const auto& new_shape = op.integers("newShape");
  if (new_shape.size() > kMaxRank) op.fail(str_cat("newShape has rank ", new_shape.size(), ", above ", kMaxRank));
  std::vector<uint32_t> shape;
  for (size_t i = 0; i < new_shape.size(); ++i) {
    if (new_shape[i] == 0 || uint64_t(new_shape[i]) > kMaxDimension)
      op.fail(str_cat("newShape[", i, "] = ", new_shape[i], " is not a valid dimension"));
    shape.push_back(uint32_t(new_shape[i]));
  }
  if (!broadcastable_to(input.shape, shape))
    op.fail(str_cat("the input shape ", shape_to_string(input.shape), " does not broadcast to newShape ",
                    shape_to_string(shape)));
  return {{input.data_type, shape}};
}

Kernel lower_expand(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  const auto& input = op.operand("input");
  const auto& out_shape = outputs[0].shape;
  StridedCopy c = contiguous_copy(out_shape);
  const std::vector<size_t> strides = broadcast_strides(input.shape, out_shape.size());
  c.src_strides.assign(strides.begin(), strides.end());
  return make_strided_copy_kernel(input.data_type, {c});
}

}  // namespace

const OpDef& expand_op() {
  static const OpDef def = with_exact_results(OpDef{"expand",
                                                    {{"input", ParamKind::kOperand}, {"newShape", ParamKind::kUintList, {}, {}, true}},
                                                    {},
                                                    {{"input", kAnyType, 0, kAnyRank}, {"output", kAnyType, 0, kAnyRank}},
                                                    infer_expand,
                                                    lower_expand});
  return def;
}

}  // namespace webnn
