// A graph with dynamic input dimensions: built once, compiled per concrete input shape. The first
// dispatch at a shape re-runs shape inference on the graph at those sizes (exact validation, with
// errors naming the op), and the timeline compiles a plan for it; plans are kept in a bounded cache,
// the most recently used first, each with its own arena. Packed weights are shared by all of them
// (core/shared_constants.h).
#pragma once
#include <atomic>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "compiler/plan.h"

namespace webnn::detail {

using InputShapes = std::map<std::string, std::vector<uint32_t>>;

// The graph IR at one set of concrete input shapes, and its outputs.
struct ConcreteGraph {
  std::shared_ptr<GraphIR> ir;
  std::map<std::string, int> outputs;
};
// Makes the concrete graph for validated input shapes; throws TypeError when the graph is not valid
// at those sizes.
using Specializer = std::function<ConcreteGraph(const InputShapes& shapes)>;

struct ShapePlan {
  std::vector<uint32_t> key;  // the size of each dynamic dimension, in DynamicPlans::dimensions order
  std::map<std::string, OperandDescriptor> inputs, outputs;
  ConcreteGraph graph;          // until compiled; touched on the timeline only
  std::shared_ptr<Plan> plan;   // compiled at the first run (atomic_load / atomic_store)
};

// Compiles shape plans on the timeline. Queued runs hold this, not DynamicPlans, so that a specializer
// holding Python objects is never released on the timeline thread.
struct PlanCompiler {
  int threads = 1;
  std::atomic<uint64_t> compilations{0};
  std::atomic<bool> profiling{false};  // plans compiled from now on start profiled

  // The shape plan's compiled plan, compiling it the first time (on the timeline only).
  std::shared_ptr<Plan> compiled(ShapePlan& shape_plan);
};

struct DynamicPlans {
  std::vector<DynamicDimension> dimensions;  // every dynamic input dimension, by name
  std::map<std::string, OperandDescriptor> inputs;  // as declared
  Specializer specialize;
  std::shared_ptr<PlanCompiler> compiler = std::make_shared<PlanCompiler>();

  std::mutex mutex;  // guards the members below
  std::list<std::shared_ptr<ShapePlan>> plans;  // most recently used first
  size_t capacity = 8;
  std::shared_ptr<ShapePlan> last;  // the last dispatched (describe_plan, profiling)

  // Checks `shapes` against the declared inputs (`what`: "dispatch", ...) and returns the plan for
  // them: cached, or made now (specialized; compiled later by compiled()).
  // A dispatch's plan becomes `last`.
  std::shared_ptr<ShapePlan> plan_for(const InputShapes& shapes, const std::string& what, bool dispatch);
  void set_capacity(size_t capacity);
  // Drops every plan (graph destroyed); returns them so that the caller frees them after queued work.
  std::list<std::shared_ptr<ShapePlan>> clear();
};

// The specializer of a builder's graph: shape inference re-run on its IR at the given sizes.
Specializer specialize_by_inference(std::shared_ptr<const GraphIR> ir, std::map<std::string, int> outputs);

// Turns a plan's profiling on (its counts reset) or off.
void set_plan_profiling(Plan& plan, bool on);

// The default cache capacity: WEBNN_PLAN_CACHE_SIZE, else 8.
size_t default_plan_cache_capacity();

}  // namespace webnn::detail
