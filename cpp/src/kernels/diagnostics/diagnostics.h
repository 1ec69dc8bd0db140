// Native diagnostics for benchmarks: the machine's measured float32 FMA throughput.
#pragma once
#include <cstdint>

namespace webnn {

// One FMA loop: `run` does `iterations` passes of independent FMA chains, each pass
// `flops_per_iteration` float32 flops (an FMA counts 2 per lane), and returns a value derived
// from every chain so that no work can be dropped.
struct FmaPeakLoop {
  const char* isa;
  uint64_t flops_per_iteration;
  float (*run)(uint64_t iterations, float scale, float offset);
};

FmaPeakLoop fma_peak_loop_portable();  // fma_peak.cc: plain C++ at the baseline ISA
#if defined(__x86_64__) || defined(_M_X64)
FmaPeakLoop fma_peak_loop_avx2();    // fma_peak_avx2.cc
FmaPeakLoop fma_peak_loop_avx512();  // fma_peak_avx512.cc
#endif

// The loop for the best ISA this CPU has (detected_isa(), not lowered by WEBNN_CPU_ISA).
FmaPeakLoop fma_peak_loop();

// Single-threaded float32 FMA throughput in GFLOP/s of fma_peak_loop() over `iterations` passes
// (iterations >= 1), timed on the calling thread.
double measure_fma_peak(uint64_t iterations);

}  // namespace webnn
