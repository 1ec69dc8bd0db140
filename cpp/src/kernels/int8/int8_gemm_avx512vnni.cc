// The uint8 x int8 microkernel on AVX-512 VNNI (built with the avx512 flags and -mavx512vnni):
// vpdpbusd sums 4 products into each int32 lane, exactly (the non-saturating form).
#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>

#include "kernels/int8/int8_gemm.h"
#include "kernels/int8/int8_gemm_tile.h"

namespace webnn {

namespace {

// vpdpbusd: four uint8 x int8 products summed into each int32 lane, without saturation.
struct DotZmm {
  using Vector = __m512i;
  static Vector zero() { return _mm512_setzero_si512(); }
  static Vector load(const uint32_t* p) { return _mm512_load_si512(p); }
  static Vector broadcast(uint32_t word) { return _mm512_set1_epi32(int32_t(word)); }
  static Vector dot(Vector acc, Vector a, Vector b) { return _mm512_dpbusd_epi32(acc, a, b); }
  static void store(int32_t* p, Vector v) { _mm512_storeu_si512(p, v); }
};
constexpr size_t kMr = 12, kNr = 32;

}  // namespace

Int8GemmUkernel u8s8_gemm_12x32_avx512vnni() {
  return Int8GemmUkernel{int8_gemm_tile<DotZmm, kMr>, kMr, kNr, Int8Dot::kU8S8x4, "u8s8_gemm_12x32_avx512vnni"};
}

}  // namespace webnn
#endif
