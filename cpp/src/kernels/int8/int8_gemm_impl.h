// The int8 family's per-ISA code: the requantize epilogue and the depthwise loop (plain loops the
// compiler vectorizes for the ISA the file is built for), and the int16 x int16 microkernel
// (vpmaddwd on AVX2 / AVX-512BW, portable loops at the ref level). Included once per ISA level by
// int8_gemm_<isa>.cc, which defines WEBNN_KERNEL_ISA and WEBNN_KERNEL_ISA_LEVEL (kernel_isa.h).
#pragma once
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "kernels/int8/int8_gemm.h"
#include "kernels/int8/int8_gemm_tile.h"
#include "kernels/kernel_isa.h"
#if WEBNN_KERNEL_ISA_LEVEL >= 1
#include <immintrin.h>
#endif

namespace webnn {
namespace WEBNN_KERNEL_ISA {
namespace {

// One value of a column: see TileEpilogue.
inline uint8_t requantized(int32_t sum, int32_t offset, float multiplier, float bias, float min, float max,
                           int32_t zero) {
  float t = float(sum + offset) * multiplier + bias;
  t = t < min ? min : t;
  t = t > max ? max : t;
  return uint8_t(int32_t(std::nearbyint(t)) + zero);
}

#if WEBNN_KERNEL_ISA_LEVEL >= 1
// A vector of columns from j (`sum` with the offsets added): see TileEpilogue. The conversion to
// int32 rounds half to even (the default rounding mode), and the bytes are the values' low bytes.
inline void requantize_lanes(simd::VI sum, simd::VF multiplier, simd::VF bias, simd::VF min, simd::VF max,
                             simd::VI zero, uint8_t* o) {
  using namespace simd;
  narrow_u8(o, round_to_int(clamp(fma(__builtin_convertvector(sum, VF), multiplier, bias), min, max)) + zero);
}
inline void requantize_lanes(simd::VI sum, const float* multiplier, const float* bias, float min, float max,
                             int32_t zero, uint8_t* o) {
  using namespace simd;
  requantize_lanes(sum, load<VF>(multiplier), load<VF>(bias), splat(min), splat(max), splat_i(zero), o);
}
#endif

// A vector of columns at a time over every row, its per-column factors loaded once (the byte stores
// may alias them, so the compiler would reload them per row); the last columns staged.
void requantize(size_t rows, size_t cols, const int32_t* sums, size_t ld, const TileEpilogue& rq, uint8_t* out,
                size_t out_ld) {
#if WEBNN_KERNEL_ISA_LEVEL >= 1
  using namespace simd;
  const VF lo = splat(rq.min), hi = splat(rq.max);
  const VI zero = splat_i(rq.output_zero);
  for (size_t j = 0; j < cols; j += kLanes) {
    const VI offset = load<VI>(rq.offset + j);  // (the per-column arrays are padded)
    const VF multiplier = load<VF>(rq.multiplier + j), bias = load<VF>(rq.bias + j);
    if (j + kLanes <= cols) {
      for (size_t i = 0; i < rows; ++i)
        requantize_lanes(load<VI>(sums + i * ld + j) + offset, multiplier, bias, lo, hi, zero, out + i * out_ld + j);
      continue;
    }
    for (size_t i = 0; i < rows; ++i) {  // the last columns through a staged vector
      alignas(64) int32_t staged[kLanes] = {};
      alignas(64) uint8_t bytes[kLanes];
      std::memcpy(staged, sums + i * ld + j, (cols - j) * sizeof(int32_t));
      requantize_lanes(load<VI>(staged) + offset, multiplier, bias, lo, hi, zero, bytes);
      std::memcpy(out + i * out_ld + j, bytes, cols - j);
    }
  }
#else
  for (size_t i = 0; i < rows; ++i)
    for (size_t j = 0; j < cols; ++j)
      out[i * out_ld + j] = requantized(sums[i * ld + j], rq.offset[j], rq.multiplier[j], rq.bias[j], rq.min, rq.max,
                                        rq.output_zero);
#endif
}

// See Int8DequantizeFn: a vector of columns at a time over every row (the factors loaded once), the
// last ones through a mask.
void dequantize_sums(size_t rows, size_t cols, const int32_t* sums, size_t ld, const TileEpilogue& rq, float* out,
                     size_t out_ld) {
#if WEBNN_KERNEL_ISA_LEVEL >= 1
  using namespace simd;
  const VF lo = splat(rq.min), hi = splat(rq.max);
  for (size_t j = 0; j < cols; j += kLanes) {
    const VI offset = load<VI>(rq.offset + j);  // (the tile and the arrays are padded)
    const VF multiplier = load<VF>(rq.multiplier + j), bias = load<VF>(rq.bias + j);
    for (size_t i = 0; i < rows; ++i) {
      const VF t = clamp(fma(__builtin_convertvector(load<VI>(sums + i * ld + j) + offset, VF), multiplier, bias), lo, hi);
      if (j + kLanes <= cols) store(out + i * out_ld + j, t);
      else store(out + i * out_ld + j, t, first_lanes(cols - j));
    }
  }
#else
  for (size_t i = 0; i < rows; ++i) {
    const int32_t* s = sums + i * ld;
    float* o = out + i * out_ld;
    for (size_t j = 0; j < cols; ++j) {
      float t = std::fma(float(s[j] + rq.offset[j]), rq.multiplier[j], rq.bias[j]);
      t = t < rq.min ? rq.min : t;  // NaN passes through
      o[j] = t > rq.max ? rq.max : t;
    }
  }
#endif
}

// Depthwise: a pair of taps' bytes interleaved per channel and widened to int16 meet the packed
// weight pairs in vpmaddwd (two exact products per int32 lane). AVX-512 widens 32 channels at once,
// whose 128-bit-lane unpacks give the channel order 0-7, 16-23 | 8-15, 24-31: the filter is packed
// in that order and the sums are put back in order before requantizing.
#if WEBNN_KERNEL_ISA_LEVEL == 2
constexpr bool kDepthwisePermuted = true;
#else
constexpr bool kDepthwisePermuted = false;
#endif
// The packed slot (int16 pair) of channel i of a block.
constexpr size_t depthwise_slot(size_t i) {
  if (!kDepthwisePermuted) return i;
  return i < 8 ? i : i < 16 ? i + 8 : i < 24 ? i - 8 : i;
}

void depthwise_pack(size_t channels, size_t taps, const int32_t* filter, int16_t* packed) {
  constexpr size_t kBlock = kInt8DepthwiseBlock;
  const size_t blocks = (channels + kBlock - 1) / kBlock;
  std::fill(packed, packed + int8_depthwise_packed_count(channels, taps), int16_t(0));
  for (size_t t = 0; t < taps; ++t)
    for (size_t c = 0; c < channels; ++c)
      packed[((t / 2 * blocks + c / kBlock) * kBlock + depthwise_slot(c % kBlock)) * 2 + t % 2] =
          int16_t(filter[t * channels + c]);
}

#if WEBNN_KERNEL_ISA_LEVEL >= 1
template <bool kSigned>
inline __m256i widen16(__m128i v) {
  return kSigned ? _mm256_cvtepi8_epi16(v) : _mm256_cvtepu8_epi16(v);
}
#endif
#if WEBNN_KERNEL_ISA_LEVEL == 2
template <bool kSigned>
inline __m512i widen16(__m256i v) {
  return kSigned ? _mm512_cvtepi8_epi16(v) : _mm512_cvtepu8_epi16(v);
}
#endif

template <bool kInSigned>
void depthwise_pixels(size_t pixels, size_t step, size_t channels, size_t taps, const uint8_t* const* x,
                      const int16_t* packed, const TileEpilogue& rq, uint8_t* out) {
  constexpr size_t kBlock = kInt8DepthwiseBlock, kBlockWords = 2 * kBlock;
  const size_t blocks = (channels + kBlock - 1) / kBlock, pair_words = blocks * kBlockWords;
#if WEBNN_KERNEL_ISA_LEVEL >= 1
  const size_t pairs = (taps + 1) / 2;
  const uint8_t* last = x[taps - 1];  // an odd count's partner tap (its weight is 0)
#endif
  for (size_t p = 0; p < pixels; ++p, out += channels) {
    const size_t shift = p * step;
    size_t c0 = 0;
#if WEBNN_KERNEL_ISA_LEVEL == 2
    for (; c0 + kBlock <= channels; c0 += kBlock) {
      __m512i lo = _mm512_setzero_si512(), hi = _mm512_setzero_si512();
      const int16_t* w = packed + c0 / kBlock * kBlockWords;
      for (size_t q = 0; q < pairs; ++q, w += pair_words) {
        const uint8_t* x1 = 2 * q + 1 < taps ? x[2 * q + 1] : last;
        const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[2 * q] + shift + c0));
        const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x1 + shift + c0));
        lo = _mm512_add_epi32(lo, _mm512_madd_epi16(widen16<kInSigned>(_mm256_unpacklo_epi8(a, b)),
                                                    _mm512_loadu_si512(w)));
        hi = _mm512_add_epi32(hi, _mm512_madd_epi16(widen16<kInSigned>(_mm256_unpackhi_epi8(a, b)),
                                                    _mm512_loadu_si512(w + kBlock)));
      }
      const __m512i first = _mm512_permutex2var_epi32(
          lo, _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23), hi);
      const __m512i second = _mm512_permutex2var_epi32(
          lo, _mm512_setr_epi32(8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31), hi);
      for (size_t h = 0; h < 2; ++h) {
        const size_t c = c0 + 16 * h;
        requantize_lanes(simd::VI(h ? second : first) + simd::load<simd::VI>(rq.offset + c),
                                     rq.multiplier + c, rq.bias + c, rq.min, rq.max, rq.output_zero, out + c);
      }
    }
