// The element-wise family's inner loops (ElementwiseLoops), compiled once per ISA level (see
// kernel_isa.h): the scalar definition of every op, plus at the AVX levels vector paths for the
// float types and the integer ops that have one. Both compute the same values.
#include <cmath>
#include <cstring>
#include <limits>
#include <tuple>
#include <utility>

#include "kernels/elementwise/elementwise.h"
#include "kernels/kernel_isa.h"

namespace webnn {
namespace WEBNN_KERNEL_ISA {
namespace {

// ---- scalar functions (the reference semantics)

// Integer arithmetic wraps (two's complement) instead of overflowing.
template <class C>
inline C wrap_add(C a, C b) {
  if constexpr (std::is_integral_v<C>) return C(std::make_unsigned_t<C>(a) + std::make_unsigned_t<C>(b));
  else return a + b;
}
template <class C>
inline C wrap_sub(C a, C b) {
  if constexpr (std::is_integral_v<C>) return C(std::make_unsigned_t<C>(a) - std::make_unsigned_t<C>(b));
  else return a - b;
}
template <class C>
inline C wrap_mul(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    using U = std::conditional_t<(sizeof(C) < sizeof(unsigned)), unsigned, std::make_unsigned_t<C>>;
    return C(U(a) * U(b));
  } else {
    return a * b;
  }
}
// Integer division truncates toward zero; the spec leaves division by zero open: it gives 0.
template <class C>
inline C safe_div(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<C>)
      if (b == C(-1)) return wrap_sub<C>(0, a);
    return C(a / b);
  } else {
    return a / b;
  }
}
// Exact wrapping integer power; a negative exponent gives trunc(1 / base^-exponent) (0 for base 0).
template <class C>
inline C int_pow(C base, C exponent) {
  if constexpr (std::is_signed_v<C>)
    if (exponent < 0) return base == 1 ? 1 : base == C(-1) ? ((exponent & 1) ? C(-1) : C(1)) : C(0);
  C result = 1;
  while (exponent) {
    if (exponent & 1) result = wrap_mul(result, base);
    base = wrap_mul(base, base);
    exponent = C(exponent >> 1);
  }
  return result;
}
// IEEE 754-2019 maximum/minimum: NaN propagates and -0 < +0.
template <class C>
inline C maximum(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<C>::quiet_NaN();
    if (a == b) return std::signbit(a) ? b : a;
  }
  return a > b ? a : b;
}
template <class C>
inline C minimum(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<C>::quiet_NaN();
    if (a == b) return std::signbit(a) ? a : b;
  }
  return a < b ? a : b;
}

template <BinaryOp Op, class C>
inline C apply_binary(C a, C b) {
  if constexpr (Op == BinaryOp::kAdd) return wrap_add(a, b);
  if constexpr (Op == BinaryOp::kSub) return wrap_sub(a, b);
  if constexpr (Op == BinaryOp::kMul) return wrap_mul(a, b);
  if constexpr (Op == BinaryOp::kDiv) return safe_div(a, b);
  if constexpr (Op == BinaryOp::kMax) return maximum(a, b);
  if constexpr (Op == BinaryOp::kMin) return minimum(a, b);
  if constexpr (Op == BinaryOp::kPow) {
    if constexpr (std::is_floating_point_v<C>) return C(std::pow(a, b));
    else return int_pow(a, b);
  }
  if constexpr (Op == BinaryOp::kPrelu) {  // a: input, b: slope
    if constexpr (std::is_unsigned_v<C>) return a;
    else return a < C(0) ? wrap_mul(b, a) : a;
  }
}

template <BinaryPredicate Op, class C>
inline uint8_t apply_binary_predicate(C a, C b) {
  if constexpr (Op == BinaryPredicate::kEqual) return a == b;
  if constexpr (Op == BinaryPredicate::kNotEqual) return a != b;
  if constexpr (Op == BinaryPredicate::kGreater) return a > b;
  if constexpr (Op == BinaryPredicate::kGreaterOrEqual) return a >= b;
  if constexpr (Op == BinaryPredicate::kLesser) return a < b;
  if constexpr (Op == BinaryPredicate::kLesserOrEqual) return a <= b;
  if constexpr (Op == BinaryPredicate::kLogicalAnd) return (a != C(0)) & (b != C(0));
  if constexpr (Op == BinaryPredicate::kLogicalOr) return (a != C(0)) | (b != C(0));
  if constexpr (Op == BinaryPredicate::kLogicalXor) return (a != C(0)) ^ (b != C(0));
}

