#include "runtime/executor.h"

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

  std::vector<const void*>& in_ptrs = plan.step_inputs;
  std::vector<void*>& out_ptrs = plan.step_outputs;
  for (const Step& step : plan.steps) {
    if (!step.kernel) {
      ptr[step.outputs[0]] = ptr[step.inputs[0]];
      continue;
    }
    in_ptrs.resize(step.inputs.size());
    out_ptrs.resize(step.outputs.size());
    for (size_t i = 0; i < step.inputs.size(); ++i) in_ptrs[i] = ptr[step.inputs[i]];
    for (size_t i = 0; i < step.outputs.size(); ++i) out_ptrs[i] = ptr[step.outputs[i]];
    step.kernel(KernelArgs{in_ptrs.data(), out_ptrs.data(), pool});
  }
  for (size_t i = 0; i < plan.outputs.size(); ++i)
    if (!plan.outputs[i].direct) std::memcpy(outputs[i]->data(), ptr[plan.outputs[i].id], plan.outputs[i].bytes);
}

}  // namespace webnn
