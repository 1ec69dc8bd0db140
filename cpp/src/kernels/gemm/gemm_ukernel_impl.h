// The f32 GEMM microkernel for a SIMD level, written once over the vector layer
// (vector_math_simd.h) and compiled per ISA (see kernel_isa.h): gemm_ukernel_avx2.cc,
// gemm_ukernel_avx512.cc. The tile is kMr rows x kNr = 2 vectors of columns: 2 * kMr accumulators,
// two B vectors and one broadcast A value fill the vector registers (6x16 with 16 registers of 8
// floats, 14x32 with 32 of 16). Edge tiles use the same code with fewer rows and one vector or a
// masked last vector. The indirect variant reads A's rows in place through pointers (convolutions
// without im2col).
#pragma once
#include <type_traits>
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

// Zeroes the accumulators; C's rows are far apart (cache misses): they are fetched for writing while
// the K loop runs.
template <size_t R, size_t V>
__attribute__((always_inline)) inline void start_tile(VF (&acc)[R][V], float* c, size_t ldc) {
#pragma GCC unroll 16
  for (size_t i = 0; i < R; ++i) {
    __builtin_prefetch(c + i * ldc, 1);
    __builtin_prefetch(c + i * ldc + V * L - 1, 1);
#pragma GCC unroll 4
    for (size_t v = 0; v < V; ++v) acc[i][v] = simd::splat(0.0f);
  }
}

// Writes R rows x V vectors of accumulators to C through the epilogue; only a last vector with fewer
// than L columns is loaded and stored through a mask (plain loads and stores are much cheaper than
// masked ones on AMD). Inlined into each tile so the accumulators stay in registers.
// The epilogue is read into locals once (C's stores cannot alias them) and is branch-free per
// element: an absent bias adds -0.0 and an absent clamp is [-inf, inf], both exact identities (NaN
// and -0.0 pass through). Only adding C (later K blocks) and a residual are chosen per tile.
template <size_t R, size_t V, bool Full>
__attribute__((always_inline)) inline void store_tile(VF (&acc)[R][V], float* c, size_t ldc, bool accumulate,
                                                      const TileEpilogue* ep, size_t last_lanes) {
  const simd::Mask last = simd::first_lanes(last_lanes);
  const auto whole = [&](size_t v) { return Full || v + 1 < V || last_lanes == L; };
  const TileEpilogue e = ep ? *ep : TileEpilogue{nullptr, false, -__builtin_inff(), __builtin_inff(), nullptr, 0};
  const VF lo = simd::splat(e.min), hi = simd::splat(e.max), none = simd::splat(-0.0f);
  VF col_bias[V];
#pragma GCC unroll 4
  for (size_t v = 0; v < V; ++v)
    col_bias[v] = !e.bias || e.bias_per_row ? none
                  : whole(v)                ? simd::load<VF>(e.bias + L * v)
                                            : simd::load(e.bias + L * v, last);
  const auto finish = [&](auto add_c, auto add_residual) {
#pragma GCC unroll 16
    for (size_t i = 0; i < R; ++i) {
      float* row = c + i * ldc;
      const VF row_bias = e.bias && e.bias_per_row ? simd::splat(e.bias[i]) : none;
      const float* residual = add_residual ? e.residual + i * e.residual_ld : nullptr;
#pragma GCC unroll 4
      for (size_t v = 0; v < V; ++v) {
        const bool plain = whole(v);
        const auto load_c = [&](const float* p) { return plain ? simd::load<VF>(p) : simd::load(p, last); };
        VF x = acc[i][v];
        if constexpr (decltype(add_c)::value) x = x + load_c(row + L * v);
        x = x + col_bias[v] + row_bias;  // at most one of them is not -0.0
        if constexpr (decltype(add_residual)::value) x = x + load_c(residual + L * v);
        x = simd::clamp(x, lo, hi);
        if (e.round_to_half) x = simd::round_to_half(x);
        if (plain) simd::store(row + L * v, x);
        else simd::store(row + L * v, x, last);
      }
    }
  };
  using yes = std::true_type;
  using no = std::false_type;
  if (accumulate) e.residual ? finish(yes{}, yes{}) : finish(yes{}, no{});
  else e.residual ? finish(no{}, yes{}) : finish(no{}, no{});
}

