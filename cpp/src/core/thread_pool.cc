#include "core/thread_pool.h"

#include <algorithm>
#include <chrono>

namespace webnn {

namespace {

// The process-wide workers. A region is published by bumping `generation`. Its chunks are split into
// one contiguous range per participant (the caller first, then the helpers): each takes chunks from
// the front of its own range, then steals from the back of the others'. The same thread thus gets
// the same share of every region (consecutive ops over one tensor keep its part in that core's
// cache), and a helper that is late or preempted loses its unstarted chunks to the others.
class SharedWorkers {
 public:
  static SharedWorkers& instance() {
    static SharedWorkers* workers = new SharedWorkers();  // never destroyed: workers outlive exit
    return *workers;
  }
  int worker_count() const { return int(threads_.size()); }
  // Range boundaries are 16-bit fields: regions have at most this many chunks.
  static constexpr size_t kMaxChunks = 0xffff;

  bool try_run(size_t chunks, int helpers, const std::function<void(size_t)>& chunk_fn) {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    if (start.time_since_epoch().count() < solo_until_.load(std::memory_order_relaxed)) return false;
    std::unique_lock<std::mutex> region(region_mutex_, std::try_to_lock);
    if (!region.owns_lock()) return false;
    uint64_t generation;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      fn_ = &chunk_fn;
      active_helpers_ = helpers;
      done_chunks_.store(0, std::memory_order_relaxed);
      generation = (generation_.load(std::memory_order_relaxed) + 1) & kGenerationMask;
      const size_t participants = size_t(helpers) + 1;
      for (size_t p = 0; p < participants; ++p)
        ranges_[p].value.store(pack(generation, p * chunks / participants, (p + 1) * chunks / participants),
                               std::memory_order_relaxed);
      generation_.store(generation, std::memory_order_release);
    }
    cv_.notify_all();
    const size_t own_chunks = work(0, helpers + 1, &chunk_fn, generation);
    if (done_chunks_.load(std::memory_order_acquire) == chunks) return true;
    // Only chunks a helper has claimed are waited for: a helper that is late (parked, or preempted
    // before it claimed anything) cannot claim this region's chunks once the caller took the last.
    const auto waiting = Clock::now();
    while (done_chunks_.load(std::memory_order_acquire) < chunks) std::this_thread::yield();
    note_wait(Clock::now() - waiting, (waiting - start) / std::max<size_t>(own_chunks, 1));
    return true;
  }

 private:
  // A helper that is not running (another process took its core) while it holds a chunk stalls
  // the region for a scheduler slice. A wait far longer than one chunk takes the caller marks a
  // stall; regions then run on their caller alone for a while (doubling while stalls repeat), so a
  // contended machine runs at about one thread's speed instead of stalling on every region.
  void note_wait(std::chrono::nanoseconds waited, std::chrono::nanoseconds chunk_time) {
    const auto now = std::chrono::steady_clock::now();
    if (waited < kStallWait || waited < 4 * chunk_time) {
      if (now - last_stall_ > kCalm) solo_time_ = kFirstSolo;
      return;
    }
    last_stall_ = now;
    solo_until_.store((now + solo_time_).time_since_epoch().count(), std::memory_order_relaxed);
    solo_time_ = std::min(solo_time_ * 2, kLongestSolo);
  }

  SharedWorkers() : ranges_(std::max(1u, std::thread::hardware_concurrency())) {
    const int n = int(ranges_.size()) - 1;  // the caller takes part too
    for (int i = 0; i < n; ++i) threads_.emplace_back([this, i] { loop(i); });
    for (auto& t : threads_) t.detach();
  }

  // A range of one region's chunks: [begin, end) tagged with the region's generation.
  static uint64_t pack(uint64_t generation, size_t begin, size_t end) {
    return generation << 32 | uint64_t(begin) << 16 | uint64_t(end);
  }
  static uint64_t generation_of(uint64_t range) { return range >> 32; }
  static size_t begin_of(uint64_t range) { return size_t(range >> 16) & kMaxChunks; }
  static size_t end_of(uint64_t range) { return size_t(range) & kMaxChunks; }

