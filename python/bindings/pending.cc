// Asynchronous operations seen from Python: the completion queue and the Pending objects that
// the *_async methods wait on.
#include "pending.h"

namespace webnn_py {

CompletionQueue& completions() {
  static CompletionQueue* q = new CompletionQueue();
  return *q;
}
std::atomic<uint64_t> g_next_pending{1};

}  // namespace webnn_py
