// OpDef helpers shared by the unary-shaped ops (same shape and data type as "input"): validation
// and lowering onto the unary kernel family.
#pragma once
#include "graph/op_def.h"
#include "kernels/unary/unary.h"

namespace webnn {

inline std::vector<OperandDescriptor> infer_same_as_input(const OpView& op) { return {op.operand("input")}; }

// Reads the optional alpha/beta options of `op` and casts them to `type` (CR-scalars).
UnaryParams unary_params(const OpView& op, DataType type);

template <UnaryOp Op>
Kernel lower_unary(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  DataType type = outputs[0].data_type;
  return make_unary_kernel(Op, type, outputs[0].element_count(), unary_params(op, type));
}

template <UnaryOp Op>
OpDef unary_op_def(const char* name, DataTypeSet types, std::vector<ParamSpec> options = {}) {
  OpDef def{name,
            {{"input", ParamKind::kOperand}},
            std::move(options),
            {{"input", types, 0, kAnyRank}, {"output", types, 0, kAnyRank}},
            infer_same_as_input,
            lower_unary<Op>};
  def.element_wise = true;
  def.chain_step = [](const OpView& op, ChainStep& step) {
    step.kind = ChainStep::Kind::kUnary;
    step.unary = Op;
    step.params = unary_params(op, DataType::kFloat32);
    return true;
  };
  if constexpr (Op == UnaryOp::kAbs || Op == UnaryOp::kCeil || Op == UnaryOp::kFloor || Op == UnaryOp::kNeg ||
                Op == UnaryOp::kRelu || Op == UnaryOp::kRoundEven || Op == UnaryOp::kSign)
    def.exact_results = always_exact;  // input values, or integers no larger
  if constexpr (Op != UnaryOp::kRelu) {  // relu is absorbed as a clamp
    def.epilogue_role = EpilogueRole::kActivation;
    def.fused_activation = [](const OpView& op) {
      return FusedActivation{true, Op, unary_params(op, DataType::kFloat32)};
    };
  }
  return def;
}

}  // namespace webnn
