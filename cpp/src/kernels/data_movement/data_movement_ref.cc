// The data-movement family's loops at the ref level (portable code for the baseline ISA).
#define WEBNN_KERNEL_ISA isa_ref
#define WEBNN_KERNEL_ISA_LEVEL 0
#include "kernels/data_movement/data_movement_impl.h"

namespace webnn {

const DataMovementLoops& data_movement_loops_ref() { return isa_ref::kDataMovementLoops; }

}  // namespace webnn
