// The f32 GEMM microkernel for a SIMD level, written once over the vector layer
// (vector_math_simd.h) and compiled per ISA (see kernel_isa.h): gemm_ukernel_avx2.cc,
// gemm_ukernel_avx512.cc. The tile is kMr rows x kNr = 2 vectors of columns: 2 * kMr accumulators,
// two B vectors and one broadcast A value fill the vector registers (6x16 with 16 registers of 8
// floats, 14x32 with 32 of 16). Edge tiles use the same code with fewer rows and one vector or a
// masked last vector.
#pragma once
#include <utility>

#include "kernels/gemm/gemm_ukernel.h"
#include "kernels/kernel_isa.h"

#if WEBNN_KERNEL_ISA_LEVEL < 1
#error "gemm_ukernel_impl.h is for the SIMD levels (the ref level has gemm_ukernel_ref.cc)"
#endif

namespace webnn {
namespace WEBNN_KERNEL_ISA {

constexpr size_t kGemmNr = 2 * simd::kLanes;
constexpr size_t kGemmMr = (simd::kRegisters - 3) / 2;

namespace {

constexpr size_t MR = kGemmMr, NR = kGemmNr, L = simd::kLanes;

// R rows x V vectors of columns; the last vector's columns are masked by `last`.
template <size_t R, size_t V>
void tile(size_t kc, const float* a, const float* b, float* c, size_t ldc, bool accumulate,
          const GemmTileEpilogue* ep, simd::Mask last) {
  VF acc[R][V];
#pragma GCC unroll 16
  for (size_t i = 0; i < R; ++i)
    for (size_t v = 0; v < V; ++v) acc[i][v] = simd::splat(0.0f);
  for (size_t k = 0; k < kc; ++k, a += MR, b += NR) {
    VF bv[V];
    for (size_t v = 0; v < V; ++v) bv[v] = simd::load_aligned(b + L * v);
#pragma GCC unroll 16
    for (size_t i = 0; i < R; ++i) {
      const VF ai = simd::splat(a[i]);
      for (size_t v = 0; v < V; ++v) acc[i][v] = simd::fma(ai, bv[v], acc[i][v]);
    }
  }
  VF lo = simd::splat(-__builtin_inff()), hi = simd::splat(__builtin_inff());
  if (ep) lo = simd::splat(ep->min), hi = simd::splat(ep->max);
  const simd::Mask all = simd::all_lanes();
  VF col_bias[V];
  const bool bias_per_column = ep && ep->bias && !ep->bias_per_row;
  for (size_t v = 0; v < V; ++v)
    col_bias[v] = bias_per_column ? simd::load(ep->bias + L * v, v + 1 == V ? last : all) : simd::splat(0.0f);
#pragma GCC unroll 16
  for (size_t i = 0; i < R; ++i) {
    float* row = c + i * ldc;
    const VF row_bias = ep && ep->bias && ep->bias_per_row ? simd::splat(ep->bias[i]) : simd::splat(0.0f);
    for (size_t v = 0; v < V; ++v) {
      const simd::Mask m = v + 1 == V ? last : all;
      VF x = acc[i][v];
      if (accumulate) x = x + simd::load(row + L * v, m);
      if (ep) {
        if (ep->bias) x = x + (ep->bias_per_row ? row_bias : col_bias[v]);
        if (ep->residual) x = x + simd::load(ep->residual + i * ep->residual_ld + L * v, m);
        x = simd::clamp(x, lo, hi);
      }
      simd::store(row + L * v, x, m);
    }
  }
}

using TileFn = void (*)(size_t, const float*, const float*, float*, size_t, bool, const GemmTileEpilogue*,
                        simd::Mask);

template <size_t... R>
constexpr auto make_tiles(std::index_sequence<R...>) {
  struct Table {
    TileFn one[MR + 1], two[MR + 1];
  };
  return Table{{nullptr, tile<R + 1, 1>...}, {nullptr, tile<R + 1, 2>...}};
}
constexpr auto kTiles = make_tiles(std::make_index_sequence<MR>());

void f32_gemm_ukernel(size_t rows, size_t cols, size_t kc, const float* a, const float* b, float* c, size_t ldc,
                      bool accumulate, const GemmTileEpilogue* ep) {
  const simd::Mask last = simd::first_lanes(cols % L ? cols % L : L);
  (cols > L ? kTiles.two : kTiles.one)[rows](kc, a, b, c, ldc, accumulate, ep, last);
}

// Rows of A against one B panel; two accumulator sets (even/odd k) hide the FMA latency.
void f32_gemv_ukernel(size_t m, size_t kc, const float* a, size_t lda, const float* b, float* c, size_t ldc) {
  for (size_t i = 0; i < m; ++i) {
    const float* ai = a + i * lda;
    VF e0 = simd::splat(0.0f), e1 = e0, o0 = e0, o1 = e0;
    size_t k = 0;
    for (; k + 1 < kc; k += 2) {
      const float* bk = b + k * NR;
      e0 = simd::fma(simd::splat(ai[k]), simd::load_aligned(bk), e0);
      e1 = simd::fma(simd::splat(ai[k]), simd::load_aligned(bk + L), e1);
      o0 = simd::fma(simd::splat(ai[k + 1]), simd::load_aligned(bk + NR), o0);
      o1 = simd::fma(simd::splat(ai[k + 1]), simd::load_aligned(bk + NR + L), o1);
    }
    if (k < kc) {
      e0 = simd::fma(simd::splat(ai[k]), simd::load_aligned(b + k * NR), e0);
      e1 = simd::fma(simd::splat(ai[k]), simd::load_aligned(b + k * NR + L), e1);
    }
    simd::store(c + i * ldc, e0 + o0);
    simd::store(c + i * ldc + L, e1 + o1);
  }
}

}  // namespace

// The microkernel of this level, named for its tile (f32_gemm_<MR>x<NR>_<isa>).
inline GemmUkernel f32_gemm_ukernel_of_level(const char* name) {
  return {f32_gemm_ukernel, MR, NR, name, f32_gemv_ukernel};
}

}  // namespace WEBNN_KERNEL_ISA
}  // namespace webnn
