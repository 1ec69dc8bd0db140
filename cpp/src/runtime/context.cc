// MLContext, MLTensor and MLGraph: synchronous validation on the caller, work on the timeline.
#include <algorithm>

#include "graph/op_def.h"
#include "runtime/executor.h"
#include "runtime/objects.h"

namespace webnn {

// ---------------------------------------------------------------- futures
namespace detail {

void FutureStateBase::settle_locked_and_notify(std::unique_lock<std::mutex>& lock) {
  settled = true;
  std::vector<std::function<void()>> to_run = std::move(callbacks);
  callbacks.clear();
  lock.unlock();
  cv.notify_all();
  for (auto& cb : to_run) cb();
}
void FutureStateBase::wait() {
  std::unique_lock<std::mutex> lock(mutex);
  cv.wait(lock, [&] { return settled; });
}
bool FutureStateBase::wait_for_ms(int64_t ms) {
  std::unique_lock<std::mutex> lock(mutex);
  return cv.wait_for(lock, std::chrono::milliseconds(ms), [&] { return settled; });
}

// ---------------------------------------------------------------- context
ContextImpl::ContextImpl(const ContextOptions& opts)
    : options(opts), pool(opts.num_threads), timeline(std::make_unique<Timeline>()) {}

ContextImpl::~ContextImpl() { timeline.reset(); }

void ContextImpl::check_not_lost(const char* what) const {
  if (lost) throw_error(ErrorKind::kInvalidStateError, std::string(what) + ": the context is lost");
}

void ContextImpl::register_tensor(const std::shared_ptr<TensorImpl>& tensor) {
  std::lock_guard<std::mutex> lock(mutex);
  // Drop dead entries now and then, so long-lived contexts do not grow without bound.
  if (tensors.size() >= 64 && (tensors.size() & (tensors.size() - 1)) == 0)
    tensors.erase(std::remove_if(tensors.begin(), tensors.end(), [](auto& w) { return w.expired(); }),
                  tensors.end());
  tensors.push_back(tensor);
}
void ContextImpl::register_graph(const std::shared_ptr<GraphImpl>& graph) {
  std::lock_guard<std::mutex> lock(mutex);
  if (graphs.size() >= 64 && (graphs.size() & (graphs.size() - 1)) == 0)
    graphs.erase(std::remove_if(graphs.begin(), graphs.end(), [](auto& w) { return w.expired(); }), graphs.end());
  graphs.push_back(graph);
}

void ContextImpl::lose(const std::string& message) {
  if (lost.exchange(true)) return;
  lost_future.resolve(std::string(message));
  std::vector<std::shared_ptr<GraphImpl>> live_graphs;
  std::vector<std::shared_ptr<TensorImpl>> live_tensors;
  {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto& w : graphs)
      if (auto g = w.lock()) live_graphs.push_back(g);
    for (auto& w : tensors)
      if (auto t = w.lock()) live_tensors.push_back(t);
  }
  for (auto& g : live_graphs) Graph(g).destroy();
  for (auto& t : live_tensors) t->destroy();
  timeline->notify();
}

// ---------------------------------------------------------------- tensor
void TensorImpl::reject_pending_reads(ErrorKind kind, const std::string& message) {
  std::vector<std::shared_ptr<PendingRead>> reads;
  {
    std::lock_guard<std::mutex> lock(mutex);
    reads.swap(pending_reads);
  }
  for (auto& r : reads) {
    std::lock_guard<std::mutex> lock(r->mutex);
    r->cancelled = true;
    r->future.reject(kind, message);
  }
}

void TensorImpl::destroy() {
  if (destroyed.exchange(true)) return;
  reject_pending_reads(ErrorKind::kInvalidStateError, "readTensor: the MLTensor was destroyed");
  auto self_context = context;
  BufferPtr released = std::atomic_exchange(&data, BufferPtr());
  // Release on the timeline, after work submitted earlier (which holds its own references).
  self_context->timeline->submit([released]() mutable { released.reset(); }, Timeline::Wake::kSoon);
  self_context->timeline->notify();
}

std::shared_ptr<Plan> current_plan(const GraphImpl& graph) {
  if (!graph.dynamic) return std::atomic_load(&graph.plan);
  std::shared_ptr<ShapePlan> last;
  {
    std::lock_guard<std::mutex> lock(graph.dynamic->mutex);
    last = graph.dynamic->last;
  }
  return last ? std::atomic_load(&last->plan) : nullptr;
}

}  // namespace detail

