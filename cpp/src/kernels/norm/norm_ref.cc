// The normalization family's loops at the ref level (portable code for the baseline ISA).
#define WEBNN_KERNEL_ISA isa_ref
#define WEBNN_KERNEL_ISA_LEVEL 0
#include "kernels/norm/norm_impl.h"

namespace webnn {

const NormLoops& norm_loops_ref() { return isa_ref::kNormLoops; }

}  // namespace webnn
