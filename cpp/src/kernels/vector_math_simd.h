// The SIMD layer of the per-ISA kernels: GCC/Clang vector types of the ISA's width (operators,
// comparisons giving lane masks, `mask ? a : b` selects) plus the few operations that need
// intrinsics. The including translation unit defines WEBNN_KERNEL_ISA (its namespace) and
// WEBNN_KERNEL_ISA_LEVEL (1: AVX2+FMA+F16C, 2: AVX-512F/BW/DQ/VL) and is built with those flags.
#pragma once
#if !defined(WEBNN_KERNEL_ISA) || !defined(WEBNN_KERNEL_ISA_LEVEL) || WEBNN_KERNEL_ISA_LEVEL < 1
#error "vector_math_simd.h is for the AVX2 / AVX-512 kernel translation units"
#endif
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

// Vectors wider than the ISA's registers (8-byte lanes) may pass between inline functions: their
// ABI does not matter, as no such function is called across translation units.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace webnn {
namespace WEBNN_KERNEL_ISA {
namespace simd {

#if WEBNN_KERNEL_ISA_LEVEL >= 2
constexpr size_t kLanes = 16;
constexpr size_t kRegisters = 32;  // vector registers
#else
constexpr size_t kLanes = 8;
constexpr size_t kRegisters = 16;
#endif

template <class T>
struct VecOf {
  typedef T type __attribute__((vector_size(kLanes * sizeof(T))));
};
// kLanes elements of T.
template <class T>
using Vec = typename VecOf<T>::type;
// A full register of T.
template <class T>
struct NativeVecOf {
  typedef T type __attribute__((vector_size(kLanes * 4)));
};
template <class T>
using NativeVec = typename NativeVecOf<T>::type;
using VF = Vec<float>;
using VI = Vec<int32_t>;  // also the lane masks of VF comparisons (all ones / zero)
using VU = Vec<uint32_t>;
// Native-width double vectors (kLanes / 2 lanes) and the float vectors of the same lane count.
typedef double VD __attribute__((vector_size(kLanes * 4)));
typedef int64_t VL __attribute__((vector_size(kLanes * 4)));
typedef float VFHalf __attribute__((vector_size(kLanes * 2)));

template <class V>
inline V load(const void* p) {
  V v;
  std::memcpy(&v, p, sizeof(V));
  return v;
}
template <class V>
inline void store(void* p, V v) {
  std::memcpy(p, &v, sizeof(V));
}

// Casts between vector types of the same size reinterpret the bits.
inline VF bits_to_float(VU u) { return VF(u); }
inline VU float_bits(VF v) { return VU(v); }

#if WEBNN_KERNEL_ISA_LEVEL >= 2
// (The maskz_ forms, with all lanes set, avoid GCC 12's false -Wmaybe-uninitialized in the plain ones.)
inline VF splat(float x) { return VF(_mm512_set1_ps(x)); }
inline VI splat_i(int32_t x) { return VI(_mm512_set1_epi32(x)); }
inline VF fma(VF a, VF b, VF c) { return VF(_mm512_fmadd_ps(__m512(a), __m512(b), __m512(c))); }
inline VF sqrt(VF a) { return VF(_mm512_maskz_sqrt_ps(0xffff, __m512(a))); }
template <int kMode>
inline VF round(VF a) { return VF(_mm512_maskz_roundscale_ps(0xffff, __m512(a), kMode | _MM_FROUND_NO_EXC)); }
inline VF load_half(const uint16_t* p) {
  return VF(_mm512_maskz_cvtph_ps(0xffff, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))));
}
inline void store_half(uint16_t* p, VF v) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p),
                      _mm512_maskz_cvtps_ph(0xffff, __m512(v), _MM_FROUND_TO_NEAREST_INT));
}
inline VF round_to_half(VF v) {
  return VF(_mm512_maskz_cvtph_ps(0xffff, _mm512_maskz_cvtps_ph(0xffff, __m512(v), _MM_FROUND_TO_NEAREST_INT)));
}
inline bool any(VI mask) { return _mm512_movepi32_mask(__m512i(mask)) != 0; }
// Whether every lane of a is <= b (false for NaN lanes): one compare into a mask register.
inline bool all_le(VF a, float b) {
  return _mm512_cmp_ps_mask(__m512(a), _mm512_set1_ps(b), _CMP_LE_OQ) == 0xffff;
}
inline VFHalf low_half(VF v) { return VFHalf(_mm512_maskz_extractf32x8_ps(0xff, __m512(v), 0)); }
inline VFHalf high_half(VF v) { return VFHalf(_mm512_maskz_extractf32x8_ps(0xff, __m512(v), 1)); }
inline VF join(VFHalf lo, VFHalf hi) {
  const __m512 low = _mm512_maskz_insertf32x8(0xffff, _mm512_setzero_ps(), __m256(lo), 0);
  return VF(_mm512_maskz_insertf32x8(0xffff, low, __m256(hi), 1));
}
// Lane masks of masked loads and stores (masked-off lanes are neither read nor written; they load as 0).
using Mask = __mmask16;
inline Mask all_lanes() { return Mask(0xffff); }
inline Mask first_lanes(size_t n) { return n < kLanes ? Mask((1u << n) - 1) : all_lanes(); }  // n >= 1
inline VF load(const float* p, Mask m) { return VF(_mm512_maskz_loadu_ps(m, p)); }
inline void store(float* p, VF v, Mask m) { _mm512_mask_storeu_ps(p, m, __m512(v)); }
inline VF load_aligned(const float* p) { return VF(_mm512_load_ps(p)); }  // 64-byte aligned p
// v clamped to [lo, hi]; the operand order keeps NaN.
inline VF clamp(VF v, VF lo, VF hi) {
  const __mmask16 all = 0xffff;
  return VF(_mm512_maskz_min_ps(all, __m512(hi), _mm512_maskz_max_ps(all, __m512(lo), __m512(v))));
}
inline VI widen_u8(const uint8_t* p) {
  return VI(_mm512_maskz_cvtepu8_epi32(0xffff, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
}
inline VI widen_i8(const uint8_t* p) {
  return VI(_mm512_maskz_cvtepi8_epi32(0xffff, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
}
// v rounded to int32 in the current rounding mode (half to even by default).
inline VI round_to_int(VF v) { return VI(_mm512_maskz_cvtps_epi32(0xffff, __m512(v))); }
// The low byte of each lane.
inline void narrow_u8(uint8_t* p, VI v) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm512_maskz_cvtepi32_epi8(0xffff, __m512i(v)));
}
#else
inline VF splat(float x) { return VF(_mm256_set1_ps(x)); }
inline VI splat_i(int32_t x) { return VI(_mm256_set1_epi32(x)); }
inline VF fma(VF a, VF b, VF c) { return VF(_mm256_fmadd_ps(__m256(a), __m256(b), __m256(c))); }
inline VF sqrt(VF a) { return VF(_mm256_sqrt_ps(__m256(a))); }
template <int kMode>
inline VF round(VF a) { return VF(_mm256_round_ps(__m256(a), kMode | _MM_FROUND_NO_EXC)); }
inline VF load_half(const uint16_t* p) {
  return VF(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
}
inline void store_half(uint16_t* p, VF v) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(__m256(v), _MM_FROUND_TO_NEAREST_INT));
}
inline VF round_to_half(VF v) { return VF(_mm256_cvtph_ps(_mm256_cvtps_ph(__m256(v), _MM_FROUND_TO_NEAREST_INT))); }
inline bool any(VI mask) { return _mm256_movemask_ps(_mm256_castsi256_ps(__m256i(mask))) != 0; }
inline bool all_le(VF a, float b) {
  return _mm256_movemask_ps(_mm256_cmp_ps(__m256(a), _mm256_set1_ps(b), _CMP_LE_OQ)) == 0xff;
}
inline VFHalf low_half(VF v) { return VFHalf(_mm256_castps256_ps128(__m256(v))); }
inline VFHalf high_half(VF v) { return VFHalf(_mm256_extractf128_ps(__m256(v), 1)); }
inline VF join(VFHalf lo, VFHalf hi) { return VF(_mm256_set_m128(__m128(hi), __m128(lo))); }
using Mask = __m256i;
inline Mask all_lanes() { return _mm256_set1_epi32(-1); }
inline Mask first_lanes(size_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(int(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
inline VF load(const float* p, Mask m) { return VF(_mm256_maskload_ps(p, m)); }
inline void store(float* p, VF v, Mask m) { _mm256_maskstore_ps(p, m, __m256(v)); }
inline VF load_aligned(const float* p) { return VF(_mm256_load_ps(p)); }  // 32-byte aligned p
inline VF clamp(VF v, VF lo, VF hi) { return VF(_mm256_min_ps(__m256(hi), _mm256_max_ps(__m256(lo), __m256(v)))); }
inline VI widen_u8(const uint8_t* p) {
  return VI(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
}
inline VI widen_i8(const uint8_t* p) {
  return VI(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
}
inline VI round_to_int(VF v) { return VI(_mm256_cvtps_epi32(__m256(v))); }
inline void narrow_u8(uint8_t* p, VI v) {
  const __m256i bytes = _mm256_and_si256(__m256i(v), _mm256_set1_epi32(0xff));  // packs saturate
  const __m128i words = _mm_packus_epi32(_mm256_castsi256_si128(bytes), _mm256_extracti128_si256(bytes, 1));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm_packus_epi16(words, words));
}
#endif

// v as rounded: keeps the compiler from fusing it into a following addition (an FMA), so that
// a * x + b rounds twice, like the reference kernels built without FMA.
inline VF unfused(VF v) {
  __asm__("" : "+v"(v));
  return v;
}

inline VF abs(VF a) { return bits_to_float(float_bits(a) & 0x7fffffffu); }
// |mag| with the sign of `sign`.
inline VF copysign(VF mag, VF sign) {
  return bits_to_float((float_bits(mag) & 0x7fffffffu) | (float_bits(sign) & 0x80000000u));
}
inline VI is_nan(VF a) { return a != a; }
// 2^n for n in [-126, 127].
inline VF pow2i(VI n) { return bits_to_float(VU(n + 127) << 23); }

}  // namespace simd
}  // namespace WEBNN_KERNEL_ISA
}  // namespace webnn