template <UnaryPredicate Op, class C>
inline uint8_t apply_unary_predicate(C a) {
  if constexpr (Op == UnaryPredicate::kLogicalNot) return a == C(0);
  if constexpr (Op == UnaryPredicate::kIsNaN) {
    if constexpr (std::is_floating_point_v<C>) return std::isnan(a);
    else return 0;
  }
  if constexpr (Op == UnaryPredicate::kIsInfinite) {
    if constexpr (std::is_floating_point_v<C>) return std::isinf(a);
    else return 0;
  }
}

// ---- scalar loops

// out[i] = fn(src_0[i * stride_0], ...) for i < count, on values loaded as compute types. The
// common stride patterns get loops of their own.
template <class Out, class... In, class Fn, size_t... K>
void map_scalar(const Fn& fn, Out* out, size_t count, const void* const* src, const size_t* stride,
                std::index_sequence<K...>) {
  if (((stride[K] == 1) && ...)) {
    for (size_t i = 0; i < count; ++i) cstore(out + i, fn(cload(static_cast<const In*>(src[K])[i])...));
    return;
  }
  if constexpr (sizeof...(In) == 2) {  // one operand constant along the block: hoist its load
    using A = std::tuple_element_t<0, std::tuple<In...>>;
    using B = std::tuple_element_t<1, std::tuple<In...>>;
    const A* a = static_cast<const A*>(src[0]);
    const B* b = static_cast<const B*>(src[1]);
    if (stride[0] == 1 && stride[1] == 0) {
      const auto vb = cload(*b);
      for (size_t i = 0; i < count; ++i) cstore(out + i, fn(cload(a[i]), vb));
      return;
    }
    if (stride[0] == 0 && stride[1] == 1) {
      const auto va = cload(*a);
      for (size_t i = 0; i < count; ++i) cstore(out + i, fn(va, cload(b[i])));
      return;
    }
  }
  for (size_t i = 0; i < count; ++i) cstore(out + i, fn(cload(static_cast<const In*>(src[K])[i * stride[K]])...));
}

#if WEBNN_KERNEL_ISA_LEVEL >= 1
// ---- vector loops

// out[i..] = fn(lanes of src_0, ...) kLanes at a time; each operand is contiguous (stride 1) or
// broadcast (stride 0; its element is splatted into a buffer read with step 0). kMask: fn returns
// lane masks, stored as uint8 0 / 1.
template <class T>
struct LaneSource {
  T splat[kLanes];
  const T* p;
  size_t step;
  void init(const void* src, size_t stride) {
    p = static_cast<const T*>(src);
    step = stride ? kLanes : 0;
    if (stride) return;
    for (T& e : splat) e = *p;
    p = splat;
  }
  LaneVec<T> next(size_t count) {
    const LaneVec<T> v = step ? vload_part(p, count) : vload(p);
    p += step;
    return v;
  }
};

template <bool kMask, class Out, class... In, class Fn, size_t... K>
void map_vector(const Fn& fn, Out* out, size_t count, const void* const* src, const size_t* stride,
                std::index_sequence<K...>) {
  std::tuple<LaneSource<In>...> sources;
  (std::get<K>(sources).init(src[K], stride[K]), ...);
  for_lanes(count, [&](size_t i, size_t n) { vstore_part<kMask>(out + i, fn(std::get<K>(sources).next(n)...), n); });
}

inline bool unit_strides(const size_t* stride, size_t n) {
  for (size_t k = 0; k < n; ++k)
    if (stride[k] > 1) return false;
  return true;
}

inline VF quiet_nan() { return simd::splat(std::numeric_limits<float>::quiet_NaN()); }

// The binary ops on float vectors (same roundings as apply_binary on float).
template <BinaryOp Op>
inline VF binary_vector(VF a, VF b) {
  if constexpr (Op == BinaryOp::kAdd) return a + b;
  if constexpr (Op == BinaryOp::kSub) return a - b;
  if constexpr (Op == BinaryOp::kMul) return a * b;
  if constexpr (Op == BinaryOp::kDiv) return a / b;
  if constexpr (Op == BinaryOp::kMax) {
    VF r = a > b ? a : b;
    r = a == b ? (VI(a) < 0 ? b : a) : r;
    return (simd::is_nan(a) | simd::is_nan(b)) ? quiet_nan() : r;
  }
  if constexpr (Op == BinaryOp::kMin) {
    VF r = a < b ? a : b;
    r = a == b ? (VI(a) < 0 ? a : b) : r;
    return (simd::is_nan(a) | simd::is_nan(b)) ? quiet_nan() : r;
  }
  if constexpr (Op == BinaryOp::kPrelu) return a < 0.0f ? b * a : a;
}
// ... and on integer vectors (wrapping).
template <BinaryOp Op, class V>
inline V binary_vector(V a, V b) {
  using U = simd::Vec<std::make_unsigned_t<std::remove_cv_t<std::remove_reference_t<decltype(a[0])>>>>;
  if constexpr (Op == BinaryOp::kAdd) return V(U(a) + U(b));
  if constexpr (Op == BinaryOp::kSub) return V(U(a) - U(b));
  if constexpr (Op == BinaryOp::kMul) return V(U(a) * U(b));
  if constexpr (Op == BinaryOp::kMax) return a > b ? a : b;
  if constexpr (Op == BinaryOp::kMin) return a < b ? a : b;
  if constexpr (Op == BinaryOp::kPrelu) return a < V{} ? V(U(b) * U(a)) : a;  // unsigned: never < 0
}
template <BinaryOp Op, class T>
constexpr bool kBinaryVector = Op != BinaryOp::kPow && (kIsFloat<T> || Op != BinaryOp::kDiv);

