// The gemm operation: output[M, N] = alpha * A' * B' + beta * C (on the GEMM driver).
#pragma once
#include "kernels/kernel.h"

namespace webnn {

struct GemmOpParams {
  size_t m, n, k;
  bool a_transpose, b_transpose;  // a is [K, M] / b is [N, K]
  bool has_c;
  size_t c_stride_m, c_stride_n;  // strides of c broadcast to [M, N] (0 on broadcast dims)
  float alpha, beta;              // already cast to the operand data type
};

// float32 or float16 (computed in float32); inputs: a, b[, c]. A constant b (`b_constant`) is
// packed once here.
Kernel make_gemm_op_kernel(DataType type, const GemmOpParams& params, const void* b_constant = nullptr);

}  // namespace webnn
