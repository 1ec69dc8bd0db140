// The element-wise family's loops at the ref level: portable code for the baseline ISA.
#define WEBNN_KERNEL_ISA isa_ref
#define WEBNN_KERNEL_ISA_LEVEL 0
#include "kernels/elementwise/elementwise_impl.h"

namespace webnn {

const ElementwiseLoops& elementwise_loops_ref() { return isa_ref::kElementwiseLoops; }

}  // namespace webnn
