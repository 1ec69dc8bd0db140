// Transpose absorption: a transpose into channels-last (permutation 0, 2, 3, 1) whose result only
// one op reads, when that op's kernel can read the untransposed input itself
// (OpDef::absorbs_input_transpose: the first convolution of a network, at most 4 input channels,
// reads the NCHW image directly), runs inside that op's step: no transposed copy is written or read.
#include "compiler/passes.h"

namespace webnn {

void absorb_transposes(CompileState& state) {
  const GraphIR& ir = state.graph;
  if (state.fusion.empty()) state.fusion.assign(ir.nodes.size(), NodeFusion{});  // epilogue_fusion disabled
  const OpDef* transpose = find_op("transpose");
  const std::vector<int64_t> to_nhwc = {0, 2, 3, 1};
  std::vector<int> readers = state.live_readers();

  size_t absorbed = 0;
  for (size_t n = 0; n < ir.nodes.size(); ++n) {
    const Node& node = ir.nodes[n];
    NodeFusion& fused = state.fusion[n];
    if (!state.live_node[n] || fused.runs_in >= 0 || !node.def->absorbs_input_transpose || node.inputs.empty()) continue;
    const int x = node.inputs[0], producer = ir.operands[size_t(x)].producer;
    if (producer < 0 || readers[size_t(x)] != 1 || state.is_graph_output(x)) continue;
    const Node& moved = ir.nodes[size_t(producer)];
    if (moved.def != transpose || state.fusion[size_t(producer)].runs_in >= 0 ||
        OpView(moved, ir.operands).attributes<std::vector<int64_t>>() != to_nhwc ||
        !node.def->absorbs_input_transpose(OpView(node, ir.operands)))
      continue;
    fused.untransposed_input = moved.inputs[0];
    fused.absorbed_ops.insert(fused.absorbed_ops.begin(), moved.def->name);
    state.fusion[size_t(producer)].runs_in = int(n);
    ++absorbed;
  }
  state.log("transpose_absorption", str_cat(absorbed, " transposes into channels-last read in place by their consumer"));
}

}  // namespace webnn
