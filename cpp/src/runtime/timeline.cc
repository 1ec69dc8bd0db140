#include "runtime/timeline.h"

#include <chrono>

namespace webnn {

namespace {
using Clock = std::chrono::steady_clock;
// After activity, the worker polls for kSoon work this often, for this long, before it sleeps.
constexpr auto kPollPeriod = std::chrono::microseconds(500);
constexpr auto kLingerTime = std::chrono::milliseconds(20);
}  // namespace

struct Timeline::State {
  std::mutex mutex;
  std::condition_variable work_cv;    // the worker waits for tasks
  std::condition_variable change_cv;  // helpers wait for progress
  std::deque<std::function<void()>> queue;
  bool busy = false;
  bool stop = false;
  int helpers = 0;  // threads waiting in help_until or run_in_order: they run queued work themselves
  enum class Worker { kAwake, kPolling, kAsleep } worker = Worker::kAwake;
  Clock::time_point last_activity{};  // of the last submit
  uint64_t submitted = 0, completed = 0;  // queued tasks, counted in FIFO order

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
    ++completed;
    finish_task();
  }
  // Marks the running task done and wakes whoever waits for that; `mutex` is held.
  void finish_task() {
    busy = false;
    change_cv.notify_all();
    if (!queue.empty() && helpers == 0 && worker != Worker::kAwake) work_cv.notify_one();
  }
  void push(std::function<void()> task) {
    queue.push_back(std::move(task));
    ++submitted;
  }
  // Waits for progress while another thread runs a task (or for notify()); `lock` is held.
  void wait_for_change(std::unique_lock<std::mutex>& lock) {
    if (busy) {
      // Often a short task: poll a little before sleeping.
      for (int spin = 0; spin < 64 && busy; ++spin) {
        lock.unlock();
        std::this_thread::yield();
        lock.lock();
      }
      if (!busy) return;
    }
    change_cv.wait_for(lock, std::chrono::milliseconds(5));
  }
  // A helper leaves: work queued behind what it waited for goes to the worker.
  void leave_helping() {
    if (--helpers == 0 && !queue.empty() && !busy) work_cv.notify_one();
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
  using Worker = State::Worker;
  std::unique_lock<std::mutex> lock(state->mutex);
  for (;;) {
    if (!state->queue.empty() && !state->busy) {
      state->run_front(lock);
      continue;
    }
    if (state->stop && state->queue.empty()) return;
    if (Clock::now() - state->last_activity < kLingerTime) {
      state->worker = Worker::kPolling;
      state->work_cv.wait_for(lock, kPollPeriod);
    } else {
      state->worker = Worker::kAsleep;
      state->work_cv.wait(lock);
    }
    state->worker = Worker::kAwake;
  }
}

void Timeline::submit(std::function<void()> task, Wake wake) {
  using Worker = State::Worker;
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->push(std::move(task));
    state_->last_activity = Clock::now();
    // Whoever runs the current task wakes the worker after it; a waiting helper runs it itself;
    // an awake worker finds it on its next look.
    if (state_->busy || state_->helpers > 0 || state_->worker == Worker::kAwake) return;
    if (wake == Wake::kSoon && state_->worker == Worker::kPolling) return;
  }
  state_->work_cv.notify_one();
}

void Timeline::run_or_submit(std::function<void()> task, Wake wake) {
  std::unique_lock<std::mutex> lock(state_->mutex);
  if (state_->busy || !state_->queue.empty()) {
    lock.unlock();
    submit(std::move(task), wake);
    return;
  }
  state_->push(std::move(task));
  state_->run_front(lock);
}

bool Timeline::try_begin_inline() {
  std::lock_guard<std::mutex> lock(state_->mutex);
  if (state_->busy || !state_->queue.empty()) return false;
  state_->busy = true;
  return true;
}

bool Timeline::begin_in_order() {
  std::unique_lock<std::mutex> lock(state_->mutex);
  const uint64_t before = state_->submitted;
  ++state_->helpers;
  while (state_->completed < before) {
    if (!state_->busy && !state_->queue.empty())
      state_->run_front(lock);
    else
      state_->wait_for_change(lock);
  }
  const bool idle = !state_->busy && state_->queue.empty();
  if (idle) state_->busy = true;
  state_->leave_helping();
  return idle;
}

void Timeline::end_inline() {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->finish_task();
}

void Timeline::help_until(const std::function<bool()>& done) {
  std::unique_lock<std::mutex> lock(state_->mutex);
  ++state_->helpers;
  while (!done()) {
    if (!state_->busy && !state_->queue.empty())
      state_->run_front(lock);
    else
      state_->wait_for_change(lock);
  }
  state_->leave_helping();
}

void Timeline::notify() {
  { std::lock_guard<std::mutex> lock(state_->mutex); }
  state_->change_cv.notify_all();
}

}  // namespace webnn
