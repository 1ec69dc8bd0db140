// The FMA peak diagnostic: ISA dispatch, timing, and the portable fallback loop.
#include <chrono>

#include "core/cpu_features.h"
#include "kernels/diagnostics/diagnostics.h"

namespace webnn {

namespace {

constexpr int kChains = 16;

float portable_loop(uint64_t iterations, float scale, float offset) {
  float acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = float(i);
  for (uint64_t n = 0; n < iterations; ++n)
    for (int i = 0; i < kChains; ++i) acc[i] = acc[i] * scale + offset;
  float sum = 0.0f;
  for (int i = 0; i < kChains; ++i) sum += acc[i];
  return sum;
}

}  // namespace

FmaPeakLoop fma_peak_loop_portable() { return {"ref", 2 * kChains, portable_loop}; }

FmaPeakLoop fma_peak_loop() {
#if WEBNN_HAS_AVX512_KERNELS
  if (detected_isa() >= CpuIsa::kAvx512) return fma_peak_loop_avx512();
#endif
#if WEBNN_HAS_AVX2_KERNELS
  if (detected_isa() >= CpuIsa::kAvx2) return fma_peak_loop_avx2();
#endif
  return fma_peak_loop_portable();
}

double measure_fma_peak(uint64_t iterations) {
  const FmaPeakLoop loop = fma_peak_loop();
  // scale and offset arrive at run time, so the compiler cannot fold the chains; with |scale| < 1
  // every chain converges to offset / (1 - scale) and stays a normal number.
  volatile float scale = 0.999999f, offset = 1e-6f;
  const auto start = std::chrono::steady_clock::now();
  volatile float sink = loop.run(iterations, scale, offset);
  const auto stop = std::chrono::steady_clock::now();
  (void)sink;
  const double seconds = std::chrono::duration<double>(stop - start).count();
  return double(iterations) * double(loop.flops_per_iteration) / seconds * 1e-9;
}

}  // namespace webnn
