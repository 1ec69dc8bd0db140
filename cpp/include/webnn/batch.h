// Batch inference: one model over many items, on every core.
//
//   webnn::BatchOptions options;                       // batch size and core split: chosen
//   auto runner = webnn::BatchRunner::load("model.webnn", options, /*items=*/n);
//   runner.run(n, {{"x", x_data}}, {{"y", y_data}});   // items back to back, first axis first
//
// A runner holds one graph per worker, each on its own context (its own timeline and threads);
// contexts share packed weights. Items are cut into batches of batch_size() (the first dimension
// of every model input and output); workers take the next batch as they finish one, so batches
// run concurrently and complete in any order, while results land in item order. The last partial
// batch is padded with copies of its last item (their results are dropped). Each worker copies
// its next batch's inputs while the current one computes.
#pragma once
#include <webnn/model.h>
#include <webnn/webnn.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace webnn {

struct BatchOptions {
  uint32_t batch_size = 0;     // 0: the model's own (fixed) batch, else chosen
  int workers = 0;             // contexts run concurrently; 0: chosen
  int threads_per_worker = 0;  // intra-op threads of each; 0: the cores divided among the workers
  std::string batch_dimension = "batch";  // load(): the dynamic input dimension that is the batch
};

struct BatchSplit {
  uint32_t batch_size = 1;
  int workers = 1;
  int threads_per_worker = 1;
};

// The split a runner uses. `items`: how many will run (0: unknown, many); `model_batch`: the
// model's fixed batch size (0: it takes any). Unset options get: a batch of 8 for a model that
// takes any size (fewer when there are few items); one worker per core with one thread each
// when every core gets a batch (independent batches scale best), else fewer workers with the
// cores shared among them. Throws TypeError when an option is out of range or the batch size
// contradicts a fixed model batch.
BatchSplit choose_batch_split(const BatchOptions& options, size_t items, uint32_t model_batch, int cores);

using GraphFactory = std::function<Graph(const Context& context, uint32_t batch_size)>;

class BatchRunner {
 public:
  // One graph per worker, each on a different context; all with the same input and output
  // descriptors, whose first dimension is the batch size. Throws TypeError otherwise.
  explicit BatchRunner(const std::vector<Graph>& graphs);
  // Creates the split's contexts and builds the model on each with `factory`.
  static BatchRunner create(const GraphFactory& factory, const BatchOptions& options = {}, size_t items = 0,
                            uint32_t model_batch = 0);
  // A `.webnn` model: its dynamic `options.batch_dimension` (if it has one) is the batch.
  static BatchRunner load(const std::string& path, const BatchOptions& options = {}, size_t items = 0,
                          const LoadOptions& load_options = {});
  BatchRunner(BatchRunner&&) noexcept;
  BatchRunner& operator=(BatchRunner&&) noexcept;
  ~BatchRunner();  // cancels what has not started, waits for what has

  uint32_t batch_size() const;
  int workers() const;
  int threads_per_worker() const;
  // Per batch (first dimension = batch_size()).
  const std::map<std::string, OperandDescriptor>& input_descriptors() const;
  const std::map<std::string, OperandDescriptor>& output_descriptors() const;

  // Queues `count` items: inputs[name] points at `count` items of that input back to back (each
  // item is the input's bytes divided by the batch size), outputs[name] receives `count` items.
  // The caller keeps both alive until wait() reports the job done (or the runner is destroyed).
  // Messages number the job's items from `first_item` (default: the items submitted before it).
  // Returns the job's id.
  uint64_t submit(size_t count, const std::map<std::string, const void*>& inputs,
                  const std::map<std::string, void*>& outputs, size_t first_item = SIZE_MAX);
  // Waits up to `timeout_ms` (< 0: no limit) until job `id` is done; true when it is (or was
  // reported before). Throws the job's first failure, naming its item (after cancel(): an
  // OperationError), once the job's batches in flight have finished. A failure ends only its own
  // job: the runner goes on with the others, and takes new ones.
  bool wait(uint64_t id, int64_t timeout_ms = -1);
  // Items whose results have landed, across jobs.
  size_t items_done() const;
  size_t items_submitted() const;
  // Each batch finished since the last call: milliseconds from a worker taking it to its results
  // landing (copies in and out included), in the order they finished.
  std::vector<double> take_latencies_ms();
  // Cancels job `id` (every job by default): its batches not started are dropped, those in flight
  // finish, and wait() reports the cancellation. A job already done is left alone.
  static constexpr uint64_t kAllJobs = UINT64_MAX;
  void cancel(uint64_t id = kAllJobs);
  // submit + wait, calling `progress(done, count)` on this thread about every 100 ms and at the end.
  void run(size_t count, const std::map<std::string, const void*>& inputs, const std::map<std::string, void*>& outputs,
           const std::function<void(size_t done, size_t total)>& progress = {});

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace webnn
