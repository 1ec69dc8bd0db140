// slice: a strided window of the input (starts, sizes in input elements, optional strides).
#include "graph/op_def.h"
#include "kernels/data_movement/data_movement.h"

namespace webnn {

namespace {

std::vector<int64_t> slice_strides(const OpView& op, size_t rank) {
  return op.has("strides") ? op.integers("strides") : std::vector<int64_t>(rank, 1);
}

std::vector<OperandDescriptor> infer_slice(const OpView& op) {
  const auto& input = op.operand("input");
  const size_t rank = input.shape.size();
  const auto& starts = op.integers("starts");
  const auto& sizes = op.integers("sizes");
  if (starts.size() != rank) op.fail(str_cat("starts has ", starts.size(), " items but the input rank is ", rank));
  if (sizes.size() != rank) op.fail(str_cat("sizes has ", sizes.size(), " items but the input rank is ", rank));
  if (op.has("strides") && op.integers("strides").size() != rank)
    op.fail(str_cat("strides has ", op.integers("strides").size(), " items but the input rank is ", rank));
  const std::vector<int64_t> strides = slice_strides(op, rank);
  std::vector<uint32_t> shape(rank);
  for (size_t d = 0; d < rank; ++d) {
    if (sizes[d] == 0) op.fail(str_cat("sizes[", d, "] is 0"));
    if (strides[d] < 1) op.fail(str_cat("strides[", d, "] must be at least 1"));
    if (starts[d] + sizes[d] > int64_t(input.shape[d]))
      op.fail(str_cat("starts[", d, "] + sizes[", d, "] (", starts[d], " + ", sizes[d], ") exceeds the input size ",
                      input.shape[d]));
    shape[d] = uint32_t((sizes[d] + strides[d] - 1) / strides[d]);
  }
  op.keep(strides);
  return {{input.data_type, shape}};
}

Kernel lower_slice(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  const auto& input = op.operand("input");
  const auto& starts = op.integers("starts");
  const std::vector<int64_t>& strides = op.attributes<std::vector<int64_t>>();
  const std::vector<int64_t> in_strides = row_major_strides(input.shape);
  StridedCopy c = contiguous_copy(outputs[0].shape);
  for (size_t d = 0; d < in_strides.size(); ++d) {
    c.src_offset += starts[d] * in_strides[d];
    c.src_strides[d] = strides[d] * in_strides[d];
  }
  return make_strided_copy_kernel(input.data_type, {c});
}

}  // namespace

const OpDef& slice_op() {
  static const OpDef def = with_exact_results(OpDef{"slice",
                                                    {{"input", ParamKind::kOperand},
                                                     {"starts", ParamKind::kUintList},
                                                     {"sizes", ParamKind::kUintList}},
                                                    {{"strides", ParamKind::kUintList}},
                                                    {{"input", kAnyType, 0, kAnyRank}, {"output", kAnyType, 0, kAnyRank}},
                                                    infer_slice,
                                                    lower_slice});
  return def;
}

}  // namespace webnn
