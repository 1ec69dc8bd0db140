// AVX2+FMA GEMM microkernel: 6x16 (12 ymm accumulators).
#include "kernels/gemm_ukernel.h"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>

namespace webnn {

namespace {

constexpr size_t MR = 6, NR = 16;

void ukernel(size_t kc, const float* a, const float* b, float* c, size_t ldc, bool accumulate,
             const GemmTileEpilogue* ep) {
  __m256 acc[MR][2];
#pragma GCC unroll 6
  for (size_t i = 0; i < MR; ++i) acc[i][0] = acc[i][1] = _mm256_setzero_ps();
  for (size_t k = 0; k < kc; ++k, a += MR, b += NR) {
    const __m256 b0 = _mm256_load_ps(b), b1 = _mm256_load_ps(b + 8);
#pragma GCC unroll 6
    for (size_t i = 0; i < MR; ++i) {
      const __m256 ai = _mm256_broadcast_ss(a + i);
      acc[i][0] = _mm256_fmadd_ps(ai, b0, acc[i][0]);
      acc[i][1] = _mm256_fmadd_ps(ai, b1, acc[i][1]);
    }
  }
#pragma GCC unroll 6
  for (size_t i = 0; i < MR; ++i) {
    float* row = c + i * ldc;
    __m256 v0 = acc[i][0], v1 = acc[i][1];
    if (accumulate) {
      v0 = _mm256_add_ps(v0, _mm256_loadu_ps(row));
      v1 = _mm256_add_ps(v1, _mm256_loadu_ps(row + 8));
    }
    if (ep) {
      if (ep->bias) {
        if (ep->bias_per_row) {
          const __m256 bi = _mm256_broadcast_ss(ep->bias + i);
          v0 = _mm256_add_ps(v0, bi);
          v1 = _mm256_add_ps(v1, bi);
        } else {
          v0 = _mm256_add_ps(v0, _mm256_loadu_ps(ep->bias));
          v1 = _mm256_add_ps(v1, _mm256_loadu_ps(ep->bias + 8));
        }
      }
      const __m256 lo = _mm256_set1_ps(ep->min), hi = _mm256_set1_ps(ep->max);
      v0 = _mm256_min_ps(hi, _mm256_max_ps(lo, v0));  // operand order keeps NaN
      v1 = _mm256_min_ps(hi, _mm256_max_ps(lo, v1));
    }
    _mm256_storeu_ps(row, v0);
    _mm256_storeu_ps(row + 8, v1);
  }
}

// Rows of A against one B panel; two accumulator sets (even/odd k) hide the FMA latency.
void gemv(size_t m, size_t kc, const float* a, size_t lda, const float* b, float* c, size_t ldc) {
  for (size_t i = 0; i < m; ++i) {
    const float* ai = a + i * lda;
    __m256 e0 = _mm256_setzero_ps(), e1 = _mm256_setzero_ps(), o0 = _mm256_setzero_ps(), o1 = _mm256_setzero_ps();
    size_t k = 0;
    for (; k + 1 < kc; k += 2) {
      const float* bk = b + k * NR;
      e0 = _mm256_fmadd_ps(_mm256_set1_ps(ai[k]), _mm256_load_ps(bk), e0);
      e1 = _mm256_fmadd_ps(_mm256_set1_ps(ai[k]), _mm256_load_ps(bk + 8), e1);
      o0 = _mm256_fmadd_ps(_mm256_set1_ps(ai[k + 1]), _mm256_load_ps(bk + NR), o0);
      o1 = _mm256_fmadd_ps(_mm256_set1_ps(ai[k + 1]), _mm256_load_ps(bk + NR + 8), o1);
    }
    if (k < kc) {
      e0 = _mm256_fmadd_ps(_mm256_set1_ps(ai[k]), _mm256_load_ps(b + k * NR), e0);
      e1 = _mm256_fmadd_ps(_mm256_set1_ps(ai[k]), _mm256_load_ps(b + k * NR + 8), e1);
    }
    _mm256_storeu_ps(c + i * ldc, _mm256_add_ps(e0, o0));
    _mm256_storeu_ps(c + i * ldc + 8, _mm256_add_ps(e1, o1));
  }
}

}  // namespace

GemmUkernel f32_gemm_6x16_avx2() { return {ukernel, MR, NR, "f32_gemm_6x16_avx2", gemv}; }

}  // namespace webnn

#endif  // x86-64
