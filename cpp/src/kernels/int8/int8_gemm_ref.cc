// The int8 family at the ref level: the int16 microkernel, requantize and depthwise loops.

#define WEBNN_KERNEL_ISA isa_ref
#define WEBNN_KERNEL_ISA_LEVEL 0
#include "kernels/int8/int8_gemm_impl.h"

namespace webnn {

const Int8Kernels& int8_kernels_ref() {
  static const Int8Kernels kernels = isa_ref::level_kernels();
  return kernels;
}

}  // namespace webnn

