// The data-movement family's loops at the avx2 level (built with -mavx2 -mfma -mf16c).
#if defined(__x86_64__) || defined(_M_X64)
#define WEBNN_KERNEL_ISA isa_avx2
#define WEBNN_KERNEL_ISA_LEVEL 1
#include "kernels/data_movement/data_movement_impl.h"

namespace webnn {

const DataMovementLoops& data_movement_loops_avx2() { return isa_avx2::kDataMovementLoops; }

}  // namespace webnn
#endif