#endif
#if WEBNN_KERNEL_ISA_LEVEL >= 1
    for (; c0 + 16 <= channels; c0 += 16) {  // (AVX-512: only a last half block, which starts a block)
      __m256i lo = _mm256_setzero_si256(), hi = _mm256_setzero_si256();
      const int16_t* w = packed + c0 / kBlock * kBlockWords + depthwise_slot(c0 % kBlock) * 2;
      constexpr size_t kHiWords = kDepthwisePermuted ? kBlock : 16;
      for (size_t q = 0; q < pairs; ++q, w += pair_words) {
        const uint8_t* x1 = 2 * q + 1 < taps ? x[2 * q + 1] : last;
        const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x[2 * q] + shift + c0));
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x1 + shift + c0));
        lo = _mm256_add_epi32(lo, _mm256_madd_epi16(widen16<kInSigned>(_mm_unpacklo_epi8(a, b)),
                                                    _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w))));
        hi = _mm256_add_epi32(hi, _mm256_madd_epi16(widen16<kInSigned>(_mm_unpackhi_epi8(a, b)),
                                                    _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + kHiWords))));
      }
#if WEBNN_KERNEL_ISA_LEVEL == 2
      const simd::VI sums = simd::VI(_mm512_maskz_inserti64x4(0xff, _mm512_castsi256_si512(lo), hi, 1));
      requantize_lanes(sums + simd::load<simd::VI>(rq.offset + c0), rq.multiplier + c0, rq.bias + c0,
                                   rq.min, rq.max, rq.output_zero, out + c0);
