// Half widening: float16 values inside the graph are held in float32. Every float16 op already
// computes in float32 and rounds once as it stores its result; here the nodes between float16
// values become float32 nodes whose steps round their results to float16 values (Node::rounds_to_half,
// in the kernel's epilogue where it has one). The values are the same, and the float32 kernels,
// fusions and layouts apply: no conversion of operands on the way into and out of every kernel.
//  - Graph inputs and outputs keep their types: a float16 input is widened once by a cast, and a
//    float16 output is narrowed from its float32 twin by a cast (exact: the twin holds float16 values).
//  - float16 constants read by the widened nodes get float32 copies (exact).
//  - Scalar options the spec casts to the operand's type (clamp's bounds, pad's value, alpha, beta,
//    epsilon) are rounded to float16 first, so they keep their float16 values.
//  - Casts that become float32 -> float32 without rounding are dropped (readers take their input):
//    a float16 model's Cast -> op -> Cast chains leave no copy behind.
//  - A node whose float32 form fails validation keeps float16, with exact casts around it.
#include <algorithm>

#include "compiler/passes.h"
#include "kernels/unary/unary.h"

namespace webnn {

namespace {

// Pointers to every operand id in a node's arguments.
std::vector<int*> operand_arguments(Node& node) {
  std::vector<int*> ids;
  for (Attr& a : node.args) {
    if (auto* ref = std::get_if<OperandRef>(&a)) ids.push_back(&ref->id);
    if (auto* list = std::get_if<OperandList>(&a))
      for (int& id : list->ids) ids.push_back(&id);
  }
  return ids;
}

ParamKind kind_of(const Node& node, size_t argument) {
  const OpDef& def = *node.def;
  return argument < def.params.size() ? def.params[argument].kind : def.options[argument - def.params.size()].kind;
}

// The node's scalar options the spec casts to the operand's type, as their float16 values.
void round_scalars_to_half(Node& node) {
  for (size_t i = 0; i < node.args.size(); ++i) {
    const ParamKind kind = kind_of(node, i);
    Attr& a = node.args[i];
    if (kind == ParamKind::kNumber) {
      if (auto* n = std::get_if<Number>(&a)) *n = Number::from_double(number_to_double_as(*n, DataType::kFloat16));
    } else if (kind == ParamKind::kDouble) {
      if (auto* d = std::get_if<double>(&a)) *d = number_to_double_as(Number::from_double(*d), DataType::kFloat16);
    }
  }
}

class Widening {
 public:
  explicit Widening(CompileState& state) : state_(state), ir_(state.graph) {}

  // Returns how many nodes became float32 (0: the graph holds no float16 value between nodes).
  size_t run() {
    const size_t operand_count = ir_.operands.size();
    was_half_.resize(operand_count);
    for (size_t i = 0; i < operand_count; ++i) was_half_[i] = is_half(int(i));
    // The float16 values computed by one node and read by others: held in float32 from now on.
    widened_.assign(operand_count, false);
    size_t count = 0;
    for (size_t n = 0; n < ir_.nodes.size(); ++n)
      if (state_.live_node[n])
        for (int out : ir_.nodes[n].outputs)
          if (was_half_[size_t(out)] && !state_.is_graph_output(out)) widened_[size_t(out)] = true, ++count;
    if (count == 0) return 0;
    // Which nodes' results need rounding is decided on their float16 form (OpDef::exact_results).
    exact_.assign(ir_.nodes.size(), false);
    for (size_t n = 0; n < ir_.nodes.size(); ++n) {
      const Node& node = ir_.nodes[n];
      exact_[n] = node.def->is_view || (node.def->exact_results && node.def->exact_results(OpView(node, ir_.operands)));
    }
    for (size_t i = 0; i < operand_count; ++i)
      if (widened_[i]) ir_.operands[i].desc.data_type = DataType::kFloat32;
    as_float32_.assign(operand_count, -1);
    as_half_.assign(operand_count, -1);
    alias_.assign(operand_count, -1);
    readers_ = state_.live_readers();

    for (size_t n = 0; n < ir_.nodes.size(); ++n) {
      if (!state_.live_node[n]) continue;
      // Whether the node reads or writes a widened value: decided on its operands as built (a value
      // whose copy was dropped is read from the copy's float32 input instead, below).
      const Node& built = ir_.nodes[n];
      const auto widened = [&](int id) { return bool(widened_[size_t(id)]); };
      const bool touches = std::any_of(built.inputs.begin(), built.inputs.end(), widened) ||
                           std::any_of(built.outputs.begin(), built.outputs.end(), widened);
      Node node = built;
      for (int* id : operand_arguments(node))
        if (alias_[size_t(*id)] >= 0) *id = alias_[size_t(*id)];
      rebuild_inputs(node);
      if (!touches) {
        nodes_.push_back(std::move(node));
        continue;
      }
      if (!widen(node, exact_[n])) keep_half(built);
    }
    ir_.nodes = std::move(nodes_);
    for (OperandInfo& operand : ir_.operands) operand.producer = -1;
    for (size_t n = 0; n < ir_.nodes.size(); ++n)
      for (int out : ir_.nodes[n].outputs) ir_.operands[size_t(out)].producer = int(n);
    return widened_nodes_;
  }

