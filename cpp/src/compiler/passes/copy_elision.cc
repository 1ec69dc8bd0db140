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
  const std::vector<Step>& steps;
  std::vector<bool> elided;
  std::vector<int> producer_step;  // per operand: the step whose kernel writes it, -1: none
  std::vector<int> parent;         // per operand: the operand it is placed in, -1: none
  std::vector<size_t> offset;      // its byte offset there
  size_t concats = 0, splits = 0;

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

  PiecesLayout layout_of(const Step& step) const {
    if (!step.kernel || step.node < 0 || !step.def->pieces_layout || !step.fused.empty()) return {};
    return step.def->pieces_layout(OpView(state.graph.nodes[size_t(step.node)], state.graph.operands));
  }

  // A split whose outputs are inputs [k, k + count) of a concat, in order: the split's input can
  // stand in the concat's output for all of them, and the split is read in place from there. Its
  // step index, else -1.
  int split_feeding(const Step& concat, size_t k) const {
    const int s = producer_step[size_t(concat.inputs[k])];
    if (s < 0 || elided[size_t(s)]) return -1;
    const Step& split = steps[size_t(s)];
    const size_t count = split.outputs.size();
    if (k + count > concat.inputs.size() || layout_of(split).kind != PiecesLayout::Kind::kOutputsInInput) return -1;
    for (size_t j = 0; j < count; ++j)
      if (concat.inputs[k + j] != split.outputs[j] || state.is_graph_output(split.outputs[j]) ||
          parent[size_t(split.outputs[j])] >= 0)
        return -1;
    return movable(state.alias_root[size_t(split.inputs[0])]) && state.alias_root[size_t(split.inputs[0])] == split.inputs[0]
               ? s
               : -1;
  }

  bool elide(size_t index, const PiecesLayout& layout) {
    const Step& step = steps[index];
    std::set<int> seen;
    if (layout.kind == PiecesLayout::Kind::kInputsInOutput) {
      const int whole = step.outputs[0];
      if (layout.offsets.size() != step.inputs.size()) return false;
      // Each input moves into the output, or a run of them is a split's outputs and the split's input moves.
      std::vector<std::pair<size_t, int>> moves;  // (input position, split step or -1)
      for (size_t k = 0; k < step.inputs.size();) {
        const int piece = step.inputs[k];
        if (!seen.insert(piece).second || root(whole) == piece) return false;
        const int split = split_feeding(step, k);
        if (split < 0 || root(whole) == steps[size_t(split)].inputs[0] || seen.count(steps[size_t(split)].inputs[0])) {
          if (!movable(piece)) return false;
          moves.push_back({k++, -1});
          continue;
        }
        seen.insert(steps[size_t(split)].inputs[0]);
        for (size_t j = 1; j < steps[size_t(split)].outputs.size(); ++j)
          if (!seen.insert(step.inputs[k + j]).second) return false;
        moves.push_back({k, split});
        k += steps[size_t(split)].outputs.size();
      }
      for (const auto& [k, split] : moves) {
        if (split < 0) {
          place(step.inputs[k], whole, layout.offsets[k]);
          continue;
        }
        const Step& cut = steps[size_t(split)];
        const PiecesLayout cut_layout = layout_of(cut);
        place(cut.inputs[0], whole, layout.offsets[k]);
        for (size_t j = 0; j < cut.outputs.size(); ++j) place(cut.outputs[j], cut.inputs[0], cut_layout.offsets[j]);
        elided[size_t(split)] = true;
        ++splits;
      }
      ++concats;
      return true;
    }
    const int whole = state.alias_root[size_t(step.inputs[0])];
    if (layout.offsets.size() != step.outputs.size() || !readable_in_place(whole)) return false;
    for (int piece : step.outputs)
      if (!seen.insert(piece).second || state.alias_root[size_t(piece)] != piece || parent[size_t(piece)] >= 0 ||
          state.is_graph_output(piece) || root(whole) == piece)
        return false;
    for (size_t k = 0; k < step.outputs.size(); ++k) place(step.outputs[k], whole, layout.offsets[k]);
    ++splits;
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
  Elider elider{state,
                plan.steps,
                std::vector<bool>(plan.steps.size(), false),
                std::vector<int>(operand_count, -1),
                std::vector<int>(operand_count, -1),
                std::vector<size_t>(operand_count, 0)};
  for (size_t s = 0; s < plan.steps.size(); ++s)
    if (plan.steps[s].kernel)
      for (int out : plan.steps[s].outputs) elider.producer_step[size_t(out)] = int(s);

  // Latest first: an outer concat claims an inner concat's output while its step still writes it.
  for (size_t s = plan.steps.size(); s-- > 0;) {
    if (elider.elided[s]) continue;
    const PiecesLayout layout = elider.layout_of(plan.steps[s]);
    if (layout.kind != PiecesLayout::Kind::kNone && elider.elide(s, layout)) elider.elided[s] = true;
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
    if (!elider.elided[s]) kept.push_back(std::move(plan.steps[s]));
  plan.steps = std::move(kept);
  state.log("copy_elision", str_cat(elider.concats, " concats written in place by their producers, ", elider.splits,
                                    " splits read in place, ", plan.placements.size(), " operands placed"));
}

}  // namespace webnn