#else
      for (size_t h = 0; h < 2; ++h) {
        const size_t c = c0 + 8 * h;
        requantize_lanes(simd::VI(h ? hi : lo) + simd::load<simd::VI>(rq.offset + c), rq.multiplier + c,
                                     rq.bias + c, rq.min, rq.max, rq.output_zero, out + c);
      }
#endif
    }
#endif
    for (; c0 < channels; ++c0) {  // the last channels (fewer than 16) one at a time
      const int16_t* w = packed + (c0 / kBlock * kBlock + depthwise_slot(c0 % kBlock)) * 2;
      int32_t acc = 0;
      for (size_t t = 0; t < taps; ++t) {
        const uint8_t v = x[t][shift + c0];
        acc += (kInSigned ? int32_t(int8_t(v)) : int32_t(v)) * w[t / 2 * pair_words + t % 2];
      }
      out[c0] = requantized(acc, rq.offset[c0], rq.multiplier[c0], rq.bias[c0], rq.min, rq.max,
                                        rq.output_zero);
    }
  }
}

void depthwise(size_t pixels, size_t step, size_t channels, size_t taps, const uint8_t* const* x, bool input_signed,
               const int16_t* packed, const TileEpilogue& rq, uint8_t* out) {
  if (input_signed) depthwise_pixels<true>(pixels, step, channels, taps, x, packed, rq, out);
  else depthwise_pixels<false>(pixels, step, channels, taps, x, packed, rq, out);
}

