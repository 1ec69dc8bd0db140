// The unary family's inner loops (UnaryLoops), compiled once per ISA level (see kernel_isa.h).
// Each op is a functor with `apply(x, params)` on the compute type (float16 computes in float32
// and rounds once on store); `kSignedInts` says whether it also runs on int8/int32/int64, where
// arithmetic wraps. At the AVX levels the float ops also have `vec(x, params)` on float vectors
// (vector_math.h for the transcendentals), used for float32 and float16; lanes with
// !(|x| <= kVectorLimit) are recomputed by `apply`.
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/kernel_isa.h"
#include "kernels/unary/unary.h"
#if WEBNN_KERNEL_ISA_LEVEL >= 1
#include "kernels/vector_math.h"
#endif

namespace webnn {
namespace WEBNN_KERNEL_ISA {
namespace {

constexpr double kSqrtHalf = 0.70710678118654752440;

// Reinterprets the low bits of an integer as R (two's complement), without undefined behaviour.
template <class R, class C>
inline R wrap_cast(C v) {
  using U = std::make_unsigned_t<R>;
  U bits = U(v);  // conversion to unsigned is modular
  R out;
  std::memcpy(&out, &bits, sizeof(out));
  return out;
}
// -x with two's-complement wrap: -INT_MIN is INT_MIN.
template <class C>
inline C wrap_neg(C x) {
  using U = std::make_unsigned_t<C>;
  return wrap_cast<C>(U(U(0) - U(x)));
}
// Clamps to [lo, hi]; NaN passes through.
inline float clamp_nan(float x, float lo, float hi) { return x < lo ? lo : x > hi ? hi : x; }

#if WEBNN_KERNEL_ISA_LEVEL >= 1
constexpr float kNoLimit = std::numeric_limits<float>::infinity();
inline VF splat(float x) { return simd::splat(x); }
inline VF clamp_nan(VF x, float lo, float hi) { return x < lo ? splat(lo) : x > hi ? splat(hi) : x; }
#define WEBNN_VECTOR_FORM(vexpr, limit)                \
  static constexpr float kVectorLimit = limit;         \
  static VF vec(VF x, const UnaryParams& p) {          \
    (void)p;                                           \
    return vexpr;                                      \
  }
#else
#define WEBNN_VECTOR_FORM(vexpr, limit)
#endif

// ---- the functor table: one struct per UnaryOp
struct Abs {
  static constexpr bool kSignedInts = true;
  template <class C>
  static C apply(C x, const UnaryParams&) {
    if constexpr (std::is_integral_v<C>) return x < 0 ? wrap_neg(x) : x;
    else return std::fabs(x);
  }
  WEBNN_VECTOR_FORM(simd::abs(x), kNoLimit)
};
struct Neg {
  static constexpr bool kSignedInts = true;
  template <class C>
  static C apply(C x, const UnaryParams&) {
    if constexpr (std::is_integral_v<C>) return wrap_neg(x);
    else return -x;
  }
  WEBNN_VECTOR_FORM(-x, kNoLimit)
};
// -1, 0 or 1; zeros keep their sign and NaN stays NaN (the spec leaves NaN open).
struct Sign {
  static constexpr bool kSignedInts = true;
  template <class C>
  static C apply(C x, const UnaryParams&) {
    return x > C(0) ? C(1) : x < C(0) ? C(-1) : x;
  }
  WEBNN_VECTOR_FORM(x > 0.0f ? splat(1.0f) : x < 0.0f ? splat(-1.0f) : x, kNoLimit)
};
// max(0, x); NaN stays NaN.
struct Relu {
  static constexpr bool kSignedInts = true;
  template <class C>
  static C apply(C x, const UnaryParams&) {
    return x < C(0) ? C(0) : x;
  }
  WEBNN_VECTOR_FORM(x < 0.0f ? VF{} : x, kNoLimit)
};

#define WEBNN_FLOAT_UNARY(Name, expr, vexpr, limit)    \
  struct Name {                                         \
    static constexpr bool kSignedInts = false;          \
    static float apply(float x, const UnaryParams& p) { \
      (void)p;                                          \
      return expr;                                      \
    }                                                   \
    WEBNN_VECTOR_FORM(vexpr, limit)                     \
  };

WEBNN_FLOAT_UNARY(Ceil, std::ceil(x), simd::round<_MM_FROUND_TO_POS_INF>(x), kNoLimit)
WEBNN_FLOAT_UNARY(Cos, std::cos(x), vm::cos(x), vm::kTrigLimit)
WEBNN_FLOAT_UNARY(Erf, std::erf(x), vm::erf(x), kNoLimit)
WEBNN_FLOAT_UNARY(Exp, std::exp(x), vm::exp(x), kNoLimit)
WEBNN_FLOAT_UNARY(Floor, std::floor(x), simd::round<_MM_FROUND_TO_NEG_INF>(x), kNoLimit)
WEBNN_FLOAT_UNARY(Log, std::log(x), vm::log(x), kNoLimit)
WEBNN_FLOAT_UNARY(Reciprocal, 1.0f / x, splat(1.0f) / x, kNoLimit)
// The default rounding mode: ties to even.
WEBNN_FLOAT_UNARY(RoundEven, std::nearbyint(x), simd::round<_MM_FROUND_TO_NEAREST_INT>(x), kNoLimit)
WEBNN_FLOAT_UNARY(Sin, std::sin(x), vm::sin(x), vm::kTrigLimit)
WEBNN_FLOAT_UNARY(Sqrt, std::sqrt(x), simd::sqrt(x), kNoLimit)
WEBNN_FLOAT_UNARY(Tan, std::tan(x), vm::tan(x), vm::kTrigLimit)
WEBNN_FLOAT_UNARY(Tanh, std::tanh(x), vm::tanh(x), kNoLimit)
// max(0, x) + alpha * (exp(min(0, x)) - 1)
WEBNN_FLOAT_UNARY(Elu, x > 0 ? x : p.alpha * std::expm1(x), x > 0.0f ? x : p.alpha * vm::expm1(x), kNoLimit)
// 0.5 * x * (1 + erf(x / sqrt(2))), as erfc in double to avoid cancellation for negative x.
WEBNN_FLOAT_UNARY(Gelu, float(0.5 * double(x) * std::erfc(-double(x) * kSqrtHalf)), vm::gelu(x), kNoLimit)
WEBNN_FLOAT_UNARY(HardSigmoid, clamp_nan(p.alpha * x + p.beta, 0.0f, 1.0f),
                  clamp_nan(simd::unfused(p.alpha * x) + p.beta, 0.0f, 1.0f), kNoLimit)
// x * max(0, min(6, x + 3)) / 6, exact 0 below -3 and x above 3 (also at +-Infinity).
WEBNN_FLOAT_UNARY(HardSwish, x <= -3 ? 0.0f : x >= 3 ? x : x * (x + 3) / 6,
                  x <= -3.0f ? VF{} : x >= 3.0f ? x : x * (x + 3.0f) / 6.0f, kNoLimit)
WEBNN_FLOAT_UNARY(LeakyRelu, x >= 0 ? x : p.alpha * x, x >= 0.0f ? x : p.alpha * x, kNoLimit)
WEBNN_FLOAT_UNARY(Linear, p.alpha * x + p.beta, simd::unfused(p.alpha * x) + p.beta, kNoLimit)
// 1 / (1 + exp(-x)), in the form that cannot overflow exp.
WEBNN_FLOAT_UNARY(Sigmoid, x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x)), vm::sigmoid(x),
                  kNoLimit)
// x * sigmoid(x), rounded as sigmoid then mul are: the fusion of the two gives the same values.
WEBNN_FLOAT_UNARY(Silu, x * Sigmoid::apply(x, p), x * vm::sigmoid(x), kNoLimit)
// The nearest float16 value (ties to even; overflow to +-Infinity), as a float16 store rounds.
WEBNN_FLOAT_UNARY(RoundToHalf, half_to_float(float_to_half(x)), simd::round_to_half(x), kNoLimit)
// ln(1 + exp(x)) = max(x, 0) + ln(1 + exp(-|x|)); NaN stays NaN.
WEBNN_FLOAT_UNARY(Softplus, (x > 0 ? x : 0.0f) + std::log1p(std::exp(-std::fabs(x))), vm::softplus(x),
                  kNoLimit)
// x / (1 + |x|), +-1 at +-Infinity.
WEBNN_FLOAT_UNARY(Softsign, std::isinf(x) ? std::copysign(1.0f, x) : x / (1 + std::fabs(x)),
                  simd::abs(x) == __builtin_inff() ? simd::copysign(splat(1.0f), x) : x / (1.0f + simd::abs(x)),
                  kNoLimit)

#undef WEBNN_FLOAT_UNARY
#undef WEBNN_VECTOR_FORM

// ---- loops

template <class F, class T>
void unary_loop(const void* in_ptr, void* out_ptr, size_t count, const UnaryParams& params) {
  const T* in = static_cast<const T*>(in_ptr);
  T* out = static_cast<T*>(out_ptr);
#if WEBNN_KERNEL_ISA_LEVEL >= 1
  if constexpr (kIsFloat<T>) {
    for_lanes(count, [&](size_t i, size_t n) {
      const VF x = vload_part(in + i, n);
      VF y = F::vec(x, params);
      if constexpr (F::kVectorLimit < kNoLimit) {
        if (simd::any(~(simd::abs(x) <= F::kVectorLimit))) {  // NaN too
          float xs[kLanes], ys[kLanes];
          simd::store(xs, x);
          simd::store(ys, y);
          for (size_t j = 0; j < n; ++j)
            if (!(std::fabs(xs[j]) <= F::kVectorLimit)) ys[j] = F::apply(xs[j], params);
          y = simd::load<VF>(ys);
        }
      }
      vstore_part<false>(out + i, y, n);
    });
    return;
  }
#endif
  for (size_t i = 0; i < count; ++i) cstore(out + i, F::apply(cload(in[i]), params));
}

template <class F>
UnaryLoopFn unary_for_type(DataType type) {
  return visit_type(type, [](auto tag) -> UnaryLoopFn {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<compute_t<T>> || (F::kSignedInts && std::is_signed_v<T>))
      return unary_loop<F, T>;
    else
      return nullptr;
  });
}