  size_t casts() const { return casts_; }
  size_t kept_half() const { return kept_half_; }
  size_t dropped_casts() const { return dropped_casts_; }

 private:
  bool is_half(int id) const { return ir_.operands[size_t(id)].desc.data_type == DataType::kFloat16; }

  int add_operand(const OperandDescriptor& desc) {
    OperandInfo info;
    info.desc = desc;
    ir_.operands.push_back(std::move(info));
    for (auto* v : {&as_float32_, &as_half_, &alias_}) v->push_back(-1);
    was_half_.push_back(desc.data_type == DataType::kFloat16);
    widened_.push_back(false);
    readers_.push_back(0);
    return int(ir_.operands.size()) - 1;
  }

  // y = cast(x) to `type`: exact here (a float16 value into float32 or back).
  void emit_cast(int x, int y, DataType type, const std::string& label) {
    Node cast{find_op("cast"), {OperandRef{x}, std::string(data_type_name(type))}, label, {x}, {y}, nullptr};
    revalidate(cast, ir_.operands);
    nodes_.push_back(std::move(cast));
    ++casts_;
  }

  // The float32 operand holding float16 operand x's values.
  int float32_of(int x, const std::string& label) {
    if (widened_[size_t(x)]) return x;
    if (as_float32_[size_t(x)] >= 0) return as_float32_[size_t(x)];
    const OperandInfo& info = ir_.operands[size_t(x)];
    OperandDescriptor desc = info.desc;
    desc.data_type = DataType::kFloat32;
    int y;
    if (info.kind == OperandInfo::Kind::kConstant && info.constant_data) {  // widened now, once
      BufferPtr data = std::make_shared<AlignedBuffer>(std::max<size_t>(desc.byte_length(), 1));
      widen_halves(info.constant_data->data(), reinterpret_cast<float*>(data->data()), desc.element_count(), nullptr);
      y = add_operand(desc);
      ir_.operands[size_t(y)].kind = OperandInfo::Kind::kConstant;
      ir_.operands[size_t(y)].constant_data = std::move(data);
    } else {  // a graph input, a constant tensor, or a float16 graph output: widened where first read
      y = add_operand(desc);
      emit_cast(x, y, DataType::kFloat32, label);
    }
    as_float32_[size_t(x)] = y;
    return y;
  }

  // A float16 operand holding widened operand x's values (for a node kept in float16), narrowed from
  // x, or from the float32 input of x's dropped copy.
  int half_of(int x, const std::string& label) {
    if (!widened_[size_t(x)]) return x;
    if (as_half_[size_t(x)] < 0) {
      const int source = alias_[size_t(x)] >= 0 ? alias_[size_t(x)] : x;
      OperandDescriptor desc = ir_.operands[size_t(source)].desc;
      desc.data_type = DataType::kFloat16;
      as_half_[size_t(x)] = add_operand(desc);
      emit_cast(source, as_half_[size_t(x)], DataType::kFloat16, label);
    }
    return as_half_[size_t(x)];
  }

