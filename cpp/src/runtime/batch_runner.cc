// BatchRunner: batches of one model spread over several contexts, results in item order.
#include <webnn/batch.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>

#include "core/thread_pool.h"
#include "runtime/objects.h"

namespace webnn {

namespace {
std::string items_text(size_t first, size_t count) {
  return count == 1 ? str_cat("item ", first) : str_cat("items ", first, "-", first + count - 1);
}
}  // namespace

BatchSplit choose_batch_split(const BatchOptions& options, size_t items, uint32_t model_batch, int cores) {
  if (options.workers < 0) throw_type_error(str_cat("batch: workers must be at least 1 (0: chosen), got ", options.workers));
  if (options.threads_per_worker < 0)
    throw_type_error(str_cat("batch: threads_per_worker must be at least 1 (0: chosen), got ", options.threads_per_worker));
  if (model_batch && options.batch_size && options.batch_size != model_batch)
    throw_type_error(str_cat("batch: the model's batch size is fixed at ", model_batch, ", but batch_size ",
                             options.batch_size, " was asked for"));
  cores = std::max(cores, 1);
  BatchSplit split;
  if (model_batch) {
    split.batch_size = model_batch;
  } else if (options.batch_size) {
    split.batch_size = options.batch_size;
  } else {
    // Enough items per batch to amortize per-run costs (on the models of bench/throughput.py, 8
    // is as fast as 16 or more, with half the memory and latency); few items: one batch per core.
    constexpr size_t kDefaultBatch = 8;
    const size_t per_core = items ? (items + size_t(cores) - 1) / size_t(cores) : kDefaultBatch;
    split.batch_size = uint32_t(std::clamp<size_t>(per_core, 1, kDefaultBatch));
  }
  const size_t batches = items ? (items + split.batch_size - 1) / split.batch_size : SIZE_MAX;
  if (options.workers) {
    split.workers = options.workers;
  } else if (options.threads_per_worker) {
    split.workers = std::max(1, cores / options.threads_per_worker);
  } else {
    split.workers = int(std::min<size_t>(size_t(cores), batches));
  }
  if (items) split.workers = int(std::min<size_t>(size_t(split.workers), batches));
  split.threads_per_worker = options.threads_per_worker ? options.threads_per_worker : std::max(1, cores / split.workers);
  return split;
}

// ---------------------------------------------------------------- the runner
namespace {

struct Job {
  uint64_t id = 0;
  size_t first_item = 0;
  size_t count = 0;
  std::vector<const uint8_t*> inputs;  // by input index
  std::vector<uint8_t*> outputs;       // by output index
  size_t batches_left = 0;             // neither finished nor dropped
  std::exception_ptr error;            // the job failed (or was cancelled): its first error
};

struct BatchTask {
  std::shared_ptr<Job> job;
  size_t offset = 0;  // within the job
  size_t count = 0;
  std::chrono::steady_clock::time_point started;  // when a worker took it
};

}  // namespace

struct BatchRunner::Impl {
  std::vector<Graph> graphs;
  uint32_t batch = 1;
  int threads = 1;
  std::map<std::string, OperandDescriptor> input_descriptors, output_descriptors;
  std::vector<std::string> input_names, output_names;
  std::vector<size_t> input_item_bytes, output_item_bytes;
  std::vector<DataType> input_types;

  std::mutex mutex;
  std::condition_variable work_cv, done_cv;
  std::deque<BatchTask> queue;
  std::map<uint64_t, std::shared_ptr<Job>> jobs;  // submitted and not yet reported by wait()
  uint64_t next_id = 0;
  size_t items_submitted = 0, items_done = 0;
  std::vector<double> latencies_ms;  // per finished batch: taken -> results landed
  bool stopping = false;
  std::vector<std::thread> workers;

  // One worker: two sets of tensors, so that one batch's inputs are copied while the other runs.
  struct Slot {
    NamedTensors in, out;
    std::vector<BufferPtr> in_buffers;
    std::vector<std::vector<uint8_t>> tail_out;  // a partial batch's results before the copy
    std::vector<Future<void>> reads;
    BatchTask task;
    bool busy = false;
  };

