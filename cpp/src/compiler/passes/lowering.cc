// Lowering: each live node, or fused group, becomes one step of the plan running its kernel, in
// topological order. A node fused with an add runs at the add's position (where the addend exists).
#include "compiler/passes.h"
#include "kernels/unary/unary.h"

namespace webnn {

namespace {

// The kernel, then its float32 results rounded to float16 values (a step computing float16 values
// held in float32 whose kernel cannot round in its epilogue).
Kernel rounding_to_halves(Kernel kernel, const std::vector<OperandDescriptor>& outputs) {
  std::vector<size_t> counts;
  for (const OperandDescriptor& out : outputs)
    counts.push_back(out.data_type == DataType::kFloat32 ? out.element_count() : 0);
  return [kernel = std::move(kernel), counts](const KernelArgs& args) {
    kernel(args);
    for (size_t i = 0; i < counts.size(); ++i)
      if (counts[i]) round_to_halves(static_cast<float*>(args.outputs[i]), counts[i], args.pool);
  };
}

}  // namespace

void lower_to_kernels(CompileState& state) {
  const GraphIR& ir = state.graph;
  if (state.fusion.empty()) state.fusion.assign(ir.nodes.size(), NodeFusion{});  // epilogue_fusion disabled
  const std::vector<NodeFusion>& fusion = state.fusion;
  Plan& plan = *state.plan;
  const size_t operand_count = ir.operands.size();
  state.alias_root.resize(operand_count);
  for (size_t i = 0; i < operand_count; ++i) state.alias_root[i] = int(i);
  state.read_at_run_time.assign(operand_count, false);
  // What a step may read: graph inputs, constants and what earlier steps write. A pass that left a
  // step reading anything else is a compiler bug: it fails the build instead of reaching a kernel.
  std::vector<bool> ready(operand_count, false);
  for (size_t i = 0; i < operand_count; ++i)
    ready[i] = ir.operands[i].kind != OperandInfo::Kind::kIntermediate || ir.operands[i].constant_data != nullptr;

  // Steps computing float16 values held in float32: a node that rounds, or one absorbing such a node.
  std::vector<bool> rounds(ir.nodes.size(), false);
  for (size_t n = 0; n < ir.nodes.size(); ++n)
    if (state.live_node[n] && ir.nodes[n].rounds_to_half) rounds[fusion[n].runs_in >= 0 ? size_t(fusion[n].runs_in) : n] = true;

  for (size_t position = 0; position < ir.nodes.size(); ++position) {
    if (!state.live_node[position]) continue;
    size_t n = position;
    if (fusion[position].runs_in >= 0) {
      const int owner = fusion[position].runs_in;
      if (fusion[owner].emit_at != int(position)) continue;  // runs inside its producer's step
      n = size_t(owner);
    } else if (fusion[position].emit_at >= 0) {
      continue;  // runs later, at its absorbed add
    }
    const Node& node = ir.nodes[n];
    const NodeFusion& fused = fusion[n];
    Step step{{}, node.inputs, node.outputs, node.def, node.label, node.absorbed_ops, int(n)};
    step.fused.insert(step.fused.end(), fused.absorbed_ops.begin(), fused.absorbed_ops.end());
    if (fused.output >= 0) step.outputs = {fused.output};
    if (fused.addend >= 0) step.inputs.push_back(fused.addend);
    if (fused.untransposed_input >= 0) step.inputs[0] = fused.untransposed_input;
    for (int in : step.inputs)
      if (!ready[size_t(in)])
        throw_error(ErrorKind::kUnknownError, str_cat("internal: step '", node.label, "' (", node.def->name,
                                                      ") reads a value that no earlier step writes"));
    for (int out : step.outputs) ready[size_t(out)] = true;
    std::vector<bool> copied(step.inputs.size(), false);
    if (node.def->is_view) {
      state.alias_root[node.outputs[0]] = state.alias_root[node.inputs[0]];
    } else {
      OpView view(node, ir.operands);
      Epilogue epilogue = fused.epilogue;
      view.set_epilogue(epilogue);
      view.set_input_untransposed(fused.untransposed_input >= 0);
      // Rounding to float16 values: in the epilogue where the kernel runs an activation (while each
      // tile is in cache), else over the results once the kernel is done.
      bool round_after = rounds[n];
      if (round_after && node.def->epilogue_support &&
          (node.def->epilogue_support(view) & (kEpilogueActivation | kEpilogueRoundToHalf))) {
        epilogue.activation.round_to_half = true;
        view.set_epilogue(epilogue);
        round_after = false;
      }
      std::vector<OperandDescriptor> out_descs;
      for (int o : step.outputs) out_descs.push_back(ir.operands[o].desc);
      step.kernel = node.def->lower(view, out_descs);
      if (round_after) step.kernel = rounding_to_halves(std::move(step.kernel), out_descs);
      if (rounds[n]) step.fused.push_back("roundToFloat16");
      for (int k : view.copied_constants())
        if (k >= 0) copied[size_t(k)] = true;
    }
    for (size_t k = 0; k < step.inputs.size(); ++k)
      if (!copied[k]) state.read_at_run_time[size_t(state.alias_root[step.inputs[k]])] = true;
    plan.steps.push_back(std::move(step));
  }
  size_t kernels = 0;
  for (const Step& step : plan.steps) kernels += bool(step.kernel);
  state.log("lowering", str_cat(kernels, " kernels, ", plan.steps.size() - kernels, " views"));
}

}  // namespace webnn
