// CPU feature detection and the ISA level kernels run at.
#pragma once

// The highest level whose kernels are compiled in (CMake's WEBNN_MAX_ISA): 0 ref, 1 avx2, 2 avx512.
#ifndef WEBNN_MAX_ISA_LEVEL
#define WEBNN_MAX_ISA_LEVEL 2
#endif
#if (defined(__x86_64__) || defined(_M_X64)) && WEBNN_MAX_ISA_LEVEL >= 1
#define WEBNN_HAS_AVX2_KERNELS 1
#else
#define WEBNN_HAS_AVX2_KERNELS 0
#endif
#if (defined(__x86_64__) || defined(_M_X64)) && WEBNN_MAX_ISA_LEVEL >= 2
#define WEBNN_HAS_AVX512_KERNELS 1
#else
#define WEBNN_HAS_AVX512_KERNELS 0
#endif

#include <cstdint>
#include <string>
#include <vector>

namespace webnn {

enum class CpuIsa { kRef = 0, kAvx2 = 1, kAvx512 = 2 };

const char* isa_name(CpuIsa isa);
// The best level this CPU and OS support (cpuid + xgetbv) and this build has kernels for,
// detected once.
CpuIsa detected_isa();
// The level in use: detected_isa(), lowered by WEBNN_CPU_ISA=ref|avx2|avx512 when set. A forced
// level above what the CPU supports falls back to the detected one.
CpuIsa active_isa();

// The instruction-set features kernels are picked by (kernels/platform.cc: each table slot takes the
// first of its kernels whose features the CPU has). The level features come with the ISA level;
// the extensions are as detected, minus those named in WEBNN_CPU_DISABLE (a comma-separated list:
// avx512vnni, avxvnni, avx512vbmi, amx) and those above the active level (the AVX-512 ones and AMX
// need the avx512 level, AVX-VNNI avx2).
enum CpuFeature : uint32_t {
  kCpuAvx2 = 1u << 0,        // the avx2 level: AVX2, FMA, F16C
  kCpuAvx512 = 1u << 1,      // the avx512 level: AVX-512 F, BW, DQ, VL
  kCpuAvx512Vnni = 1u << 2,  // vpdpbusd on zmm
  kCpuAvxVnni = 1u << 3,     // vpdpbusd on ymm, VEX-encoded
  kCpuAvx512Vbmi = 1u << 4,  // vpermi2b: 8-bit table lookups
  kCpuAmxInt8 = 1u << 5,     // tdpbusd on tile registers (with AVX-512 VNNI, and the OS's permission)
};
struct CpuFeatures {
  uint32_t bits = 0;
  bool has(uint32_t features) const { return (bits & features) == features; }
};
// The active features: those of the active level and the extensions it allows.
const CpuFeatures& active_features();
// A level's features (at most the detected level; for tests and benchmarks that compare levels), with
// the active extensions that level allows.
CpuFeatures features_for(CpuIsa isa);
// Their names ("avx2", "avx512", "avx512vnni", "avxvnni", "avx512vbmi", "amx").
std::vector<std::string> feature_names(const CpuFeatures& features);

}  // namespace webnn
