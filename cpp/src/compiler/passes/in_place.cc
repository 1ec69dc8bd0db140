// In-place element-wise ops: an element-wise step (OpDef::element_wise) writes its output over a
// same-shape, same-type input whose storage nothing reads after it, so a chain of them reuses one
// buffer and the arena shrinks. The output is placed (Plan::placements) where that input lives.
// A step with a fused residual add does the same over its addend when its kernel allows
// (OpDef::writes_over_addend) and no other input of the step shares the addend's storage: a
// residual block's output then reads and writes one buffer (no second stream through the cache).
#include <algorithm>

#include "compiler/passes.h"

namespace webnn {

void run_in_place(CompileState& state) {
  Plan& plan = *state.plan;
  const GraphIR& ir = state.graph;
  const size_t operand_count = ir.operands.size();
  std::vector<CompileState::Storage> at = state.storage();
  const int step_count = int(plan.steps.size());
  // The last step reading each storage root (step_count: read after the run, as a graph output).
  std::vector<int> last_read(operand_count, -1);
  std::vector<bool> written(operand_count, false);
  for (int s = 0; s < step_count; ++s) {
    for (int in : plan.steps[size_t(s)].inputs) last_read[size_t(at[size_t(in)].root)] = s;
    if (plan.steps[size_t(s)].kernel)
      for (int out : plan.steps[size_t(s)].outputs) written[size_t(at[size_t(out)].root)] = true;
  }
  for (const auto& [name, id] : state.outputs) last_read[size_t(at[size_t(id)].root)] = step_count;

  // The operands living in each root's storage (a root's own pieces: views and splits of it), so
  // that moving a root moves them without a scan over every operand.
  std::vector<std::vector<int>> pieces(operand_count);
  for (size_t i = 0; i < operand_count; ++i)
    if (at[i].root != int(i)) pieces[size_t(at[i].root)].push_back(int(i));
  size_t in_place = 0;
  for (int s = 0; s < step_count; ++s) {
    const Step& step = plan.steps[size_t(s)];
    if (!step.kernel || step.outputs.size() != 1) continue;
    std::vector<int> candidates;
    if (step.def->element_wise) {  // (a fused element-wise chain is one too)
      candidates = step.inputs;
    } else if (step.node >= 0 && size_t(step.node) < state.fusion.size() && state.fusion[size_t(step.node)].addend >= 0 &&
               step.def->writes_over_addend &&
               step.def->writes_over_addend(OpView(ir.nodes[size_t(step.node)], ir.operands))) {
      const int addend = state.fusion[size_t(step.node)].addend;  // the step's last input
      const bool shared = std::any_of(step.inputs.begin(), step.inputs.end() - 1, [&](int other) {
        return at[size_t(other)].root == at[size_t(addend)].root;
      });
      if (!shared) candidates = {addend};
    }
    if (candidates.empty()) continue;
    const int y = step.outputs[0];
    if (at[size_t(y)].root != y || state.is_graph_output(y)) continue;
    for (int x : candidates) {
      const int root = at[size_t(x)].root;
      // x's storage: an arena value (a kernel writes it; not a graph input or constant), read last here.
      if (!written[size_t(root)] || last_read[size_t(root)] != s || ir.operands[size_t(x)].desc != ir.operands[size_t(y)].desc)
        continue;
      plan.placements.push_back({y, root, at[size_t(x)].offset});
      for (int piece : pieces[size_t(y)])  // y's own pieces (a split of y) move along with it
        at[size_t(piece)] = {root, at[size_t(x)].offset + at[size_t(piece)].offset};
      at[size_t(y)] = {root, at[size_t(x)].offset};
      std::vector<int>& moved = pieces[size_t(root)];
      moved.push_back(y);
      moved.insert(moved.end(), pieces[size_t(y)].begin(), pieces[size_t(y)].end());
      std::vector<int>().swap(pieces[size_t(y)]);
      last_read[size_t(root)] = std::max(last_read[size_t(root)], last_read[size_t(y)]);
      ++in_place;
      break;
    }
  }
  state.flatten_placements();
  state.log("in_place", str_cat(in_place, " ops write over an input"));
}

}  // namespace webnn
