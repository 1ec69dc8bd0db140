// GEMM family: matmul and the matrix products inside other ops.
#pragma once
#include "graph/op_def.h"

namespace webnn {

// C[M,N] = A[M,K] * B[K,N], row-major with leading dimensions; C is overwritten. Single-threaded;
// the best kernel for the CPU. Every op that needs a float32 matrix product calls this.
void gemm_f32(size_t M, size_t N, size_t K, const float* A, size_t lda, const float* B, size_t ldb, float* C,
              size_t ldc);
// The portable reference version.
void gemm_f32_ref(size_t M, size_t N, size_t K, const float* A, size_t lda, const float* B, size_t ldb, float* C,
                  size_t ldc);

// matmul with broadcast batch dims; float32 or float16 (computed in float32).
Kernel make_matmul_kernel(DataType type, const std::vector<uint32_t>& a_shape, const std::vector<uint32_t>& b_shape,
                          const std::vector<uint32_t>& out_shape);

}  // namespace webnn
