// Portable reference kernels for the unary family. Each op is a functor with `apply(x, params)`
// on the compute type (float16 computes in float32 and rounds once on store); `kSignedInts`
// says whether it also runs on int8/int32/int64, where arithmetic wraps.
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/kernel_util.h"
#include "kernels/unary.h"
#include "runtime/thread_pool.h"

namespace webnn {

namespace {

constexpr size_t kElementGrain = 1 << 14;
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

// ---- the functor table: one struct per UnaryOp
struct Abs {
  static constexpr bool kSignedInts = true;
  template <class C>
  static C apply(C x, const UnaryParams&) {
    if constexpr (std::is_integral_v<C>) return x < 0 ? wrap_neg(x) : x;
    else return std::fabs(x);
  }
};
struct Neg {
  static constexpr bool kSignedInts = true;
  template <class C>
  static C apply(C x, const UnaryParams&) {
    if constexpr (std::is_integral_v<C>) return wrap_neg(x);
    else return -x;
  }
};
// -1, 0 or 1; zeros keep their sign and NaN stays NaN (the spec leaves NaN open).
struct Sign {
  static constexpr bool kSignedInts = true;
  template <class C>
  static C apply(C x, const UnaryParams&) {
    return x > C(0) ? C(1) : x < C(0) ? C(-1) : x;
  }
};
// max(0, x); NaN stays NaN.
struct Relu {
  static constexpr bool kSignedInts = true;
  template <class C>
  static C apply(C x, const UnaryParams&) {
    return x < C(0) ? C(0) : x;
  }
};

#define WEBNN_FLOAT_UNARY(Name, expr)                     \
  struct Name {                                           \
    static constexpr bool kSignedInts = false;            \
    static float apply(float x, const UnaryParams& p) {   \
      (void)p;                                            \
      return expr;                                        \
    }                                                     \
  };

WEBNN_FLOAT_UNARY(Ceil, std::ceil(x))
WEBNN_FLOAT_UNARY(Cos, std::cos(x))
WEBNN_FLOAT_UNARY(Erf, std::erf(x))
WEBNN_FLOAT_UNARY(Exp, std::exp(x))
WEBNN_FLOAT_UNARY(Floor, std::floor(x))
WEBNN_FLOAT_UNARY(Log, std::log(x))
WEBNN_FLOAT_UNARY(Reciprocal, 1.0f / x)
WEBNN_FLOAT_UNARY(RoundEven, std::nearbyint(x))  // the default rounding mode: ties to even
WEBNN_FLOAT_UNARY(Sin, std::sin(x))
WEBNN_FLOAT_UNARY(Sqrt, std::sqrt(x))
WEBNN_FLOAT_UNARY(Tan, std::tan(x))
WEBNN_FLOAT_UNARY(Tanh, std::tanh(x))
// max(0, x) + alpha * (exp(min(0, x)) - 1)
WEBNN_FLOAT_UNARY(Elu, x > 0 ? x : p.alpha * std::expm1(x))
// 0.5 * x * (1 + erf(x / sqrt(2))), as erfc in double to avoid cancellation for negative x.
WEBNN_FLOAT_UNARY(Gelu, float(0.5 * double(x) * std::erfc(-double(x) * kSqrtHalf)))
WEBNN_FLOAT_UNARY(HardSigmoid, clamp_nan(p.alpha * x + p.beta, 0.0f, 1.0f))
// x * max(0, min(6, x + 3)) / 6, exact 0 below -3 and x above 3 (also at +-Infinity).
WEBNN_FLOAT_UNARY(HardSwish, x <= -3 ? 0.0f : x >= 3 ? x : x * (x + 3) / 6)
WEBNN_FLOAT_UNARY(LeakyRelu, x >= 0 ? x : p.alpha * x)
WEBNN_FLOAT_UNARY(Linear, p.alpha * x + p.beta)
// 1 / (1 + exp(-x)), in the form that cannot overflow exp.
WEBNN_FLOAT_UNARY(Sigmoid, x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x)))
// ln(1 + exp(x)) = max(x, 0) + ln(1 + exp(-|x|)); NaN stays NaN.
WEBNN_FLOAT_UNARY(Softplus, (x > 0 ? x : 0.0f) + std::log1p(std::exp(-std::fabs(x))))
// x / (1 + |x|), +-1 at +-Infinity.
WEBNN_FLOAT_UNARY(Softsign, std::isinf(x) ? std::copysign(1.0f, x) : x / (1 + std::fabs(x)))

#undef WEBNN_FLOAT_UNARY

template <class F, class T>
Kernel unary_kernel(size_t count, UnaryParams params) {
  return [count, params](const KernelArgs& args) {
    const T* in = static_cast<const T*>(args.inputs[0]);
    T* out = static_cast<T*>(args.outputs[0]);
    args.pool->parallel_for(count, kElementGrain, [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) store(out + i, F::apply(load(in[i]), params));
    });
  };
}

template <class F>
Kernel unary_for_type(DataType type, size_t count, UnaryParams params) {
  return visit_type(type, [&](auto tag) -> Kernel {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<compute_t<T>> || (F::kSignedInts && std::is_signed_v<T>))
      return unary_kernel<F, T>(count, params);
    else
      throw_type_error(str_cat("internal: unary kernel has no ", data_type_name(type), " variant"));
  });
}

