// Asynchronous operations seen from Python (the *_async methods).
#pragma once
#include <pybind11/pybind11.h>
#include <webnn/webnn.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <vector>

namespace webnn_py {

namespace py = pybind11;
using webnn::Future;

// Futures settle on the timeline; their callbacks only post an id here. A Python thread waits on
// this queue (GIL released) and resolves asyncio futures with call_soon_threadsafe.
struct CompletionQueue {
  std::mutex mutex;
  std::condition_variable cv;
  std::deque<uint64_t> ids;
  void post(uint64_t id) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      ids.push_back(id);
    }
    cv.notify_one();
  }
  std::vector<uint64_t> wait(int64_t timeout_ms) {
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return !ids.empty(); });
    std::vector<uint64_t> out(ids.begin(), ids.end());
    ids.clear();
    return out;
  }
};
CompletionQueue& completions();
extern std::atomic<uint64_t> g_next_pending;

// A started asynchronous operation, as seen from Python.
class Pending {
 public:
  virtual ~Pending() = default;
  uint64_t id = g_next_pending++;
  virtual bool ready() const = 0;
  virtual void arm() = 0;  // post `id` to the completion queue once settled
  virtual py::object result() = 0;
  // Waits with the GIL released (the timeline's own threads settle the future).
  virtual void wait() = 0;
};

template <class T>
class PendingFuture : public Pending {
 public:
  explicit PendingFuture(Future<T> f, py::object keep = py::none(), std::shared_ptr<void> extra = nullptr)
      : future(std::move(f)), keep_(std::move(keep)), extra_(std::move(extra)) {}
  bool ready() const override { return future.ready(); }
  void arm() override {
    uint64_t my_id = id;
    future.on_ready([my_id] { completions().post(my_id); });
  }
  py::object result() override {
    wait();
    if constexpr (std::is_void_v<T>) {
      future.get();
      return keep_;
    } else {
      return py::cast(future.get());
    }
  }
  void wait() override {
    py::gil_scoped_release release;
    future.wait();
  }
  Future<T> future;

 private:
  py::object keep_;
  std::shared_ptr<void> extra_;
};

}  // namespace webnn_py