using detail::ContextImpl;
using detail::GraphImpl;
using detail::TensorImpl;

// ---------------------------------------------------------------- public: Context
Context Context::create(const ContextOptions& options) {
  if (options.power_preference != "default" && options.power_preference != "high-performance" &&
      options.power_preference != "low-power")
    throw_type_error("createContext: powerPreference must be 'default', 'high-performance' or 'low-power', got '" +
                     options.power_preference + "'");
  if (options.num_threads < 0) throw_type_error("createContext: num_threads must be >= 0");
  return Context(std::make_shared<ContextImpl>(options));
}

bool Context::accelerated() const { return false; }  // a CPU engine: no massively parallel accelerator
const std::string& Context::power_preference() const { return impl_->options.power_preference; }
int Context::num_threads() const { return impl_->pool.max_threads(); }
bool Context::lost_now() const { return impl_->lost; }
Future<std::string> Context::lost() const { return impl_->lost_future; }
void Context::destroy() { impl_->lose("the context was destroyed"); }

Tensor Context::create_tensor(const TensorDescriptor& descriptor) {
  impl_->check_not_lost("createTensor");
  check_dimensions(descriptor, "createTensor");
  auto t = std::make_shared<TensorImpl>();
  t->context = impl_;
  t->desc = descriptor;
  t->data = std::make_shared<AlignedBuffer>(descriptor.byte_length());
  impl_->register_tensor(t);
  return Tensor(t);
}

Tensor Context::create_constant_tensor(const OperandDescriptor& descriptor, const void* data, size_t byte_length) {
  impl_->check_not_lost("createConstantTensor");
  check_dimensions(descriptor, "createConstantTensor");
  if (byte_length != descriptor.byte_length())
    throw_type_error(str_cat("createConstantTensor: the buffer has ", byte_length, " bytes but ",
                             descriptor.to_string(), " needs ", descriptor.byte_length()));
  check_element_values(descriptor.data_type, data, byte_length, "createConstantTensor");
  auto t = std::make_shared<TensorImpl>();
  t->context = impl_;
  t->desc.data_type = descriptor.data_type;
  t->desc.shape = descriptor.shape;
  t->is_constant = true;
  t->data = std::make_shared<AlignedBuffer>(byte_length);
  std::memcpy(t->data->data(), data, byte_length);
  impl_->register_tensor(t);
  return Tensor(t);
}

namespace {
void check_tensor_use(const ContextImpl* context, const Tensor& tensor, const char* what) {
  const auto& t = tensor.impl();
  if (!t) throw_type_error(std::string(what) + ": invalid MLTensor");
  if (t->context.get() != context) throw_type_error(std::string(what) + ": the MLTensor belongs to another context");
  if (t->destroyed) throw_type_error(std::string(what) + ": the MLTensor is destroyed");
}
}  // namespace

void Context::write_tensor(const Tensor& tensor, const void* data, size_t byte_length) {
  check_tensor_use(impl_.get(), tensor, "writeTensor");
  impl_->check_not_lost("writeTensor");
  const auto& t = tensor.impl();
  if (!t->desc.writable) throw_type_error("writeTensor: the MLTensor is not writable");
  if (byte_length != t->desc.byte_length())
    throw_type_error(str_cat("writeTensor: the buffer has ", byte_length, " bytes but the tensor ",
                             t->desc.to_string(), " needs ", t->desc.byte_length()));
  check_element_values(t->desc.data_type, data, byte_length, "writeTensor");
  BufferPtr target = std::atomic_load(&t->data);
  if (!target) throw_type_error("writeTensor: the MLTensor is destroyed");
  // An idle timeline takes the bytes at once; otherwise copy them now (the caller may reuse its
  // buffer at once) and land them in order on the timeline.
  if (impl_->timeline->run_if_idle([&] { std::memcpy(target->data(), data, byte_length); })) return;
  auto staging = std::make_shared<std::vector<uint8_t>>((const uint8_t*)data, (const uint8_t*)data + byte_length);
  impl_->timeline->submit([target, staging] { std::memcpy(target->data(), staging->data(), staging->size()); },
                          Timeline::Wake::kSoon);
}