UnaryLoopFn unary_fn(UnaryOp op, DataType type) {
  switch (op) {
    case UnaryOp::kAbs: return unary_for_type<Abs>(type);
    case UnaryOp::kCeil: return unary_for_type<Ceil>(type);
    case UnaryOp::kCos: return unary_for_type<Cos>(type);
    case UnaryOp::kErf: return unary_for_type<Erf>(type);
    case UnaryOp::kExp: return unary_for_type<Exp>(type);
    case UnaryOp::kFloor: return unary_for_type<Floor>(type);
    case UnaryOp::kLog: return unary_for_type<Log>(type);
    case UnaryOp::kNeg: return unary_for_type<Neg>(type);
    case UnaryOp::kReciprocal: return unary_for_type<Reciprocal>(type);
    case UnaryOp::kRoundEven: return unary_for_type<RoundEven>(type);
    case UnaryOp::kSign: return unary_for_type<Sign>(type);
    case UnaryOp::kSin: return unary_for_type<Sin>(type);
    case UnaryOp::kSqrt: return unary_for_type<Sqrt>(type);
    case UnaryOp::kTan: return unary_for_type<Tan>(type);
    case UnaryOp::kElu: return unary_for_type<Elu>(type);
    case UnaryOp::kGelu: return unary_for_type<Gelu>(type);
    case UnaryOp::kHardSigmoid: return unary_for_type<HardSigmoid>(type);
    case UnaryOp::kHardSwish: return unary_for_type<HardSwish>(type);
    case UnaryOp::kLeakyRelu: return unary_for_type<LeakyRelu>(type);
    case UnaryOp::kLinear: return unary_for_type<Linear>(type);
    case UnaryOp::kRelu: return unary_for_type<Relu>(type);
    case UnaryOp::kSigmoid: return unary_for_type<Sigmoid>(type);
    case UnaryOp::kSoftplus: return unary_for_type<Softplus>(type);
    case UnaryOp::kSoftsign: return unary_for_type<Softsign>(type);
    case UnaryOp::kTanh: return unary_for_type<Tanh>(type);
    case UnaryOp::kSilu: return unary_for_type<Silu>(type);
    case UnaryOp::kRoundToHalf: return unary_for_type<RoundToHalf>(type);
  }
  return nullptr;
}

