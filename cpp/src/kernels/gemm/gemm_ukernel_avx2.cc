// AVX2+FMA GEMM microkernel: 6x16 (12 ymm accumulators). Edge tiles use the same code with fewer
// rows and one vector or a masked last vector.
#include "kernels/gemm/gemm_ukernel.h"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>

#include <utility>

namespace webnn {

namespace {

constexpr size_t MR = 6, NR = 16;

// R rows x V vectors of 8 columns; the last vector's columns are masked by `last`.
template <size_t R, size_t V>
void tile(size_t kc, const float* a, const float* b, float* c, size_t ldc, bool accumulate,
          const GemmTileEpilogue* ep, __m256i last) {
  __m256 acc[R][V];
#pragma GCC unroll 6
  for (size_t i = 0; i < R; ++i)
    for (size_t v = 0; v < V; ++v) acc[i][v] = _mm256_setzero_ps();
  for (size_t k = 0; k < kc; ++k, a += MR, b += NR) {
    __m256 bv[V];
    for (size_t v = 0; v < V; ++v) bv[v] = _mm256_load_ps(b + 8 * v);
#pragma GCC unroll 6
    for (size_t i = 0; i < R; ++i) {
      const __m256 ai = _mm256_broadcast_ss(a + i);
      for (size_t v = 0; v < V; ++v) acc[i][v] = _mm256_fmadd_ps(ai, bv[v], acc[i][v]);
    }
  }
  __m256 lo = _mm256_set1_ps(-__builtin_inff()), hi = _mm256_set1_ps(__builtin_inff());
  if (ep) lo = _mm256_set1_ps(ep->min), hi = _mm256_set1_ps(ep->max);
  const __m256i all = _mm256_set1_epi32(-1);
  __m256 col_bias[V];
  const bool bias_per_column = ep && ep->bias && !ep->bias_per_row;
  for (size_t v = 0; v < V; ++v)
    col_bias[v] = bias_per_column ? _mm256_maskload_ps(ep->bias + 8 * v, v + 1 == V ? last : all) : _mm256_setzero_ps();
#pragma GCC unroll 6
  for (size_t i = 0; i < R; ++i) {
    float* row = c + i * ldc;
    const __m256 row_bias = ep && ep->bias && ep->bias_per_row ? _mm256_broadcast_ss(ep->bias + i) : _mm256_setzero_ps();
    for (size_t v = 0; v < V; ++v) {
      const __m256i m = v + 1 == V ? last : all;
      __m256 x = acc[i][v];
      if (accumulate) x = _mm256_add_ps(x, _mm256_maskload_ps(row + 8 * v, m));
      if (ep) {
        if (ep->bias) x = _mm256_add_ps(x, ep->bias_per_row ? row_bias : col_bias[v]);
        if (ep->residual) x = _mm256_add_ps(x, _mm256_maskload_ps(ep->residual + i * ep->residual_ld + 8 * v, m));
        x = _mm256_min_ps(hi, _mm256_max_ps(lo, x));
      }
      _mm256_maskstore_ps(row + 8 * v, m, x);  // min/max operand order keeps NaN
    }
  }
}

using TileFn = void (*)(size_t, const float*, const float*, float*, size_t, bool, const GemmTileEpilogue*, __m256i);

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
  const int tail = int(cols & 7) ? int(cols & 7) : 8;
  const __m256i last = _mm256_cmpgt_epi32(_mm256_set1_epi32(tail), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  (cols > 8 ? kTiles.two : kTiles.one)[rows](kc, a, b, c, ldc, accumulate, ep, last);
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