namespace {
void check_read(const ContextImpl* context, const Tensor& tensor, size_t byte_length) {
  check_tensor_use(context, tensor, "readTensor");
  context->check_not_lost("readTensor");
  const TensorDescriptor& desc = tensor.impl()->desc;
  if (!desc.readable) throw_type_error("readTensor: the MLTensor is not readable");
  if (byte_length != desc.byte_length())
    throw_type_error(str_cat("readTensor: the buffer has ", byte_length, " bytes but the tensor ",
                             desc.to_string(), " needs ", desc.byte_length()));
}

// Queues a validated read; `wake` says whether the worker should run it (kNow) or the caller will
// wait and run it itself (kSoon).
Future<void> enqueue_read(const std::shared_ptr<ContextImpl>& context, const Tensor& tensor, void* destination,
                          size_t byte_length, Timeline::Wake wake) {
  Future<void> future;
  auto t = tensor.impl();
  auto read = std::make_shared<detail::PendingRead>();
  read->future = future;
  {
    std::lock_guard<std::mutex> lock(t->mutex);
    t->pending_reads.push_back(read);
  }
  BufferPtr source = std::atomic_load(&t->data);
  if (!source) {
    t->reject_pending_reads(ErrorKind::kTypeError, "readTensor: the MLTensor is destroyed");
    return future;
  }
  context->timeline->run_or_submit([context, t, read, source, destination, byte_length] {
    {
      std::lock_guard<std::mutex> lock(read->mutex);
      if (!read->cancelled) {
        if (context->lost) {
          read->future.reject(ErrorKind::kInvalidStateError, "readTensor: the context is lost");
        } else {
          std::memcpy(destination, source->data(), byte_length);
          read->future.resolve();
        }
        read->cancelled = true;
      }
    }
    std::lock_guard<std::mutex> lock(t->mutex);
    auto& v = t->pending_reads;
    v.erase(std::remove(v.begin(), v.end(), read), v.end());
  }, wake);
  return future;
}
}  // namespace

Future<void> Context::read_tensor(const Tensor& tensor, void* destination, size_t byte_length) {
  try {
    check_read(impl_.get(), tensor, byte_length);
  } catch (...) {
    Future<void> future;
    future.reject(std::current_exception());
    return future;
  }
  return enqueue_read(impl_, tensor, destination, byte_length, Timeline::Wake::kNow);
}

void Context::read_tensor_sync(const Tensor& tensor, void* destination, size_t byte_length) {
  check_read(impl_.get(), tensor, byte_length);
  const auto& t = tensor.impl();
  BufferPtr source = std::atomic_load(&t->data);
  if (!source) throw_type_error("readTensor: the MLTensor is destroyed");
  // Usually the caller runs the work queued before the read, then copies: no task, no future.
  bool aborted = false;
  if (impl_->timeline->run_in_order([&] {
        aborted = impl_->lost || t->destroyed;
        if (!aborted) std::memcpy(destination, source->data(), byte_length);
      })) {
    if (aborted)
      throw_error(ErrorKind::kInvalidStateError,
                  impl_->lost ? "readTensor: the context is lost" : "readTensor: the MLTensor was destroyed");
    return;
  }
  Future<void> f = enqueue_read(impl_, tensor, destination, byte_length, Timeline::Wake::kSoon);
  impl_->timeline->help_until([&] { return f.ready(); });
  f.get();
}

std::vector<uint8_t> Context::read_tensor(const Tensor& tensor) {
  std::vector<uint8_t> out(tensor.impl() ? tensor.impl()->desc.byte_length() : 0);
  read_tensor_sync(tensor, out.data(), out.size());
  return out;
}

