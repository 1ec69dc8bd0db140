// Layout: each node whose kernel can lay out its work more than one way (OpDef::assign_layout)
// gets the choice made here, from what the active kernels do best, and recorded in its kept
// attributes for lowering: today, whether an NCHW convolution runs as [O][pixels] or as the
// transposed product. Choosing NCHW / NHWC / blocked layouts per region of the graph, with one
// reorder at each boundary, belongs here too.
#include "compiler/passes.h"

namespace webnn {

void assign_layouts(CompileState& state) {
  GraphIR& ir = state.graph;
  size_t nodes = 0, changed = 0;
  for (size_t n = 0; n < ir.nodes.size(); ++n) {
    Node& node = ir.nodes[n];
    if (!state.live_node[n] || !node.def->assign_layout || !node.attributes) continue;
    ++nodes;
    changed += node.def->assign_layout(node, ir.operands);
  }
  state.log("layout", str_cat(nodes, " nodes laid out, ", changed, " other than their default"));
}

}  // namespace webnn
