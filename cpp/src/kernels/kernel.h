// What a kernel is: a callable over the step's input and output buffers, run on a thread pool.
// Kernels are a leaf library over core/: they know data types and shapes, not graphs.
#pragma once
#include <functional>

#include "core/common.h"

namespace webnn {

class ThreadPool;

struct KernelArgs {
  const void* const* inputs;  // aligned with the step's inputs
  void* const* outputs;       // aligned with the step's outputs
  ThreadPool* pool;
};
using Kernel = std::function<void(const KernelArgs&)>;

}  // namespace webnn
