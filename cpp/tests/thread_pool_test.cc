// The pool's contract: every index of [0, count) runs exactly once, in chunks of at least `grain`
// (the last may be shorter), and a helper that stops in the middle of a region (preempted, or
// here blocked) leaves its unstarted chunks to the caller.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "core/thread_pool.h"
#include "tester.h"

using namespace webnn;
using webnn_test::expect;

namespace {

void check_coverage(ThreadPool& pool, size_t count, size_t grain) {
  std::vector<std::atomic<int>> hits(count);
  std::atomic<bool> short_chunk{false};
  pool.parallel_for(count, grain, [&](size_t begin, size_t end) {
    if (end - begin < grain && end != count) short_chunk = true;
    for (size_t i = begin; i < end; ++i) hits[i].fetch_add(1);
  });
  size_t wrong = 0;
  for (auto& h : hits) wrong += h.load() != 1;
  const std::string shape = " (count " + std::to_string(count) + ", grain " + std::to_string(grain) + ")";
  expect(wrong == 0, std::to_string(wrong) + " indices not run exactly once" + shape);
  expect(!short_chunk, "a chunk shorter than the grain before the end" + shape);
}

// The first chunk a helper runs blocks until the caller has run all the others: the region ends
// only if the caller takes the helper's unstarted chunks too.
void check_blocked_helper_loses_its_chunks(ThreadPool& pool) {
  const size_t count = 64;
  const std::thread::id caller = std::this_thread::get_id();
  std::mutex mutex;
  std::condition_variable cv;
  size_t caller_ran = 0, helper_ran = 0;
  bool timed_out = false;
  pool.parallel_for(count, 1, [&](size_t begin, size_t end) {
    std::unique_lock<std::mutex> lock(mutex);
    if (std::this_thread::get_id() == caller) {
      caller_ran += end - begin;
      cv.notify_all();
      return;
    }
    helper_ran += end - begin;
    if (!cv.wait_for(lock, std::chrono::seconds(20), [&] { return caller_ran + helper_ran == count; }))
      timed_out = true;
  });
  expect(!timed_out, "the caller did not take a blocked helper's chunks (20 s)");
  expect(caller_ran + helper_ran == count, "not every chunk ran");
  if (ThreadPool::hardware_threads() == 2)
    expect(helper_ran <= count / 8, "the blocked helper ran " + std::to_string(helper_ran) + " indices");
}

}  // namespace

int main() {
  ThreadPool pool(0);
  for (size_t count : {1, 2, 3, 7, 16, 17, 100, 1000, 100000})
    for (size_t grain : {1, 3, 64}) check_coverage(pool, count, grain);
  ThreadPool one(1);
  check_coverage(one, 1000, 1);
  check_blocked_helper_loses_its_chunks(pool);
  return webnn_test::tester_exit("thread_pool_test");
}
