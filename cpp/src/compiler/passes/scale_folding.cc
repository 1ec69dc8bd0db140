// Scale folding: a per-channel affine map with constant parameters (batchNormalization, or a mul /
// add by a per-channel constant; OpDef::channel_affine) that is the only reader of its producer's
// output is folded into that producer's constant weights (OpDef::absorb_channel_affine: conv2d's
// filter and bias). The producer then writes the map's output, and the map runs no kernel. Needs
// remove_dead_code after it.
#include "compiler/passes.h"

namespace webnn {

void fold_scales(CompileState& state) {
  GraphIR& ir = state.graph;
  std::vector<int> readers = state.live_readers();

  size_t folded = 0;
  for (size_t n = 0; n < ir.nodes.size(); ++n) {
    if (!state.live_node[n] || !ir.nodes[n].def->channel_affine) continue;
    ChannelAffine map;
    if (!ir.nodes[n].def->channel_affine(OpView(ir.nodes[n], ir.operands), map)) continue;
    const int x = ir.nodes[n].inputs[map.input];
    const int producer = ir.operands[size_t(x)].producer;
    if (producer < 0 || !state.live_node[size_t(producer)] || readers[size_t(x)] != 1 || state.is_graph_output(x))
      continue;
    Node& target = ir.nodes[size_t(producer)];
    if (!target.def->absorb_channel_affine || target.outputs.size() != 1 ||
        !target.def->absorb_channel_affine(target, ir.operands, map))
      continue;
    const int y = ir.nodes[n].outputs[0];
    target.outputs[0] = y;
    ir.operands[size_t(y)].producer = producer;
    state.live_node[n] = false;
    ++folded;
  }
  state.log("scale_folding", str_cat(folded, " per-channel scales and shifts folded into weights"));
}

}  // namespace webnn
