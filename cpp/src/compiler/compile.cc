#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <queue>
#include <set>
#include <tuple>

#include "compiler/plan.h"

namespace webnn {

namespace {

size_t round_up(size_t n) { return (n + kAlignment - 1) / kAlignment * kAlignment; }

// Lifetime intervals placed into one arena. Up to kGreedyLimit intervals: greedy, largest first
// (tightest, but each placement scans the placed intervals). Beyond: a linear scan in time order
// with a best-fit free list (O(n log n)), so huge graphs still build in near-linear time.
struct Interval {
  int id;
  size_t bytes;
  int first, last;
  size_t offset = 0;
};
constexpr size_t kGreedyLimit = 4096;

size_t place_largest_first(std::vector<Interval>& intervals) {
  std::vector<Interval*> order;
  for (auto& iv : intervals) order.push_back(&iv);
  std::sort(order.begin(), order.end(), [](Interval* a, Interval* b) {
    return a->bytes != b->bytes ? a->bytes > b->bytes : a->id < b->id;
  });
  std::vector<Interval*> placed;
  size_t total = 0;
  for (Interval* iv : order) {
    std::vector<std::pair<size_t, size_t>> busy;
    for (Interval* p : placed)
      if (!(p->last < iv->first || iv->last < p->first)) busy.push_back({p->offset, p->offset + p->bytes});
    std::sort(busy.begin(), busy.end());
    size_t offset = 0;
    for (auto& [begin, end] : busy) {
      if (offset + iv->bytes <= begin) break;
      offset = std::max(offset, round_up(end));
    }
    iv->offset = offset;
    total = std::max(total, offset + iv->bytes);
    placed.push_back(iv);
  }
  return total;
}

// Free arena blocks (sizes are multiples of kAlignment), merged with their free neighbours.
class FreeBlocks {
 public:
  // The offset of a block of `bytes`: the smallest free block that fits, else the arena's end.
  size_t take(size_t bytes) {
    auto fit = by_size_.lower_bound({bytes, 0});
    if (fit != by_size_.end()) {
      const auto [size, offset] = *fit;
      erase(offset, size);
      if (size > bytes) insert(offset + bytes, size - bytes);
      return offset;
    }
    // A free block that ends the arena grows instead of leaving a hole.
    if (!by_offset_.empty()) {
      auto last = std::prev(by_offset_.end());
      if (last->first + last->second == end_) {
        const size_t offset = last->first;
        erase(offset, last->second);
        end_ = offset + bytes;
        return offset;
      }
    }
    const size_t offset = end_;
    end_ += bytes;
    return offset;
  }
  void give(size_t offset, size_t bytes) {
    auto next = by_offset_.lower_bound(offset);
    if (next != by_offset_.end() && offset + bytes == next->first) {
      bytes += next->second;
      erase(next->first, next->second);
    }
    auto after = by_offset_.lower_bound(offset);
    if (after != by_offset_.begin()) {
      auto prev = std::prev(after);
      if (prev->first + prev->second == offset) {
        offset = prev->first;
        bytes += prev->second;
        erase(prev->first, prev->second);
      }
    }
    insert(offset, bytes);
  }
  size_t end() const { return end_; }

