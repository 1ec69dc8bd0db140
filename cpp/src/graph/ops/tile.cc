// tile: repeats the whole tensor along each dim (numpy.tile), as one strided copy in which
// every dim d splits into (repetition, element) with a 0 source stride on the repetition.
#include "graph/op_def.h"
#include "kernels/data_movement/data_movement.h"

namespace webnn {

namespace {

std::vector<OperandDescriptor> infer_tile(const OpView& op) {
  const auto& input = op.operand("input");
  const auto& reps = op.integers("repetitions");
  if (reps.size() != input.shape.size())
    op.fail(str_cat("repetitions has ", reps.size(), " items but the input rank is ", input.shape.size()));
  std::vector<uint32_t> shape(reps.size());
  for (size_t d = 0; d < reps.size(); ++d) {
    if (reps[d] == 0) op.fail(str_cat("repetitions[", d, "] is 0"));
    const uint64_t size = uint64_t(input.shape[d]) * uint64_t(reps[d]);
    if (size > kMaxDimension) op.fail(str_cat("the tiled size of dim ", d, " exceeds 2^31-1"));
    shape[d] = uint32_t(size);
  }
  return {{input.data_type, shape}};
}

Kernel lower_tile(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  const auto& input = op.operand("input");
  const auto& reps = op.integers("repetitions");
  const std::vector<int64_t> in_strides = row_major_strides(input.shape);
  const std::vector<int64_t> out_strides = row_major_strides(outputs[0].shape);
  StridedCopy c;
  for (size_t d = 0; d < reps.size(); ++d) {
    const int64_t n = input.shape[d];
    c.shape.insert(c.shape.end(), {reps[d], n});
    c.src_strides.insert(c.src_strides.end(), {0, in_strides[d]});
    c.dst_strides.insert(c.dst_strides.end(), {n * out_strides[d], out_strides[d]});
  }
  return make_strided_copy_kernel(input.data_type, {c});
}

}  // namespace

const OpDef& tile_op() {
  static const OpDef def = with_exact_results(OpDef{"tile",
                                                    {{"input", ParamKind::kOperand}, {"repetitions", ParamKind::kUintWrapList}},
                                                    {},
                                                    {{"input", kAnyType, 0, kAnyRank}, {"output", kAnyType, 0, kAnyRank}},
                                                    infer_tile,
                                                    lower_tile});
  return def;
}

}  // namespace webnn
