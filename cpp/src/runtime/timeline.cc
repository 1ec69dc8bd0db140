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
  int helpers = 0;  // threads in help_until: they run queued work, so the worker need not wake

  // Pops and runs the front task; `lock` is held on entry and exit.
  void run_front(std::unique_lock<std::mutex>& lock) {
    std::function<void()> task = std::move(queue.front());
    queue.pop_front();
    busy = true;
    lock.unlock();
    try {
      task();
    } catch (...) {
      // Tasks report their own failures (futures, context loss); nothing may escape a timeline.
    }
    task = nullptr;  // release captures outside the lock
    lock.lock();
    finish_task();
  }
  // Marks the running task done and wakes whoever waits for that; `mutex` is held.
  void finish_task() {
    busy = false;
    change_cv.notify_all();
    if (!queue.empty() && helpers == 0) work_cv.notify_one();
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
    // Whoever runs the current task wakes the worker after it; a waiting helper runs it itself.
    if (state_->busy || state_->helpers > 0) {
      if (state_->helpers > 0) state_->change_cv.notify_all();
      return;
    }
  }
  state_->work_cv.notify_one();
}

void Timeline::run_or_submit(std::function<void()> task) {
  std::unique_lock<std::mutex> lock(state_->mutex);
  if (state_->busy || !state_->queue.empty()) {
    lock.unlock();
    submit(std::move(task));
    return;
  }
  state_->queue.push_back(std::move(task));
  state_->run_front(lock);
}

bool Timeline::try_begin_inline() {
  std::lock_guard<std::mutex> lock(state_->mutex);
  if (state_->busy || !state_->queue.empty()) return false;
  state_->busy = true;
  return true;
}

void Timeline::end_inline() {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->finish_task();
}

void Timeline::help_until(const std::function<bool()>& done) {
  std::unique_lock<std::mutex> lock(state_->mutex);
  ++state_->helpers;
  while (!done()) {
    if (!state_->busy && !state_->queue.empty()) {
      state_->run_front(lock);
      continue;
    }
    if (state_->busy) {
      // The worker runs a task, often a short one: poll a little before sleeping.
      for (int spin = 0; spin < 64 && state_->busy; ++spin) {
        lock.unlock();
        std::this_thread::yield();
        lock.lock();
      }
      if (!state_->busy) continue;
    }
    state_->change_cv.wait_for(lock, std::chrono::milliseconds(5));
  }
  // Work left behind goes to the worker.
  if (--state_->helpers == 0 && !state_->queue.empty() && !state_->busy) state_->work_cv.notify_one();
}

void Timeline::notify() {
  { std::lock_guard<std::mutex> lock(state_->mutex); }
  state_->change_cv.notify_all();
}

}  // namespace webnn