// R rows x V vectors of columns from a packed A panel ([kc][MR]) and B panel ([kc][NR]).
template <size_t R, size_t V, bool Full>
// No vector parameter: GCC then ends the function with vzeroupper, which the baseline (SSE) driver
// code it returns to needs (dirty upper halves made that code twice as slow on Zen 3).
void tile(size_t kc, const float* a, const float* b, float* c, size_t ldc, bool accumulate,
          const TileEpilogue* ep, size_t last_lanes) {
  VF acc[R][V];
  start_tile<R, V>(acc, c, ldc);
  for (size_t k = 0; k < kc; ++k, a += MR, b += NR) {
    VF bv[V];
    for (size_t v = 0; v < V; ++v) bv[v] = simd::load_aligned(b + L * v);
#pragma GCC unroll 16
    for (size_t i = 0; i < R; ++i) {
      const VF ai = simd::splat(a[i]);
      for (size_t v = 0; v < V; ++v) acc[i][v] = simd::fma(ai, bv[v], acc[i][v]);
    }
  }
  store_tile<R, V, Full>(acc, c, ldc, accumulate, ep, last_lanes);
}

// The indirect tile: A's rows are read in place, `taps` times `channels` values each: for tap t, row
// i's values are a[t * MR + i][0, channels). B is packed [taps * channels][NR].
template <size_t R, size_t V, bool Full>
void indirect_tile(size_t taps, size_t channels, const float* const* a, const float* b, float* c, size_t ldc,
                   bool accumulate, const TileEpilogue* ep, size_t last_lanes) {
  VF acc[R][V];
  start_tile<R, V>(acc, c, ldc);
  for (size_t t = 0; t < taps; ++t, a += MR) {
    const float* rows[R];
#pragma GCC unroll 16
    for (size_t i = 0; i < R; ++i) rows[i] = a[i];
    for (size_t k = 0; k < channels; ++k, b += NR) {
      VF bv[V];
      for (size_t v = 0; v < V; ++v) bv[v] = simd::load_aligned(b + L * v);
#pragma GCC unroll 16
      for (size_t i = 0; i < R; ++i) {
        const VF ai = simd::splat(rows[i][k]);
        for (size_t v = 0; v < V; ++v) acc[i][v] = simd::fma(ai, bv[v], acc[i][v]);
      }
    }
  }
  store_tile<R, V, Full>(acc, c, ldc, accumulate, ep, last_lanes);
}

// The strided tile: for tap t, row i's values are a[t][i * S + k], k < tap_length (S is 1 or 2: the
// broadcasts address one register with constant offsets, no row pointers).
template <size_t R, size_t V, bool Full, size_t S>
void strided_tile(size_t taps, size_t tap_length, const float* const* a, const float* b, float* c, size_t ldc,
                  const TileEpilogue* ep, size_t last_lanes) {
  VF acc[R][V];
  start_tile<R, V>(acc, c, ldc);
  for (size_t t = 0; t < taps; ++t) {
    for (size_t k = 0; k < tap_length; ++k, b += NR) {
      // Opaque to the compiler: row i at k + S is row i + 1 at k, and GCC would otherwise keep
      // those broadcasts across iterations, spilled to the stack, instead of loading them again.
      const float* row = a[t] + k;
      __asm__("" : "+r"(row));
      VF bv[V];
      for (size_t v = 0; v < V; ++v) bv[v] = simd::load_aligned(b + L * v);
#pragma GCC unroll 16
      for (size_t i = 0; i < R; ++i) {
        const VF ai = simd::splat(row[i * S]);
        for (size_t v = 0; v < V; ++v) acc[i][v] = simd::fma(ai, bv[v], acc[i][v]);
      }
    }
  }
  store_tile<R, V, Full>(acc, c, ldc, false, ep, last_lanes);
}

using TileFn = void (*)(size_t, const float*, const float*, float*, size_t, bool, const TileEpilogue*, size_t);
using IndirectTileFn = void (*)(size_t, size_t, const float* const*, const float*, float*, size_t, bool,
                                const TileEpilogue*, size_t);

using StridedTileFn = void (*)(size_t, size_t, const float* const*, const float*, float*, size_t,
                               const TileEpilogue*, size_t);

