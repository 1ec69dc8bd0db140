// A context's timeline: a FIFO of tasks run one at a time, in submission order. A worker thread
// drains it; a caller that waits for a result may run queued tasks itself (still one at a time,
// still in order), which saves a thread hand-off on every read.
#pragma once
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

namespace webnn {

class Timeline {
 public:
  Timeline();
  ~Timeline();  // finishes queued work, then stops the worker
  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;

  // kNow wakes the worker for the task. kSoon is for work nobody waits on yet (dispatch, write,
  // release): a sleeping worker is woken, but one that was active a moment ago polls instead, and a
  // caller that then waits runs the task itself. That saves a wake-up and a hand-off per call.
  enum class Wake { kNow, kSoon };
  void submit(std::function<void()> task, Wake wake = Wake::kNow);
  // Runs `task` at once on the caller when nothing is queued or running; otherwise queues it.
  void run_or_submit(std::function<void()> task, Wake wake = Wake::kNow);
  // Runs `fn` at once on the caller and returns true when nothing is queued or running (it then
  // holds the timeline's place, so it is in order); returns false, running nothing, otherwise.
  template <class F>
  bool run_if_idle(F&& fn) {
    if (!try_begin_inline()) return false;
    struct End {
      Timeline* timeline;
      ~End() { timeline->end_inline(); }
    } end{this};
    fn();
    return true;
  }
  // Runs `fn` on the caller in the place of a task queued now: it first runs (or waits for) the work
  // queued before this call, then `fn` while it holds the timeline. Returns false, running
  // nothing, when other threads queued more work in the meantime (queue a task instead).
  template <class F>
  bool run_in_order(F&& fn) {
    if (!begin_in_order()) return false;
    struct End {
      Timeline* timeline;
      ~End() { timeline->end_inline(); }
    } end{this};
    fn();
    return true;
  }
  // Blocks until `done()` holds, running queued tasks on this thread when the worker is not.
  void help_until(const std::function<bool()>& done);
  // Wakes threads in help_until (call after settling a future outside the timeline).
  void notify();

 private:
  struct State;
  bool try_begin_inline();
  bool begin_in_order();
  void end_inline();
  static void worker_loop(std::shared_ptr<State> state);
  std::shared_ptr<State> state_;
  std::thread worker_;
};

}  // namespace webnn
