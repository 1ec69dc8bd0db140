// Float32 transcendentals on SIMD vectors (vector_math_simd.h) for the AVX2 / AVX-512 kernels:
// polynomial approximations after range reduction, evaluated with FMA. Special
// values (NaN, +-Infinity, -0, overflow, denormal results) come out as from the C library, like
// the scalar reference kernels. Max error against float64, in ulps of the exact result, measured
// over every float32 exponent with 4096 random mantissas each (both AVX levels compute the same):
//   exp 0.93   expm1 (elu) 1.31   log 0.77   tanh 1.49   sigmoid 4.7   softplus 1.89
//   erf 1.33   gelu 4 (6 in a denser sweep)   sin 1.46   cos 1.54   tan 2.38 (sin / cos / tan for |x| <= kTrigLimit;
//   beyond it, and for NaN / Infinity, the kernels call the C library).
// tests/kernels/test_vector_math.py checks WPT's tolerances over the whole range at every level.
#pragma once
#include "kernels/vector_math_simd.h"

namespace webnn {
namespace WEBNN_KERNEL_ISA {
namespace vm {

using simd::VF;
using simd::VI;
using simd::VU;
using simd::fma;
using simd::splat;

// Horner evaluation of c[0] + c[1] x + ... + c[N-1] x^(N-1).
template <size_t N>
inline VF poly(VF x, const float (&c)[N]) {
  VF acc = splat(c[N - 1]);
  for (size_t i = N - 1; i-- > 0;) acc = fma(acc, x, splat(c[i]));
  return acc;
}

// Round-to-nearest by the 1.5 * 2^23 trick: for |v| < 2^22, v + kRoundMagic holds round(v) in its
// low mantissa bits.
constexpr float kRoundMagic = 12582912.0f;
inline VI magic_to_int(VF t) { return VI(t) - VI(simd::splat(kRoundMagic)); }

// p * 2^n for n in [-252, 254], rounding once (also into the denormals).
inline VF scale(VF p, VI n) {
  const VI n1 = n >> 1;
  return p * simd::pow2i(n1) * simd::pow2i(n - n1);
}

// exp(a + b) = p * 2^n, for finite |a| <= 170 and |b| <= 2^-18 (the rounding error of a square up to
// 210, as erf and gelu pass it): n = round(a / ln2), p = e^r with r = a - n ln2 + b (Cody-Waite; the
// first product is exact).
struct ExpParts {
  VF p;
  VI n;
};
template <bool kAddend = true>
inline ExpParts exp_parts(VF a, VF b) {
  static constexpr float c[] = {4.999999404e-01f, 1.666652113e-01f, 4.166838899e-02f, 8.368735202e-03f,
                                1.381456037e-03f};
  const VF t = fma(a, splat(1.44269502f), splat(kRoundMagic));
  const VF k = t - splat(kRoundMagic);
  VF r = fma(k, splat(-0.693147182f), a);
  r = fma(k, splat(1.90465421e-09f), r);
  if constexpr (kAddend) r = r + b;
  return {fma(r * r, poly(r, c), r) + 1.0f, magic_to_int(t)};
}
// exp(a) as p * 2^n (no addend: one addition fewer).
inline ExpParts exp_parts(VF a) { return exp_parts<false>(a, VF{}); }

// Clamps to [lo, hi]; NaN stays NaN.
inline VF clamp_keep_nan(VF x, float lo, float hi) {
  x = x < lo ? splat(lo) : x;
  return x > hi ? splat(hi) : x;
}

inline VF exp(VF x) {
  // Within |x| <= 87 (the common case, one compare), 2^n is a normal float and one exact multiply
  // does, with no clamps. Beyond (or NaN): clamped (e^-104 rounds to 0, e^88.8 overflows; NaN gives
  // a NaN p), then the scaling that rounds once into the denormals or overflows.
  if (__builtin_expect(simd::all_le(simd::abs(x), 87.0f), 1)) {
    const ExpParts e = exp_parts(x);
    return e.p * simd::pow2i(e.n);
  }
  const ExpParts e = exp_parts(clamp_keep_nan(x, -104.0f, 88.8f));
  return scale(e.p, e.n);
}

// e^x - 1 for x <= 88, accurate near 0: 2^n (e^r - 1) + (2^n - 1) with one rounding.
inline VF expm1(VF x) {
  static constexpr float c[] = {5.000000000e-01f, 1.666666567e-01f, 4.166636243e-02f, 8.333389647e-03f,
                                1.394065446e-03f, 1.984588016e-04f};
  const VF xc = clamp_keep_nan(x, -88.0f, 88.0f);  // expm1(-88) rounds to -1; 2^-127 reads as 0
  const VF t = fma(xc, splat(1.44269502f), splat(kRoundMagic));
  const VF k = t - splat(kRoundMagic);
  VF r = fma(k, splat(-0.693147182f), xc);
  r = fma(k, splat(1.90465421e-09f), r);
  const VF em1r = fma(r * r, poly(r, c), r);
  const VF s = simd::pow2i(magic_to_int(t));
  const VF result = fma(s, em1r, s - 1.0f);
  return x == 0.0f ? x : result;  // keeps -0
}

// ln(m * 2^e) = e ln2 + ln(m), m in [sqrt(1/2), sqrt(2)), ln(1 + f) = f - f^2/2 + f^3 P(f)
// (the Cephes logf polynomial). For finite x > 0.
inline VF log_positive(VF x) {
  static constexpr float c[] = {3.3333331174e-1f, -2.4999993993e-1f, 2.0000714765e-1f, -1.6668057665e-1f,
                                1.4249322787e-1f,  -1.2420140846e-1f, 1.1676998740e-1f, -1.1514610310e-1f,
                                7.0376836292e-2f};
  const VI denormal = x < 1.17549435e-38f;
  const VF xs = denormal ? x * 8388608.0f : x;  // * 2^23
  const VU bits = simd::float_bits(xs);
  VI e = VI(bits >> 23) - 127 + (denormal & -23);
  const VF m = simd::bits_to_float((bits & 0x007fffffu) | 0x3f800000u);  // [1, 2)
  const VI high = m > 1.41421354f;
  const VF f = (high ? m * 0.5f : m) - 1.0f;
  e = e - high;  // high is -1 where set
  const VF ef = __builtin_convertvector(e, VF);
  const VF z = f * f;
  VF y = f * z * poly(f, c);
  y = fma(ef, splat(-2.12194440e-4f), y);
  y = fma(z, splat(-0.5f), y);
  return fma(ef, splat(0.693359375f), f + y);
}

inline VF log(VF x) {
  VF result = log_positive(x);
  result = x == __builtin_inff() ? x : result;
  result = x == 0.0f ? splat(-__builtin_inff()) : result;
  result = x < 0.0f ? splat(__builtin_nanf("")) : result;
  return simd::is_nan(x) ? x : result;
}

// ln(1 + e) for e in [0, 1] or NaN: ln(u) + (e - (u - 1)) / u with u = 1 + e rounded, so that tiny
// e gives e.
inline VF log1p_unit(VF e) {
  const VF u = 1.0f + e;
  return log_positive(u) + (e - (u - 1.0f)) / u;
}

inline VF tanh(VF x) {
  static constexpr float c[] = {-3.333328068e-01f, 1.333142072e-01f, -5.373779684e-02f, 2.063254453e-02f,
                                -5.697382148e-03f};
  const VF ax = simd::abs(x);
  const VF z = x * x;
  const VF small = fma(x, z * poly(z, c), x);  // x + x^3 P(x^2), keeps -0
  // (e^2|x| - 1) / (e^2|x| + 1); tanh(9.5) rounds to 1. NaN stays NaN.
  const VF em1 = expm1(2.0f * (ax > 9.5f ? splat(9.5f) : ax));
  const VF large = simd::copysign(em1 / (em1 + 2.0f), x);
  const VF result = ax < 0.625f ? small : large;
  return x == 0.0f ? x : result;  // keeps -0
}

// e^a for a in [-87, 0] (2^n is then a normal float; no range checks), for sigmoid, to a few ulps:
// a one-step range reduction (n ln2 off by at most 126 x 1.4e-9) and a degree-5 polynomial (1e-7
// relative), two multiply-adds fewer than exp.
inline VF exp_nonpositive(VF a) {
  static constexpr float c[] = {4.999923110e-01f, 1.666711420e-01f, 4.189014807e-02f, 8.312521502e-03f};
  const VF t = fma(a, splat(1.44269502f), splat(kRoundMagic));
  const VF r = fma(t - splat(kRoundMagic), splat(-0.693147182f), a);
  return (fma(r * r, poly(r, c), r) + 1.0f) * simd::pow2i(magic_to_int(t));
}

// 1 / (1 + e^-x), as e^x / (1 + e^x) for x < 0 (exp never overflows): one division.
inline VF sigmoid(VF x) {
  const VF magnitude = simd::abs(x);
  const VF e = __builtin_expect(simd::all_le(magnitude, 87.0f), 1) ? exp_nonpositive(-magnitude) : exp(-magnitude);
  return (x >= 0.0f ? splat(1.0f) : e) / (1.0f + e);
}

// ln(1 + e^x) = max(x, 0) + ln(1 + e^-|x|).
inline VF softplus(VF x) { return (x > 0.0f ? x : VF{}) + log1p_unit(exp(-simd::abs(x))); }

// erfc(z) e^(z^2) for z in [0, 4], a polynomial in t = 2 / (2 + z).
inline VF erfcx(VF z) {
  static constexpr float c[] = {7.938099770e-06f, 2.818597853e-01f, 2.851243317e-01f, 2.244450897e-01f,
                                2.812904119e-01f, -2.419261783e-01f, 6.676430702e-01f, -9.486745000e-01f,
                                6.283165812e-01f, -2.049782127e-01f, 2.689168043e-02f};
  const VF t = 2.0f / (2.0f + z);
  return poly(t, c);
}

// e^(-x^2) as p * 2^n for |x| <= 13, with x^2 split exactly (h + l) so that the large exponent
// loses no bits.
inline ExpParts exp_neg_square(VF x) {
  const VF h = x * x;
  return exp_parts(-h, -fma(x, x, -h));
}

inline VF erf(VF x) {
  static constexpr float c[] = {1.283791661e-01f, -3.761257529e-01f, 1.128277555e-01f, -2.680510655e-02f,
                                5.055626854e-03f, -6.342942361e-04f};
  const VF ax = simd::abs(x);
  const VF small = fma(x, poly(x * x, c), x);  // x + x Q(x^2), keeps -0
  const VF z = ax < 4.0f ? ax : splat(4.0f);  // erf(4) rounds to 1
  const ExpParts e = exp_neg_square(z);
  const VF large = simd::copysign(1.0f - scale(e.p * erfcx(z), e.n), x);
  const VF result = ax < 0.84375f ? small : large;
  return simd::is_nan(x) ? x : result;
}

// ---- gelu: x Phi(x), Phi(x) = erfc(-x / sqrt2) / 2. Negative x needs the small Phi(-|x|) to
// relative accuracy: Phi(-|x|) = erfcx(|x| / sqrt2) e^(-x^2 / 2) / 2, with x^2 split exactly so
// that the exponent loses no bits, and the result scaled by 2^n once.

// erfc(z) e^(z^2) for z in [0, 10.3], a polynomial in t = 2 / (2 + z). t's rounding error is
// compensated: the polynomial's slope would carry it into the result.
inline VF erfcx_wide(VF z) {
  static constexpr float c[] = {3.091344979e-06f, 2.820013762e-01f, 2.833219171e-01f, 2.376368791e-01f,
                                2.195876241e-01f, -4.808010533e-02f, 2.496546060e-01f, -3.289257884e-01f,
                                7.838306017e-03f, 1.953783482e-01f, -1.232730299e-01f, 2.485677414e-02f};
  const VF d = 2.0f + z;
  const VF e = z > 2.0f ? (z - d) + 2.0f : (2.0f - d) + z;  // 2 + z - d, exactly (Fast2Sum)
  const VF t = 2.0f / d;
  // 2 / (d + e) = t (1 - e / d) = t - t^2 e / 2
  return poly(fma(t * t, e * -0.5f, t), c);
}

// Phi is 0 below -14.5 (gelu(-14.5) rounds to -0), so -Infinity gives NaN like the reference
// formula.
inline VF gelu(VF x) {
  const VF ax = simd::abs(x);
  const VF a = ax < 14.5f ? ax : splat(14.5f);  // NaN too
  const VF h = a * a;
  const ExpParts e = exp_parts(h * -0.5f, fma(a, a, -h) * -0.5f);
  const VF half_erfcx = 0.5f * erfcx_wide(a * 0.707106781f);
  if (__builtin_expect(simd::all_le(ax, 13.0f), 1)) {  // 2^n is normal: one exact multiply scales
    const VF tail = half_erfcx * e.p * simd::pow2i(e.n);  // Phi(-|x|)
    return x < 0.0f ? x * half_erfcx * e.p * simd::pow2i(e.n) : x * (1.0f - tail);
  }
  const VF negative = ax <= 14.5f ? scale(x * half_erfcx * e.p, e.n) : x * 0.0f;
  const VF positive = x * (1.0f - scale(half_erfcx * e.p, e.n));
  return x < 0.0f ? negative : positive;
}

// ---- sin, cos, tan: x = k pi/2 + r, |r| <= pi/4 (+ rounding slack)

// Beyond this |x| (and for NaN / Infinity) the kernels use the C library: the reduction below
// keeps its accuracy up to here.
constexpr float kTrigLimit = 65536.0f;

struct TrigReduced {
  VF r;
  VI quadrant;  // k mod 4
};
// For |x| <= kTrigLimit: r = x - k pi/2 with pi/2 in three parts (Cody-Waite with FMA).
inline TrigReduced trig_reduce(VF x) {
  const VF xc = simd::abs(x) <= kTrigLimit ? x : VF{};
  const VF t = fma(xc, splat(0.636619747f), splat(kRoundMagic));
  const VF k = t - splat(kRoundMagic);
  VF r = fma(k, splat(-1.57079637f), xc);
  r = fma(k, splat(4.37113883e-08f), r);
  r = fma(k, splat(1.71512451e-15f), r);
  return {r, magic_to_int(t) & 3};
}

// sin and cos of a reduced r.
inline VF sin_reduced(VF r) {
  static constexpr float c[] = {-1.666666716e-01f, 8.333329111e-03f, -1.983916300e-04f, 2.716712061e-06f};
  const VF r2 = r * r;
  return fma(r * r2, poly(r2, c), r);
}
inline VF cos_reduced(VF r) {
  static constexpr float c[] = {4.166666791e-02f, -1.388888340e-03f, 2.479929572e-05f, -2.719244492e-07f};
  const VF r2 = r * r;
  return fma(r2 * r2, poly(r2, c), fma(r2, splat(-0.5f), splat(1.0f)));
}

inline VF negate_if(VI mask, VF v) { return simd::bits_to_float(simd::float_bits(v) ^ (VU(mask) & 0x80000000u)); }

inline VF sin(VF x) {
  const TrigReduced t = trig_reduce(x);
  const VF v = (t.quadrant & 1) != 0 ? cos_reduced(t.r) : sin_reduced(t.r);
  const VF result = negate_if((t.quadrant & 2) != 0, v);
  return x == 0.0f ? x : result;
}

inline VF cos(VF x) {
  const TrigReduced t = trig_reduce(x);
  const VF v = (t.quadrant & 1) != 0 ? sin_reduced(t.r) : cos_reduced(t.r);
  return negate_if(((t.quadrant + 1) & 2) != 0, v);
}

// tan(r) = r + r^3 T(r^2); odd quadrants give -1 / tan(r).
inline VF tan(VF x) {
  static constexpr float c[] = {3.333335519e-01f, 1.333245784e-01f, 5.408361182e-02f, 2.115804888e-02f,
                                1.116161048e-02f, -3.278728109e-04f, 4.584032111e-03f};
  const TrigReduced t = trig_reduce(x);
  const VF r2 = t.r * t.r;
  const VF tan_r = fma(t.r * r2, poly(r2, c), t.r);
  const VF result = (t.quadrant & 1) != 0 ? splat(-1.0f) / tan_r : tan_r;
  return x == 0.0f ? x : result;
}

}  // namespace vm
}  // namespace WEBNN_KERNEL_ISA
}  // namespace webnn
