// The AVX-512 FMA peak loop: 24 independent zmm chains, enough to keep two 512-bit FMA pipes with
// a 4-cycle latency busy (8 chains in flight), with registers to spare for the operands.
#include "kernels/diagnostics/diagnostics.h"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>

namespace webnn {

namespace {

constexpr int kChains = 24;

float avx512_loop(uint64_t iterations, float scale, float offset) {
  const __m512 s = _mm512_set1_ps(scale), o = _mm512_set1_ps(offset);
  __m512 acc[kChains];
#pragma GCC unroll 24
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(float(i));
  for (uint64_t n = 0; n < iterations; ++n) {
#pragma GCC unroll 24
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_fmadd_ps(acc[i], s, o);
  }
  __m512 sum = acc[0];
#pragma GCC unroll 24
  for (int i = 1; i < kChains; ++i) sum = _mm512_add_ps(sum, acc[i]);
  // Summed through memory: GCC 12's _mm512_reduce_add_ps warns (-Wuninitialized) in its own header.
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, sum);
  float total = 0.0f;
  for (float lane : lanes) total += lane;
  return total;
}

}  // namespace

FmaPeakLoop fma_peak_loop_avx512() { return {"avx512", 2 * 16 * kChains, avx512_loop}; }

}  // namespace webnn
#endif
