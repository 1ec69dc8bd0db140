// transpose: permutes the dims (default: reversed). The output shape is the permuted one
// (the spec text copies the input shape unpermuted, a known defect).
#include "graph/op_def.h"
#include "kernels/data_movement/data_movement.h"

namespace webnn {

namespace {

std::vector<int64_t> permutation(const OpView& op) {
  const size_t rank = op.operand("input").shape.size();
  if (!op.has("permutation")) {
    std::vector<int64_t> reversed(rank);
    for (size_t i = 0; i < rank; ++i) reversed[i] = int64_t(rank - 1 - i);
    return reversed;
  }
  const auto& perm = op.integers("permutation");
  if (perm.size() != rank) op.fail(str_cat("permutation has ", perm.size(), " items but the input rank is ", rank));
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < rank; ++i) {
    if (uint64_t(perm[i]) >= rank) op.fail(str_cat("permutation[", i, "] = ", perm[i], " is not less than the rank ", rank));
    if (seen[perm[i]]) op.fail(str_cat("permutation has the value ", perm[i], " twice"));
    seen[perm[i]] = true;
  }
  return perm;
}

std::vector<OperandDescriptor> infer_transpose(const OpView& op) {
  const auto& input = op.operand("input");
  const std::vector<int64_t> perm = permutation(op);
  op.keep(perm);
  std::vector<uint32_t> shape(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) shape[i] = input.shape[perm[i]];
  return {{input.data_type, shape}};
}

Kernel lower_transpose(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  const auto& input = op.operand("input");
  const std::vector<int64_t>& perm = op.attributes<std::vector<int64_t>>();
  const std::vector<int64_t> in_strides = row_major_strides(input.shape);
  StridedCopy c = contiguous_copy(outputs[0].shape);
  for (size_t i = 0; i < perm.size(); ++i) c.src_strides[i] = in_strides[perm[i]];
  return make_strided_copy_kernel(input.data_type, {c});
}

}  // namespace

const OpDef& transpose_op() {
  static const OpDef def = with_exact_results(OpDef{"transpose",
                                                    {{"input", ParamKind::kOperand}},
                                                    {{"permutation", ParamKind::kUintList}},
                                                    {{"input", kAnyType, 0, kAnyRank}, {"output", kAnyType, 0, kAnyRank}},
                                                    infer_transpose,
                                                    lower_transpose});
  return def;
}

}  // namespace webnn
