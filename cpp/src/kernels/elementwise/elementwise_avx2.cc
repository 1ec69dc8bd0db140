// The element-wise family's loops at the AVX2 level (built with -mavx2 -mfma -mf16c).
#if defined(__x86_64__) || defined(_M_X64)
#define WEBNN_KERNEL_ISA isa_avx2
#define WEBNN_KERNEL_ISA_LEVEL 1
#include "kernels/elementwise/elementwise_impl.h"

namespace webnn {

const ElementwiseLoops& elementwise_loops_avx2() { return isa_avx2::kElementwiseLoops; }

}  // namespace webnn
#endif