  void start();
  void worker_loop(size_t index);
  bool take(BatchTask* task, bool block);
  void fill_inputs(Slot& slot, const BatchTask& task);
  void finish(Slot& slot);
  void settle(const BatchTask& task, std::exception_ptr error);
  void drop_queued_locked(Job& job, std::exception_ptr error);
  void stop_and_join();
};

// Under the lock: the job fails with `error` (unless it already has); its batches not started go.
void BatchRunner::Impl::drop_queued_locked(Job& job, std::exception_ptr error) {
  if (!job.error) job.error = std::move(error);
  const size_t before = queue.size();
  queue.erase(std::remove_if(queue.begin(), queue.end(), [&](const BatchTask& t) { return t.job.get() == &job; }),
              queue.end());
  job.batches_left -= before - queue.size();
  done_cv.notify_all();
}

// A batch a worker took is over: its results landed (no error) or it failed, failing its job.
void BatchRunner::Impl::settle(const BatchTask& task, std::exception_ptr error) {
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - task.started).count();
  std::lock_guard<std::mutex> lock(mutex);
  --task.job->batches_left;
  if (error) {
    drop_queued_locked(*task.job, std::move(error));
  } else {
    items_done += task.count;
    latencies_ms.push_back(ms);
  }
  done_cv.notify_all();
}

bool BatchRunner::Impl::take(BatchTask* task, bool block) {
  std::unique_lock<std::mutex> lock(mutex);
  if (block) work_cv.wait(lock, [&] { return stopping || !queue.empty(); });
  if (queue.empty()) return false;
  *task = std::move(queue.front());
  queue.pop_front();
  task->started = std::chrono::steady_clock::now();
  return true;
}

void BatchRunner::Impl::fill_inputs(Slot& slot, const BatchTask& task) {
  for (size_t i = 0; i < input_names.size(); ++i) {
    const size_t item = input_item_bytes[i];
    const uint8_t* source = task.job->inputs[i] + task.offset * item;
    uint8_t* target = slot.in_buffers[i]->data();
    if (input_types[i] == DataType::kInt4 || input_types[i] == DataType::kUint4) {
      for (size_t k = 0; k < task.count; ++k) {
        try {
          check_element_values(input_types[i], source + k * item, item, "batch");
        } catch (const Error& e) {
          throw Error(ErrorKind::kTypeError, str_cat("batch: ", items_text(task.job->first_item + task.offset + k, 1),
                                                     " of input '", input_names[i], "': ", e.what()));
        }
      }
    }
    // The slot's previous batch has finished (its reads settled), so nothing queued uses these
    // buffers: copy straight in, while the other slot's batch runs.
    std::memcpy(target, source, task.count * item);
    for (size_t k = task.count; k < batch; ++k) std::memcpy(target + k * item, source + (task.count - 1) * item, item);
  }
}

void BatchRunner::Impl::finish(Slot& slot) {
  if (!slot.busy) return;
  slot.busy = false;
  const BatchTask& task = slot.task;
  try {
    try {
      for (auto& read : slot.reads) read.get();
    } catch (const Error& e) {
      throw Error(e.kind(), str_cat("batch: ", items_text(task.job->first_item + task.offset, task.count),
                                    " failed: ", e.what()));
    }
    if (task.count < batch)
      for (size_t o = 0; o < output_names.size(); ++o)
        std::memcpy(task.job->outputs[o] + task.offset * output_item_bytes[o], slot.tail_out[o].data(),
                    task.count * output_item_bytes[o]);
  } catch (...) {
    settle(task, std::current_exception());
    return;
  }
  settle(task, nullptr);
}

