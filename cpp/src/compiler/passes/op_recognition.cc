// Op recognition: element-wise chains that spell out an op WebNN has become that op, so they run as
// one kernel (one pass over memory) instead of several, and can then be fused into the producer's
// epilogue. Today: GELU written with erf, as exporters emit it: 0.5 * x * (1 + erf(x / sqrt(2))), in
// any order of its multiplications and with x * (1 / sqrt(2)) for the division; and hard-swish
// written as x * clamp(x + 3, 0, 6) / 6. Needs remove_dead_code after it.
#include <cmath>

#include "compiler/passes.h"

namespace webnn {

namespace {

class Matcher {
 public:
  explicit Matcher(const CompileState& state) : state_(state), ir_(state.graph), readers_(state.live_readers()) {}

  // The live node producing `id`, when it is op `name` and (unless `any_readers`) `id` has no other
  // reader and is not a graph output.
  const Node* producer(int id, const char* name, bool any_readers = false) const {
    const int n = ir_.operands[size_t(id)].producer;
    if (n < 0 || !state_.live_node[size_t(n)] || ir_.nodes[size_t(n)].def->name != name) return nullptr;
    if (!any_readers && (readers_[size_t(id)] != 1 || state_.is_graph_output(id))) return nullptr;
    return &ir_.nodes[size_t(n)];
  }
  // Whether `id` is a float constant of one element equal to `value` (to float32 precision).
  bool is_scalar(int id, double value) const {
    const OperandInfo& info = ir_.operands[size_t(id)];
    const std::vector<double> values = float_constant_values(info);
    return values.size() == 1 && std::abs(values[0] - value) <= 1e-3 * std::abs(value);
  }
  // For a binary node with one operand a scalar constant equal to `value`: the other operand.
  int other_than_scalar(const Node& node, double value) const {
    if (is_scalar(node.inputs[1], value)) return node.inputs[0];
    if (is_scalar(node.inputs[0], value)) return node.inputs[1];
    return -1;
  }

  // x, when `id` is erf(x / sqrt(2)) + 1 (or erf(x * 1/sqrt(2)) + 1) with single-reader steps.
  int gelu_gate_input(int id) const {
    const Node* add = producer(id, "add");
    if (!add) return -1;
    const int erf_out = other_than_scalar(*add, 1.0);
    const Node* erf = erf_out < 0 ? nullptr : producer(erf_out, "erf");
    if (!erf) return -1;
    const int scaled = erf->inputs[0];
    if (const Node* div = producer(scaled, "div"))
      return is_scalar(div->inputs[1], std::sqrt(2.0)) ? div->inputs[0] : -1;
    if (const Node* mul = producer(scaled, "mul")) return other_than_scalar(*mul, std::sqrt(0.5));
    return -1;
  }

  // x, when the div or mul `node` ends x * clamp(x + 3, 0, 6) / 6 (the multiplication in either
  // order, / 6 or * (1/6)), the hard-swish spelled out (PaddlePaddle exports), else -1.
  int hard_swish_input(const Node& node) const {
    const int product = node.def->name == "div" ? (is_scalar(node.inputs[1], 6.0) ? node.inputs[0] : -1)
                                                : other_than_scalar(node, 1.0 / 6.0);
    const Node* mul = product < 0 ? nullptr : producer(product, "mul");
    if (!mul) return -1;
    for (int k : {0, 1}) {
      const Node* clamp = producer(mul->inputs[k], "clamp");
      if (!clamp || clamp->def->clamp_bounds(OpView(*clamp, ir_.operands)) != std::pair<float, float>(0.0f, 6.0f))
        continue;
      const Node* add = producer(clamp->inputs[0], "add");
      const int x = add ? other_than_scalar(*add, 3.0) : -1;
      if (x >= 0 && x == mul->inputs[1 - k]) return x;
    }
    return -1;
  }

  // The GELU input when the mul `node` ends a GELU chain, else -1.
  int gelu_input(const Node& node) const {
    for (int half_side : {0, 1}) {
      // (x * gate) * 0.5, or 0.5 * (x * gate)
      if (is_scalar(node.inputs[1 - half_side], 0.5)) {
        const Node* product = producer(node.inputs[half_side], "mul");
        if (!product) continue;
        for (int k : {0, 1}) {
          const int x = gelu_gate_input(product->inputs[k]);
          if (x >= 0 && x == product->inputs[1 - k]) return x;
        }
      }
      // (x * 0.5) * gate
      const Node* half = producer(node.inputs[half_side], "mul");
      if (half) {
        const int x = other_than_scalar(*half, 0.5);
        if (x >= 0 && gelu_gate_input(node.inputs[1 - half_side]) == x) return x;
      }
    }
    return -1;
  }

 private:
  const CompileState& state_;
  const GraphIR& ir_;
  std::vector<int> readers_;
};

}  // namespace

void recognize_ops(CompileState& state) {
  GraphIR& ir = state.graph;
  const OpDef* gelu = find_op("gelu");
  const OpDef* hard_swish = find_op("hardSwish");
  const Matcher matcher(state);  // reader counts stay right: a rewritten chain's inner values had one reader
  size_t recognized = 0;
  for (size_t n = 0; n < ir.nodes.size(); ++n) {
    Node& node = ir.nodes[n];
    if (!state.live_node[n] || (node.def->name != "mul" && node.def->name != "div")) continue;
    const int y = node.outputs[0];
    const DataType type = ir.operands[size_t(y)].desc.data_type;
    if (type != DataType::kFloat32 && type != DataType::kFloat16) continue;
    const OpDef* op = nullptr;
    int x = node.def->name == "mul" ? matcher.gelu_input(node) : -1;
    if (x >= 0) op = gelu;
    else if ((x = matcher.hard_swish_input(node)) >= 0) op = hard_swish;
    if (!op || ir.operands[size_t(x)].desc != ir.operands[size_t(y)].desc) continue;
    const bool rounds = node.rounds_to_half;
    node = Node{op, {OperandRef{x}}, node.label, {x}, {y}, nullptr};
    node.rounds_to_half = rounds;
    ++recognized;
  }
  state.log("op_recognition", str_cat(recognized, " element-wise chains run as one op (gelu, hardSwish)"));
}

}  // namespace webnn
