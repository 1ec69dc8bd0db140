// The uint8 x int8 microkernel on AVX-VNNI (built with the avx2 flags and -mavxvnni): the
// VEX-encoded vpdpbusd on ymm, for CPUs with VNNI but without AVX-512 (or with it forced off).
#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>

#include "kernels/int8/int8_gemm.h"
#include "kernels/int8/int8_gemm_tile.h"

namespace webnn {

namespace {

// The VEX vpdpbusd: four uint8 x int8 products summed into each int32 lane, without saturation.
struct DotYmm {
  using Vector = __m256i;
  static Vector zero() { return _mm256_setzero_si256(); }
  static Vector load(const uint32_t* p) { return _mm256_load_si256(reinterpret_cast<const __m256i*>(p)); }
  static Vector broadcast(uint32_t word) { return _mm256_set1_epi32(int32_t(word)); }
  static Vector dot(Vector acc, Vector a, Vector b) { return _mm256_dpbusd_avx_epi32(acc, a, b); }
  static void store(int32_t* p, Vector v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
};
constexpr size_t kMr = 6, kNr = 16;

}  // namespace

Int8GemmUkernel u8s8_gemm_6x16_avxvnni() {
  return Int8GemmUkernel{int8_gemm_tile<DotYmm, kMr>, kMr, kNr, Int8Dot::kU8S8x4, "u8s8_gemm_6x16_avxvnni"};
}

}  // namespace webnn
#endif