 private:
  void insert(size_t offset, size_t bytes) {
    by_offset_.emplace(offset, bytes);
    by_size_.insert({bytes, offset});
  }
  void erase(size_t offset, size_t bytes) {
    by_offset_.erase(offset);
    by_size_.erase({bytes, offset});
  }
  std::map<size_t, size_t> by_offset_;       // offset -> size
  std::set<std::pair<size_t, size_t>> by_size_;  // (size, offset)
  size_t end_ = 0;
};

size_t place_in_time_order(std::vector<Interval>& intervals) {
  std::vector<Interval*> order;
  for (auto& iv : intervals) order.push_back(&iv);
  std::sort(order.begin(), order.end(),
            [](Interval* a, Interval* b) { return a->first != b->first ? a->first < b->first : a->id < b->id; });
  auto ends_later = [](Interval* a, Interval* b) { return a->last > b->last; };
  std::priority_queue<Interval*, std::vector<Interval*>, decltype(ends_later)> live(ends_later);
  FreeBlocks blocks;
  for (Interval* iv : order) {
    while (!live.empty() && live.top()->last < iv->first) {
      blocks.give(live.top()->offset, live.top()->bytes);
      live.pop();
    }
    iv->offset = blocks.take(iv->bytes);
    live.push(iv);
  }
  return blocks.end();
}

size_t place_intervals(std::vector<Interval>& intervals) {
  for (auto& iv : intervals) iv.bytes = round_up(iv.bytes);
  return intervals.size() <= kGreedyLimit ? place_largest_first(intervals) : place_in_time_order(intervals);
}

struct Fusion {
  bool absorbed = false;  // this add or activation node runs inside another node's kernel
  int runs_in = -1;       // absorbed: that node
  int output = -1;        // the node's new output operand (the last absorbed node's)
  bool activation = false;
  float min = -std::numeric_limits<float>::infinity();
  float max = std::numeric_limits<float>::infinity();
  int residual = -1;  // the other addend of an absorbed add: an extra input
  bool column_bias = false;  // that addend is a row of N values added to every output row
  int emit_at = -1;   // with a residual: the add's position, where the addend exists
  std::vector<std::string> absorbed_ops;  // what it runs besides itself
};

// The bounds of a relu or clamp node, as float32.
std::pair<float, float> activation_bounds(const Node& node, const GraphIR& ir) {
  float lo = 0.0f, hi = std::numeric_limits<float>::infinity();
  if (node.def->name == "clamp") {
    OpView clamp(*node.def, node.args, ir.operands, node.label);
    lo = -std::numeric_limits<float>::infinity();
    if (clamp.has("minValue")) lo = float(number_to_double_as(clamp.number("minValue"), DataType::kFloat32));
    if (clamp.has("maxValue")) hi = float(number_to_double_as(clamp.number("maxValue"), DataType::kFloat32));
    if (std::isnan(lo)) lo = -std::numeric_limits<float>::infinity();  // a NaN bound clamps nothing
    if (std::isnan(hi)) hi = std::numeric_limits<float>::infinity();
  }
  return {lo, hi};
}

// Whether `shape` is a row of `n` values: [n] or [1, ..., 1, n].
bool is_row(const std::vector<uint32_t>& shape, uint32_t n) {
  if (shape.empty() || shape.back() != n) return false;
  return std::all_of(shape.begin(), shape.end() - 1, [](uint32_t d) { return d == 1; });
}

// Epilogue fusion, in creation order: an op whose float32 output is used only by an `add` absorbs
// the add when the other addend has the output's shape (a residual) or, for ops that take one, is a
// row of N values (a column bias); the addend becomes the kernel's extra input and the fused node
// runs where the add was, once the addend exists. An op (or fused op + add) whose output is used
// only by a relu or clamp absorbs the activation.
std::vector<Fusion> plan_fusions(const GraphIR& ir, const std::vector<bool>& live_node,
                                 const std::map<std::string, int>& outputs) {
  std::vector<Fusion> fusion(ir.nodes.size());
  std::vector<int> uses(ir.operands.size(), 0);
  for (size_t n = 0; n < ir.nodes.size(); ++n)
    if (live_node[n])
      for (int in : ir.nodes[n].inputs) ++uses[in];
  for (auto& [name, id] : outputs) ++uses[id];
  // The node whose kernel produces operand x, if x is its single-use float32 only output.
  auto fusable_producer = [&](int x) {
    int producer = ir.operands[x].producer;
    if (producer < 0 || uses[x] != 1 || ir.operands[x].desc.data_type != DataType::kFloat32) return -1;
    if (fusion[producer].absorbed) producer = fusion[producer].runs_in;
    return ir.nodes[producer].outputs.size() == 1 || fusion[producer].output >= 0 ? producer : -1;
  };
  for (size_t n = 0; n < ir.nodes.size(); ++n) {
    const Node& node = ir.nodes[n];
    const std::string& op = node.def->name;
    if (!live_node[n]) continue;
    if (op == "add") {
      const auto& out_shape = ir.operands[node.outputs[0]].desc.shape;
      for (int side = 0; side < 2; ++side) {
        const int x = node.inputs[side], other = node.inputs[1 - side];
        const int producer = fusable_producer(x);
        if (producer < 0 || fusion[producer].output >= 0 || ir.operands[x].desc.shape != out_shape || other == x)
          continue;
        const OpDef& def = *ir.nodes[producer].def;
        const auto& other_shape = ir.operands[other].desc.shape;
        const bool residual = def.fuses_residual && other_shape == out_shape;
        const bool column_bias = !residual && def.fuses_column_bias && other_shape.size() <= out_shape.size() &&
                                 !out_shape.empty() && is_row(other_shape, out_shape.back());
        if (!residual && !column_bias) continue;
        Fusion& target = fusion[producer];
        target.output = node.outputs[0];
        target.residual = other;
        target.column_bias = column_bias;
        target.emit_at = int(n);
        target.absorbed_ops.push_back(op);
        fusion[n].absorbed = true;
        fusion[n].runs_in = producer;
        break;
      }
      continue;
    }
    if (op != "relu" && op != "clamp") continue;
    const int producer = fusable_producer(node.inputs[0]);
    if (producer < 0 || !ir.nodes[producer].def->fuses_activation || fusion[producer].activation) continue;
    Fusion& target = fusion[producer];
    std::tie(target.min, target.max) = activation_bounds(node, ir);
    target.activation = true;
    target.output = node.outputs[0];
    target.absorbed_ops.push_back(op);
    fusion[n].absorbed = true;
    fusion[n].runs_in = producer;
  }
  return fusion;
}

}  // namespace

std::shared_ptr<Plan> compile_plan(const GraphIR& ir, const std::map<std::string, int>& outputs) {
  auto plan = std::make_shared<Plan>();
  const size_t operand_count = ir.operands.size();

  // 1. Dead-code removal: keep the nodes the outputs depend on.
  std::vector<bool> live_node(ir.nodes.size(), false);
  std::vector<int> stack;
  for (auto& [name, id] : outputs) stack.push_back(id);
  std::vector<bool> seen(operand_count, false);
  while (!stack.empty()) {
    int id = stack.back();
    stack.pop_back();
    if (seen[id]) continue;
    seen[id] = true;
    int producer = ir.operands[id].producer;
    if (producer < 0 || live_node[producer]) continue;
    live_node[producer] = true;
    for (int in : ir.nodes[producer].inputs) stack.push_back(in);
  }

  // 2. Fusion into kernel epilogues: a residual add, then a relu or clamp (float32 only, so the clamp
  // bounds need no rounding).
  std::vector<Fusion> fusion = plan_fusions(ir, live_node, outputs);

  // 3. Lowering, in creation (= topological) order.
  std::vector<int> alias_root(operand_count);
  std::vector<bool> raw_use(operand_count, false);  // read at run time (not only copied by a kernel)
  for (size_t i = 0; i < operand_count; ++i) alias_root[i] = int(i);
  for (size_t position = 0; position < ir.nodes.size(); ++position) {
    if (!live_node[position]) continue;
    // A node fused with an add runs at the add's position; other absorbed nodes do not run.
    size_t n = position;
    if (fusion[position].absorbed) {
      const int owner = fusion[position].runs_in;
      if (fusion[owner].emit_at != int(position)) continue;
      n = size_t(owner);
    } else if (fusion[position].emit_at >= 0) {
      continue;
    }
    const Node& node = ir.nodes[n];
    Step step{{}, node.inputs, node.outputs, node.def, node.label, fusion[n].absorbed_ops};
    std::vector<bool> copied(step.inputs.size() + 1, false);
    if (fusion[n].output >= 0) step.outputs = {fusion[n].output};
    if (fusion[n].residual >= 0) step.inputs.push_back(fusion[n].residual);
    if (node.def->is_view) {
      alias_root[node.outputs[0]] = alias_root[node.inputs[0]];
    } else {
      OpView view(*node.def, node.args, ir.operands, node.label);
      view.activation_min = fusion[n].min;
      view.activation_max = fusion[n].max;
      view.fused_residual = fusion[n].residual >= 0 && !fusion[n].column_bias;
      view.fused_column_bias = fusion[n].column_bias;
      std::vector<OperandDescriptor> out_descs;
      for (int o : step.outputs) out_descs.push_back(ir.operands[o].desc);
      step.kernel = node.def->lower(view, out_descs);
      for (int k : view.copied_constants())
        if (k >= 0) copied[size_t(k)] = true;
    }
    for (size_t k = 0; k < step.inputs.size(); ++k)
      if (!copied[k]) raw_use[size_t(alias_root[step.inputs[k]])] = true;
    plan->steps.push_back(std::move(step));
  }

  // 4. Inputs, constants and outputs.
  plan->base_pointers.assign(operand_count, nullptr);
  for (size_t i = 0; i < operand_count; ++i) {
    const OperandInfo& info = ir.operands[i];
    if (!seen[i]) continue;
    if (info.kind == OperandInfo::Kind::kInput) plan->inputs.push_back({info.name, int(i)});
    if (info.kind == OperandInfo::Kind::kConstant && raw_use[i]) {  // packed-only constants: no raw copy
      plan->constants.push_back(info.constant_data);
      plan->base_pointers[i] = info.constant_data->data();
    }
  }
  std::sort(plan->inputs.begin(), plan->inputs.end(), [](auto& a, auto& b) { return a.name < b.name; });
  std::vector<bool> bound(operand_count, false);
  for (auto& [name, id] : outputs) {
    bool direct = alias_root[id] == id && !bound[id];
    bound[id] = bound[id] || direct;
    plan->outputs.push_back({name, id, direct, ir.operands[id].desc.byte_length()});
  }

  // 5. Arena planning for the intermediate values.
  const int step_count = int(plan->steps.size());
  std::vector<int> first(operand_count, -1), last(operand_count, -1);
  for (int s = 0; s < step_count; ++s) {
    const Step& step = plan->steps[s];
    for (int in : step.inputs) last[alias_root[in]] = std::max(last[alias_root[in]], s);
    if (!step.kernel) continue;
    for (int out : step.outputs) {
      first[out] = s;
      last[out] = std::max(last[out], s);
    }
  }
  for (const auto& out : plan->outputs)
    if (!out.direct) last[alias_root[out.id]] = step_count;
  std::vector<Interval> intervals;
  for (size_t i = 0; i < operand_count; ++i) {
    if (first[i] < 0 || bound[i]) continue;
    intervals.push_back({int(i), round_up(ir.operands[i].desc.byte_length()), first[i], last[i]});
  }
  plan->arena_bytes = place_intervals(intervals);
  if (plan->arena_bytes) {
    plan->arena = std::make_shared<AlignedBuffer>(plan->arena_bytes);
    for (const auto& iv : intervals) plan->base_pointers[iv.id] = plan->arena->data() + iv.offset;
  }
  return plan;
}

}  // namespace webnn
