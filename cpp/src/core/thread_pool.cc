#include "core/thread_pool.h"

#include <algorithm>
#include <chrono>

namespace webnn {

namespace {

// The process-wide workers. A region is published by bumping `generation`; workers claim chunk
// indices from `next_chunk` until none are left.
class SharedWorkers {
 public:
  static SharedWorkers& instance() {
    static SharedWorkers* workers = new SharedWorkers();  // never destroyed: workers outlive exit
    return *workers;
  }
  int worker_count() const { return int(threads_.size()); }

  bool try_run(size_t chunks, int helpers, const std::function<void(size_t)>& chunk_fn) {
    std::unique_lock<std::mutex> region(region_mutex_, std::try_to_lock);
    if (!region.owns_lock()) return false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      fn_ = &chunk_fn;
      chunk_count_ = chunks;
      next_chunk_.store(0);
      done_chunks_.store(0);
      active_helpers_ = helpers;
      generation_.fetch_add(1, std::memory_order_release);
    }
    cv_.notify_all();
    work(chunk_fn, chunks);
    // Wait for chunks other threads claimed.
    while (done_chunks_.load(std::memory_order_acquire) < chunks) std::this_thread::yield();
    {
      std::unique_lock<std::mutex> lock(mutex_);
      fn_ = nullptr;
      idle_cv_.wait(lock, [&] { return running_ == 0; });
    }
    return true;
  }

 private:
  SharedWorkers() {
    int n = std::max(1u, std::thread::hardware_concurrency()) - 1;
    for (int i = 0; i < n; ++i) threads_.emplace_back([this, i] { loop(i); });
    for (auto& t : threads_) t.detach();
  }

  void work(const std::function<void(size_t)>& fn, size_t chunks) {
    for (;;) {
      size_t c = next_chunk_.fetch_add(1);
      if (c >= chunks) return;
      fn(c);
      done_chunks_.fetch_add(1, std::memory_order_release);
    }
  }

  void loop(int index) {
    uint64_t seen = 0;
    for (;;) {
      const std::function<void(size_t)>* fn;
      size_t chunks;
      // Spin for the next region (back-to-back kernels, and the gap while the caller reads results
      // between dispatches), then park: waking a parked thread can take a scheduler tick on a VM.
      const auto spin_until = std::chrono::steady_clock::now() + kSpin;
      for (int spin = 1; generation_.load(std::memory_order_acquire) == seen; ++spin) {
        pause();
        if (spin % 64 == 0 && std::chrono::steady_clock::now() > spin_until) break;
      }
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return generation_.load() != seen; });
        seen = generation_.load();
        if (!fn_ || index >= active_helpers_) continue;
        fn = fn_;
        chunks = chunk_count_;
        ++running_;
      }
      work(*fn, chunks);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        --running_;
      }
      idle_cv_.notify_all();
    }
  }

  std::vector<std::thread> threads_;
  std::mutex region_mutex_;
  std::mutex mutex_;
  std::condition_variable cv_, idle_cv_;
  const std::function<void(size_t)>* fn_ = nullptr;
  size_t chunk_count_ = 0;
  int active_helpers_ = 0;
  int running_ = 0;
  std::atomic<uint64_t> generation_{0};
  static constexpr std::chrono::microseconds kSpin{2000};
  static void pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    std::this_thread::yield();
#endif
  }
  std::atomic<size_t> next_chunk_{0};
  std::atomic<size_t> done_chunks_{0};
};

}  // namespace

int ThreadPool::hardware_threads() { return int(std::max(1u, std::thread::hardware_concurrency())); }

ThreadPool::ThreadPool(int max_threads)
    : max_threads_(max_threads <= 0 ? hardware_threads() : std::min(max_threads, hardware_threads())) {}

void ThreadPool::parallel_for(size_t count, size_t grain, const std::function<void(size_t, size_t)>& fn) {
  if (count == 0) return;
  grain = std::max<size_t>(grain, 1);
  size_t max_chunks = (count + grain - 1) / grain;
  size_t threads = std::min<size_t>(size_t(max_threads_), max_chunks);
  if (threads <= 1) {
    fn(0, count);
    return;
  }
  // Few items: one chunk each (dynamic claiming balances them); many: 8 per thread.
  size_t chunks = max_chunks <= threads * 8 ? max_chunks : threads * 8;
  size_t per_chunk = (count + chunks - 1) / chunks;
  chunks = (count + per_chunk - 1) / per_chunk;
  std::function<void(size_t)> chunk_fn = [&](size_t c) {
    size_t begin = c * per_chunk;
    fn(begin, std::min(count, begin + per_chunk));
  };
  SharedWorkers& workers = SharedWorkers::instance();
  int helpers = std::min(int(threads) - 1, workers.worker_count());
  if (helpers <= 0 || !workers.try_run(chunks, helpers, chunk_fn)) fn(0, count);
}

}  // namespace webnn
