// AVX-512 GEMM microkernel: 14x32 (28 zmm accumulators, enough independent FMAs to cover the FMA
// latency). Edge tiles use the same code with fewer rows and one vector or a masked last vector.
#include "kernels/gemm/gemm_ukernel.h"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>

#include <utility>

namespace webnn {

namespace {

constexpr size_t MR = 14, NR = 32;

// R rows x V vectors of 16 columns; the last vector's columns are masked by `last`.
template <size_t R, size_t V>
void tile(size_t kc, const float* a, const float* b, float* c, size_t ldc, bool accumulate,
          const GemmTileEpilogue* ep, __mmask16 last) {
  __m512 acc[R][V];
#pragma GCC unroll 14
  for (size_t i = 0; i < R; ++i)
    for (size_t v = 0; v < V; ++v) acc[i][v] = _mm512_setzero_ps();
  for (size_t k = 0; k < kc; ++k, a += MR, b += NR) {
    __m512 bv[V];
    for (size_t v = 0; v < V; ++v) bv[v] = _mm512_load_ps(b + 16 * v);
#pragma GCC unroll 14
    for (size_t i = 0; i < R; ++i) {
      const __m512 ai = _mm512_set1_ps(a[i]);
      for (size_t v = 0; v < V; ++v) acc[i][v] = _mm512_fmadd_ps(ai, bv[v], acc[i][v]);
    }
  }
  __m512 lo = _mm512_set1_ps(-__builtin_inff()), hi = _mm512_set1_ps(__builtin_inff());
  if (ep) lo = _mm512_set1_ps(ep->min), hi = _mm512_set1_ps(ep->max);
  __m512 col_bias[V];
  const bool bias_per_column = ep && ep->bias && !ep->bias_per_row;
  for (size_t v = 0; v < V; ++v) {
    const __mmask16 m = v + 1 == V ? last : __mmask16(0xFFFF);
    col_bias[v] = bias_per_column ? _mm512_maskz_loadu_ps(m, ep->bias + 16 * v) : _mm512_setzero_ps();
  }
#pragma GCC unroll 14
  for (size_t i = 0; i < R; ++i) {
    float* row = c + i * ldc;
    const __m512 row_bias = ep && ep->bias && ep->bias_per_row ? _mm512_set1_ps(ep->bias[i]) : _mm512_setzero_ps();
    for (size_t v = 0; v < V; ++v) {
      const __mmask16 m = v + 1 == V ? last : __mmask16(0xFFFF);
      __m512 x = acc[i][v];
      if (accumulate) x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(m, row + 16 * v));
      if (ep) {
        if (ep->bias) x = _mm512_add_ps(x, ep->bias_per_row ? row_bias : col_bias[v]);
        if (ep->residual) x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(m, ep->residual + i * ep->residual_ld + 16 * v));
        x = _mm512_min_ps(hi, _mm512_max_ps(lo, x));
      }
      _mm512_mask_storeu_ps(row + 16 * v, m, x);  // min/max operand order keeps NaN
    }
  }
}

using TileFn = void (*)(size_t, const float*, const float*, float*, size_t, bool, const GemmTileEpilogue*, __mmask16);

template <size_t... R>
constexpr auto make_tiles(std::index_sequence<R...>) {
  struct Table {
    TileFn one[MR + 1], two[MR + 1];
  };
  return Table{{nullptr, tile<R + 1, 1>...}, {nullptr, tile<R + 1, 2>...}};
}
constexpr auto kTiles = make_tiles(std::make_index_sequence<MR>());

void ukernel(size_t rows, size_t cols, size_t kc, const float* a, const float* b, float* c, size_t ldc,
             bool accumulate, const GemmTileEpilogue* ep) {
  const size_t tail = cols & 15;
  const __mmask16 last = tail ? __mmask16((1u << tail) - 1) : __mmask16(0xFFFF);
  (cols > 16 ? kTiles.two : kTiles.one)[rows](kc, a, b, c, ldc, accumulate, ep, last);
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
