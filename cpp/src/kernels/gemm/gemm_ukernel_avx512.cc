// The GEMM microkernel at the avx512 level (built with AVX-512F/BW/DQ/VL): 14x32.
#if defined(__x86_64__) || defined(_M_X64)
#define WEBNN_KERNEL_ISA isa_avx512
#define WEBNN_KERNEL_ISA_LEVEL 2
#include "kernels/gemm/gemm_ukernel_impl.h"

namespace webnn {

static_assert(isa_avx512::kGemmMr == 14 && isa_avx512::kGemmNr == 32, "the name below states the tile");
GemmUkernel f32_gemm_14x32_avx512() { return isa_avx512::f32_gemm_ukernel_of_level("f32_gemm_14x32_avx512"); }

}  // namespace webnn
#endif
