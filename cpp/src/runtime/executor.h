// Runs a compiled plan's steps on the context's timeline.
#pragma once
#include "compiler/plan.h"

namespace webnn {

// Runs the plan. `inputs`/`outputs` are aligned with plan.inputs/plan.outputs.
void execute_plan(Plan& plan, const std::vector<BufferPtr>& inputs, const std::vector<BufferPtr>& outputs,
                  ThreadPool* pool);

}  // namespace webnn