template <class T>
Kernel clamp_kernel(size_t count, T min_value, T max_value) {
  return [count, min_value, max_value](const KernelArgs& args) {
    const T* in = static_cast<const T*>(args.inputs[0]);
    T* out = static_cast<T*>(args.outputs[0]);
    const auto lo = load(min_value), hi = load(max_value);
    args.pool->parallel_for(count, kElementGrain, [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) {
        auto x = load(in[i]);  // NaN x, or a NaN bound, fails both comparisons
        store(out + i, x < lo ? lo : x > hi ? hi : x);
      }
    });
  };
}

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

template <class From, class To>
Kernel cast_kernel(size_t count) {
  return [count](const KernelArgs& args) {
    const From* in = static_cast<const From*>(args.inputs[0]);
    To* out = static_cast<To*>(args.outputs[0]);
    args.pool->parallel_for(count, kElementGrain, [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) store(out + i, convert<compute_t<To>>(load(in[i])));
    });
  };
}

Kernel copy_kernel(size_t bytes) {
  constexpr size_t kByteGrain = size_t(1) << 20;
  return [bytes](const KernelArgs& args) {
    const uint8_t* in = static_cast<const uint8_t*>(args.inputs[0]);
    uint8_t* out = static_cast<uint8_t*>(args.outputs[0]);
    args.pool->parallel_for(bytes, kByteGrain, [&](size_t begin, size_t end) {
      std::memcpy(out + begin, in + begin, end - begin);
    });
  };
}

float cast_scalar(double value, DataType type) {
  return float(number_to_double_as(Number::from_double(value), type));
}

}  // namespace

Kernel make_unary_kernel(UnaryOp op, DataType type, size_t count, UnaryParams p) {
  switch (op) {
    case UnaryOp::kAbs: return unary_for_type<Abs>(type, count, p);
    case UnaryOp::kCeil: return unary_for_type<Ceil>(type, count, p);
    case UnaryOp::kCos: return unary_for_type<Cos>(type, count, p);
    case UnaryOp::kErf: return unary_for_type<Erf>(type, count, p);
    case UnaryOp::kExp: return unary_for_type<Exp>(type, count, p);
    case UnaryOp::kFloor: return unary_for_type<Floor>(type, count, p);
    case UnaryOp::kLog: return unary_for_type<Log>(type, count, p);
    case UnaryOp::kNeg: return unary_for_type<Neg>(type, count, p);
    case UnaryOp::kReciprocal: return unary_for_type<Reciprocal>(type, count, p);
    case UnaryOp::kRoundEven: return unary_for_type<RoundEven>(type, count, p);
    case UnaryOp::kSign: return unary_for_type<Sign>(type, count, p);
    case UnaryOp::kSin: return unary_for_type<Sin>(type, count, p);
    case UnaryOp::kSqrt: return unary_for_type<Sqrt>(type, count, p);
    case UnaryOp::kTan: return unary_for_type<Tan>(type, count, p);
    case UnaryOp::kElu: return unary_for_type<Elu>(type, count, p);
    case UnaryOp::kGelu: return unary_for_type<Gelu>(type, count, p);
    case UnaryOp::kHardSigmoid: return unary_for_type<HardSigmoid>(type, count, p);
    case UnaryOp::kHardSwish: return unary_for_type<HardSwish>(type, count, p);
    case UnaryOp::kLeakyRelu: return unary_for_type<LeakyRelu>(type, count, p);
    case UnaryOp::kLinear: return unary_for_type<Linear>(type, count, p);
    case UnaryOp::kRelu: return unary_for_type<Relu>(type, count, p);
    case UnaryOp::kSigmoid: return unary_for_type<Sigmoid>(type, count, p);
    case UnaryOp::kSoftplus: return unary_for_type<Softplus>(type, count, p);
    case UnaryOp::kSoftsign: return unary_for_type<Softsign>(type, count, p);
    case UnaryOp::kTanh: return unary_for_type<Tanh>(type, count, p);
  }
  throw_type_error("internal: unknown unary op");
}

Kernel make_clamp_kernel(DataType type, size_t count, const void* min_value, const void* max_value) {
  return visit_type(type, [&](auto tag) {
    using T = decltype(tag);
    T lo, hi;
    std::memcpy(&lo, min_value, sizeof(T));
    std::memcpy(&hi, max_value, sizeof(T));
    return clamp_kernel<T>(count, lo, hi);
  });
}

Kernel make_cast_kernel(DataType from, DataType to, size_t count) {
  if (from == to) return copy_kernel(count * data_type_size(from));  // exact, NaN payloads too
  return visit_type(from, [&](auto from_tag) {
    return visit_type(to, [&](auto to_tag) { return cast_kernel<decltype(from_tag), decltype(to_tag)>(count); });
  });
}

UnaryParams unary_params(const OpView& op, DataType type) {
  UnaryParams params;
  for (const ParamSpec& spec : op.def().options) {
    if (spec.name == "alpha") params.alpha = cast_scalar(op.real("alpha"), type);
    if (spec.name == "beta") params.beta = cast_scalar(op.real("beta"), type);
  }
  return params;
}

}  // namespace webnn
