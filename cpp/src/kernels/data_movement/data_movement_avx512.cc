// The data-movement family's loops at the avx512 level (built with AVX-512F/BW/DQ/VL).
#if defined(__x86_64__) || defined(_M_X64)
#define WEBNN_KERNEL_ISA isa_avx512
#define WEBNN_KERNEL_ISA_LEVEL 2
#include "kernels/data_movement/data_movement_impl.h"

namespace webnn {

const DataMovementLoops& data_movement_loops_avx512() { return isa_avx512::kDataMovementLoops; }

}  // namespace webnn
#endif
