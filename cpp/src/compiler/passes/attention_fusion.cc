// Attention fusion: matmul(softmax(scores), V), where scores is matmul(Q, Kt), then optionally a
// division or multiplication by a scalar constant, then optionally an added mask (broadcast along
// the query rows and batch dims, not along the keys), becomes one attention node: its kernel keeps
// each tile's scores in cache (kernels/attention). A transpose producing Q, Kt or V that nothing else
// reads is absorbed (the kernel reads through the permutation). float32 only; every intermediate
// must have the chain as its only reader. The scale multiplies the keys before the product, so
// results differ from the unfused graph's by float32 rounding. Needs remove_dead_code after it.
#include <cmath>

#include "compiler/passes.h"

namespace webnn {

namespace {

class AttentionMatcher {
 public:
  explicit AttentionMatcher(const CompileState& state)
      : state_(state), ir_(state.graph), readers_(state.live_readers()),
        matmul_(find_op("matmul")), softmax_(find_op("softmax")), div_(find_op("div")), mul_(find_op("mul")),
        add_(find_op("add")), transpose_(find_op("transpose")) {}

  // The live node producing `id` when it is a `def` node and `id` has no other reader (nor is an output).
  const Node* only_producer(int id, const OpDef* def) const {
    const int n = ir_.operands[size_t(id)].producer;
    if (n < 0 || !state_.live_node[size_t(n)] || ir_.nodes[size_t(n)].def != def) return nullptr;
    if (readers_[size_t(id)] != 1 || state_.is_graph_output(id)) return nullptr;
    return &ir_.nodes[size_t(n)];
  }

  // The Q x Kt matmul whose result, scaled by a scalar constant or not, is `id`; sets `scale`.
  const Node* scores_product(int id, double& scale) const {
    scale = 1.0;
    const Node* scaling = only_producer(id, div_);
    if (!scaling) scaling = only_producer(id, mul_);
    if (scaling) {
      // The scores, then the constant (either order for mul).
      int side = 0;
      if (scaling->def == mul_ && float_constant_values(ir_.operands[size_t(scaling->inputs[0])]).size() == 1) side = 1;
      if (!same_desc(scaling->outputs[0], scaling->inputs[side])) return nullptr;
      const std::vector<double> c = float_constant_values(ir_.operands[size_t(scaling->inputs[1 - side])]);
      if (c.size() != 1 || !std::isfinite(c[0]) || c[0] == 0.0) return nullptr;
      scale = scaling->def == div_ ? 1.0 / c[0] : c[0];
      id = scaling->inputs[side];
    }
    return only_producer(id, matmul_);
  }

  // The fused node for the matmul `node` (P x V), or false.
  bool match(const Node& node, Node& fused) const {
    if (node.def != matmul_ || !is_float32(node.outputs[0])) return false;
    const Node* softmax = only_producer(node.inputs[0], softmax_);
    if (!softmax) return false;
    const size_t rank = ir_.operands[size_t(softmax->outputs[0])].desc.shape.size();
    if (OpView(*softmax, ir_.operands).integer("axis") != int64_t(rank) - 1) return false;
    int scores = softmax->inputs[0], mask = -1;
    double scale = 1.0;
    const Node* product = nullptr;
    if (const Node* add = only_producer(scores, add_)) {
      if (!same_desc(add->outputs[0], add->inputs[0]) && !same_desc(add->outputs[0], add->inputs[1])) return false;
      for (int side : {0, 1}) {
        if (!same_desc(add->outputs[0], add->inputs[side])) continue;
        if ((product = scores_product(add->inputs[side], scale))) {
          mask = add->inputs[1 - side];
          break;
        }
      }
    } else {
      product = scores_product(scores, scale);
    }
    if (!product || (mask >= 0 && !is_float32(mask))) return false;
    std::vector<Attr> args = {OperandRef{-1}, OperandRef{-1}, OperandRef{-1},
                              mask >= 0 ? Attr(OperandRef{mask}) : Attr{}, scale, Attr{}, Attr{}, Attr{}};
    const int operands[3] = {product->inputs[0], product->inputs[1], node.inputs[1]};
    for (int k = 0; k < 3; ++k) {
      args[size_t(k)] = OperandRef{operands[k]};
      if (const Node* transpose = only_producer(operands[k], transpose_)) {
        args[size_t(k)] = OperandRef{transpose->inputs[0]};
        args[size_t(5 + k)] = OpView(*transpose, ir_.operands).attributes<std::vector<int64_t>>();
      }
    }
    fused = Node{&attention_op(), args, node.label, {}, node.outputs, nullptr};
    fused.rounds_to_half = node.rounds_to_half;
    rebuild_inputs(fused);
    try {
      const std::vector<OperandDescriptor> out = revalidate(fused, ir_.operands);
      return out.size() == 1 && out[0] == ir_.operands[size_t(node.outputs[0])].desc;
    } catch (const Error&) {  // a shape the kernel does not take (batch dims that broadcast, ...)
      return false;
    }
  }

 private:
  bool is_float32(int id) const { return ir_.operands[size_t(id)].desc.data_type == DataType::kFloat32; }
  bool same_desc(int a, int b) const { return ir_.operands[size_t(a)].desc == ir_.operands[size_t(b)].desc; }

  const CompileState& state_;
  const GraphIR& ir_;
  std::vector<int> readers_;
  const OpDef *matmul_, *softmax_, *div_, *mul_, *add_, *transpose_;
};

}  // namespace

void fuse_attention(CompileState& state) {
  GraphIR& ir = state.graph;
  const AttentionMatcher matcher(state);  // each matched chain's inner values had one reader: counts stay right
  size_t fused = 0, transposes = 0;
  for (size_t n = 0; n < ir.nodes.size(); ++n) {
    if (!state.live_node[n]) continue;
    Node node;
    if (!matcher.match(ir.nodes[n], node)) continue;
    for (const char* permutation : {"queryPermutation", "keysPermutation", "valuesPermutation"})
      transposes += OpView(node, ir.operands).has(permutation);
    ir.nodes[n] = std::move(node);
    ++fused;
  }
  state.log("attention_fusion", str_cat(fused, " attention blocks fused (matmul, scale, mask, softmax, matmul), ",
                                        transposes, " transposes read in place"));
}

}  // namespace webnn
