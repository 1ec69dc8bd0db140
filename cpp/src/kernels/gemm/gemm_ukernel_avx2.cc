// The GEMM microkernel at the avx2 level (built with -mavx2 -mfma -mf16c): 6x16.
#if defined(__x86_64__) || defined(_M_X64)
#define WEBNN_KERNEL_ISA isa_avx2
#define WEBNN_KERNEL_ISA_LEVEL 1
#include "kernels/gemm/gemm_ukernel_impl.h"

namespace webnn {

static_assert(isa_avx2::kGemmMr == 6 && isa_avx2::kGemmNr == 16, "the name below states the tile");
GemmUkernel f32_gemm_6x16_avx2() { return isa_avx2::f32_gemm_ukernel_of_level("f32_gemm_6x16_avx2"); }

}  // namespace webnn
#endif
