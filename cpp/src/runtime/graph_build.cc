// The runtime side of MLGraphBuilder: binding it to a context, constants from MLTensors, and
// build(), which compiles the recorded graph on the context's timeline.
#include "compiler/plan.h"
#include "graph/builder_impl.h"
#include "runtime/objects.h"

namespace webnn {

using detail::BuilderImpl;

GraphBuilder::GraphBuilder(const Context& context) : impl_(std::make_shared<BuilderImpl>()) {
  if (!context.impl()) throw_type_error("MLGraphBuilder: invalid context");
  if (context.impl()->lost) throw_error(ErrorKind::kInvalidStateError, "MLGraphBuilder: the context is lost");
  impl_->context = context.impl();
  impl_->context_lost = &context.impl()->lost;
}

Context GraphBuilder::context() const { return Context(impl_->context); }

Operand GraphBuilder::constant(const Tensor& tensor) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  auto& t = tensor.impl();
  if (!t) throw_type_error("constant: invalid MLTensor");
  if (t->context != impl_->context) throw_type_error("constant: the MLTensor belongs to another context");
  if (t->destroyed) throw_type_error("constant: the MLTensor is destroyed");
  if (!t->is_constant) throw_type_error("constant: the MLTensor was not created by createConstantTensor");
  impl_->check_can_build("constant");
  OperandInfo info;
  info.kind = OperandInfo::Kind::kConstant;
  info.desc = t->desc;
  info.constant_data = std::atomic_load(&t->data);
  if (!info.constant_data) throw_type_error("constant: the MLTensor is destroyed");
  info.constant_tensor = t;
  return impl_->add_operand(impl_, std::move(info));
}

Future<Graph> GraphBuilder::build_async(const std::map<std::string, Operand>& outputs) {
  Future<Graph> future;
  std::lock_guard<std::mutex> lock(impl_->mutex);
  try {
    impl_->check_can_build("build");
    if (outputs.empty()) throw_type_error("build: at least one output is required");
    std::map<std::string, int> output_ids;
    for (const auto& [name, op] : outputs) {
      std::string what = "build: output '" + name + "'";
      if (name.empty()) throw_type_error("build: an output name is empty");
      if (op.builder_impl() != impl_.get()) throw_type_error(what + " is an MLOperand from another MLGraphBuilder");
      const OperandInfo& info = impl_->ir.operands[op.id()];
      if (info.kind == OperandInfo::Kind::kInput)
        throw_type_error(what + " is a graph input; use identity() to output it");
      if (info.kind == OperandInfo::Kind::kConstant)
        throw_type_error(what + " is a constant; use identity() to output it");
      output_ids[name] = op.id();
    }
    for (const OperandInfo& info : impl_->ir.operands)
      if (info.constant_tensor && info.constant_tensor->destroyed)
        throw_type_error("build: a constant's MLTensor has been destroyed");
  } catch (...) {
    future.reject(std::current_exception());
    return future;
  }
  impl_->has_built = true;

  auto context = impl_->context;
  auto ir = std::make_shared<GraphIR>(std::move(impl_->ir));
  impl_->ir = GraphIR{};
  if (impl_->keep_graph_after_build) {
    impl_->ir.operands = ir->operands;  // operand descriptors stay readable after build
    impl_->ir.nodes = ir->nodes;        // and the graph can be saved (formats/)
  }
  std::map<std::string, int> output_ids;
  for (const auto& [name, op] : outputs) output_ids[name] = op.id();

  bool dynamic = false;
  for (const OperandInfo& info : ir->operands) dynamic = dynamic || (info.kind == OperandInfo::Kind::kInput && info.desc.is_dynamic());
  if (dynamic) {
    std::map<std::string, OperandDescriptor> inputs, outs;
    for (const OperandInfo& info : ir->operands)
      if (info.kind == OperandInfo::Kind::kInput) inputs[info.name] = info.reported ? *info.reported : info.desc;
    for (const auto& [name, id] : output_ids) {
      const OperandInfo& info = ir->operands[size_t(id)];
      outs[name] = info.reported ? *info.reported : info.desc;
    }
    Graph graph = detail::make_dynamic_graph(Context(context), inputs, outs,
                                             detail::specialize_by_inference(ir, output_ids));
    // Resolved in order with the context's other work, like a static build.
    context->timeline->submit([context, graph, future] {
      if (context->lost) future.reject(ErrorKind::kInvalidStateError, "build: the context is lost");
      else future.resolve(graph);
    });
    return future;
  }

  context->timeline->submit([context, ir, output_ids, future] {
    if (context->lost) {
      future.reject(ErrorKind::kInvalidStateError, "build: the context is lost");
      return;
    }
    try {
      auto graph = std::make_shared<detail::GraphImpl>();
      graph->context = context;
      for (const auto& [name, id] : output_ids) graph->output_descriptors[name] = ir->operands[size_t(id)].desc;
      std::map<std::string, OperandDescriptor> inputs;  // (the IR moves into the compiler)
      for (const OperandInfo& info : ir->operands)
        if (info.kind == OperandInfo::Kind::kInput) inputs[info.name] = info.desc;
      graph->plan = compile_plan(std::move(*ir), output_ids, context->pool.max_threads());
      for (const auto& in : graph->plan->inputs) graph->input_descriptors[in.name] = inputs.at(in.name);
      context->register_graph(graph);
      release_free_memory();  // what importing and packing the weights left behind
      future.resolve(Graph(graph));
    } catch (const Error& e) {
      future.reject(ErrorKind::kOperationError, std::string("build: compilation failed: ") + e.what());
    } catch (const std::exception& e) {
      future.reject(ErrorKind::kOperationError, std::string("build: compilation failed: ") + e.what());
    }
  });
  return future;
}

