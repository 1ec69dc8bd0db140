// Constant data shared by every graph in the process: loading a model into several contexts (or
// building the same weights twice) keeps one copy of its packed weights and run-time constants.
#pragma once
#include "core/common.h"

namespace webnn {

// Returns a live buffer with the same bytes as `buffer` when one was shared before (then `buffer`
// can be dropped), else registers `buffer` and returns it. Equality is checked byte for byte (the
// hash only finds candidates). A shared buffer must not be written again. Buffers under 4 KiB are
// returned as they are. Entries go with the last holder. Thread-safe.
BufferPtr share_constant(BufferPtr buffer);

// Buffers currently shared (live entries), and their bytes: for tests and diagnostics.
struct SharedConstantStats {
  size_t buffers = 0, bytes = 0;
};
SharedConstantStats shared_constant_stats();

}  // namespace webnn
