#include "runtime/timeline.h"

#include <chrono>

namespace webnn {

struct Timeline::State {
  std::mutex mutex;
  std::condition_variable work_cv;    // the worker waits for tasks
  std::condition_variable change_cv;  // helpers wait for progress
  std::deque<std::function<void()>> queue;
  bool busy = false;
  bool stop = false;

  // Pops and runs the front task; `lock` is held on entry and exit.
  void run_front(std::unique_lock<std::mutex>& lock) {
    std::function<void()> task = std::move(queue.front());
    queue.pop_front();
    busy = true;
    lock.unlock();
    task();
    task = nullptr;  // release captures outside the lock
    lock.lock();
    busy = false;
    change_cv.notify_all();
    if (!queue.empty()) work_cv.notify_one();
  }
};

Timeline::Timeline() : state_(std::make_shared<State>()) {
  worker_ = std::thread(worker_loop, state_);
}

Timeline::~Timeline() {
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->stop = true;
  }
  state_->work_cv.notify_all();
  if (worker_.get_id() == std::this_thread::get_id())
    worker_.detach();  // the last owner let go from a task: the loop ends by itself
  else
    worker_.join();
}

void Timeline::worker_loop(std::shared_ptr<State> state) {
  std::unique_lock<std::mutex> lock(state->mutex);
  for (;;) {
    state->work_cv.wait(lock, [&] { return state->stop || (!state->queue.empty() && !state->busy); });
    if (!state->queue.empty() && !state->busy) {
      state->run_front(lock);
      continue;
    }
    if (state->stop && state->queue.empty()) return;
  }
}

void Timeline::submit(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->queue.push_back(std::move(task));
    if (state_->busy) return;  // whoever runs the current task wakes the worker after it
  }
  state_->work_cv.notify_one();
}

void Timeline::run_or_submit(std::function<void()> task) {
  std::unique_lock<std::mutex> lock(state_->mutex);
  if (state_->busy || !state_->queue.empty()) {
    state_->queue.push_back(std::move(task));
    if (!state_->busy) state_->work_cv.notify_one();
    return;
  }
  state_->queue.push_back(std::move(task));
  state_->run_front(lock);
}

void Timeline::help_until(const std::function<bool()>& done) {
  std::unique_lock<std::mutex> lock(state_->mutex);
  while (!done()) {
    if (!state_->busy && !state_->queue.empty()) {
      state_->run_front(lock);
      continue;
    }
    state_->change_cv.wait_for(lock, std::chrono::milliseconds(5));
  }
}

void Timeline::notify() {
  { std::lock_guard<std::mutex> lock(state_->mutex); }
  state_->change_cv.notify_all();
}

}  // namespace webnn
