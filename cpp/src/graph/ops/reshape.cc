// reshape: a view with a new shape; never moves data.
#include "graph/op_def.h"

namespace webnn {

namespace {

std::vector<OperandDescriptor> infer_reshape(const OpView& op) {
  const auto& input = op.operand("input");
  std::vector<uint32_t> shape;
  uint64_t count = 1;
  for (int64_t d : op.integers("newShape")) {
    if (d == 0 || uint64_t(d) > kMaxDimension) op.fail(str_cat("newShape has an invalid dimension ", d));
    count *= uint64_t(d);
    if (count > kMaxDimension) op.fail("newShape has more than 2^31-1 elements");
    shape.push_back(uint32_t(d));
  }
  if (shape.size() > kMaxRank) op.fail(str_cat("newShape has rank ", shape.size(), ", above the maximum ", kMaxRank));
  if (count != input.element_count())
    op.fail(str_cat("newShape ", shape_to_string(shape), " has ", count, " elements but the input ",
                    shape_to_string(input.shape), " has ", input.element_count()));
  return {{input.data_type, shape}};
}

}  // namespace

const OpDef& reshape_op() {
  static const OpDef def = with_exact_results(OpDef{"reshape",
                                                    {{"input", ParamKind::kOperand}, {"newShape", ParamKind::kUintList, {}, {}, true}},
                                                    {},
                                                    {{"input", kAnyType, 0, kAnyRank}, {"output", kAnyType, 0, kAnyRank}},
                                                    infer_reshape,
                                                    nullptr,
                                                    1,
                                                    true});
  return def;
}

}  // namespace webnn