  // Runs chunks of region `generation` as participant `self` of `participants`: its own range front
  // first, then the others' backs, until none are left. A claim is a compare-and-swap on a range
  // tagged with the generation, so `fn` is only called while its region is live. Returns the chunks run.
  size_t work(size_t self, size_t participants, const std::function<void(size_t)>* fn, uint64_t generation) {
    size_t ran = 0;
    for (size_t step = 0; step < participants; ++step) {
      const bool own = step == 0;
      std::atomic<uint64_t>& range = ranges_[(self + step) % participants].value;
      uint64_t r = range.load(std::memory_order_acquire);
      while (generation_of(r) == generation && begin_of(r) < end_of(r)) {
        const size_t begin = begin_of(r), end = end_of(r);
        const size_t chunk = own ? begin : end - 1;
        const uint64_t claimed = own ? pack(generation, begin + 1, end) : pack(generation, begin, end - 1);
        if (!range.compare_exchange_weak(r, claimed, std::memory_order_acq_rel)) continue;
        (*fn)(chunk);
        done_chunks_.fetch_add(1, std::memory_order_release);
        ++ran;
        r = range.load(std::memory_order_acquire);
      }
      if (generation_of(r) != generation) break;  // the region is over (a later one replaced it)
    }
    return ran;
  }

  void loop(int index) {
    uint64_t seen = 0;
    for (;;) {
      const std::function<void(size_t)>* fn;
      int participants;
      // Spin for the next region (back-to-back kernels, and the gap while the caller reads results
      // between dispatches), then park: waking a parked thread can take a scheduler tick on a VM.
      const auto spin_until = std::chrono::steady_clock::now() + kSpin;
      for (int spin = 1; generation_.load(std::memory_order_acquire) == seen; ++spin) {
        pause();
        if (spin % 64 == 0 && std::chrono::steady_clock::now() > spin_until) break;
      }
      uint64_t generation;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return generation_.load() != seen; });
        seen = generation = generation_.load();
        if (!fn_ || index >= active_helpers_) continue;
        fn = fn_;
        participants = active_helpers_ + 1;
      }
      work(size_t(index) + 1, size_t(participants), fn, generation);
    }
  }

  std::vector<std::thread> threads_;
  std::mutex region_mutex_;
  std::mutex mutex_;
  std::condition_variable cv_;
  const std::function<void(size_t)>* fn_ = nullptr;
  int active_helpers_ = 0;
  std::atomic<uint64_t> generation_{0};
  static constexpr std::chrono::microseconds kSpin{2000};
  static constexpr std::chrono::microseconds kStallWait{300};
  static constexpr std::chrono::microseconds kFirstSolo{2000};
  static constexpr std::chrono::microseconds kLongestSolo{32000};
  static constexpr std::chrono::milliseconds kCalm{100};
  // Guarded by region_mutex_.
  std::chrono::microseconds solo_time_ = kFirstSolo;
  std::chrono::steady_clock::time_point last_stall_;
  std::atomic<int64_t> solo_until_{0};                // steady_clock ticks
  static void pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    std::this_thread::yield();
#endif
  }
  // Each participant's unclaimed chunks (see pack), one cache line each.
  struct alignas(64) PaddedRange {
    std::atomic<uint64_t> value{0};
  };
  std::vector<PaddedRange> ranges_;
  static constexpr uint64_t kGenerationMask = 0xffffffff;
  std::atomic<size_t> done_chunks_{0};
};

}  // namespace

int ThreadPool::hardware_threads() { return int(std::max(1u, std::thread::hardware_concurrency())); }

ThreadPool::ThreadPool(int max_threads)
    : max_threads_(max_threads <= 0 ? hardware_threads() : std::min(max_threads, hardware_threads())) {}

void ThreadPool::parallel_for(size_t count, size_t grain, const std::function<void(size_t, size_t)>& fn) {
  if (count == 0) return;
  grain = std::max<size_t>(grain, 1);
  size_t max_chunks = std::max<size_t>(count / grain, 1);  // every chunk at least `grain`
  size_t threads = std::min<size_t>(size_t(max_threads_), max_chunks);
  if (threads <= 1) {
    fn(0, count);
    return;
  }
  // Few items: one chunk each (dynamic claiming balances them); many: 8 per thread.
  size_t chunks = std::min(max_chunks <= threads * 8 ? max_chunks : threads * 8, SharedWorkers::kMaxChunks);
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