void BatchRunner::Impl::worker_loop(size_t index) {
  const Graph& graph = graphs[index];
  Context context = graph.context();
  Slot slots[2];
  for (Slot& slot : slots) {
    for (size_t i = 0; i < input_names.size(); ++i) {
      TensorDescriptor desc;
      static_cast<OperandDescriptor&>(desc) = input_descriptors.at(input_names[i]);
      desc.writable = true;
      Tensor t = context.create_tensor(desc);
      slot.in_buffers.push_back(std::atomic_load(&t.impl()->data));
      slot.in[input_names[i]] = t;
    }
    for (size_t o = 0; o < output_names.size(); ++o) {
      TensorDescriptor desc;
      static_cast<OperandDescriptor&>(desc) = output_descriptors.at(output_names[o]);
      desc.readable = true;
      slot.out[output_names[o]] = context.create_tensor(desc);
      slot.tail_out.emplace_back(desc.byte_length());
    }
  }
  size_t current = 0;
  for (;;) {
    Slot& slot = slots[current];
    Slot& other = slots[1 - current];
    BatchTask task;
    if (!take(&task, /*block=*/false)) {
      finish(other);  // nothing more yet: land the batch in flight before sleeping
      if (!take(&task, /*block=*/true)) {
        std::lock_guard<std::mutex> lock(mutex);
        if (stopping) return;
        continue;
      }
    }
    try {
      fill_inputs(slot, task);
      context.dispatch(graph, slot.in, slot.out);
      slot.reads.clear();
      for (size_t o = 0; o < output_names.size(); ++o) {
        const Tensor& t = slot.out.at(output_names[o]);
        const size_t bytes = t.descriptor().byte_length();
        uint8_t* target = task.count == batch ? task.job->outputs[o] + task.offset * output_item_bytes[o]
                                               : slot.tail_out[o].data();
        slot.reads.push_back(context.read_tensor(t, target, bytes));
      }
    } catch (const Error& e) {
      const std::string what = e.what();
      const bool named = what.rfind("batch: ", 0) == 0;
      settle(task, std::make_exception_ptr(
                       named ? e
                             : Error(e.kind(), str_cat("batch: ", items_text(task.job->first_item + task.offset,
                                                                             task.count),
                                                       " failed: ", what))));
      finish(other);
      continue;
    }
    slot.task = std::move(task);
    slot.busy = true;
    finish(other);
    current = 1 - current;
  }
}

void BatchRunner::Impl::start() {
  for (size_t i = 0; i < graphs.size(); ++i) workers.emplace_back([this, i] { worker_loop(i); });
}

void BatchRunner::Impl::stop_and_join() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
    for (auto& [id, job] : jobs) drop_queued_locked(*job, nullptr);
  }
  work_cv.notify_all();
  for (auto& t : workers) t.join();
  workers.clear();
}

