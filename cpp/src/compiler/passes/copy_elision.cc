// Copy elision: an op that only moves whole contiguous pieces (OpDef::pieces_layout: concat with
// size-1 dimensions before its axis, split likewise) runs no kernel. A concat's producers write
// straight into their slices of its output; a split's outputs are read in place from its input.
// Each such operand is placed at a byte offset inside a root operand, whose storage the memory plan
// keeps alive for all of them; the executor points at the pieces when a run starts.
#include <algorithm>
#include <set>

#include "compiler/passes.h"

namespace webnn {

namespace {

struct Elider {
  CompileState& state;
  std::vector<int> producer_step;  // per operand: the step whose kernel writes it, -1: none
  std::vector<int> parent;         // per operand: the operand it is placed in, -1: none
  std::vector<size_t> offset;      // its byte offset there

  int root(int id) const {
    while (parent[size_t(id)] >= 0) id = parent[size_t(id)];
    return id;
  }
  // An operand a kernel writes, that may live inside another operand's bytes.
  bool movable(int id) const {
    return state.alias_root[size_t(id)] == id && parent[size_t(id)] < 0 && producer_step[size_t(id)] >= 0 &&
           !state.is_graph_output(id);
  }
  // An operand the pieces may be read from in place (a split's input): not a constant.
  bool readable_in_place(int id) const {
    return state.graph.operands[size_t(id)].kind != OperandInfo::Kind::kConstant;
  }

  bool elide(const Step& step, const PiecesLayout& layout) {
    std::set<int> seen;
    if (layout.kind == PiecesLayout::Kind::kInputsInOutput) {
      const int whole = step.outputs[0];
      if (layout.offsets.size() != step.inputs.size()) return false;
      for (int piece : step.inputs)
        if (!seen.insert(piece).second || !movable(piece) || root(whole) == piece) return false;
      for (size_t k = 0; k < step.inputs.size(); ++k) place(step.inputs[k], whole, layout.offsets[k]);
      return true;
    }
    const int whole = state.alias_root[size_t(step.inputs[0])];
    if (layout.offsets.size() != step.outputs.size() || !readable_in_place(whole)) return false;
    for (int piece : step.outputs)
      if (!seen.insert(piece).second || state.alias_root[size_t(piece)] != piece || parent[size_t(piece)] >= 0 ||
          state.is_graph_output(piece) || root(whole) == piece)
        return false;
    for (size_t k = 0; k < step.outputs.size(); ++k) place(step.outputs[k], whole, layout.offsets[k]);
    return true;
  }
  void place(int piece, int whole, size_t at) {
    parent[size_t(piece)] = whole;
    offset[size_t(piece)] = at;
  }
};

}  // namespace

void elide_copies(CompileState& state) {
  Plan& plan = *state.plan;
  const size_t operand_count = state.graph.operands.size();
  Elider elider{state, std::vector<int>(operand_count, -1), std::vector<int>(operand_count, -1),
                std::vector<size_t>(operand_count, 0)};
  for (size_t s = 0; s < plan.steps.size(); ++s)
    if (plan.steps[s].kernel)
      for (int out : plan.steps[s].outputs) elider.producer_step[size_t(out)] = int(s);

  // Latest first: an outer concat claims an inner concat's output while its step still writes it.
  std::vector<bool> elided(plan.steps.size(), false);
  size_t concats = 0, splits = 0;
  for (size_t s = plan.steps.size(); s-- > 0;) {
    const Step& step = plan.steps[s];
    if (!step.kernel || step.node < 0 || !step.def->pieces_layout || !step.fused.empty()) continue;
    const PiecesLayout layout = step.def->pieces_layout(OpView(state.graph.nodes[size_t(step.node)], state.graph.operands));
    if (layout.kind == PiecesLayout::Kind::kNone || !elider.elide(step, layout)) continue;
    elided[s] = true;
    (layout.kind == PiecesLayout::Kind::kInputsInOutput ? concats : splits) += 1;
  }
  for (size_t id = 0; id < operand_count; ++id) {
    if (elider.parent[id] < 0) continue;
    size_t at = 0;
    int at_root = int(id);
    for (; elider.parent[size_t(at_root)] >= 0; at_root = elider.parent[size_t(at_root)]) at += elider.offset[size_t(at_root)];
    plan.placements.push_back({int(id), at_root, at});
  }
  std::vector<Step> kept;
  for (size_t s = 0; s < plan.steps.size(); ++s)
    if (!elided[s]) kept.push_back(std::move(plan.steps[s]));
  plan.steps = std::move(kept);
  state.log("copy_elision", str_cat(concats, " concats written in place by their producers, ", splits,
                                    " splits read in place, ", plan.placements.size(), " operands placed"));
}

}  // namespace webnn