#if WEBNN_KERNEL_ISA_LEVEL == 0
constexpr size_t kMr = 4, kNr = 16;
void s16_gemm(size_t k_steps, const uint32_t* a, size_t a_stride, const uint32_t* b, int32_t* tile) {
  int32_t acc[kMr][kNr] = {};
  for (size_t k = 0; k < k_steps; ++k, b += kNr)
    for (size_t i = 0; i < kMr; ++i) {
      const uint32_t word = a[i * a_stride + k];
      const int32_t a0 = int16_t(word & 0xffff), a1 = int16_t(word >> 16);
      for (size_t j = 0; j < kNr; ++j) acc[i][j] += a0 * int16_t(b[j] & 0xffff) + a1 * int16_t(b[j] >> 16);
    }
  std::memcpy(tile, acc, sizeof(acc));
}
constexpr const char* kS16Name = "s16_gemm_4x16_ref";
#elif WEBNN_KERNEL_ISA_LEVEL == 1
// vpmaddwd: two int16 products summed into each int32 lane (exact: |values| <= 255).
struct MaddYmm {
  using Vector = __m256i;
  static Vector zero() { return _mm256_setzero_si256(); }
  static Vector load(const uint32_t* p) { return _mm256_load_si256(reinterpret_cast<const __m256i*>(p)); }
  static Vector broadcast(uint32_t word) { return _mm256_set1_epi32(int32_t(word)); }
  static Vector dot(Vector acc, Vector a, Vector b) { return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b)); }
  static void store(int32_t* p, Vector v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
};
constexpr size_t kMr = 6, kNr = 16;
constexpr auto s16_gemm = int8_gemm_tile<MaddYmm, kMr>;
constexpr const char* kS16Name = "s16_gemm_6x16_avx2";
#else
struct MaddZmm {
  using Vector = __m512i;
  static Vector zero() { return _mm512_setzero_si512(); }
  static Vector load(const uint32_t* p) { return _mm512_load_si512(p); }
  static Vector broadcast(uint32_t word) { return _mm512_set1_epi32(int32_t(word)); }
  static Vector dot(Vector acc, Vector a, Vector b) { return _mm512_add_epi32(acc, _mm512_madd_epi16(a, b)); }
  static void store(int32_t* p, Vector v) { _mm512_storeu_si512(p, v); }
};
constexpr size_t kMr = 12, kNr = 32;
constexpr auto s16_gemm = int8_gemm_tile<MaddZmm, kMr>;
constexpr const char* kS16Name = "s16_gemm_12x32_avx512";
#endif

// A quotient x / scale as an 8-bit value: rounded half to even, plus the zero point, saturated;
// NaN to 0.
template <bool kSigned>
inline uint8_t quantized_value(float quotient, int32_t zero) {
  constexpr float kLo = kSigned ? -128.0f : 0.0f, kHi = kSigned ? 127.0f : 255.0f;
  float q = std::nearbyint(quotient) + float(zero);
  q = q < kLo ? kLo : (q > kHi ? kHi : q);
  return q == q ? uint8_t(int32_t(q)) : uint8_t(0);
}
#if WEBNN_KERNEL_ISA_LEVEL >= 1
// The 8-bit values (as int32: what the stored byte reads back as) of a vector of quotients.
template <bool kSigned>
inline simd::VI quantized_lanes(simd::VF quotient, simd::VF zero) {
  using namespace simd;
  VF q = clamp(round<_MM_FROUND_TO_NEAREST_INT>(quotient) + zero, splat(kSigned ? -128.0f : 0.0f),
               splat(kSigned ? 127.0f : 255.0f));
  q = bits_to_float(float_bits(q) & ~VU(is_nan(q)));  // NaN quantizes to 0
  return __builtin_convertvector(q, VI);
}
template <bool kSigned>
inline void quantize_quotient(simd::VF quotient, simd::VF zero, uint8_t* out) {
  simd::narrow_u8(out, quantized_lanes<kSigned>(quotient, zero));
}
#endif