BatchRunner::BatchRunner(const std::vector<Graph>& graphs) : impl_(std::make_unique<Impl>()) {
  if (graphs.empty()) throw_type_error("batch: no graphs");
  Impl& r = *impl_;
  for (size_t i = 0; i < graphs.size(); ++i) {
    const Graph& g = graphs[i];
    if (!g.impl()) throw_type_error(str_cat("batch: graph ", i, " is not an MLGraph"));
    if (g.destroyed()) throw_error(ErrorKind::kInvalidStateError, str_cat("batch: graph ", i, " is destroyed"));
    if (g.is_dynamic()) {
      std::string shapes;
      for (const auto& [name, desc] : g.input_descriptors())
        if (desc.is_dynamic()) shapes += str_cat(shapes.empty() ? "" : ", ", name, " ", desc.to_string());
      throw_type_error(str_cat("batch: graph ", i, " has dynamic dimensions (", shapes,
                               "); a batch runner needs every dimension but the batch fixed: pin them (dims=...)"));
    }
    for (size_t j = 0; j < i; ++j)
      if (graphs[j].impl()->context == g.impl()->context)
        throw_type_error(str_cat("batch: graphs ", j, " and ", i, " share a context (each worker needs its own)"));
    if (i > 0 && (g.input_descriptors() != graphs[0].input_descriptors() ||
                  g.output_descriptors() != graphs[0].output_descriptors()))
      throw_type_error(str_cat("batch: graph ", i, " takes or gives other operands than graph 0"));
  }
  r.graphs = graphs;
  r.input_descriptors = graphs[0].input_descriptors();
  r.output_descriptors = graphs[0].output_descriptors();
  if (r.input_descriptors.empty()) throw_type_error("batch: the graph has no inputs");
  r.batch = 0;
  auto check_batch = [&](const std::string& name, const OperandDescriptor& d, const char* kind) {
    if (d.shape.empty())
      throw_type_error(str_cat("batch: ", kind, " '", name, "' is a scalar; every input and output needs a first "
                               "(batch) dimension"));
    if (r.batch == 0) r.batch = d.shape[0];
    if (d.shape[0] != r.batch)
      throw_type_error(str_cat("batch: ", kind, " '", name, "' has first dimension ", d.shape[0],
                               ", but the batch size is ", r.batch, " (", d.to_string(), ")"));
  };
  for (const auto& [name, d] : r.input_descriptors) {
    check_batch(name, d, "input");
    r.input_names.push_back(name);
    r.input_item_bytes.push_back(d.byte_length() / r.batch);
    r.input_types.push_back(d.data_type);
  }
  for (const auto& [name, d] : r.output_descriptors) {
    check_batch(name, d, "output");
    r.output_names.push_back(name);
    r.output_item_bytes.push_back(d.byte_length() / r.batch);
  }
  r.threads = graphs[0].context().num_threads();
  r.start();
}

BatchRunner BatchRunner::create(const GraphFactory& factory, const BatchOptions& options, size_t items,
                                uint32_t model_batch) {
  if (!factory) throw_type_error("batch: no graph factory");
  const BatchSplit split = choose_batch_split(options, items, model_batch, ThreadPool::hardware_threads());
  std::vector<Graph> graphs;
  for (int w = 0; w < split.workers; ++w) {
    ContextOptions context_options;
    context_options.num_threads = split.threads_per_worker;
    graphs.push_back(factory(Context::create(context_options), split.batch_size));
  }
  return BatchRunner(graphs);
}

BatchRunner BatchRunner::load(const std::string& path, const BatchOptions& options, size_t items,
                              const LoadOptions& load_options) {
  Model model = read_model(path, load_options);
  uint32_t fixed = 0;
  bool dynamic = false;
  for (const ModelInput& input : model.inputs) {
    if (input.shape.empty()) continue;
    const ModelDimension& first = input.shape[0];
    if (!first.name.empty() && first.name == options.batch_dimension) {
      dynamic = true;
      if (options.batch_size > first.max && first.max)
        throw_type_error(str_cat("batch: ", path, ": batch_size ", options.batch_size, " exceeds the largest '",
                                 first.name, "' (", first.max, ")"));
    } else if (first.name.empty() && !fixed) {
      fixed = first.size;
    }
  }
  const uint32_t model_batch = dynamic ? 0 : fixed;
  return create(
      [&](const Context& context, uint32_t batch) {
        std::map<std::string, uint32_t> dims = load_options.dims;
        if (dynamic) dims[options.batch_dimension] = batch;
        GraphBuilder builder(context);
        return builder.build(build_model(builder, model, dims));
      },
      options, items, model_batch);
}

BatchRunner::BatchRunner(BatchRunner&&) noexcept = default;
BatchRunner& BatchRunner::operator=(BatchRunner&& other) noexcept {
  if (this != &other) {
    if (impl_) impl_->stop_and_join();
    impl_ = std::move(other.impl_);
  }
  return *this;
}
BatchRunner::~BatchRunner() {
  if (impl_) impl_->stop_and_join();
}

