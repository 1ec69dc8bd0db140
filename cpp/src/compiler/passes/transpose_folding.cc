// Transpose folding: a transpose of a transpose (whose inner result nothing else reads) becomes one
// transpose of the composed permutation, and a transpose that keeps the order of the dimensions
// larger than 1 (the identity, or one that only moves size-1 dimensions) becomes a reshape, a view
// that moves no data. Needs remove_dead_code after it.
#include <memory>

#include "compiler/passes.h"

namespace webnn {

bool transpose_moves_no_data(const std::vector<int64_t>& perm, const std::vector<uint32_t>& in_shape) {
  int64_t last = -1;
  for (int64_t axis : perm) {
    if (in_shape[size_t(axis)] == 1) continue;
    if (axis < last) return false;
    last = axis;
  }
  return true;
}

void fold_transposes(CompileState& state) {
  GraphIR& ir = state.graph;
  const OpDef* transpose = find_op("transpose");
  const OpDef* reshape = find_op("reshape");
  std::vector<int> readers = state.live_readers();

  size_t composed = 0, to_views = 0;
  for (size_t n = 0; n < ir.nodes.size(); ++n) {
    Node& node = ir.nodes[n];
    if (!state.live_node[n] || node.def != transpose) continue;
    std::vector<int64_t> perm = OpView(node, ir.operands).attributes<std::vector<int64_t>>();
    int x = node.inputs[0];
    const int inner = ir.operands[size_t(x)].producer;
    if (inner >= 0 && state.live_node[size_t(inner)] && ir.nodes[size_t(inner)].def == transpose &&
        readers[size_t(x)] == 1 && !state.is_graph_output(x)) {
      const std::vector<int64_t>& first = OpView(ir.nodes[size_t(inner)], ir.operands).attributes<std::vector<int64_t>>();
      for (int64_t& axis : perm) axis = first[size_t(axis)];
      x = ir.nodes[size_t(inner)].inputs[0];
      ++readers[size_t(x)];
      ++composed;
    }
    const int y = node.outputs[0];
    if (transpose_moves_no_data(perm, ir.operands[size_t(x)].desc.shape)) {
      const std::vector<uint32_t>& shape = ir.operands[size_t(y)].desc.shape;
      node = Node{reshape, {OperandRef{x}, std::vector<int64_t>(shape.begin(), shape.end())}, node.label, {x}, {y}, nullptr};
      ++to_views;
    } else if (x != node.inputs[0]) {
      node = Node{transpose, {OperandRef{x}, perm}, node.label, {x}, {y},
                  std::make_shared<KeptAs<std::vector<int64_t>>>(perm)};
    }
  }
  state.log("transpose_folding", str_cat(composed, " transpose pairs composed, ", to_views,
                                         " transposes that move no data made views"));
}

}  // namespace webnn
