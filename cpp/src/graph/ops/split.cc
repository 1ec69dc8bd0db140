// split: cuts a tensor along an axis into equal parts (a count) or given sizes (a list).
#include "graph/op_def.h"
#include "kernels/data_movement/data_movement.h"

namespace webnn {

namespace {

constexpr int64_t kMaxSplits = 8192;

// The size of each part along the axis.
std::vector<uint32_t> split_sizes(const OpView& op) {
  const auto& input = op.operand("input");
  const size_t axis = op.axis("axis", input.shape.size());
  const uint32_t dim = input.shape[axis];
  const Attr& splits = op.attr("splits");
  if (auto* count = std::get_if<int64_t>(&splits)) {
    if (*count < 1 || *count > kMaxSplits) op.fail(str_cat("splits must be in [1, ", kMaxSplits, "], got ", *count));
    if (dim % *count != 0)
      op.fail(str_cat("the input size along axis ", axis, " (", dim, ") is not divisible by splits (", *count, ")"));
    return std::vector<uint32_t>(size_t(*count), uint32_t(dim / *count));
  }
  const auto& sizes = std::get<std::vector<int64_t>>(splits);
  if (sizes.empty() || int64_t(sizes.size()) > kMaxSplits)
    op.fail(str_cat("splits must have 1 to ", kMaxSplits, " items, got ", sizes.size()));
  uint64_t sum = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 0) op.fail(str_cat("splits[", i, "] is 0"));
    sum += uint64_t(sizes[i]);
  }
  if (sum != dim)
    op.fail(str_cat("splits sum to ", sum, " but the input size along axis ", axis, " is ", dim));
  return std::vector<uint32_t>(sizes.begin(), sizes.end());
}

std::vector<OperandDescriptor> infer_split(const OpView& op) {
  const auto& input = op.operand("input");
  const size_t axis = size_t(op.integer("axis"));
  std::vector<OperandDescriptor> outputs;
  for (uint32_t size : split_sizes(op)) {
    OperandDescriptor d = input;
    d.shape[axis] = size;
    outputs.push_back(std::move(d));
  }
  return outputs;
}

Kernel lower_split(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  const auto& input = op.operand("input");
  const size_t axis = size_t(op.integer("axis"));
  const std::vector<int64_t> in_strides = row_major_strides(input.shape);
  std::vector<StridedCopy> copies;
  int64_t offset = 0;
  for (size_t k = 0; k < outputs.size(); ++k) {
    StridedCopy c = contiguous_copy(outputs[k].shape);
    c.output = int(k);
    c.src_strides = in_strides;
    c.src_offset = offset * in_strides[axis];
    offset += outputs[k].shape[axis];
    copies.push_back(std::move(c));
  }
  return make_strided_copy_kernel(input.data_type, std::move(copies));
}

}  // namespace

const OpDef& split_op() {
  static const OpDef def = [] {
    OpDef d{"split",
            {{"input", ParamKind::kOperand}, {"splits", ParamKind::kUintOrUintList}},
            {{"axis", ParamKind::kUint, int64_t(0)}},
            {{"input", kAnyType, 1, kAnyRank}, {"outputs", kAnyType, 1, kAnyRank}},
            infer_split,
            lower_split,
            0};
    d.pieces_layout = [](const OpView& op) {
      return pieces_along_axis(PiecesLayout::Kind::kOutputsInInput, op.operand("input"),
                               size_t(op.integer("axis")), split_sizes(op));
    };
    d.to_nhwc = to_nhwc_along_axis;
    d.exact_results = always_exact;
    return d;
  }();
  return def;
}

}  // namespace webnn
