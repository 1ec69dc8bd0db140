#include "runtime/executor.h"

#include <chrono>
#include <cstring>

#include "core/thread_pool.h"

namespace webnn {

void execute_plan(Plan& plan, const std::vector<BufferPtr>& inputs, const std::vector<BufferPtr>& outputs,
                  ThreadPool* pool) {
  std::vector<void*>& ptr = plan.pointers;
  ptr.assign(plan.base_pointers.begin(), plan.base_pointers.end());
  for (size_t i = 0; i < plan.inputs.size(); ++i) ptr[plan.inputs[i].id] = inputs[i]->data();
  for (size_t i = 0; i < plan.outputs.size(); ++i)
    if (plan.outputs[i].direct) ptr[plan.outputs[i].id] = outputs[i]->data();

  for (const Plan::Placement& p : plan.placements) ptr[p.operand] = static_cast<uint8_t*>(ptr[p.root]) + p.offset;

  std::vector<const void*>& in_ptrs = plan.step_inputs;
  std::vector<void*>& out_ptrs = plan.step_outputs;
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
  if (profiling) plan.profiled_runs.fetch_add(1, std::memory_order_relaxed);
  for (size_t i = 0; i < plan.outputs.size(); ++i)
    if (!plan.outputs[i].direct) std::memcpy(outputs[i]->data(), ptr[plan.outputs[i].id], plan.outputs[i].bytes);
}

}  // namespace webnn