namespace {
// "dispatch: the graph has 2 inputs but 1 was given: missing 'y'" (and the unexpected names).
std::string count_mismatch(const NamedTensors& given, const std::map<std::string, OperandDescriptor>& expected,
                           const char* kind) {
  std::string missing, extra;
  for (const auto& [name, desc] : expected)
    if (!given.count(name)) missing += str_cat(missing.empty() ? "" : ", ", "'", name, "'");
  for (const auto& [name, tensor] : given)
    if (!expected.count(name)) extra += str_cat(extra.empty() ? "" : ", ", "'", name, "'");
  return str_cat("dispatch: the graph has ", expected.size(), " ", kind, expected.size() == 1 ? "" : "s", " but ",
                 given.size(), given.size() == 1 ? " was" : " were", " given", missing.empty() ? "" : ": missing ",
                 missing, extra.empty() ? "" : (missing.empty() ? ": " : "; ") + std::string("not the graph's ") + extra);
}

// A graph with dynamic dimensions: the plan for the input tensors' shapes (specialized now, compiled on
// the timeline at its first run), the outputs checked against that plan's shapes.
template <class Match>
void dispatch_dynamic(const std::shared_ptr<ContextImpl>& context, const std::shared_ptr<GraphImpl>& g,
                      const NamedTensors& inputs, const NamedTensors& outputs, const Match& match) {
  if (inputs.size() != g->input_descriptors.size()) throw_type_error(count_mismatch(inputs, g->input_descriptors, "input"));
  detail::InputShapes shapes;
  for (const auto& [name, desc] : g->input_descriptors) {
    auto it = inputs.find(name);
    if (it == inputs.end()) throw_type_error(str_cat("dispatch: missing input '", name, "'"));
    const auto& t = it->second.impl();
    if (t->is_constant) throw_type_error(str_cat("dispatch: input '", name, "' is a constant tensor"));
    if (t->desc.data_type != desc.data_type)
      throw_type_error(str_cat("dispatch: input '", name, "' is ", t->desc.to_string(), " but the graph expects ",
                               desc.to_string()));
    shapes[name] = t->desc.shape;
  }
  std::shared_ptr<detail::DynamicPlans> plans = g->dynamic;
  std::shared_ptr<detail::ShapePlan> shape_plan = plans->plan_for(shapes, "dispatch", true);
  match(outputs, shape_plan->outputs, "output");
  // By name: the plan that says in which order its kernels take them is compiled on the timeline.
  auto bind = [](const NamedTensors& tensors) {
    std::map<std::string, BufferPtr> out;
    for (const auto& [name, tensor] : tensors) {
      BufferPtr b = std::atomic_load(&tensor.impl()->data);
      if (!b) throw_type_error("dispatch: an MLTensor was destroyed during the call");
      out.emplace(name, std::move(b));
    }
    return out;
  };
  context->timeline->submit([context, compiler = plans->compiler, shape_plan, ins = bind(inputs), outs = bind(outputs)] {
    if (context->lost) return;
    try {
      std::shared_ptr<Plan> plan = compiler->compiled(*shape_plan);
      std::vector<BufferPtr> in_buffers, out_buffers;
      for (const auto& in : plan->inputs) in_buffers.push_back(ins.at(in.name));
      for (const auto& out : plan->outputs) out_buffers.push_back(outs.at(out.name));
      execute_plan(*plan, in_buffers, out_buffers, &context->pool);
    } catch (const std::exception& e) {
      context->lose(std::string("dispatch: execution failed: ") + e.what());
    }
  }, Timeline::Wake::kSoon);
}
}  // namespace

