// The AVX2 FMA peak loop: 12 independent ymm chains (8 in flight cover two FMA pipes with a
// 4-cycle latency), leaving registers for the operands.
#include "kernels/diagnostics/diagnostics.h"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>

namespace webnn {

namespace {

constexpr int kChains = 12;

float avx2_loop(uint64_t iterations, float scale, float offset) {
  const __m256 s = _mm256_set1_ps(scale), o = _mm256_set1_ps(offset);
  __m256 acc[kChains];
#pragma GCC unroll 12
  for (int i = 0; i < kChains; ++i) acc[i] = _mm256_set1_ps(float(i));
  for (uint64_t n = 0; n < iterations; ++n) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) acc[i] = _mm256_fmadd_ps(acc[i], s, o);
  }
  __m256 sum = acc[0];
#pragma GCC unroll 12
  for (int i = 1; i < kChains; ++i) sum = _mm256_add_ps(sum, acc[i]);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, sum);
  float total = 0.0f;
  for (float v : lanes) total += v;
  return total;
}

}  // namespace

FmaPeakLoop fma_peak_loop_avx2() { return {"avx2", 2 * 8 * kChains, avx2_loop}; }

}  // namespace webnn
#endif