uint32_t BatchRunner::batch_size() const { return impl_->batch; }
int BatchRunner::workers() const { return int(impl_->graphs.size()); }
int BatchRunner::threads_per_worker() const { return impl_->threads; }
const std::map<std::string, OperandDescriptor>& BatchRunner::input_descriptors() const {
  return impl_->input_descriptors;
}
const std::map<std::string, OperandDescriptor>& BatchRunner::output_descriptors() const {
  return impl_->output_descriptors;
}

uint64_t BatchRunner::submit(size_t count, const std::map<std::string, const void*>& inputs,
                             const std::map<std::string, void*>& outputs, size_t first_item) {
  Impl& r = *impl_;
  auto job = std::make_shared<Job>();
  job->count = count;
  auto collect = [&](const auto& given, const std::vector<std::string>& names, auto& into, const char* kind) {
    for (const std::string& name : names) {
      auto it = given.find(name);
      if (it == given.end()) throw_type_error(str_cat("batch: missing ", kind, " '", name, "'"));
      if (!it->second && count) throw_type_error(str_cat("batch: ", kind, " '", name, "' has no data"));
      into.push_back(static_cast<std::remove_reference_t<decltype(into[0])>>(it->second));
    }
    for (const auto& entry : given)
      if (std::find(names.begin(), names.end(), entry.first) == names.end())
        throw_type_error(str_cat("batch: the model has no ", kind, " '", entry.first, "'"));
  };
  collect(inputs, r.input_names, job->inputs, "input");
  collect(outputs, r.output_names, job->outputs, "output");
  std::lock_guard<std::mutex> lock(r.mutex);
  job->id = r.next_id++;
  job->first_item = first_item == SIZE_MAX ? r.items_submitted : first_item;
  r.items_submitted += count;
  job->batches_left = (count + r.batch - 1) / r.batch;
  r.jobs.emplace(job->id, job);
  for (size_t offset = 0; offset < count; offset += r.batch)
    r.queue.push_back(BatchTask{job, offset, std::min<size_t>(r.batch, count - offset)});
  r.work_cv.notify_all();
  return job->id;
}

bool BatchRunner::wait(uint64_t id, int64_t timeout_ms) {
  Impl& r = *impl_;
  std::unique_lock<std::mutex> lock(r.mutex);
  if (id >= r.next_id) throw_type_error(str_cat("batch: no job ", id, " was submitted"));
  auto it = r.jobs.find(id);
  if (it == r.jobs.end()) return true;  // reported before
  const std::shared_ptr<Job> job = it->second;
  auto settled = [&] { return job->batches_left == 0; };  // a failed job also waits for its batches in flight
  if (timeout_ms < 0) r.done_cv.wait(lock, settled);
  else if (!r.done_cv.wait_for(lock, std::chrono::milliseconds(timeout_ms), settled)) return false;
  r.jobs.erase(job->id);
  if (job->error) std::rethrow_exception(job->error);
  return true;
}

size_t BatchRunner::items_done() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->items_done;
}
size_t BatchRunner::items_submitted() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->items_submitted;
}

std::vector<double> BatchRunner::take_latencies_ms() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return std::exchange(impl_->latencies_ms, {});
}

void BatchRunner::cancel(uint64_t id) {
  Impl& r = *impl_;
  std::lock_guard<std::mutex> lock(r.mutex);
  for (auto& [job_id, job] : r.jobs) {
    if (id != kAllJobs && job_id != id) continue;
    if (!job->error && job->batches_left)
      r.drop_queued_locked(*job, std::make_exception_ptr(Error(
                                     ErrorKind::kOperationError,
                                     str_cat("batch: cancelled (", items_text(job->first_item, job->count), ")"))));
  }
}

void BatchRunner::run(size_t count, const std::map<std::string, const void*>& inputs,
                      const std::map<std::string, void*>& outputs,
                      const std::function<void(size_t done, size_t total)>& progress) {
  const size_t before = items_done();
  const uint64_t id = submit(count, inputs, outputs);
  while (!wait(id, progress ? 100 : -1)) progress(items_done() - before, count);
  if (progress) progress(count, count);
}

}  // namespace webnn
