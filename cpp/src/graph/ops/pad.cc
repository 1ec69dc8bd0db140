// pad: grows each dim by beginningPadding/endingPadding, filled per mode (constant, edge,
// reflection). The "symmetric" mode of older drafts is not in the spec's MLPaddingMode.
#include "graph/op_def.h"
#include "kernels/data_movement/data_movement.h"

namespace webnn {

namespace {

PadMode pad_mode(const OpView& op) {
  const std::string& mode = op.text("mode");
  if (mode == "edge") return PadMode::kEdge;
  if (mode == "reflection") return PadMode::kReflection;
  return PadMode::kConstant;
}

std::vector<OperandDescriptor> infer_pad(const OpView& op) {
  const auto& input = op.operand("input");
  const size_t rank = input.shape.size();
  const auto& begin = op.integers("beginningPadding");
  const auto& end = op.integers("endingPadding");
  if (begin.size() != rank)
    op.fail(str_cat("beginningPadding has ", begin.size(), " items but the input rank is ", rank));
  if (end.size() != rank) op.fail(str_cat("endingPadding has ", end.size(), " items but the input rank is ", rank));
  const bool reflection = pad_mode(op) == PadMode::kReflection;
  std::vector<uint32_t> shape(rank);
  for (size_t d = 0; d < rank; ++d) {
    if (reflection && (begin[d] >= input.shape[d] || end[d] >= input.shape[d]))
      op.fail(str_cat("reflection padding of dim ", d, " (", begin[d], ", ", end[d],
                      ") must be smaller than the input size ", input.shape[d]));
    const int64_t size = begin[d] + int64_t(input.shape[d]) + end[d];
    if (uint64_t(size) > kMaxDimension) op.fail(str_cat("the padded size of dim ", d, " exceeds 2^31-1"));
    shape[d] = uint32_t(size);
  }
  return {{input.data_type, shape}};
}

Kernel lower_pad(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  const auto& input = op.operand("input");
  return make_pad_kernel(input.data_type, input.shape, op.integers("beginningPadding"), op.integers("endingPadding"),
                         pad_mode(op), op.number("value"));
}

}  // namespace

const OpDef& pad_op() {
  static const OpDef def = with_exact_results(OpDef{"pad",
                                                    {{"input", ParamKind::kOperand},
                                                     {"beginningPadding", ParamKind::kUintList},
                                                     {"endingPadding", ParamKind::kUintList}},
                                                    {{"mode", ParamKind::kEnum, std::string("constant"), {"constant", "edge", "reflection"}},
                                                     {"value", ParamKind::kNumber, Number::from_int(0)}},
                                                    {{"input", kAnyType, 0, kAnyRank}, {"output", kAnyType, 0, kAnyRank}},
                                                    infer_pad,
                                                    lower_pad});
  return def;
}

}  // namespace webnn