  // Rewrites `node` to float32; false (the node not emitted) when its float32 form does not validate.
  bool widen(const Node& original, bool exact) {
    if (!original.absorbed_ops.empty()) return false;  // rewritten by an earlier pass: left as it is
    Node node = original;
    const bool is_cast = node.def == find_op("cast");  // (the type conversion this pass rewrites)
    std::vector<int*> inputs = operand_arguments(node);
    std::vector<std::pair<int, int>> twins;  // (graph output, its float32 twin)
    for (int* id : inputs)
      if (was_half_[size_t(*id)]) *id = float32_of(*id, node.label);
    for (size_t i = 0; i < node.args.size(); ++i)  // a float16 result type argument (cast's) becomes float32
      if (auto* type = std::get_if<std::string>(&node.args[i]); type && *type == "float16" && kind_of(node, i) == ParamKind::kDataType)
        *type = "float32";
    round_scalars_to_half(node);
    for (int& out : node.outputs) {
      if (!was_half_[size_t(out)] || widened_[size_t(out)]) continue;
      OperandDescriptor desc = ir_.operands[size_t(out)].desc;  // a float16 graph output: a float32 twin
      desc.data_type = DataType::kFloat32;
      twins.push_back({out, add_operand(desc)});
      out = twins.back().second;
    }
    rebuild_inputs(node);
    bool valid = true;
    try {
      const std::vector<OperandDescriptor> descs = revalidate(node, ir_.operands);
      valid = descs.size() == node.outputs.size();
      for (size_t i = 0; valid && i < descs.size(); ++i) valid = descs[i] == ir_.operands[size_t(node.outputs[i])].desc;
    } catch (const Error&) {
      valid = false;
    }
    // (The casts emitted for its inputs stay: exact, and unread unless a later node reads them.)
    if (!valid) return false;
    const bool any_half_result = std::any_of(original.outputs.begin(), original.outputs.end(),
                                             [&](int id) { return was_half_[size_t(id)]; });
    node.rounds_to_half = any_half_result && !exact;
    ++widened_nodes_;
    // A cast that became float32 -> float32 without rounding is a copy: its readers take its input.
    if (is_cast && !node.rounds_to_half && ir_.operands[size_t(node.inputs[0])].desc.data_type == DataType::kFloat32 &&
        ir_.operands[size_t(node.outputs[0])].desc.data_type == DataType::kFloat32 && drop_copy(node))
      return true;
    nodes_.push_back(std::move(node));
    for (const auto& [out, twin] : twins) {
      as_float32_[size_t(out)] = twin;
      emit_cast(twin, out, DataType::kFloat16, nodes_.back().label);
    }
    return true;
  }

  // Drops a float32 copy y = x: readers of y read x, or, when y is a graph output and x is the
  // widened result of a node emitted here that only this copy reads, that node writes y itself.
  bool drop_copy(const Node& copy) {
    const int x = copy.inputs[0], y = copy.outputs[0];
    if (!state_.is_graph_output(y)) {
      alias_[size_t(y)] = x;
      ++dropped_casts_;
      return true;
    }
    if (!widened_[size_t(x)] || readers_[size_t(x)] != 1 || state_.is_graph_output(x)) return false;
    for (auto it = nodes_.rbegin(); it != nodes_.rend(); ++it) {
      auto out = std::find(it->outputs.begin(), it->outputs.end(), x);
      if (out == it->outputs.end()) continue;
      *out = y;
      ++dropped_casts_;
      return true;
    }
    return false;
  }

  // Keeps the node (as built) in float16: widened inputs narrowed (exact), widened outputs written as
  // float16 and widened after it.
  void keep_half(Node node) {
    for (int* id : operand_arguments(node)) *id = half_of(*id, node.label);
    std::vector<std::pair<int, int>> widen_after;
    for (int& out : node.outputs) {
      if (!widened_[size_t(out)]) continue;
      OperandDescriptor desc = ir_.operands[size_t(out)].desc;
      desc.data_type = DataType::kFloat16;
      const int half = add_operand(desc);
      widen_after.push_back({half, out});
      out = half;
    }
    rebuild_inputs(node);
    const std::string label = node.label;
    nodes_.push_back(std::move(node));
    for (const auto& [half, out] : widen_after) emit_cast(half, out, DataType::kFloat32, label);
    ++kept_half_;
  }

  CompileState& state_;
  GraphIR& ir_;
  std::vector<Node> nodes_;
  std::vector<bool> was_half_, widened_, exact_;
  std::vector<int> as_float32_, as_half_, alias_, readers_;
  size_t widened_nodes_ = 0, casts_ = 0, kept_half_ = 0, dropped_casts_ = 0;
};

}  // namespace

void widen_half_values(CompileState& state) {
  remove_dead_code(state);  // what constant folding left unread
  state.plan->pass_log.pop_back();
  Widening widening(state);
  const size_t widened = widening.run();
  if (widened == 0) {
    state.log("half_widening", "no float16 values between nodes");
    return;
  }
  remove_dead_code(state);
  state.plan->pass_log.pop_back();  // the dead-code line: this pass logs its own
  state.log("half_widening", str_cat(widened, " float16 nodes compute in float32 between float32 values (",
                                     widening.casts(), " casts at the edges, ", widening.dropped_casts(),
                                     " casts dropped, ", widening.kept_half(), " kept float16)"));
}

}  // namespace webnn