// ---- clamp

template <class T>
void clamp_loop(const void* in_ptr, void* out_ptr, size_t count, const void* min_value, const void* max_value) {
  const T* in = static_cast<const T*>(in_ptr);
  T* out = static_cast<T*>(out_ptr);
  T lo_bits, hi_bits;
  std::memcpy(&lo_bits, min_value, sizeof(T));
  std::memcpy(&hi_bits, max_value, sizeof(T));
  const auto lo = cload(lo_bits), hi = cload(hi_bits);
#if WEBNN_KERNEL_ISA_LEVEL >= 1
  const LaneVec<T> vlo = vsplat<T>(lo), vhi = vsplat<T>(hi);
  for_lanes(count, [&](size_t i, size_t n) {
    const LaneVec<T> x = vload_part(in + i, n);  // NaN x, or a NaN bound, fails both comparisons
    vstore_part<false>(out + i, x < vlo ? vlo : x > vhi ? vhi : x, n);
  });
#else
  for (size_t i = 0; i < count; ++i) {
    const auto x = cload(in[i]);  // NaN x, or a NaN bound, fails both comparisons
    cstore(out + i, x < lo ? lo : x > hi ? hi : x);
  }
#endif
}

ClampLoopFn clamp_fn(DataType type) {
  return visit_type(type, [](auto tag) -> ClampLoopFn { return clamp_loop<decltype(tag)>; });
}

