// cast: converts every element to `dataType` (any pair of the 8 data types). The conversion
// rules, including the implementation-defined float -> integer cases, are in
// kernels/unary/unary_impl.h.
#include "graph/op_def.h"
#include "kernels/unary/unary.h"

namespace webnn {

namespace {

std::vector<OperandDescriptor> infer_cast(const OpView& op) {
  return {{op.data_type("dataType"), op.operand("input").shape}};
}

Kernel lower_cast(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  const DataType from = op.operand("input").data_type, to = outputs[0].data_type;
  if (op.epilogue().activation.round_to_half)  // float32 to float16 values held in float32: one pass
    return make_unary_kernel(UnaryOp::kRoundToHalf, DataType::kFloat32, outputs[0].element_count());
  return make_cast_kernel(from, to, outputs[0].element_count());
}

}  // namespace

const OpDef& cast_op() {
  static const OpDef def = [] {
    OpDef d{"cast",
            {{"input", ParamKind::kOperand}, {"dataType", ParamKind::kDataType}},
            {},
            {{"input", kAnyType, 0, kAnyRank}, {"output", kAnyType, 0, kAnyRank}},
            infer_cast,
            lower_cast};
    // float32 -> float32 (a float16 cast held in float32) rounds in its one pass.
    d.epilogue_support = [](const OpView& op) {
      return op.operand("input").data_type == DataType::kFloat32 && op.data_type("dataType") == DataType::kFloat32
                 ? uint32_t(kEpilogueRoundToHalf)
                 : uint32_t(kEpilogueNone);
    };
    // From float16, every float result is the input's value.
    d.exact_results = [](const OpView& op) { return op.operand("input").data_type == DataType::kFloat16; };
    return d;
  }();
  return def;
}

}  // namespace webnn
