// The element-wise family's loops at the AVX-512 level (built with AVX-512F/BW/DQ/VL).
#if defined(__x86_64__) || defined(_M_X64)
#define WEBNN_KERNEL_ISA isa_avx512
#define WEBNN_KERNEL_ISA_LEVEL 2
#include "kernels/elementwise/elementwise_impl.h"

namespace webnn {

const ElementwiseLoops& elementwise_loops_avx512() { return isa_avx512::kElementwiseLoops; }

}  // namespace webnn
#endif
