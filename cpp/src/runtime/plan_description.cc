// What the compiler made of a graph (Graph::describe_plan) and where its dispatches spend their
// time (Graph::set_profiling, Graph::profile).
#include "compiler/plan.h"
#include "runtime/objects.h"

namespace webnn {

namespace {

std::shared_ptr<Plan> plan_of(const detail::GraphImpl& graph, const char* what) {
  if (graph.destroyed) throw_error(ErrorKind::kInvalidStateError, std::string(what) + ": the graph is destroyed");
  std::shared_ptr<Plan> plan = detail::current_plan(graph);
  if (!plan && graph.dynamic)
    throw_error(ErrorKind::kInvalidStateError,
                std::string(what) + ": the graph has dynamic dimensions and is compiled per input shape; "
                                    "no plan has run yet (dispatch it first)");
  if (!plan) throw_error(ErrorKind::kInvalidStateError, std::string(what) + ": the graph is destroyed");
  return plan;
}

}  // namespace

PlanDescription Graph::describe_plan() const {
  if (!impl_) throw_type_error("describePlan: invalid MLGraph");
  std::shared_ptr<Plan> plan = plan_of(*impl_, "describePlan");
  PlanDescription out;
  for (const Step& step : plan->steps) {
    PlanStep s;
    s.op = step.def->name;
    s.fused = step.fused;
    s.label = step.label;
    s.is_view = !step.kernel;
    for (int in : step.inputs) s.inputs.push_back(plan->operand_descs[in]);
    for (int o : step.outputs) s.outputs.push_back(plan->operand_descs[o]);
    out.steps.push_back(std::move(s));
  }
  for (const auto& record : plan->pass_log) out.passes.emplace_back(record.pass, record.summary);
  out.arena_bytes = plan->arena_bytes;
  for (const auto& constant : plan->constants) out.constant_bytes += constant->size();
  return out;
}

namespace detail {
void set_plan_profiling(Plan& plan, bool on) {
  if (on) {
    for (size_t s = 0; s < plan.steps.size(); ++s) plan.step_nanos[s].store(0, std::memory_order_relaxed);
    plan.profiled_runs.store(0, std::memory_order_relaxed);
  }
  plan.profiling.store(on, std::memory_order_relaxed);
}
}  // namespace detail

void Graph::set_profiling(bool on) {
  if (!impl_) throw_type_error("setProfiling: invalid MLGraph");
  if (impl_->dynamic) {  // every plan, and those compiled later
    if (impl_->destroyed) throw_error(ErrorKind::kInvalidStateError, "setProfiling: the graph is destroyed");
    detail::DynamicPlans& d = *impl_->dynamic;
    std::lock_guard<std::mutex> lock(d.mutex);
    d.compiler->profiling = on;
    for (const auto& p : d.plans)
      if (auto plan = std::atomic_load(&p->plan)) detail::set_plan_profiling(*plan, on);
    return;
  }
  detail::set_plan_profiling(*plan_of(*impl_, "setProfiling"), on);
}

GraphProfile Graph::profile() const {
  if (!impl_) throw_type_error("profile: invalid MLGraph");
  std::shared_ptr<Plan> plan = plan_of(*impl_, "profile");
  GraphProfile out;
  out.runs = plan->profiled_runs.load(std::memory_order_relaxed);
  for (size_t s = 0; s < plan->steps.size(); ++s)
    out.steps.push_back({s, double(plan->step_nanos[s].load(std::memory_order_relaxed)) * 1e-6});
  return out;
}

}  // namespace webnn