void Context::dispatch(const Graph& graph, const NamedTensors& inputs, const NamedTensors& outputs) {
  const auto& g = graph.impl();
  if (!g) throw_type_error("dispatch: invalid MLGraph");
  if (g->context != impl_) throw_type_error("dispatch: the MLGraph belongs to another context");
  if (g->destroyed) throw_error(ErrorKind::kInvalidStateError, "dispatch: the MLGraph is destroyed");
  impl_->check_not_lost("dispatch");
  std::vector<const TensorImpl*> used;  // a handful: a linear scan beats a set
  used.reserve(inputs.size() + outputs.size());
  auto check_all = [&](const NamedTensors& tensors, const char* kind) {
    for (const auto& [name, tensor] : tensors) {
      if (!tensor.impl()) throw_type_error(str_cat("dispatch: ", kind, " '", name, "' is not an MLTensor"));
      if (std::find(used.begin(), used.end(), tensor.impl().get()) != used.end())
        throw_type_error(str_cat("dispatch: the MLTensor for ", kind, " '", name, "' is used more than once"));
      used.push_back(tensor.impl().get());
      if (tensor.impl()->context != impl_)
        throw_type_error(str_cat("dispatch: ", kind, " '", name, "' belongs to another context"));
      if (tensor.impl()->destroyed) throw_type_error(str_cat("dispatch: ", kind, " '", name, "' is destroyed"));
    }
  };
  check_all(inputs, "input");
  check_all(outputs, "output");
  auto match = [&](const NamedTensors& tensors, const std::map<std::string, OperandDescriptor>& expected,
                   const char* kind) {
    if (tensors.size() != expected.size()) throw_type_error(count_mismatch(tensors, expected, kind));
    for (const auto& [name, desc] : expected) {
      auto it = tensors.find(name);
      if (it == tensors.end()) throw_type_error(str_cat("dispatch: missing ", kind, " '", name, "'"));
      const auto& t = it->second.impl();
      if (t->is_constant) throw_type_error(str_cat("dispatch: ", kind, " '", name, "' is a constant tensor"));
      if (static_cast<const OperandDescriptor&>(t->desc) != desc)
        throw_type_error(str_cat("dispatch: ", kind, " '", name, "' is ", t->desc.to_string(), " but the graph expects ",
                                 desc.to_string()));
    }
  };
  if (g->dynamic) {
    dispatch_dynamic(impl_, g, inputs, outputs, match);
    return;
  }
  match(inputs, g->input_descriptors, "input");
  match(outputs, g->output_descriptors, "output");

  // Bind in the plan's order (both are sorted by name).
  std::vector<BufferPtr> in_buffers, out_buffers;
  in_buffers.reserve(inputs.size());
  out_buffers.reserve(outputs.size());
  auto plan = std::atomic_load(&g->plan);
  auto bind = [](const Tensor& t, std::vector<BufferPtr>& into) {
    BufferPtr b = std::atomic_load(&t.impl()->data);
    if (!b) throw_type_error("dispatch: an MLTensor was destroyed during the call");
    into.push_back(std::move(b));
  };
  if (!plan) throw_error(ErrorKind::kInvalidStateError, "dispatch: the MLGraph is destroyed");
  for (const auto& in : plan->inputs) bind(inputs.at(in.name), in_buffers);
  for (const auto& out : plan->outputs) bind(outputs.at(out.name), out_buffers);
  auto context = impl_;
  impl_->timeline->submit([context, plan, in_buffers = std::move(in_buffers), out_buffers = std::move(out_buffers)] {
    if (context->lost) return;
    try {
      execute_plan(*plan, in_buffers, out_buffers, &context->pool);
    } catch (const std::exception& e) {
      // dispatch() has returned: a failure here cannot be reported to it, so it loses the context.
      context->lose(std::string("dispatch: execution failed: ") + e.what());
    }
  }, Timeline::Wake::kSoon);
}

SupportLimits Context::op_support_limits() const {
  SupportLimits limits;
  limits.preferred_input_layout = "nchw";
  limits.max_tensor_byte_length = kMaxTensorByteLength;
  std::vector<DataType> all;
  for (int i = 0; i < kDataTypeCount; ++i) all.push_back(DataType(i));
  limits.input = limits.constant = limits.output = TensorLimits{all, 0, kMaxRank};
  for (const OpDef* def : all_ops()) limits.ops.push_back({def->name, operand_limits(*def)});
  return limits;
}

// ---------------------------------------------------------------- public: Tensor, Graph
const TensorDescriptor& Tensor::descriptor() const {
  if (!impl_) throw_type_error("invalid MLTensor");
  return impl_->desc;
}
bool Tensor::constant() const { return impl_->is_constant; }
bool Tensor::destroyed() const { return impl_->destroyed; }
void Tensor::destroy() { impl_->destroy(); }

