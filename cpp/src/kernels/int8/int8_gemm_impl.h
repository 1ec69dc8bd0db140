// The int8 family's per-ISA code: the requantize epilogue and the depthwise loop (plain loops the
// compiler vectorizes for the ISA the file is built for), and the int16 x int16 microkernel
// (vpmaddwd on AVX2 / AVX-512BW, portable loops at the ref level). Included once per ISA level by
// int8_gemm_<isa>.cc, which defines WEBNN_KERNEL_ISA and WEBNN_KERNEL_ISA_LEVEL (kernel_isa.h).
#pragma once
#include <algorithm>
#include <cmath>

#include "kernels/int8/int8_gemm.h"
#include "kernels/int8/int8_gemm_tile.h"
#include "kernels/kernel_isa.h"
#if WEBNN_KERNEL_ISA_LEVEL >= 1
#include <immintrin.h>
#endif

namespace webnn {
namespace WEBNN_KERNEL_ISA {
namespace {

// One value of a column: see Int8Requantize.
template <bool kSigned>
inline uint8_t requantized(int32_t sum, int32_t offset, float multiplier, float bias, float min, float max,
                           float zero) {
  constexpr float kLo = kSigned ? -128.0f : 0.0f, kHi = kSigned ? 127.0f : 255.0f;
  float t = float(sum + offset) * multiplier + bias;
  t = t < min ? min : t;
  t = t > max ? max : t;
  float q = std::nearbyint(t) + zero;
  q = q < kLo ? kLo : q;
  q = q > kHi ? kHi : q;
  q = q == q ? q : 0.0f;  // NaN quantizes to 0
  return uint8_t(int32_t(q));
}

// One row, a vector of columns at a time (GCC's own vectorization of this loop picks 16-byte
// vectors for the uint8 stores, which leaves the float math at 4 lanes), the last columns scalar.
#if WEBNN_KERNEL_ISA_LEVEL >= 1
// A vector of columns from j (`sum` with the offsets added): see Int8Requantize.
template <bool kSigned>
inline void requantize_lanes(simd::VI sum, const float* multiplier, const float* bias, float min, float max, float zero,
                             uint8_t* o) {
  using namespace simd;
  const VF t = clamp(fma(__builtin_convertvector(sum, VF), load<VF>(multiplier), load<VF>(bias)), splat(min),
                     splat(max));
  VF q = clamp(round<_MM_FROUND_TO_NEAREST_INT>(t) + splat(zero), splat(kSigned ? -128.0f : 0.0f),
               splat(kSigned ? 127.0f : 255.0f));
  q = bits_to_float(float_bits(q) & ~VU(is_nan(q)));  // NaN quantizes to 0
  narrow_u8(o, __builtin_convertvector(q, VI));
}
#endif

template <bool kSigned>
void requantize_row(size_t cols, const int32_t* s, const int32_t* offset, const float* multiplier, const float* bias,
                    float min, float max, float zero, uint8_t* o) {
  size_t j = 0;
#if WEBNN_KERNEL_ISA_LEVEL >= 1
  using simd::kLanes;
  for (; j + kLanes <= cols; j += kLanes)
    requantize_lanes<kSigned>(simd::load<simd::VI>(s + j) + simd::load<simd::VI>(offset + j), multiplier + j, bias + j,
                              min, max, zero, o + j);
#endif
  for (; j < cols; ++j) o[j] = requantized<kSigned>(s[j], offset[j], multiplier[j], bias[j], min, max, zero);
}

template <bool kSigned>
void requantize_rows(size_t rows, size_t cols, const int32_t* sums, size_t ld, const Int8Requantize& rq, uint8_t* out,
                     size_t out_ld) {
  for (size_t i = 0; i < rows; ++i)
    requantize_row<kSigned>(cols, sums + i * ld, rq.offset, rq.multiplier, rq.bias, rq.min, rq.max, rq.output_zero,
                            out + i * out_ld);
}

void requantize(size_t rows, size_t cols, const int32_t* sums, size_t ld, const Int8Requantize& rq, uint8_t* out,
                size_t out_ld) {
  if (rq.output_signed) requantize_rows<true>(rows, cols, sums, ld, rq, out, out_ld);
  else requantize_rows<false>(rows, cols, sums, ld, rq, out, out_ld);
}

// A vector of channels at a time, its sums in a register across the taps; the last channels scalar.
template <class T, bool kSigned>
void depthwise_pixel(size_t channels, size_t taps, const uint8_t* const* x, int32_t zero, const int32_t* filter,
                     const Int8Requantize& rq, uint8_t* out) {
  size_t c0 = 0;
#if WEBNN_KERNEL_ISA_LEVEL >= 1
  using namespace simd;
  for (; c0 + kLanes <= channels; c0 += kLanes) {
    VI acc = splat_i(0);
    for (size_t t = 0; t < taps; ++t) {
      if (!x[t]) continue;
      const VI xt = std::is_same_v<T, int8_t> ? widen_i8(x[t] + c0) : widen_u8(x[t] + c0);
      acc += (xt - zero) * load<VI>(filter + t * channels + c0);
    }
    requantize_lanes<kSigned>(acc + load<VI>(rq.offset + c0), rq.multiplier + c0, rq.bias + c0, rq.min, rq.max,
                              rq.output_zero, out + c0);
  }
#endif
  for (; c0 < channels; ++c0) {
    int32_t acc = 0;
    for (size_t t = 0; t < taps; ++t)
      if (x[t]) acc += (int32_t(reinterpret_cast<const T*>(x[t])[c0]) - zero) * filter[t * channels + c0];
    out[c0] = requantized<kSigned>(acc, rq.offset[c0], rq.multiplier[c0], rq.bias[c0], rq.min, rq.max, rq.output_zero);
  }
}

void depthwise(size_t channels, size_t taps, const uint8_t* const* x, bool input_signed, int32_t input_zero,
               const int32_t* filter, const Int8Requantize& rq, uint8_t* out) {
  if (input_signed) {
    if (rq.output_signed) depthwise_pixel<int8_t, true>(channels, taps, x, input_zero, filter, rq, out);
    else depthwise_pixel<int8_t, false>(channels, taps, x, input_zero, filter, rq, out);
  } else if (rq.output_signed) {
    depthwise_pixel<uint8_t, true>(channels, taps, x, input_zero, filter, rq, out);
  } else {
    depthwise_pixel<uint8_t, false>(channels, taps, x, input_zero, filter, rq, out);
  }
}

#if WEBNN_KERNEL_ISA_LEVEL == 0
constexpr size_t kMr = 4, kNr = 16;
void s16_gemm(size_t k_steps, const uint32_t* a, const uint32_t* b, int32_t* tile) {
  int32_t acc[kMr][kNr] = {};
  for (size_t k = 0; k < k_steps; ++k, a += kMr, b += kNr)
    for (size_t i = 0; i < kMr; ++i) {
      const int32_t a0 = int16_t(a[i] & 0xffff), a1 = int16_t(a[i] >> 16);
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

template <bool kSigned>
void quantize_run(const float* x, float scale, int32_t zero, uint8_t* y, size_t n) {
  constexpr float kLo = kSigned ? -128.0f : 0.0f, kHi = kSigned ? 127.0f : 255.0f;
  size_t i = 0;
#if WEBNN_KERNEL_ISA_LEVEL >= 1
  using namespace simd;
  const VF s = splat(scale), z = splat(float(zero)), lo = splat(kLo), hi = splat(kHi);
  for (; i + kLanes <= n; i += kLanes) {
    VF q = clamp(round<_MM_FROUND_TO_NEAREST_INT>(load<VF>(x + i) / s) + z, lo, hi);
    q = bits_to_float(float_bits(q) & ~VU(is_nan(q)));  // NaN quantizes to 0
    narrow_u8(y + i, __builtin_convertvector(q, VI));
  }
#endif
  for (; i < n; ++i) {
    float q = std::nearbyint(x[i] / scale) + float(zero);
    q = q < kLo ? kLo : (q > kHi ? kHi : q);
    y[i] = q == q ? uint8_t(int32_t(q)) : uint8_t(0);
  }
}

void quantize(const float* x, float scale, int32_t zero, bool is_signed, uint8_t* y, size_t n) {
  if (is_signed) quantize_run<true>(x, scale, zero, y, n);
  else quantize_run<false>(x, scale, zero, y, n);
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

// The kernels of this level (the VNNI dot products come from their own files: platform.cc).
Int8Kernels level_kernels() {
  Int8Kernels k;
  k.dot2 = Int8GemmUkernel{s16_gemm, kMr, kNr, Int8Dot::kS16x2, kS16Name};
  k.requantize = requantize;
  k.depthwise = depthwise;
  k.quantize = quantize;
  k.dequantize = dequantize;
  return k;
}

}  // namespace
}  // namespace WEBNN_KERNEL_ISA
}  // namespace webnn
