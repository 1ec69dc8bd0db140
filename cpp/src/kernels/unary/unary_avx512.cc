// The unary family's loops at the avx512 level (built with AVX-512F/BW/DQ/VL).
#if defined(__x86_64__) || defined(_M_X64)
#define WEBNN_KERNEL_ISA isa_avx512
#define WEBNN_KERNEL_ISA_LEVEL 2
#include "kernels/unary/unary_impl.h"

namespace webnn {

const UnaryLoops& unary_loops_avx512() { return isa_avx512::kUnaryLoops; }

}  // namespace webnn
#endif