#if WEBNN_KERNEL_ISA_LEVEL >= 1
// x / s quantized to 8 bits (a vector of them), with inv = quantize_inverse(s) != 0: q0 = x * inv
// is within an ulp of x / s, r = x - q0 * s is exact in an FMA, and q0 + r * inv rounds to exactly
// x / s (Markstein's theorem; quantize_inverse bounds s so that r and inv stay normal wherever the
// quotient is not far below one half). An infinite q0 gives a NaN correction: q0 is the quotient.
inline simd::VF exact_quotient(simd::VF x, simd::VF s, simd::VF inv) {
  using namespace simd;
  const VF q0 = unfused(x * inv);
  const VF q1 = fma(fma(-q0, s, x), inv, q0);
  const VU corrected_nan = VU(is_nan(q1) & ~is_nan(q0));
  return bits_to_float((float_bits(q1) & ~corrected_nan) | (float_bits(q0) & corrected_nan));
}
template <bool kSigned>
inline void quantize_lanes(simd::VF x, simd::VF s, simd::VF inv, simd::VF zero, uint8_t* out) {
  quantize_quotient<kSigned>(exact_quotient(x, s, inv), zero, out);
}
#endif

template <bool kSigned>
void quantize_run(const float* x, float scale, float inverse, int32_t zero, uint8_t* y, size_t n) {
  size_t i = 0;
#if WEBNN_KERNEL_ISA_LEVEL >= 1
  using namespace simd;
  const VF s = splat(scale), z = splat(float(zero));
  if (inverse != 0.0f)
    for (const VF inv = splat(inverse); i + kLanes <= n; i += kLanes) quantize_lanes<kSigned>(load<VF>(x + i), s, inv, z, y + i);
  for (; i + kLanes <= n; i += kLanes) quantize_quotient<kSigned>(load<VF>(x + i) / s, z, y + i);
#endif
  for (; i < n; ++i) y[i] = quantized_value<kSigned>(x[i] / scale, zero);
}

void quantize(const float* x, float scale, float inverse, int32_t zero, bool is_signed, uint8_t* y, size_t n) {
  if (is_signed) quantize_run<true>(x, scale, inverse, zero, y, n);
  else quantize_run<false>(x, scale, inverse, zero, y, n);
}

// QuantizeDequantizeRunFn: quantize_run's values dequantized as dequantize_run would read them back,
// without the bytes in between.
template <bool kSigned>
void quantize_dequantize_run(const float* x, float scale, float inverse, int32_t zero, float dq_scale,
                             int32_t dq_zero, float* y, size_t n) {
  size_t i = 0;
#if WEBNN_KERNEL_ISA_LEVEL >= 1
  // In float32 throughout: the 8-bit value q, its difference from the dequantize zero point and the
  // quotient's correction are all exact, so this is (q - dq_zero) * dq_scale as dequantize_run
  // computes it, in fewer instructions than through int32 (these loops are bound by them).
  using namespace simd;
  const VF s = splat(scale), z = splat(float(zero)), ds = splat(dq_scale), dz = splat(float(dq_zero));
  const VF lo = splat(kSigned ? -128.0f : 0.0f), hi = splat(kSigned ? 127.0f : 255.0f);
  const auto dequantized = [&](VF quotient) {
    VF q = clamp(round<_MM_FROUND_TO_NEAREST_INT>(quotient) + z, lo, hi);
    q = bits_to_float(float_bits(q) & ~VU(is_nan(q)));  // NaN quantizes to 0
    return unfused(q - dz) * ds;
  };
  if (inverse != 0.0f)
    for (const VF inv = splat(inverse); i + kLanes <= n; i += kLanes) {
      const VF xv = load<VF>(x + i), q0 = unfused(xv * inv), q1 = fma(fma(-q0, s, xv), inv, q0);
      store(y + i, dequantized(is_nan(q1) ? q0 : q1));  // (see exact_quotient)
    }
  for (; i + kLanes <= n; i += kLanes) store(y + i, dequantized(load<VF>(x + i) / s));
#endif
  for (; i < n; ++i) {
    const uint8_t q = quantized_value<kSigned>(x[i] / scale, zero);
    y[i] = float((kSigned ? int32_t(int8_t(q)) : int32_t(q)) - dq_zero) * dq_scale;
  }
}