struct StridedTiles {
  StridedTileFn one[MR + 1], two[MR + 1], full[MR + 1];
};
template <size_t S, size_t... R>
constexpr StridedTiles make_strided_tiles(std::index_sequence<R...>) {
  return StridedTiles{{nullptr, strided_tile<R + 1, 1, false, S>...},
                      {nullptr, strided_tile<R + 1, 2, false, S>...},
                      {nullptr, strided_tile<R + 1, 2, true, S>...}};
}
constexpr StridedTiles kStrided1 = make_strided_tiles<1>(std::make_index_sequence<MR>());
constexpr StridedTiles kStrided2 = make_strided_tiles<2>(std::make_index_sequence<MR>());

template <size_t... R>
constexpr auto make_tiles(std::index_sequence<R...>) {
  struct Table {
    TileFn one[MR + 1], two[MR + 1], full[MR + 1];
    IndirectTileFn indirect_one[MR + 1], indirect_two[MR + 1], indirect_full[MR + 1];
  };
  return Table{{nullptr, tile<R + 1, 1, false>...},          {nullptr, tile<R + 1, 2, false>...},
               {nullptr, tile<R + 1, 2, true>...},           {nullptr, indirect_tile<R + 1, 1, false>...},
               {nullptr, indirect_tile<R + 1, 2, false>...}, {nullptr, indirect_tile<R + 1, 2, true>...}};
}
constexpr auto kTiles = make_tiles(std::make_index_sequence<MR>());

void f32_gemm_ukernel(size_t rows, size_t cols, size_t kc, const float* a, const float* b, float* c, size_t ldc,
                      bool accumulate, const TileEpilogue* ep) {
  const size_t last = cols % L ? cols % L : L;
  (cols == NR ? kTiles.full : cols > L ? kTiles.two : kTiles.one)[rows](kc, a, b, c, ldc, accumulate, ep, last);
}

void f32_igemm_ukernel(size_t rows, size_t cols, size_t taps, size_t channels, const float* const* a,
                       const float* b, float* c, size_t ldc, bool accumulate, const TileEpilogue* ep) {
  const size_t last = cols % L ? cols % L : L;
  (cols == NR ? kTiles.indirect_full : cols > L ? kTiles.indirect_two : kTiles.indirect_one)[rows](
      taps, channels, a, b, c, ldc, accumulate, ep, last);
}

void f32_strided_ukernel(size_t rows, size_t cols, size_t taps, size_t tap_length, const float* const* a,
                         size_t stride, const float* b, float* c, size_t ldc, const TileEpilogue* ep) {
  const size_t last = cols % L ? cols % L : L;
  const StridedTiles& table = stride == 1 ? kStrided1 : kStrided2;
  (cols == NR ? table.full : cols > L ? table.two : table.one)[rows](taps, tap_length, a, b, c, ldc, ep, last);
}

// Software prefetch 2 KiB ahead with 8 lanes (Zen 3 A/B of 0, 2 and 4 KiB: 2 was best); none with 16
// (Zen 4: 92 -> 98 GB/s from L3 without it; 2 and 4 KiB slower).
constexpr size_t kGemvPrefetchFloats = L == 16 ? 0 : 512;

// Rows of A against one B panel; two accumulator sets (even/odd k) hide the FMA latency.
void f32_gemv_ukernel(size_t m, size_t kc, const float* a, size_t lda, const float* b, float* c, size_t ldc) {
  for (size_t i = 0; i < m; ++i) {
    const float* ai = a + i * lda;
    VF e0 = simd::splat(0.0f), e1 = e0, o0 = e0, o1 = e0;
    size_t k = 0;
    for (; k + 1 < kc; k += 2) {
      const float* bk = b + k * NR;
      if constexpr (kGemvPrefetchFloats > 0) {  // the panel is streamed from L3 or memory once
        __builtin_prefetch(bk + kGemvPrefetchFloats);
        __builtin_prefetch(bk + kGemvPrefetchFloats + 16);
      }
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
  return {f32_gemm_ukernel, MR, NR, name, f32_gemv_ukernel, f32_igemm_ukernel, f32_strided_ukernel};
}

}  // namespace WEBNN_KERNEL_ISA
}  // namespace webnn
