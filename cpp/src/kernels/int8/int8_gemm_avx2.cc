// The int8 family at the avx2 level: the int16 microkernel, requantize and depthwise loops.
#if defined(__x86_64__) || defined(_M_X64)
#define WEBNN_KERNEL_ISA isa_avx2
#define WEBNN_KERNEL_ISA_LEVEL 1
#include "kernels/int8/int8_gemm_impl.h"

namespace webnn {

const Int8Kernels& int8_kernels_avx2() {
  static const Int8Kernels kernels = isa_avx2::level_kernels();
  return kernels;
}

}  // namespace webnn
#endif