void quantize_dequantize(const float* x, float scale, float inverse, int32_t zero, bool is_signed, float dq_scale,
                         int32_t dq_zero, float* y, size_t n) {
  if (is_signed) quantize_dequantize_run<true>(x, scale, inverse, zero, dq_scale, dq_zero, y, n);
  else quantize_dequantize_run<false>(x, scale, inverse, zero, dq_scale, dq_zero, y, n);
}

template <bool kSigned>
void dequantize_run(const uint8_t* x, int32_t zero, float scale, float* y, size_t n) {
  size_t i = 0;
#if WEBNN_KERNEL_ISA_LEVEL >= 1
  using namespace simd;
  const VF s = splat(scale);
  const VI z = splat_i(zero);
  for (; i + kLanes <= n; i += kLanes)
    store(y + i, __builtin_convertvector((kSigned ? widen_i8(x + i) : widen_u8(x + i)) - z, VF) * s);
#endif
  for (; i < n; ++i) y[i] = float((kSigned ? int32_t(int8_t(x[i])) : int32_t(x[i])) - zero) * scale;
}

void dequantize(const uint8_t* x, bool is_signed, int32_t zero, float scale, float* y, size_t n) {
  if (is_signed) dequantize_run<true>(x, zero, scale, y, n);
  else dequantize_run<false>(x, zero, scale, y, n);
}

// Int8BinaryFn: every step as its own loop computes it (dequantize_run, the float32 binary and
// clamp loops, quantize_run), fused so that the values stay in registers.
// v as rounded to float32: a product stored here is not fused into a following addition.
inline float rounded(float v) {
  volatile float stored = v;
  return stored;
}

// The op on two float32 values, or on two vectors of them (the same operators).
template <Int8BinaryOp kOp, class V>
inline V binary_value(V a, V b) {
  if constexpr (kOp == Int8BinaryOp::kAdd) return a + b;
  else if constexpr (kOp == Int8BinaryOp::kSub) return a - b;
  else if constexpr (kOp == Int8BinaryOp::kMul) return a * b;
  else if constexpr (kOp == Int8BinaryOp::kMax) return a > b ? a : b;
  else return a < b ? a : b;
}

