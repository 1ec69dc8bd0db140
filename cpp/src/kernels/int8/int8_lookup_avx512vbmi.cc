// 8-bit table lookups on AVX-512 VBMI (built with the avx512 flags and -mavx512vbmi): vpermi2b
// picks 64 bytes at a time from one half of the 256-byte table, the index's top bit chooses the half.
#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>

#include <cstring>

#include "kernels/int8/int8_gemm.h"

namespace webnn {

namespace {

inline __m512i lookup64(__m512i index, const __m512i (&quarters)[4]) {
  const __m512i low = _mm512_permutex2var_epi8(quarters[0], index, quarters[1]);
  const __m512i high = _mm512_permutex2var_epi8(quarters[2], index, quarters[3]);
  return _mm512_mask_blend_epi8(_mm512_movepi8_mask(index), low, high);
}

}  // namespace

void u8_lookup_avx512vbmi(const uint8_t* x, size_t n, const uint8_t* table, uint8_t* y) {
  __m512i quarters[4];
  for (int q = 0; q < 4; ++q) quarters[q] = _mm512_loadu_si512(table + 64 * q);
  size_t i = 0;
  for (; i + 64 <= n; i += 64)
    _mm512_storeu_si512(y + i, lookup64(_mm512_loadu_si512(x + i), quarters));
  if (i < n) {
    const __mmask64 rest = _cvtu64_mask64(~uint64_t(0) >> (64 - (n - i)));
    _mm512_mask_storeu_epi8(y + i, rest, lookup64(_mm512_maskz_loadu_epi8(rest, x + i), quarters));
  }
}

}  // namespace webnn
#endif
