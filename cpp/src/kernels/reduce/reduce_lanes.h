// Per-ISA helpers of the reduction, normalization and pooling loops (reduce_impl.h, norm_impl.h,
// pool_impl.h; see kernel_isa.h for the rules). `Lanes` holds kWidth float32 lanes (a float
// vector at the AVX levels, one float at ref) and `Wide` the same lanes in double. Float16 data
// loads and stores through float32 lanes.
//
// Sums accumulate in double lanes (row sums convert every element, or what a map made of it, so
// they are as accurate as a double loop; squares are made in double, so they cannot overflow).
// Maxima and minima propagate NaN.
#pragma once
#include <cmath>
#include <cstddef>

#include "kernels/kernel_isa.h"
#if WEBNN_KERNEL_ISA_LEVEL >= 1
#include "kernels/vector_math.h"
#endif

namespace webnn {
namespace WEBNN_KERNEL_ISA {
namespace {

inline size_t min_size(size_t a, size_t b) { return a < b ? a : b; }

// pick(T{}) with T the storage type of float type `type` (float or float16).
template <class Pick>
auto for_float_type(DataType type, const Pick& pick) {
  return type == DataType::kFloat16 ? pick(float16{}) : pick(float{});
}

#if WEBNN_KERNEL_ISA_LEVEL >= 1
using Lanes = VF;
constexpr size_t kWidth = kLanes;

struct Wide {
  simd::VD lo, hi;
};
inline Wide operator+(Wide a, Wide b) { return {a.lo + b.lo, a.hi + b.hi}; }
inline Wide operator-(Wide a, Wide b) { return {a.lo - b.lo, a.hi - b.hi}; }
inline Wide operator*(Wide a, Wide b) { return {a.lo * b.lo, a.hi * b.hi}; }
// (The maskz_ intrinsics, all lanes set: GCC 12 warns on the plain AVX-512 forms.)
#if WEBNN_KERNEL_ISA_LEVEL >= 2
inline Wide widen(Lanes v) {
  return {simd::VD(_mm512_maskz_cvtps_pd(0xff, __m256(simd::low_half(v)))),
          simd::VD(_mm512_maskz_cvtps_pd(0xff, __m256(simd::high_half(v))))};
}
inline Lanes narrow(Wide v) {
  return simd::join(simd::VFHalf(_mm512_maskz_cvtpd_ps(0xff, __m512d(v.lo))),
                    simd::VFHalf(_mm512_maskz_cvtpd_ps(0xff, __m512d(v.hi))));
}
#else
inline Wide widen(Lanes v) {
  return {simd::VD(_mm256_cvtps_pd(__m128(simd::low_half(v)))), simd::VD(_mm256_cvtps_pd(__m128(simd::high_half(v))))};
}
inline Lanes narrow(Wide v) {
  return simd::join(simd::VFHalf(_mm256_cvtpd_ps(__m256d(v.lo))), simd::VFHalf(_mm256_cvtpd_ps(__m256d(v.hi))));
}
#endif
inline Wide splat_wide(double v) { return {v - simd::VD{}, v - simd::VD{}}; }  // v - 0 keeps -0
inline Lanes splat_lanes(float v) { return simd::splat(v); }
inline Lanes abs_lanes(Lanes x) { return simd::abs(x); }
inline Lanes sqrt_lanes(Lanes x) { return simd::sqrt(x); }
inline Lanes exp_lanes(Lanes x) { return vm::exp(x); }
#else
using Lanes = float;
using Wide = double;
constexpr size_t kWidth = 1;

inline Wide widen(Lanes v) { return v; }
inline Lanes narrow(Wide v) { return float(v); }
inline Wide splat_wide(double v) { return v; }
inline Lanes splat_lanes(float v) { return v; }
inline Lanes abs_lanes(Lanes x) { return std::fabs(x); }
inline Lanes sqrt_lanes(Lanes x) { return std::sqrt(x); }
inline Lanes exp_lanes(Lanes x) { return std::exp(x); }
#endif
inline Wide as_wide(Lanes v) { return widen(v); }
inline Wide as_wide(Wide v) { return v; }

// ---- loads and stores; `n` (1..kWidth) counts the valid lanes of a group at the end of a row

template <class T>
inline Lanes load_lanes(const T* p) {
#if WEBNN_KERNEL_ISA_LEVEL >= 1
  return vload(p);
#else
  return cload(*p);
#endif
}
template <class T>
inline void store_lanes(T* p, Lanes v) {
#if WEBNN_KERNEL_ISA_LEVEL >= 1
  vstore(p, v);
#else
  cstore(p, v);
#endif
}

#if WEBNN_KERNEL_ISA_LEVEL >= 2
inline __mmask16 first_lanes_mask(size_t n) { return __mmask16((1u << n) - 1); }
#elif WEBNN_KERNEL_ISA_LEVEL == 1
inline __m256i first_lanes_mask(size_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(int(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
#endif

// The first n elements; the other lanes hold `fill`.
template <class T>
inline Lanes load_lanes(const T* p, size_t n, float fill = 0.0f) {
  if (n >= kWidth) return load_lanes(p);
#if WEBNN_KERNEL_ISA_LEVEL >= 2
  const __m512 fills = _mm512_set1_ps(fill);
  if constexpr (std::is_same_v<T, float>) return VF(_mm512_mask_loadu_ps(fills, first_lanes_mask(n), p));
  const __m512 x = _mm512_maskz_cvtph_ps(0xffff, _mm256_maskz_loadu_epi16(first_lanes_mask(n), p));
  return VF(_mm512_mask_blend_ps(first_lanes_mask(n), fills, x));
#elif WEBNN_KERNEL_ISA_LEVEL == 1
  if constexpr (std::is_same_v<T, float>) {
    const __m256i mask = first_lanes_mask(n);
    return VF(_mm256_blendv_ps(_mm256_set1_ps(fill), _mm256_maskload_ps(p, mask), _mm256_castsi256_ps(mask)));
  }
#endif
  float staged[kWidth];
  for (size_t i = 0; i < kWidth; ++i) staged[i] = i < n ? float(cload(p[i])) : fill;
  return load_lanes(staged);
}
template <class T>
inline void store_lanes(T* p, Lanes v, size_t n) {
  if (n >= kWidth) return store_lanes(p, v);
#if WEBNN_KERNEL_ISA_LEVEL >= 2
  if constexpr (std::is_same_v<T, float>) return _mm512_mask_storeu_ps(p, first_lanes_mask(n), __m512(v));
  const __m256i half = _mm512_maskz_cvtps_ph(0xffff, __m512(v), _MM_FROUND_TO_NEAREST_INT);
  return _mm256_mask_storeu_epi16(p, first_lanes_mask(n), half);
#elif WEBNN_KERNEL_ISA_LEVEL == 1
  if constexpr (std::is_same_v<T, float>) return _mm256_maskstore_ps(p, first_lanes_mask(n), __m256(v));
#endif
  float staged[kWidth];
  store_lanes(staged, v);
  for (size_t i = 0; i < n; ++i) cstore(p + i, staged[i]);
}

#if WEBNN_KERNEL_ISA_LEVEL >= 2
inline __mmask8 half_mask(size_t n) { return __mmask8(n >= 8 ? 0xff : (1u << n) - 1); }
#elif WEBNN_KERNEL_ISA_LEVEL == 1
inline __m256i half_mask(size_t n) {
  return _mm256_cmpgt_epi64(_mm256_set1_epi64x(int64_t(n)), _mm256_setr_epi64x(0, 1, 2, 3));
}
#endif

// Lanes [0, n) of doubles (the others 0).
inline Wide load_wide(const double* p, size_t n) {
#if WEBNN_KERNEL_ISA_LEVEL >= 1
  if (n >= kWidth) return {simd::load<simd::VD>(p), simd::load<simd::VD>(p + kWidth / 2)};
  const size_t high = n > kWidth / 2 ? n - kWidth / 2 : 0;
#if WEBNN_KERNEL_ISA_LEVEL >= 2
  return {simd::VD(_mm512_maskz_loadu_pd(half_mask(n), p)), simd::VD(_mm512_maskz_loadu_pd(half_mask(high), p + 8))};
#else
  return {simd::VD(_mm256_maskload_pd(p, half_mask(n))), simd::VD(_mm256_maskload_pd(p + 4, half_mask(high)))};
#endif
#else
  return n ? *p : 0.0;
#endif
}
inline void store_wide(double* p, Wide v, size_t n) {
#if WEBNN_KERNEL_ISA_LEVEL >= 1
  if (n >= kWidth) {
    simd::store(p, v.lo);
    simd::store(p + kWidth / 2, v.hi);
    return;
  }
  const size_t high = n > kWidth / 2 ? n - kWidth / 2 : 0;
#if WEBNN_KERNEL_ISA_LEVEL >= 2
  _mm512_mask_storeu_pd(p, half_mask(n), __m512d(v.lo));
  _mm512_mask_storeu_pd(p + 8, half_mask(high), __m512d(v.hi));
#else
  _mm256_maskstore_pd(p, half_mask(n), __m256d(v.lo));
  _mm256_maskstore_pd(p + 4, half_mask(high), __m256d(v.hi));
#endif
#else
  if (n) *p = v;
#endif
}

// v with the lanes from n on set to 0.
inline Wide keep_first(Wide v, size_t n) {
#if WEBNN_KERNEL_ISA_LEVEL >= 1
  if (n < kWidth) return load_wide(reinterpret_cast<const double*>(&v), n);
#endif
  return v;
}

// ---- max / min, NaN propagating

template <bool kMax>
constexpr float kExtremeIdentity = kMax ? -__builtin_inff() : __builtin_inff();

// Lane-wise max (min) of acc and x; a NaN in either stays.
template <bool kMax, class V>
inline V extreme(V acc, V x) {
#if WEBNN_KERNEL_ISA_LEVEL >= 1
  // maxps / minps give their second operand (x) where either is NaN: only a NaN acc needs a select.
  if constexpr (std::is_same_v<V, VF>) {
#if WEBNN_KERNEL_ISA_LEVEL >= 2
    const __mmask16 all = 0xffff;  // the maskz_ forms: GCC 12 warns about the plain ones' undefined source
    const VF m = VF(kMax ? _mm512_maskz_max_ps(all, __m512(acc), __m512(x)) : _mm512_maskz_min_ps(all, __m512(acc), __m512(x)));
#else
    const VF m = VF(kMax ? _mm256_max_ps(__m256(acc), __m256(x)) : _mm256_min_ps(__m256(acc), __m256(x)));
#endif
    return acc != acc ? acc : m;
  }
#endif
  if constexpr (kMax) return ((x > acc) | (x != x)) ? x : acc;
  else return ((x < acc) | (x != x)) ? x : acc;
}

template <bool kMax>
inline float extreme_of_lanes(Lanes v) {
#if WEBNN_KERNEL_ISA_LEVEL >= 1
  if (simd::any(simd::is_nan(v))) return __builtin_nanf("");
  const auto pick = [](__m128 a, __m128 b) { return kMax ? _mm_max_ps(a, b) : _mm_min_ps(a, b); };
#if WEBNN_KERNEL_ISA_LEVEL >= 2
  const __m256 lo = __m256(simd::low_half(v)), hi = __m256(simd::high_half(v));
  const __m256 half = kMax ? _mm256_max_ps(lo, hi) : _mm256_min_ps(lo, hi);
  __m128 m = pick(_mm256_castps256_ps128(half), _mm256_extractf128_ps(half, 1));
#else
  __m128 m = pick(__m128(simd::low_half(v)), __m128(simd::high_half(v)));
#endif
  m = pick(m, _mm_movehl_ps(m, m));
  return _mm_cvtss_f32(pick(m, _mm_shuffle_ps(m, m, 1)));
#else
  return v;
#endif
}
inline double sum_of_lanes(Wide v) {
#if WEBNN_KERNEL_ISA_LEVEL >= 1
#if WEBNN_KERNEL_ISA_LEVEL >= 2
  const __m512d all = __m512d(v.lo + v.hi);
  const __m256d s = _mm256_add_pd(_mm512_maskz_extractf64x4_pd(0xff, all, 0), _mm512_maskz_extractf64x4_pd(0xff, all, 1));
#else
  const __m256d s = __m256d(v.lo + v.hi);
#endif
  const __m128d pair = _mm_add_pd(_mm256_castpd256_pd128(s), _mm256_extractf128_pd(s, 1));
  return _mm_cvtsd_f64(_mm_add_sd(pair, _mm_unpackhi_pd(pair, pair)));
#else
  return v;
#endif
}

// ---- rows: contiguous elements

// Σ in double of map(x, i, n) over the lane groups of p[0, count), in four accumulators: x holds
// elements [i, i + n) (n < kWidth only for the last group, its other lanes 0 and their map results
// dropped); map returns Lanes or Wide.
template <class T, class Map>
double sum_row(const T* p, size_t count, const Map& map) {
  Wide a0{}, a1{}, a2{}, a3{};
  size_t i = 0;
  for (; i + 4 * kWidth <= count; i += 4 * kWidth) {
    a0 = a0 + as_wide(map(load_lanes(p + i), i, kWidth));
    a1 = a1 + as_wide(map(load_lanes(p + i + kWidth), i + kWidth, kWidth));
    a2 = a2 + as_wide(map(load_lanes(p + i + 2 * kWidth), i + 2 * kWidth, kWidth));
    a3 = a3 + as_wide(map(load_lanes(p + i + 3 * kWidth), i + 3 * kWidth, kWidth));
  }
  for (; i < count; i += kWidth) {
    const size_t n = min_size(kWidth, count - i);
    a0 = a0 + keep_first(as_wide(map(load_lanes(p + i, n), i, n)), n);
  }
  return sum_of_lanes((a0 + a1) + (a2 + a3));
}

// The maximum (minimum) of p[0, count).
template <bool kMax, class T>
float extreme_row(const T* p, size_t count) {
  const Lanes identity = splat_lanes(kExtremeIdentity<kMax>);
  Lanes a0 = identity, a1 = identity, a2 = identity, a3 = identity;
  size_t i = 0;
  for (; i + 4 * kWidth <= count; i += 4 * kWidth) {
    a0 = extreme<kMax>(a0, load_lanes(p + i));
    a1 = extreme<kMax>(a1, load_lanes(p + i + kWidth));
    a2 = extreme<kMax>(a2, load_lanes(p + i + 2 * kWidth));
    a3 = extreme<kMax>(a3, load_lanes(p + i + 3 * kWidth));
  }
  for (; i < count; i += kWidth)
    a0 = extreme<kMax>(a0, load_lanes(p + i, min_size(kWidth, count - i), kExtremeIdentity<kMax>));
  return extreme_of_lanes<kMax>(extreme<kMax>(extreme<kMax>(a0, a1), extreme<kMax>(a2, a3)));
}

// ---- columns: the same columns of successive rows, `stride` elements apart. Rows go in groups
// of four (four sequential streams), each across the whole width, into accumulators in memory;
// a group's four map results add pairwise in their own type (float32 lanes: one conversion to
// double per group instead of four) before going into the double accumulators.

// acc[k] += Σ_j map(x, j, k, n) over rows j < rows and the lane groups of columns [0, width): x
// holds columns [k, k + n) of row j (at p + j * stride); map results beyond n are dropped.
template <class T, class Map>
void sum_columns(const T* p, size_t rows, size_t stride, size_t width, const Map& map, double* acc) {
  size_t j = 0;
  for (; j + 4 <= rows; j += 4) {
    for (size_t k = 0; k < width; k += kWidth) {
      const size_t n = min_size(kWidth, width - k);
      const auto x = [&](size_t i) { return map(load_lanes(p + (j + i) * stride + k, n), j + i, k, n); };
      store_wide(acc + k, load_wide(acc + k, n) + as_wide((x(0) + x(1)) + (x(2) + x(3))), n);
    }
  }
  for (; j < rows; ++j) {
    for (size_t k = 0; k < width; k += kWidth) {
      const size_t n = min_size(kWidth, width - k);
      store_wide(acc + k, load_wide(acc + k, n) + as_wide(map(load_lanes(p + j * stride + k, n), j, k, n)), n);
    }
  }
}

// acc[k] = the maximum (minimum) of acc[k] and p[j * stride + k] over rows j < rows, k < width.
template <bool kMax, class T>
void extreme_columns(const T* p, size_t rows, size_t stride, size_t width, float* acc) {
  size_t j = 0;
  for (; j + 4 <= rows; j += 4) {
    const T* r = p + j * stride;
    for (size_t k = 0; k < width; k += kWidth) {
      const size_t n = min_size(kWidth, width - k);
      const Lanes x01 = extreme<kMax>(load_lanes(r + k, n), load_lanes(r + stride + k, n));
      const Lanes x23 = extreme<kMax>(load_lanes(r + 2 * stride + k, n), load_lanes(r + 3 * stride + k, n));
      store_lanes(acc + k, extreme<kMax>(load_lanes(acc + k, n), extreme<kMax>(x01, x23)), n);
    }
  }
  for (; j < rows; ++j)
    for (size_t k = 0; k < width; k += kWidth) {
      const size_t n = min_size(kWidth, width - k);
      store_lanes(acc + k, extreme<kMax>(load_lanes(acc + k, n), load_lanes(p + j * stride + k, n)), n);
    }
}

}  // namespace
}  // namespace WEBNN_KERNEL_ISA
}  // namespace webnn
