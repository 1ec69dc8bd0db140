// The intra-op fork-join pool. One pool per process, shared by every context: a parallel region
// that finds the pool busy runs on its caller alone, so concurrent dispatches never oversubscribe.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace webnn {

class ThreadPool {
 public:
  // `max_threads` caps the threads (caller included) one context may use; 0 means all.
  explicit ThreadPool(int max_threads);
  int max_threads() const { return max_threads_; }

  // Runs fn(begin, end) over [0, count) in chunks of at least `grain`, the caller taking part.
  void parallel_for(size_t count, size_t grain, const std::function<void(size_t, size_t)>& fn);

  static int hardware_threads();

 private:
  int max_threads_;
};

}  // namespace webnn
