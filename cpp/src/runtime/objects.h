// The implementation objects behind Context, Tensor and Graph.
#pragma once
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "compiler/plan.h"
#include "core/common.h"
#include "core/thread_pool.h"
#include "runtime/dynamic_plans.h"
#include "runtime/timeline.h"

namespace webnn::detail {

struct PendingRead {
  std::mutex mutex;  // held while copying; a rejection takes it, so no copy follows one
  bool cancelled = false;
  Future<void> future;
};

struct TensorImpl {
  std::shared_ptr<ContextImpl> context;
  TensorDescriptor desc;
  bool is_constant = false;
  BufferPtr data;  // touched only on the timeline once created
  std::atomic<bool> destroyed{false};
  std::mutex mutex;
  std::vector<std::shared_ptr<PendingRead>> pending_reads;

  void destroy();
  void reject_pending_reads(ErrorKind kind, const std::string& message);
};

struct GraphImpl {
  std::shared_ptr<ContextImpl> context;
  std::map<std::string, OperandDescriptor> input_descriptors, output_descriptors;
  std::shared_ptr<Plan> plan;              // static graphs
  std::shared_ptr<DynamicPlans> dynamic;  // graphs with dynamic input dimensions: a plan per shape
  std::atomic<bool> destroyed{false};
};

// The plan describe_plan and profiling look at: the static plan, or the dynamic graph's last
// dispatched one once compiled (null before).
std::shared_ptr<Plan> current_plan(const GraphImpl& graph);

// Graph::output_descriptors_for, its messages starting with `what`.
std::map<std::string, OperandDescriptor> output_descriptors_for(const GraphImpl& graph, const InputShapes& input_shapes,
                                                                const std::string& what);

// A graph with dynamic dimensions from a specializer (the ONNX importer's): `inputs` and `outputs` as
// the API reports them.
Graph make_dynamic_graph(const Context& context, const std::map<std::string, OperandDescriptor>& inputs,
                         const std::map<std::string, OperandDescriptor>& outputs, Specializer specialize);
// The graph a builder holds, taken without compiling it (the builder is then built): for a specializer.
ConcreteGraph take_builder_graph(GraphBuilder& builder, const std::map<std::string, Operand>& outputs);

struct ContextImpl : std::enable_shared_from_this<ContextImpl> {
  explicit ContextImpl(const ContextOptions& opts);
  ~ContextImpl();

  ContextOptions options;
  ThreadPool pool;
  std::unique_ptr<Timeline> timeline;
  std::atomic<bool> lost{false};
  Future<std::string> lost_future;

  std::mutex mutex;  // guards the registries below
  std::vector<std::weak_ptr<TensorImpl>> tensors;
  std::vector<std::weak_ptr<GraphImpl>> graphs;

  void lose(const std::string& message);
  void check_not_lost(const char* what) const;
  void register_tensor(const std::shared_ptr<TensorImpl>& tensor);
  void register_graph(const std::shared_ptr<GraphImpl>& graph);
};

}  // namespace webnn::detail
