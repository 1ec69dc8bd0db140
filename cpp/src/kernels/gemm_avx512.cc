// AVX-512 GEMM microkernel: 14x32 (28 zmm accumulators, enough independent FMAs to cover the
// 4-cycle latency of two 512-bit FMA pipes).
#include "kernels/gemm_ukernel.h"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>

namespace webnn {

namespace {

constexpr size_t MR = 14, NR = 32;

void ukernel(size_t kc, const float* a, const float* b, float* c, size_t ldc, bool accumulate,
             const GemmTileEpilogue* ep) {
  __m512 acc[MR][2];
#pragma GCC unroll 14
  for (size_t i = 0; i < MR; ++i) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
  for (size_t k = 0; k < kc; ++k, a += MR, b += NR) {
    const __m512 b0 = _mm512_load_ps(b), b1 = _mm512_load_ps(b + 16);
#pragma GCC unroll 14
    for (size_t i = 0; i < MR; ++i) {
      const __m512 ai = _mm512_set1_ps(a[i]);
      acc[i][0] = _mm512_fmadd_ps(ai, b0, acc[i][0]);
      acc[i][1] = _mm512_fmadd_ps(ai, b1, acc[i][1]);
    }
  }
#pragma GCC unroll 14
  for (size_t i = 0; i < MR; ++i) {
    float* row = c + i * ldc;
    __m512 v0 = acc[i][0], v1 = acc[i][1];
    if (accumulate) {
      v0 = _mm512_add_ps(v0, _mm512_loadu_ps(row));
      v1 = _mm512_add_ps(v1, _mm512_loadu_ps(row + 16));
    }
    if (ep) {
      if (ep->bias) {
        if (ep->bias_per_row) {
          const __m512 bi = _mm512_set1_ps(ep->bias[i]);
          v0 = _mm512_add_ps(v0, bi);
          v1 = _mm512_add_ps(v1, bi);
        } else {
          v0 = _mm512_add_ps(v0, _mm512_loadu_ps(ep->bias));
          v1 = _mm512_add_ps(v1, _mm512_loadu_ps(ep->bias + 16));
        }
      }
      const __m512 lo = _mm512_set1_ps(ep->min), hi = _mm512_set1_ps(ep->max);
      v0 = _mm512_min_ps(hi, _mm512_max_ps(lo, v0));  // operand order keeps NaN
      v1 = _mm512_min_ps(hi, _mm512_max_ps(lo, v1));
    }
    _mm512_storeu_ps(row, v0);
    _mm512_storeu_ps(row + 16, v1);
  }
}

// Rows of A against one B panel; two accumulator sets (even/odd k) hide the FMA latency.
void gemv(size_t m, size_t kc, const float* a, size_t lda, const float* b, float* c, size_t ldc) {
  for (size_t i = 0; i < m; ++i) {
    const float* ai = a + i * lda;
    __m512 e0 = _mm512_setzero_ps(), e1 = _mm512_setzero_ps(), o0 = _mm512_setzero_ps(), o1 = _mm512_setzero_ps();
    size_t k = 0;
    for (; k + 1 < kc; k += 2) {
      const float* bk = b + k * NR;
      e0 = _mm512_fmadd_ps(_mm512_set1_ps(ai[k]), _mm512_load_ps(bk), e0);
      e1 = _mm512_fmadd_ps(_mm512_set1_ps(ai[k]), _mm512_load_ps(bk + 16), e1);
      o0 = _mm512_fmadd_ps(_mm512_set1_ps(ai[k + 1]), _mm512_load_ps(bk + NR), o0);
      o1 = _mm512_fmadd_ps(_mm512_set1_ps(ai[k + 1]), _mm512_load_ps(bk + NR + 16), o1);
    }
    if (k < kc) {
      e0 = _mm512_fmadd_ps(_mm512_set1_ps(ai[k]), _mm512_load_ps(b + k * NR), e0);
      e1 = _mm512_fmadd_ps(_mm512_set1_ps(ai[k]), _mm512_load_ps(b + k * NR + 16), e1);
    }
    _mm512_storeu_ps(c + i * ldc, _mm512_add_ps(e0, o0));
    _mm512_storeu_ps(c + i * ldc + 16, _mm512_add_ps(e1, o1));
  }
}

}  // namespace

GemmUkernel f32_gemm_14x32_avx512() { return {ukernel, MR, NR, "f32_gemm_14x32_avx512", gemv}; }

}  // namespace webnn

#endif  // x86-64