template <BinaryPredicate Op, class V>
inline auto binary_predicate_vector(V a, V b) {
  if constexpr (Op == BinaryPredicate::kEqual) return a == b;
  if constexpr (Op == BinaryPredicate::kNotEqual) return a != b;
  if constexpr (Op == BinaryPredicate::kGreater) return a > b;
  if constexpr (Op == BinaryPredicate::kGreaterOrEqual) return a >= b;
  if constexpr (Op == BinaryPredicate::kLesser) return a < b;
  if constexpr (Op == BinaryPredicate::kLesserOrEqual) return a <= b;
  if constexpr (Op == BinaryPredicate::kLogicalAnd) return (a != V{}) & (b != V{});
  if constexpr (Op == BinaryPredicate::kLogicalOr) return (a != V{}) | (b != V{});
  if constexpr (Op == BinaryPredicate::kLogicalXor) return (a != V{}) ^ (b != V{});
}

template <UnaryPredicate Op, class V>
inline auto unary_predicate_vector(V a) {
  if constexpr (Op == UnaryPredicate::kLogicalNot) return a == V{};
  if constexpr (Op == UnaryPredicate::kIsNaN) return simd::is_nan(a);
  if constexpr (Op == UnaryPredicate::kIsInfinite) return simd::abs(a) == __builtin_inff();
}
template <UnaryPredicate Op, class T>
constexpr bool kUnaryPredicateVector = Op == UnaryPredicate::kLogicalNot || kIsFloat<T>;
#endif

// ---- block functions

template <BinaryOp Op, class T>
void binary_block(void* out, size_t count, const void* const* src, const size_t* stride) {
  constexpr auto seq = std::make_index_sequence<2>{};
#if WEBNN_KERNEL_ISA_LEVEL >= 1
  if constexpr (kBinaryVector<Op, T>) {
    if (unit_strides(stride, 2)) {
      const auto fn = [](auto a, auto b) { return binary_vector<Op>(a, b); };
      return map_vector<false, T, T, T>(fn, static_cast<T*>(out), count, src, stride, seq);
    }
  }
#endif
  const auto fn = [](auto a, auto b) { return apply_binary<Op>(a, b); };
  map_scalar<T, T, T>(fn, static_cast<T*>(out), count, src, stride, seq);
}

template <BinaryPredicate Op, class T>
void binary_predicate_block(void* out, size_t count, const void* const* src, const size_t* stride) {
  constexpr auto seq = std::make_index_sequence<2>{};
#if WEBNN_KERNEL_ISA_LEVEL >= 1
  if (unit_strides(stride, 2)) {
    const auto fn = [](auto a, auto b) { return binary_predicate_vector<Op>(a, b); };
    return map_vector<true, uint8_t, T, T>(fn, static_cast<uint8_t*>(out), count, src, stride, seq);
  }
#endif
  const auto fn = [](auto a, auto b) { return apply_binary_predicate<Op>(a, b); };
  map_scalar<uint8_t, T, T>(fn, static_cast<uint8_t*>(out), count, src, stride, seq);
}

template <UnaryPredicate Op, class T>
void unary_predicate_block(void* out, size_t count, const void* const* src, const size_t* stride) {
  constexpr auto seq = std::make_index_sequence<1>{};
#if WEBNN_KERNEL_ISA_LEVEL >= 1
  if constexpr (kUnaryPredicateVector<Op, T>) {
    const auto fn = [](auto a) { return unary_predicate_vector<Op>(a); };
    return map_vector<true, uint8_t, T>(fn, static_cast<uint8_t*>(out), count, src, stride, seq);
  }
#endif
  const auto fn = [](auto a) { return apply_unary_predicate<Op>(a); };
  map_scalar<uint8_t, T>(fn, static_cast<uint8_t*>(out), count, src, stride, seq);
}

