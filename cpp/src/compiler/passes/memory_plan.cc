// The memory plan: graph inputs and outputs bound to the caller's buffers (an output computed
// straight into the caller's tensor when nothing aliases it), constants kept only when a kernel
// reads them at run time, and every intermediate value placed in one arena by its lifetime.
#include <algorithm>
#include <map>
#include <queue>
#include <set>

#include "compiler/passes.h"
#include "core/shared_constants.h"

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

}  // namespace

void plan_memory(CompileState& state) {
  const GraphIR& ir = state.graph;
  Plan& plan = *state.plan;
  const size_t operand_count = ir.operands.size();
  // Inputs, constants (kept only when read at run time) and outputs.
  plan.base_pointers.assign(operand_count, nullptr);
  for (size_t i = 0; i < operand_count; ++i) {
    const OperandInfo& info = ir.operands[i];
    if (!state.live_operand[i]) continue;
    if (info.kind == OperandInfo::Kind::kInput) plan.inputs.push_back({info.name, int(i)});
    if (info.kind == OperandInfo::Kind::kConstant && state.read_at_run_time[i]) {  // packed-only constants: no raw copy
      plan.constants.push_back(share_constant(info.constant_data));  // one copy per process
      plan.base_pointers[i] = plan.constants.back()->data();
    }
  }
  std::sort(plan.inputs.begin(), plan.inputs.end(), [](auto& a, auto& b) { return a.name < b.name; });
  // Where each operand's bytes live: a view's in its input's, a placed operand's in its root's.
  std::vector<int> storage(operand_count);
  const std::vector<CompileState::Storage> at = state.storage();
  for (size_t i = 0; i < operand_count; ++i) storage[i] = at[i].root;
  std::vector<bool> placed(operand_count, false);
  for (const Plan::Placement& p : plan.placements) placed[size_t(p.operand)] = true;
  std::vector<bool> bound(operand_count, false);
  for (const auto& [name, id] : state.outputs) {
    bool direct = state.alias_root[id] == id && !placed[size_t(id)] && !bound[id];
    bound[id] = bound[id] || direct;
    plan.outputs.push_back({name, id, direct, ir.operands[id].desc.byte_length()});
  }

  // The arena for intermediate values: one interval per storage, from its first write to its last read.
  const int step_count = int(plan.steps.size());
  std::vector<int> first(operand_count, -1), last(operand_count, -1);
  for (int s = 0; s < step_count; ++s) {
    const Step& step = plan.steps[s];
    for (int in : step.inputs) last[storage[in]] = std::max(last[storage[in]], s);
    if (!step.kernel) continue;
    for (int out : step.outputs) {
      const int at = storage[out];
      if (first[at] < 0) first[at] = s;
      last[at] = std::max(last[at], s);
    }
  }
  for (const auto& out : plan.outputs)
    if (!out.direct) last[storage[out.id]] = step_count;
  std::vector<Interval> intervals;
  for (size_t i = 0; i < operand_count; ++i) {
    if (first[i] < 0 || bound[i] || placed[i]) continue;
    intervals.push_back({int(i), round_up(ir.operands[i].desc.byte_length()), first[i], last[i]});
  }
  plan.arena_bytes = place_intervals(intervals);
  if (plan.arena_bytes) {
    plan.arena = std::make_shared<AlignedBuffer>(plan.arena_bytes);
    for (const auto& iv : intervals) {
      plan.base_pointers[iv.id] = plan.arena->data() + iv.offset;
      plan.arena_slots.push_back({iv.id, iv.offset});
    }
  }
  state.log("memory_plan", str_cat(intervals.size(), " intermediate values in a ", plan.arena_bytes, "-byte arena"));
}

}  // namespace webnn
