// The normalization family's loops at the avx2 level (built with -mavx2 -mfma -mf16c).
#if defined(__x86_64__) || defined(_M_X64)
#define WEBNN_KERNEL_ISA isa_avx2
#define WEBNN_KERNEL_ISA_LEVEL 1
#include "kernels/norm/norm_impl.h"

namespace webnn {

const NormLoops& norm_loops_avx2() { return isa_avx2::kNormLoops; }

}  // namespace webnn
#endif
