// Epilogue fusion, in topological order. An op whose float32 output is read only by an `add`
// absorbs the add when its kernel accepts the other addend: a residual (the output's shape) or a
// column bias (a row of N values); the addend becomes the kernel's last input and the fused node
// runs where the add was, once the addend exists. An op (or op + add) whose output is read only by
// a clamp-like op (relu, clamp) absorbs it when its kernel clamps. Then an element-wise unary op
// (sigmoid, hardSwish, gelu, ...) is absorbed as the epilogue's activation, and a sigmoid whose output
// is only multiplied by its own input (x * sigmoid(x), read by nothing else) as SiLU. A mul or add
// by a single float constant after the activation (or clamp) becomes the activation's affine tail.
#include <algorithm>
#include <tuple>

#include "compiler/passes.h"

namespace webnn {

namespace {

// Whether `shape` is a row of `n` values: [n] or [1, ..., 1, n].
bool is_row(const std::vector<uint32_t>& shape, uint32_t n) {
  if (shape.empty() || shape.back() != n) return false;
  return std::all_of(shape.begin(), shape.end() - 1, [](uint32_t d) { return d == 1; });
}

uint32_t epilogue_support(const GraphIR& ir, const Node& node) {
  if (!node.def->epilogue_support) return kEpilogueNone;
  return node.def->epilogue_support(OpView(node, ir.operands));
}

// For a sigmoid node s = sigmoid(x): the mul node computing x * s, when it is s's only reader and
// x's only other reader (-1: none).
int silu_mul(const GraphIR& ir, const std::vector<bool>& live, const std::vector<int>& readers, size_t sigmoid) {
  const int x = ir.nodes[sigmoid].inputs[0], s = ir.nodes[sigmoid].outputs[0];
  if (readers[s] != 1 || readers[x] != 2) return -1;
  for (size_t m = sigmoid + 1; m < ir.nodes.size(); ++m) {
    const Node& node = ir.nodes[m];
    if (!live[m] || node.def->epilogue_role != EpilogueRole::kMul) continue;
    if ((node.inputs[0] == x && node.inputs[1] == s) || (node.inputs[0] == s && node.inputs[1] == x)) return int(m);
  }
  return -1;
}

}  // namespace

void fuse_epilogues(CompileState& state) {
  const GraphIR& ir = state.graph;
  std::vector<NodeFusion>& fusion = state.fusion;
  fusion.assign(ir.nodes.size(), NodeFusion{});
  std::vector<int> readers = state.live_readers();
  for (const auto& [name, id] : state.outputs) ++readers[id];

  // The node whose kernel produces operand x, when x is its only output, float32, read `reads` times.
  auto fusable_producer = [&](int x, int reads = 1) {
    int producer = ir.operands[x].producer;
    if (producer < 0 || readers[x] != reads || ir.operands[x].desc.data_type != DataType::kFloat32) return -1;
    if (fusion[producer].runs_in >= 0) producer = fusion[producer].runs_in;
    return ir.nodes[producer].outputs.size() == 1 || fusion[producer].output >= 0 ? producer : -1;
  };
  // A mul or add of the producer's output by a single float constant, after its activation or clamp:
  // the activation's affine tail (scale, shift).
  auto affine_tail = [&](size_t n, EpilogueRole role) {
    const Node& node = ir.nodes[n];
    for (int side = 0; side < 2; ++side) {
      const int x = node.inputs[side], other = node.inputs[1 - side];
      const OperandInfo& value = ir.operands[size_t(other)];
      if (value.kind != OperandInfo::Kind::kConstant || value.desc.data_type != DataType::kFloat32 ||
          ir.operands[x].desc.shape != ir.operands[node.outputs[0]].desc.shape)
        continue;
      const std::vector<double> c = float_constant_values(value);
      const int producer = c.size() == 1 ? fusable_producer(x) : -1;
      if (producer < 0) continue;
      NodeFusion& target = fusion[producer];
      FusedActivation& tail = target.epilogue.activation;
      if (!(tail.present || target.absorbed_clamp) || !(epilogue_support(ir, ir.nodes[producer]) & kEpilogueActivation))
        continue;
      if (role == EpilogueRole::kMul) {
        tail.scale = float(tail.scale * c[0]);
        tail.shift = float(tail.shift * c[0]);
      } else {
        tail.shift = float(tail.shift + c[0]);
      }
      target.output = node.outputs[0];
      target.absorbed_ops.push_back(node.def->name);
      fusion[n].runs_in = producer;
      return true;
    }
    return false;
  };
  size_t fused = 0;
  for (size_t n = 0; n < ir.nodes.size(); ++n) {
    if (!state.live_node[n] || fusion[n].runs_in >= 0) continue;  // absorbed already (SiLU's mul)
    const Node& node = ir.nodes[n];
    const EpilogueRole role = node.def->epilogue_role;
    if ((role == EpilogueRole::kAdd || role == EpilogueRole::kMul) && affine_tail(n, role)) {
      ++fused;
    } else if (role == EpilogueRole::kAdd) {
      const auto& out_shape = ir.operands[node.outputs[0]].desc.shape;
      for (int side = 0; side < 2; ++side) {
        const int x = node.inputs[side], other = node.inputs[1 - side];
        const int producer = fusable_producer(x);
        if (producer < 0 || other == x || ir.operands[x].desc.shape != out_shape) continue;
        NodeFusion& target = fusion[producer];
        if (target.output >= 0) continue;  // the add comes first, the clamp after
        const uint32_t accepts = epilogue_support(ir, ir.nodes[producer]);
        const auto& other_shape = ir.operands[other].desc.shape;
        Epilogue::Addend addend = Epilogue::Addend::kNone;
        if ((accepts & kEpilogueResidual) && other_shape == out_shape)
          addend = Epilogue::Addend::kResidual;
        else if ((accepts & kEpilogueColumnBias) && !out_shape.empty() && other_shape.size() <= out_shape.size() &&
                 is_row(other_shape, out_shape.back()))
          addend = Epilogue::Addend::kColumnBias;
        if (addend == Epilogue::Addend::kNone) continue;
        target.epilogue.addend = addend;
        target.output = node.outputs[0];
        target.addend = other;
        target.emit_at = int(n);
        target.absorbed_ops.push_back(node.def->name);
        fusion[n].runs_in = producer;
        ++fused;
        break;
      }
    } else if (role == EpilogueRole::kClamp) {
      const int producer = fusable_producer(node.inputs[0]);
      if (producer < 0) continue;
      NodeFusion& target = fusion[producer];
      if (target.absorbed_clamp || target.epilogue.activation.present || target.epilogue.activation.affine() ||
          !(epilogue_support(ir, ir.nodes[producer]) & kEpilogueClamp))
        continue;
      std::tie(target.epilogue.clamp_min, target.epilogue.clamp_max) =
          node.def->clamp_bounds(OpView(node, ir.operands));
      target.absorbed_clamp = true;
      target.output = node.outputs[0];
      target.absorbed_ops.push_back(node.def->name);
      fusion[n].runs_in = producer;
      ++fused;
    } else if (role == EpilogueRole::kActivation) {
      const int x = node.inputs[0];
      FusedActivation activation = node.def->fused_activation(OpView(node, ir.operands));
      int producer = fusable_producer(x), mul = -1;
      if (producer < 0 && activation.op == UnaryOp::kSigmoid) {  // SiLU: x * sigmoid(x)
        mul = silu_mul(ir, state.live_node, readers, n);
        if (mul >= 0) producer = fusable_producer(x, 2);
      }
      if (producer < 0) continue;
      NodeFusion& target = fusion[producer];
      if (target.epilogue.activation.present || target.epilogue.activation.affine() ||
          !(epilogue_support(ir, ir.nodes[producer]) & kEpilogueActivation))
        continue;
      if (mul >= 0) activation.op = UnaryOp::kSilu;
      target.epilogue.activation = activation;
      target.output = node.outputs[0];
      target.absorbed_ops.push_back(node.def->name);
      fusion[n].runs_in = producer;
      if (mul >= 0) {
        target.output = ir.nodes[mul].outputs[0];
        target.absorbed_ops.push_back(ir.nodes[mul].def->name);
        fusion[mul].runs_in = producer;
      }
      fused += mul >= 0 ? 2 : 1;
    }
  }
  state.log("epilogue_fusion", str_cat(fused, " element-wise ops fused into kernel epilogues"));
}

}  // namespace webnn
