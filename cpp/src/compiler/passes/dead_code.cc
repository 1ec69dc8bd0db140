// Dead-code removal: keep the nodes the graph outputs depend on.
#include "compiler/passes.h"

namespace webnn {

void remove_dead_code(CompileState& state) {
  const GraphIR& ir = state.graph;
  state.live_node.assign(ir.nodes.size(), false);
  state.live_operand.assign(ir.operands.size(), false);
  std::vector<int> stack;
  for (const auto& [name, id] : state.outputs) stack.push_back(id);
  while (!stack.empty()) {
    const int id = stack.back();
    stack.pop_back();
    if (state.live_operand[id]) continue;
    state.live_operand[id] = true;
    const int producer = ir.operands[id].producer;
    if (producer < 0 || state.live_node[producer]) continue;
    state.live_node[producer] = true;
    for (int in : ir.nodes[producer].inputs) stack.push_back(in);
  }
  size_t live = 0;
  for (bool l : state.live_node) live += l;
  state.log("dead_code", str_cat(live, " of ", ir.nodes.size(), " nodes live"));
}

}  // namespace webnn
