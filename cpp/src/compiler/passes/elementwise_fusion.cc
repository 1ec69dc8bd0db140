// Element-wise fusion: a connected group of float32 element-wise ops (OpDef::chain_step) that all
// produce one shape (8-bit values may enter through dequantizeLinear and leave through
// quantizeLinear, per-tensor: at the end, or inside to be dequantized again), whose inner values nothing outside the group reads, runs as one elementwise
// step (graph/ops/elementwise_chain.cc) that keeps each block's values in L1 from op to op; only
// the group's result reaches memory. Ops already in a kernel's epilogue stay there. Each op runs the
// loop it runs alone, so results are bit-identical.
#include <algorithm>
#include <map>

#include "compiler/passes.h"

namespace webnn {

namespace {

constexpr size_t kMaxChainSteps = 16;

}  // namespace

void fuse_elementwise_chains(CompileState& state) {
  GraphIR& ir = state.graph;
  if (state.fusion.empty()) state.fusion.assign(ir.nodes.size(), NodeFusion{});  // epilogue_fusion disabled
  std::vector<int> readers = state.live_readers();  // (a group's copied dequantize adds a reader of its input)
  std::vector<bool> grouped(ir.nodes.size(), false);
  const auto is_float32 = [&](int id) { return ir.operands[size_t(id)].desc.data_type == DataType::kFloat32; };
  // The operands a step reads element by element (a quantize op's scale and zero point are values
  // of its step).
  const auto data_inputs = [&](const Node& node, const ChainStep& step) {
    const size_t count = step.kind == ChainStep::Kind::kBinary ? 2 : 1;
    return std::vector<int>(node.inputs.begin(), node.inputs.begin() + std::min(count, node.inputs.size()));
  };
  // Node n as a chain step (operands not set), when it can be one. Float32 values inside; 8-bit
  // values enter through dequantize steps and leave through quantize steps: at the sink, or inside
  // when only the group's dequantize steps read them (a QDQ model's requantization, as in SiLU's
  // quantized sigmoid).
  const auto step_of = [&](size_t n, ChainStep& step, bool sink) {
    const Node& node = ir.nodes[n];
    const NodeFusion& fused = state.fusion[n];
    if (!state.live_node[n] || grouped[n] || !node.def->chain_step || node.outputs.size() != 1 ||
        fused.runs_in >= 0 || fused.output >= 0 || !fused.absorbed_ops.empty() || fused.untransposed_input >= 0 ||
        !node.def->chain_step(OpView(node, ir.operands), step))
      return false;
    const std::vector<int> in = data_inputs(node, step);
    // (Inside the group, a quantize joins when all its readers have: they are dequantize steps.)
    if (step.kind == ChainStep::Kind::kQuantize) return is_float32(in[0]);
    if (!is_float32(node.outputs[0])) return false;
    return step.kind == ChainStep::Kind::kDequantize || std::all_of(in.begin(), in.end(), is_float32);
  };

  size_t groups = 0, ops = 0;
  std::vector<size_t> copies;  // dequantize nodes copied into groups: dead once nothing else reads them
  for (size_t sink = ir.nodes.size(); sink-- > 0;) {
    ChainStep probe;
    if (!step_of(sink, probe, true)) continue;
    const OperandDescriptor& desc = ir.operands[size_t(ir.nodes[sink].outputs[0])].desc;
    // Grow the group from its sink: add the producer of an operand when every reader of that operand
    // is in the group (repeat until none joins).
    std::vector<size_t> members{sink};
    std::map<int, int> reads;  // operand -> reads by the group's nodes
    for (int id : data_inputs(ir.nodes[sink], probe)) ++reads[id];
    const auto produced_inside = [&](int id) {
      const int p = ir.operands[size_t(id)].producer;
      return p >= 0 && std::find(members.begin(), members.end(), size_t(p)) != members.end();
    };
    // The operands the group reads from outside it if node p joined.
    const auto inputs_with = [&](size_t p, const ChainStep& step) {
      size_t count = 0;
      for (const auto& [id, reads_of_id] : reads) count += !produced_inside(id) && id != ir.nodes[p].outputs[0];
      for (int in : data_inputs(ir.nodes[p], step)) count += !reads.count(in) && !produced_inside(in);
      return count;
    };
    std::vector<size_t> copied;  // dequantize steps whose value is also read outside the group
    for (bool grew = true; grew && members.size() < kMaxChainSteps;) {
      grew = false;
      for (const auto& [id, count] : reads) {
        const int p = ir.operands[size_t(id)].producer;
        if (p < 0 || produced_inside(id) || ir.operands[size_t(id)].desc.shape != desc.shape) continue;
        ChainStep step;
        if (!step_of(size_t(p), step, false) || inputs_with(size_t(p), step) > kMaxChainInputs) continue;
        // A value read outside the group joins only as a dequantize step, recomputed from its 8-bit
        // input (cheaper than the float tensor's round trip: SiLU's x in a QDQ model).
        const bool shared = count != readers[size_t(id)] || state.is_graph_output(id);
        if (shared && step.kind != ChainStep::Kind::kDequantize) continue;
        // A quantize joins only when the dequantize steps reading it are the group's own (a copied
        // one stays a node of its own, which needs the 8-bit value).
        if (step.kind == ChainStep::Kind::kQuantize &&
            std::any_of(copied.begin(), copied.end(), [&](size_t c) { return ir.nodes[c].inputs[0] == id; }))
          continue;
        if (shared) copied.push_back(size_t(p));
        members.push_back(size_t(p));
        for (int in : data_inputs(ir.nodes[size_t(p)], step)) ++reads[in];
        grew = true;
        break;  // `reads` changed
      }
    }
    if (members.size() < 2) continue;
    std::sort(members.begin(), members.end());  // node order is topological
    std::map<int, int> step_result;  // operand -> the step producing it
    std::vector<int> inputs;
    std::vector<ChainStep> steps;
    std::vector<std::string> names;
    const auto source = [&](int id) {
      if (auto it = step_result.find(id); it != step_result.end()) return it->second;
      auto at = std::find(inputs.begin(), inputs.end(), id);
      if (at == inputs.end()) at = inputs.insert(inputs.end(), id);
      return -1 - int(at - inputs.begin());
    };
    for (size_t n : members) {
      const Node& node = ir.nodes[n];
      ChainStep step;
      step_of(n, step, n == sink);
      step.a = source(node.inputs[0]);
      if (step.kind == ChainStep::Kind::kBinary) step.b = source(node.inputs[1]);
      steps.push_back(step);
      names.push_back(node.def->name);
      if (node.rounds_to_half) {  // float16 values held in float32: each op's result rounded, as alone
        ChainStep round;
        round.unary = UnaryOp::kRoundToHalf;
        round.a = int(steps.size()) - 1;
        steps.push_back(round);
      }
      step_result[node.outputs[0]] = int(steps.size()) - 1;
    }
    if (inputs.size() > kMaxChainInputs) continue;
    const Node& last = ir.nodes[sink];
    Node chain{&elementwise_chain_op(), {OperandList{inputs}}, last.label, inputs, last.outputs,
               std::make_shared<KeptAs<ElementwiseChain>>(ElementwiseChain{steps, desc})};
    for (size_t n : members) {
      if (std::find(copied.begin(), copied.end(), n) != copied.end()) {
        copies.push_back(n);
        ++readers[size_t(ir.nodes[n].inputs[0])];  // the chain reads the 8-bit value itself
        continue;
      }
      grouped[n] = true;
      if (n != sink) state.live_node[n] = false;
    }
    ir.nodes[sink] = std::move(chain);
    state.fusion[sink].absorbed_ops = names;
    ++groups;
    ops += members.size();
  }
  const std::vector<int> now_read = state.live_readers();
  for (size_t n : copies) {
    const int out = ir.nodes[n].outputs[0];
    if (state.live_node[n] && now_read[size_t(out)] == 0 && !state.is_graph_output(out)) state.live_node[n] = false;
  }
  state.log("elementwise_fusion", str_cat(groups, " element-wise groups (", ops, " ops) run as one pass each"));
}

}  // namespace webnn