// ---- cast

// cast() element conversion. To a float type: nearest value (float16 rounds once on store),
// overflow to +-Infinity. Integer to integer: keep the low bits (two's-complement wrap).
// Float to integer truncates toward zero; out of range is implementation-defined in the spec:
// here it saturates to the target's range (+-Infinity too) and NaN becomes 0.
template <class R, class C>
inline R convert(C v) {
  if constexpr (std::is_floating_point_v<R>) {
    return R(v);
  } else if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(v)) return 0;
    const double t = std::trunc(double(v));
    if (t <= double(std::numeric_limits<R>::min())) return std::numeric_limits<R>::min();
    if (t >= double(std::numeric_limits<R>::max())) return std::numeric_limits<R>::max();
    return R(t);
  } else {
    return wrap_cast<R>(v);
  }
}

#if WEBNN_KERNEL_ISA_LEVEL >= 1
// The casts with vector paths: between float types, and between float types or int32 / uint32 /
// int8 / uint8 and those integers (not uint32 <-> float).
template <class T>
constexpr bool kSmallInt = std::is_same_v<T, int32_t> || std::is_same_v<T, uint32_t> ||
                           std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>;
template <class From, class To>
constexpr bool kCastVector = (kIsFloat<From> || kSmallInt<From>) && (kIsFloat<To> || kSmallInt<To>) &&
                             !(std::is_same_v<From, uint32_t> && kIsFloat<To>) &&
                             !(kIsFloat<From> && std::is_same_v<To, uint32_t>);

// kLanes integers, sign- or zero-extended to int32 lanes.
template <class T>
inline VI load_int_lanes(const T* p) {
  if constexpr (sizeof(T) == 4) return simd::load<VI>(p);
  else if constexpr (std::is_signed_v<T>) return simd::widen_i8(reinterpret_cast<const uint8_t*>(p));
  else return simd::widen_u8(p);
}
// The low sizeof(T) bytes of each lane.
template <class T>
inline void store_int_lanes(T* p, VI v) {
  if constexpr (sizeof(T) == 4) simd::store(p, v);
  else simd::narrow_u8(reinterpret_cast<uint8_t*>(p), v);
}

// convert<To>() on kLanes elements.
template <class From, class To>
inline void convert_lanes(const From* in, To* out) {
  if constexpr (kIsFloat<From> && kIsFloat<To>) {
    vstore(out, vload(in));
  } else if constexpr (kIsFloat<To>) {
    vstore(out, __builtin_convertvector(load_int_lanes(in), VF));
  } else if constexpr (kIsFloat<From>) {
    const VF x = vload(in);
    const VF t = simd::round<_MM_FROUND_TO_ZERO>(x);
    constexpr float lo = float(std::numeric_limits<To>::min()), hi = float(std::numeric_limits<To>::max());
    const VI below = t <= lo, above = t >= hi;  // NaN: neither
    const VI in_range = __builtin_convertvector((below | above | simd::is_nan(x)) ? VF{} : t, VI);
    const VI result = below ? simd::splat_i(std::numeric_limits<To>::min())
                            : above ? simd::splat_i(std::numeric_limits<To>::max()) : in_range;
    store_int_lanes(out, result);
  } else {
    store_int_lanes(out, load_int_lanes(in));
  }
}
#endif

template <class From, class To>
void cast_loop(const void* in_ptr, void* out_ptr, size_t count) {
  const From* in = static_cast<const From*>(in_ptr);
  To* out = static_cast<To*>(out_ptr);
#if WEBNN_KERNEL_ISA_LEVEL >= 1
  if constexpr (kCastVector<From, To>) {
    for_lanes(count, [&](size_t i, size_t n) {
      if (n == kLanes) return convert_lanes(in + i, out + i);
      From staged_in[kLanes] = {};
      To staged_out[kLanes];
      std::memcpy(staged_in, in + i, n * sizeof(From));
      convert_lanes(staged_in, staged_out);
      std::memcpy(out + i, staged_out, n * sizeof(To));
    });
    return;
  }
#endif
  for (size_t i = 0; i < count; ++i) cstore(out + i, convert<compute_t<To>>(cload(in[i])));
}

CastLoopFn cast_fn(DataType from, DataType to) {
  return visit_type(from, [to](auto from_tag) {
    return visit_type(to, [](auto to_tag) -> CastLoopFn { return cast_loop<decltype(from_tag), decltype(to_tag)>; });
  });
}

constexpr UnaryLoops kUnaryLoops = {unary_fn, clamp_fn, cast_fn};

}  // namespace
}  // namespace WEBNN_KERNEL_ISA
}  // namespace webnn
