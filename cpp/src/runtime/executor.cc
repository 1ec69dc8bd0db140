#include "runtime/executor.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "core/thread_pool.h"

namespace webnn {

namespace {

// The steps over one chunk, which starts at memory.chunk_inputs / chunk_outputs.
void run_steps(Plan& plan, Plan::RunMemory& memory, ThreadPool* pool) {
  const std::vector<const uint8_t*>& inputs = memory.chunk_inputs;
  const std::vector<uint8_t*>& outputs = memory.chunk_outputs;
  std::vector<void*>& ptr = memory.pointers;
  ptr.assign(plan.base_pointers.begin(), plan.base_pointers.end());
  if (memory.arena)  // a second arena: its own place for every intermediate value
    for (const auto& [operand, offset] : plan.arena_slots) ptr[size_t(operand)] = memory.arena->data() + offset;
  for (size_t i = 0; i < plan.inputs.size(); ++i) ptr[plan.inputs[i].id] = const_cast<uint8_t*>(inputs[i]);
  for (size_t i = 0; i < plan.outputs.size(); ++i)
    if (plan.outputs[i].direct) ptr[plan.outputs[i].id] = outputs[i];

  for (const Plan::Placement& p : plan.placements) ptr[p.operand] = static_cast<uint8_t*>(ptr[p.root]) + p.offset;

  std::vector<const void*>& in_ptrs = memory.step_inputs;
  std::vector<void*>& out_ptrs = memory.step_outputs;
  const bool profiling = plan.profiling.load(std::memory_order_relaxed);
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const Step& step = plan.steps[s];
    if (!step.kernel) {
      ptr[step.outputs[0]] = ptr[step.inputs[0]];
      continue;
    }
    in_ptrs.resize(step.inputs.size());
    out_ptrs.resize(step.outputs.size());
    for (size_t i = 0; i < step.inputs.size(); ++i) in_ptrs[i] = ptr[step.inputs[i]];
    for (size_t i = 0; i < step.outputs.size(); ++i) out_ptrs[i] = ptr[step.outputs[i]];
    if (!profiling) {
      step.kernel(KernelArgs{in_ptrs.data(), out_ptrs.data(), pool});
      continue;
    }
    const auto start = std::chrono::steady_clock::now();
    step.kernel(KernelArgs{in_ptrs.data(), out_ptrs.data(), pool});
    const auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start);
    plan.step_nanos[s].fetch_add(uint64_t(nanos.count()), std::memory_order_relaxed);
  }
  for (size_t i = 0; i < plan.outputs.size(); ++i)
    if (!plan.outputs[i].direct) std::memcpy(outputs[i], ptr[plan.outputs[i].id], plan.outputs[i].bytes);
}

// Working memory for `count` concurrent chunks, made on first use: the first uses the plan's arena.
void ensure_run_memory(Plan& plan, size_t count) {
  while (plan.run_memory.size() < count) {
    auto memory = std::make_unique<Plan::RunMemory>();
    if (!plan.run_memory.empty() && plan.arena_bytes) memory->arena = std::make_shared<AlignedBuffer>(plan.arena_bytes);
    plan.run_memory.push_back(std::move(memory));
  }
}

}  // namespace

void execute_plan(Plan& plan, const std::vector<BufferPtr>& inputs, const std::vector<BufferPtr>& outputs,
                  ThreadPool* pool) {
  const Plan::Split& split = plan.split;
  const auto point_at_chunk = [&](Plan::RunMemory& memory, size_t chunk) {
    memory.chunk_inputs.resize(inputs.size());
    memory.chunk_outputs.resize(outputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) memory.chunk_inputs[i] = inputs[i]->data() + chunk * split.input_bytes[i];
    for (size_t i = 0; i < outputs.size(); ++i) memory.chunk_outputs[i] = outputs[i]->data() + chunk * split.output_bytes[i];
  };
  if (split.workers <= 1 || pool->max_threads() < 2) {
    ensure_run_memory(plan, 1);
    for (size_t chunk = 0; chunk < split.chunks; ++chunk) {
      point_at_chunk(*plan.run_memory[0], chunk);
      run_steps(plan, *plan.run_memory[0], pool);
    }
  } else {
    // Whole chunks at once, one per thread; each takes a free working memory for its run.
    ensure_run_memory(plan, size_t(std::max(split.workers, pool->max_threads())));
    ThreadPool alone(1);
    pool->parallel_for(split.chunks, 1, [&](size_t begin, size_t end) {
      // At most max_threads calls run at once, and there are as many memories: one is free.
      Plan::RunMemory* memory = nullptr;
      for (size_t m = 0; !memory; m = (m + 1) % plan.run_memory.size())
        if (!plan.run_memory[m]->in_use.exchange(true, std::memory_order_acquire)) memory = plan.run_memory[m].get();
      struct Release {
        Plan::RunMemory* memory;
        ~Release() { memory->in_use.store(false, std::memory_order_release); }
      } release{memory};
      for (size_t chunk = begin; chunk < end; ++chunk) {
        point_at_chunk(*memory, chunk);
        run_steps(plan, *memory, &alone);
      }
    });
  }
  if (plan.profiling.load(std::memory_order_relaxed)) plan.profiled_runs.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace webnn
