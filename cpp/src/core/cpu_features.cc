#include "core/cpu_features.h"

#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) || defined(_M_X64)
#include <cpuid.h>
#define WEBNN_X86 1
#endif
#if defined(WEBNN_X86) && defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
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

// Whether this process may use the AMX tile registers: Linux grants their state (XTILEDATA, 8 KiB
// per thread) only to a process that asks (arch_prctl ARCH_REQ_XCOMP_PERM); asking once covers
// every thread. Other systems: not used.
bool amx_permitted() {
#if defined(WEBNN_X86) && defined(__linux__) && defined(SYS_arch_prctl)
  constexpr int kRequestPermission = 0x1023;  // ARCH_REQ_XCOMP_PERM
  constexpr unsigned long kTileData = 18;     // XFEATURE_XTILEDATA
  return syscall(SYS_arch_prctl, kRequestPermission, kTileData) == 0;
#else
  return false;
#endif
}

// The extensions (cpuid leaf 7): AVX-512 VNNI (subleaf 0, ecx bit 11), AVX-512 VBMI (ecx bit 1) and
// AVX-VNNI (subleaf 1, eax bit 4), each with its OS state (zmm or ymm) and its base level; AMX-TILE
// and AMX-INT8 (subleaf 0, edx bits 24 and 25) with the tile state in XCR0 (bits 17, 18) and AVX-512
// VNNI.
uint32_t detect_extensions() {
  uint32_t bits = 0;
#ifdef WEBNN_X86
  const CpuIsa isa = detected_isa();
  unsigned int eax, ebx, ecx, edx;
  if (isa >= CpuIsa::kAvx512 && __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) {
    if (ecx & (1u << 11)) bits |= kCpuAvx512Vnni;
    if (ecx & (1u << 1)) bits |= kCpuAvx512Vbmi;
    // (Linux's permission is asked for only when the kernels will use AMX: active_features().)
    if ((edx & (1u << 24)) && (edx & (1u << 25)) && (read_xcr0() & 0x60000) == 0x60000 && (bits & kCpuAvx512Vnni))
      bits |= kCpuAmxInt8;
  }
  if (isa >= CpuIsa::kAvx2 && __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) && (eax & (1u << 4)))
    bits |= kCpuAvxVnni;
#endif
  return bits;
}

// The features beyond a level's own (WEBNN_CPU_DISABLE may name them).
constexpr uint32_t kExtensions = kCpuAvx512Vnni | kCpuAvxVnni | kCpuAvx512Vbmi | kCpuAmxInt8;

// The features a level allows: its own, and the extensions that need it.
uint32_t level_mask(CpuIsa isa) {
  if (isa >= CpuIsa::kAvx512) return ~0u;
  if (isa >= CpuIsa::kAvx2) return kCpuAvx2 | kCpuAvxVnni;
  return 0;
}

uint32_t level_features(CpuIsa isa) {
  return (isa >= CpuIsa::kAvx2 ? kCpuAvx2 : 0u) | (isa >= CpuIsa::kAvx512 ? kCpuAvx512 : 0u);
}

constexpr struct {
  CpuFeature feature;
  const char* name;
} kFeatureNames[] = {{kCpuAvx2, "avx2"},           {kCpuAvx512, "avx512"},         {kCpuAvx512Vnni, "avx512vnni"},
                     {kCpuAvxVnni, "avxvnni"},     {kCpuAvx512Vbmi, "avx512vbmi"}, {kCpuAmxInt8, "amx"}};

bool listed(const char* list, const char* name) {
  if (!list) return false;
  const size_t length = std::strlen(name);
  for (const char* p = list; *p;) {
    const char* end = std::strchr(p, ',');
    const size_t item = end ? size_t(end - p) : std::strlen(p);
    if (item == length && !std::strncmp(p, name, length)) return true;
    if (!end) break;
    p = end + 1;
  }
  return false;
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

const CpuFeatures& active_features() {
  static const CpuFeatures features = [] {
    uint32_t bits = (detect_extensions() & level_mask(active_isa())) | level_features(active_isa());
    const char* disabled = std::getenv("WEBNN_CPU_DISABLE");
    for (const auto& entry : kFeatureNames)
      if ((entry.feature & kExtensions) && listed(disabled, entry.name))
        bits &= ~uint32_t(entry.feature);
    if ((bits & kCpuAmxInt8) && !amx_permitted()) bits &= ~uint32_t(kCpuAmxInt8);
    return CpuFeatures{bits};
  }();
  return features;
}

CpuFeatures features_for(CpuIsa isa) {
  const CpuIsa level = int(isa) < int(detected_isa()) ? isa : detected_isa();
  return CpuFeatures{(active_features().bits & level_mask(level) & kExtensions) | level_features(level)};
}

std::vector<std::string> feature_names(const CpuFeatures& features) {
  std::vector<std::string> names;
  for (const auto& entry : kFeatureNames)
    if (features.has(entry.feature)) names.push_back(entry.name);
  return names;
}

}  // namespace webnn
