// The reduction family's loops at the ref level (portable code for the baseline ISA).
#define WEBNN_KERNEL_ISA isa_ref
#define WEBNN_KERNEL_ISA_LEVEL 0
#include "kernels/reduce/reduce_impl.h"

namespace webnn {

const ReduceLoops& reduce_loops_ref() { return isa_ref::kReduceLoops; }

}  // namespace webnn