template <Int8BinaryOp kOp, bool kOutSigned, bool kBFloat>
void binary_run(const uint8_t* a, const uint8_t* b, size_t n, const Int8Binary& p, uint8_t* y) {
  const float* b_values = reinterpret_cast<const float*>(b);  // kBFloat
  const auto value = [](const uint8_t* x, size_t i, bool is_signed) {
    return is_signed ? int32_t(int8_t(x[i])) : int32_t(x[i]);
  };
  size_t i = 0;
#if WEBNN_KERNEL_ISA_LEVEL >= 1
  using namespace simd;
  const VF sa = splat(p.a_scale), sb = splat(p.b_scale), lo = splat(p.min), hi = splat(p.max);
  const VF s = splat(p.out_scale), inv = splat(p.out_inverse), z = splat(float(p.out_zero));
  const VI za = splat_i(p.a_zero), zb = splat_i(p.b_zero);
  // Finite values throughout (p.finite): the quotient needs no NaN correction and the quantized
  // value no NaN test, which leaves fewer instructions per vector (these loops are bound by them).
  const auto run = [&](auto finite) {
  for (; i + kLanes <= n; i += kLanes) {
    const VI xa = p.a_signed ? widen_i8(a + i) : widen_u8(a + i);
    const VF fa = unfused(__builtin_convertvector(xa - za, VF) * sa);
    VF fb;
    if constexpr (kBFloat) {
      fb = load<VF>(b_values + i);
    } else {
      const VI xb = p.b_signed ? widen_i8(b + i) : widen_u8(b + i);
      fb = unfused(__builtin_convertvector(xb - zb, VF) * sb);
    }
    const VF t = clamp(unfused(binary_value<kOp>(fa, fb)), lo, hi);
    if constexpr (decltype(finite)::value) {
      const VF q0 = unfused(t * inv);
      const VF q = clamp(round<_MM_FROUND_TO_NEAREST_INT>(fma(fma(-q0, s, t), inv, q0)) + z,
                         splat(kOutSigned ? -128.0f : 0.0f), splat(kOutSigned ? 127.0f : 255.0f));
      narrow_u8(y + i, __builtin_convertvector(q, VI));
    } else {
      quantize_lanes<kOutSigned>(t, s, inv, z, y + i);
    }
  }
  };
  if (!kBFloat && p.finite) run(std::true_type{});
  else run(std::false_type{});
#endif
  for (; i < n; ++i) {
    // (Each value rounded on its own, as the separate loops round it: no contraction into an FMA.)
    const float fa = rounded(float(value(a, i, p.a_signed) - p.a_zero) * p.a_scale);
    const float fb = kBFloat ? b_values[i] : rounded(float(value(b, i, p.b_signed) - p.b_zero) * p.b_scale);
    float t = rounded(binary_value<kOp>(fa, fb));
    t = t < p.min ? p.min : (t > p.max ? p.max : t);
    y[i] = quantized_value<kOutSigned>(t / p.out_scale, p.out_zero);
  }
}

template <bool kOutSigned, bool kBFloat>
void binary_typed(const uint8_t* a, const uint8_t* b, size_t n, const Int8Binary& p, uint8_t* y) {
  switch (p.op) {
    case Int8BinaryOp::kAdd: return binary_run<Int8BinaryOp::kAdd, kOutSigned, kBFloat>(a, b, n, p, y);
    case Int8BinaryOp::kSub: return binary_run<Int8BinaryOp::kSub, kOutSigned, kBFloat>(a, b, n, p, y);
    case Int8BinaryOp::kMul: return binary_run<Int8BinaryOp::kMul, kOutSigned, kBFloat>(a, b, n, p, y);
    case Int8BinaryOp::kMax:
      if constexpr (!kBFloat) return binary_run<Int8BinaryOp::kMax, kOutSigned, false>(a, b, n, p, y);
      break;
    case Int8BinaryOp::kMin:
      if constexpr (!kBFloat) return binary_run<Int8BinaryOp::kMin, kOutSigned, false>(a, b, n, p, y);
      break;
  }
}

void binary(const uint8_t* a, const uint8_t* b, size_t n, const Int8Binary& p, uint8_t* y) {
  if (p.b_float) {
    if (p.out_signed) binary_typed<true, true>(a, b, n, p, y);
    else binary_typed<false, true>(a, b, n, p, y);
  } else if (p.out_signed) {
    binary_typed<true, false>(a, b, n, p, y);
  } else {
    binary_typed<false, false>(a, b, n, p, y);
  }
}

void lookup(const uint8_t* x, size_t n, const uint8_t* table, uint8_t* y) {
  for (size_t i = 0; i < n; ++i) y[i] = table[x[i]];
}

// The kernels of this level (the VNNI dot products come from their own files: platform.cc).
Int8Kernels level_kernels() {
  Int8Kernels k;
  k.dot2 = Int8GemmUkernel{s16_gemm, kMr, kNr, Int8Dot::kS16x2, kS16Name};
  k.requantize = requantize;
  k.dequantize_sums = dequantize_sums;
  k.depthwise_pack = depthwise_pack;
  k.depthwise = depthwise;
  k.quantize = quantize;
  k.dequantize = dequantize;
  k.quantize_dequantize = quantize_dequantize;
  k.binary = binary;
  k.lookup = lookup;
  return k;
}

}  // namespace
}  // namespace WEBNN_KERNEL_ISA
}  // namespace webnn