// where: U is the unsigned type of the values' size (only bits move).
template <class U>
void where_block(void* out, size_t count, const void* const* src, const size_t* stride) {
  constexpr auto seq = std::make_index_sequence<3>{};
#if WEBNN_KERNEL_ISA_LEVEL >= 1
  if (unit_strides(stride, 3)) {
    using S = simd::Vec<std::make_signed_t<U>>;
    const auto fn = [](simd::Vec<uint8_t> c, simd::Vec<U> t, simd::Vec<U> f) {
      return __builtin_convertvector(c, S) != 0 ? t : f;
    };
    return map_vector<false, U, uint8_t, U, U>(fn, static_cast<U*>(out), count, src, stride, seq);
  }
#endif
  const auto fn = [](uint8_t c, U t, U f) { return c ? t : f; };
  map_scalar<U, uint8_t, U, U>(fn, static_cast<U*>(out), count, src, stride, seq);
}

// ---- the table

template <BinaryOp Op>
ElementwiseBlockFn binary_for_type(DataType type) {
  return visit_type(type, [](auto tag) -> ElementwiseBlockFn { return binary_block<Op, decltype(tag)>; });
}
ElementwiseBlockFn binary_fn(BinaryOp op, DataType type) {
  switch (op) {
    case BinaryOp::kAdd: return binary_for_type<BinaryOp::kAdd>(type);
    case BinaryOp::kSub: return binary_for_type<BinaryOp::kSub>(type);
    case BinaryOp::kMul: return binary_for_type<BinaryOp::kMul>(type);
    case BinaryOp::kDiv: return binary_for_type<BinaryOp::kDiv>(type);
    case BinaryOp::kMax: return binary_for_type<BinaryOp::kMax>(type);
    case BinaryOp::kMin: return binary_for_type<BinaryOp::kMin>(type);
    case BinaryOp::kPow: return binary_for_type<BinaryOp::kPow>(type);
    case BinaryOp::kPrelu: return binary_for_type<BinaryOp::kPrelu>(type);
  }
  return nullptr;
}

template <BinaryPredicate Op>
ElementwiseBlockFn binary_predicate_for_type(DataType type) {
  return visit_type(type, [](auto tag) -> ElementwiseBlockFn { return binary_predicate_block<Op, decltype(tag)>; });
}
ElementwiseBlockFn binary_predicate_fn(BinaryPredicate op, DataType type) {
  using P = BinaryPredicate;
  switch (op) {
    case P::kEqual: return binary_predicate_for_type<P::kEqual>(type);
    case P::kNotEqual: return binary_predicate_for_type<P::kNotEqual>(type);
    case P::kGreater: return binary_predicate_for_type<P::kGreater>(type);
    case P::kGreaterOrEqual: return binary_predicate_for_type<P::kGreaterOrEqual>(type);
    case P::kLesser: return binary_predicate_for_type<P::kLesser>(type);
    case P::kLesserOrEqual: return binary_predicate_for_type<P::kLesserOrEqual>(type);
    case P::kLogicalAnd: return binary_predicate_for_type<P::kLogicalAnd>(type);
    case P::kLogicalOr: return binary_predicate_for_type<P::kLogicalOr>(type);
    case P::kLogicalXor: return binary_predicate_for_type<P::kLogicalXor>(type);
  }
  return nullptr;
}

template <UnaryPredicate Op>
ElementwiseBlockFn unary_predicate_for_type(DataType type) {
  return visit_type(type, [](auto tag) -> ElementwiseBlockFn { return unary_predicate_block<Op, decltype(tag)>; });
}
ElementwiseBlockFn unary_predicate_fn(UnaryPredicate op, DataType type) {
  using P = UnaryPredicate;
  switch (op) {
    case P::kLogicalNot: return unary_predicate_for_type<P::kLogicalNot>(type);
    case P::kIsNaN: return unary_predicate_for_type<P::kIsNaN>(type);
    case P::kIsInfinite: return unary_predicate_for_type<P::kIsInfinite>(type);
  }
  return nullptr;
}

ElementwiseBlockFn where_fn(DataType type) {
  switch (data_type_size(type)) {
    case 1: return where_block<uint8_t>;
    case 2: return where_block<uint16_t>;
    case 4: return where_block<uint32_t>;
    default: return where_block<uint64_t>;
  }
}

constexpr ElementwiseLoops kElementwiseLoops = {binary_fn, binary_predicate_fn, unary_predicate_fn, where_fn};

}  // namespace
}  // namespace WEBNN_KERNEL_ISA
}  // namespace webnn
