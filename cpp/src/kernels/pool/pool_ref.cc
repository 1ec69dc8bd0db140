// The pooling family's loops at the ref level (portable code for the baseline ISA).
#define WEBNN_KERNEL_ISA isa_ref
#define WEBNN_KERNEL_ISA_LEVEL 0
#include "kernels/pool/pool_impl.h"

namespace webnn {

const PoolLoops& pool_loops_ref() { return isa_ref::kPoolLoops; }

}  // namespace webnn
