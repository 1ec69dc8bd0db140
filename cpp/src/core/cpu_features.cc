#include "core/cpu_features.h"

#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) || defined(_M_X64)
#include <cpuid.h>
#define WEBNN_X86 1
#endif

namespace webnn {

const char* isa_name(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kRef: return "ref";
    case CpuIsa::kAvx2: return "avx2";
    case CpuIsa::kAvx512: return "avx512";
  }
  return "ref";
}

namespace {

#ifdef WEBNN_X86
unsigned long long read_xcr0() {
  unsigned int eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<unsigned long long>(edx) << 32) | eax;
}
#endif

CpuIsa detect() {
#ifdef WEBNN_X86
  unsigned int eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return CpuIsa::kRef;
  const bool osxsave = ecx & (1u << 27), fma = ecx & (1u << 12), f16c = ecx & (1u << 29), avx = ecx & (1u << 28);
  if (!osxsave || !avx) return CpuIsa::kRef;
  const unsigned long long xcr0 = read_xcr0();
  const bool ymm_state = (xcr0 & 0x6) == 0x6;
  const bool zmm_state = (xcr0 & 0xe6) == 0xe6;
  if (!ymm_state) return CpuIsa::kRef;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return CpuIsa::kRef;
  const bool avx2 = ebx & (1u << 5);
  const bool avx512f = ebx & (1u << 16), avx512dq = ebx & (1u << 17), avx512bw = ebx & (1u << 30),
             avx512vl = ebx & (1u << 31);
  if (!(avx2 && fma && f16c)) return CpuIsa::kRef;
  if (zmm_state && avx512f && avx512dq && avx512bw && avx512vl) return CpuIsa::kAvx512;
  return CpuIsa::kAvx2;
#else
  return CpuIsa::kRef;
#endif
}

CpuIsa choose() {
  CpuIsa best = detected_isa();
  const char* forced = std::getenv("WEBNN_CPU_ISA");
  if (!forced || !*forced) return best;
  CpuIsa want = best;
  if (!std::strcmp(forced, "ref")) want = CpuIsa::kRef;
  else if (!std::strcmp(forced, "avx2")) want = CpuIsa::kAvx2;
  else if (!std::strcmp(forced, "avx512")) want = CpuIsa::kAvx512;
  return int(want) < int(best) ? want : best;
}

}  // namespace

CpuIsa detected_isa() {
  static const CpuIsa isa = int(detect()) > WEBNN_MAX_ISA_LEVEL ? CpuIsa(WEBNN_MAX_ISA_LEVEL) : detect();
  return isa;
}

CpuIsa active_isa() {
  static const CpuIsa isa = choose();
  return isa;
}

}  // namespace webnn