namespace detail {

Graph make_dynamic_graph(const Context& context, const std::map<std::string, OperandDescriptor>& inputs,
                         const std::map<std::string, OperandDescriptor>& outputs, Specializer specialize) {
  auto graph = std::make_shared<GraphImpl>();
  graph->context = context.impl();
  graph->input_descriptors = inputs;
  graph->output_descriptors = outputs;
  auto plans = std::make_shared<DynamicPlans>();
  plans->inputs = inputs;
  std::map<std::string, DynamicDimension> dims;
  for (const auto& [name, desc] : inputs)
    for (const DynamicDimension& d : desc.dynamic)
      if (d.dynamic()) dims[d.name] = d;
  for (auto& [name, d] : dims) plans->dimensions.push_back(d);
  plans->specialize = std::move(specialize);
  plans->compiler->threads = context.impl()->pool.max_threads();
  plans->capacity = default_plan_cache_capacity();
  graph->dynamic = std::move(plans);
  context.impl()->register_graph(graph);
  return Graph(graph);
}

ConcreteGraph take_builder_graph(GraphBuilder& builder, const std::map<std::string, Operand>& outputs) {
  auto& impl = builder.impl();
  std::lock_guard<std::mutex> lock(impl->mutex);
  impl->check_can_build("build");
  ConcreteGraph out;
  for (const auto& [name, op] : outputs) {
    if (op.builder_impl() != impl.get()) throw_type_error("build: output '" + name + "' is from another MLGraphBuilder");
    const OperandInfo& info = impl->ir.operands[size_t(op.id())];
    if (info.kind != OperandInfo::Kind::kIntermediate)
      throw_type_error("build: output '" + name + "' is a graph input or a constant; use identity() to output it");
    if (info.desc.is_dynamic()) throw_type_error("build: output '" + name + "' has dynamic dimensions");
    out.outputs[name] = op.id();
  }
  impl->has_built = true;
  out.ir = std::make_shared<GraphIR>(std::move(impl->ir));
  impl->ir = GraphIR{};
  return out;
}

}  // namespace detail

}  // namespace webnn
