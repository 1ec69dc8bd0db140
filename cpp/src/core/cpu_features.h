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

namespace webnn {

enum class CpuIsa { kRef = 0, kAvx2 = 1, kAvx512 = 2 };

const char* isa_name(CpuIsa isa);
// The best level this CPU and OS support (cpuid + xgetbv) and this build has kernels for,
// detected once.
CpuIsa detected_isa();
// The level in use: detected_isa(), lowered by WEBNN_CPU_ISA=ref|avx2|avx512 when set. A forced
// level above what the CPU supports falls back to the detected one.
CpuIsa active_isa();

// Instruction-set extensions beyond the level that some kernels use (the int8 GEMM's dot products),
// as detected, minus those named in WEBNN_CPU_DISABLE (a comma-separated list: avx512vnni, avxvnni,
// avx512vbmi, amx) and those above the active level (the AVX-512 ones and AMX need the avx512 level,
// AVX-VNNI avx2).
struct CpuFeatures {
  bool avx512_vnni = false;  // vpdpbusd on zmm
  bool avx_vnni = false;     // vpdpbusd on ymm, VEX-encoded
  bool avx512_vbmi = false;  // vpermi2b: 8-bit table lookups
  bool amx_int8 = false;     // tdpbusd on tile registers (with AVX-512 VNNI, and the OS's permission)
};
const CpuFeatures& active_features();

}  // namespace webnn