std::shared_ptr<void> Tensor::export_storage() const {
  const auto& t = impl_;
  if (!t) throw_type_error("export: invalid MLTensor");
  if (t->destroyed) throw_type_error("export: the MLTensor is destroyed");
  ContextImpl& context = *t->context;
  context.check_not_lost("export");
  if (!t->desc.readable) throw_type_error("export: the MLTensor is not readable");
  BufferPtr storage = std::atomic_load(&t->data);
  if (!storage) throw_type_error("export: the MLTensor is destroyed");
  // After the work queued before this call, like a read that copies nothing.
  if (!context.timeline->run_in_order([] {})) {
    auto done = std::make_shared<std::atomic<bool>>(false);
    context.timeline->submit([done] { done->store(true); }, Timeline::Wake::kSoon);
    context.timeline->help_until([&] { return done->load(); });
  }
  if (context.lost) throw_error(ErrorKind::kInvalidStateError, "export: the context is lost");
  if (t->destroyed) throw_type_error("export: the MLTensor was destroyed");
  return std::shared_ptr<void>(storage, storage->data());
}

const std::map<std::string, OperandDescriptor>& Graph::input_descriptors() const { return impl_->input_descriptors; }
const std::map<std::string, OperandDescriptor>& Graph::output_descriptors() const { return impl_->output_descriptors; }
bool Graph::is_dynamic() const { return impl_->dynamic != nullptr; }

std::map<std::string, OperandDescriptor> Graph::output_descriptors_for(
    const std::map<std::string, std::vector<uint32_t>>& input_shapes) const {
  return detail::output_descriptors_for(*impl_, input_shapes, "output_descriptors_for");
}

std::map<std::string, OperandDescriptor> detail::output_descriptors_for(const GraphImpl& graph,
                                                                        const InputShapes& input_shapes,
                                                                        const std::string& what) {
  if (graph.destroyed) throw_error(ErrorKind::kInvalidStateError, what + ": the MLGraph is destroyed");
  if (!graph.dynamic) {
    for (const auto& [name, desc] : graph.input_descriptors) {
      auto it = input_shapes.find(name);
      if (it == input_shapes.end()) throw_type_error(what + ": missing input '" + name + "'");
      if (it->second != desc.shape)
        throw_type_error(str_cat(what, ": input '", name, "' has shape ", shape_to_string(it->second),
                                 " but the graph expects ", desc.to_string()));
    }
    return graph.output_descriptors;
  }
  for (const auto& [name, shape] : input_shapes)
    if (!graph.input_descriptors.count(name)) throw_type_error(what + ": unknown input '" + name + "'");
  return graph.dynamic->plan_for(input_shapes, what, false)->outputs;
}

Graph::PlanCacheInfo Graph::plan_cache_info() const {
  PlanCacheInfo info;
  if (!impl_->dynamic) {
    auto plan = std::atomic_load(&impl_->plan);
    info.plans = plan ? 1 : 0;
    info.compilations = 1;
    info.arena_bytes = plan ? plan->arena_bytes : 0;
    return info;
  }
  detail::DynamicPlans& d = *impl_->dynamic;
  std::lock_guard<std::mutex> lock(d.mutex);
  info.plans = d.plans.size();
  info.capacity = d.capacity;
  info.compilations = d.compiler->compilations.load();
  for (const auto& p : d.plans)
    if (auto plan = std::atomic_load(&p->plan)) info.arena_bytes += plan->arena_bytes;
  return info;
}

void Graph::set_plan_cache_capacity(size_t capacity) {
  if (!impl_->dynamic) {
    if (capacity < 1) throw_type_error("plan cache capacity must be at least 1");
    return;  // one plan, always kept
  }
  impl_->dynamic->set_capacity(capacity);
}

bool Graph::destroyed() const { return impl_->destroyed; }
Context Graph::context() const { return Context(impl_->context); }
void Graph::destroy() {
  if (impl_->destroyed.exchange(true)) return;
  // Free the compiled plan after work already queued (which holds its own reference).
  std::shared_ptr<Plan> plan = std::atomic_exchange(&impl_->plan, std::shared_ptr<Plan>());
  auto shape_plans = impl_->dynamic ? impl_->dynamic->clear() : std::list<std::shared_ptr<detail::ShapePlan>>{};
  impl_->context->timeline->submit([plan, shape_plans]() mutable {
    plan.reset();
    shape_plans.clear();
  }, Timeline::Wake::kSoon);
}

}  // namespace webnn
