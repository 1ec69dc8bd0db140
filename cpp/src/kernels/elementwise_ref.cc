// Portable reference kernels for the element-wise family.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <tuple>
#include <utility>

#include "kernels/elementwise.h"
#include "kernels/kernel_util.h"
#include "runtime/thread_pool.h"

namespace webnn {

namespace {

constexpr size_t kElementGrain = 1 << 15;

// ---- N-operand broadcast maps

// Calls body(offsets, out_offset, count) over blocks of consecutive output elements, in
// parallel. offsets[k] is operand k's element offset at the block start; within the block,
// operand k advances by loop.strides[k].back() per element.
template <size_t N, class Body>
void for_each_block(const BroadcastLoop& loop, ThreadPool* pool, const Body& body) {
  const size_t inner = loop.inner(), rows = loop.outer();
  const size_t block = std::min(inner, kElementGrain);
  const size_t blocks_per_row = (inner + block - 1) / block;
  const size_t grain = std::max<size_t>(1, kElementGrain / block);
  pool->parallel_for(rows * blocks_per_row, grain, [&](size_t begin, size_t end) {
    size_t off[N];
    for (size_t t = begin; t < end; ++t) {
      const size_t row = t / blocks_per_row, start = t % blocks_per_row * block;
      loop.offsets(row, off);
      for (size_t k = 0; k < N; ++k) off[k] += start * loop.strides[k].back();
      body(off, row * inner + start, std::min(block, inner - start));
    }
  });
}

template <class... In, size_t... K>
std::tuple<const In*...> block_sources(const void* const* inputs, const size_t* off, std::index_sequence<K...>) {
  return {static_cast<const In*>(inputs[K]) + off[K]...};
}

// out[i] = fn(src_0[i * stride_0], ...) for i < count, on values loaded as compute types. The
// common stride patterns get loops the compiler can vectorize.
template <class Out, class... In, class Fn, size_t... K>
inline void map_block(const Fn& fn, Out* out, size_t count, const std::tuple<const In*...>& src,
                      const size_t* stride, std::index_sequence<K...>) {
  if (((stride[K] == 1) && ...)) {
    for (size_t i = 0; i < count; ++i) store(out + i, fn(load(std::get<K>(src)[i])...));
    return;
  }
  if constexpr (sizeof...(In) == 2) {  // one operand constant along the block: hoist its load
    const auto* a = std::get<0>(src);
    const auto* b = std::get<1>(src);
    if (stride[0] == 1 && stride[1] == 0) {
      const auto vb = load(*b);
      for (size_t i = 0; i < count; ++i) store(out + i, fn(load(a[i]), vb));
      return;
    }
    if (stride[0] == 0 && stride[1] == 1) {
      const auto va = load(*a);
      for (size_t i = 0; i < count; ++i) store(out + i, fn(va, load(b[i])));
      return;
    }
  }
  for (size_t i = 0; i < count; ++i) store(out + i, fn(load(std::get<K>(src)[i * stride[K]])...));
}

// A kernel computing out = fn(in_0, ..., in_{N-1}) element-wise (inputs of storage types In...,
// output of Out), the inputs broadcast to out_shape.
template <class Out, class... In, class Fn>
Kernel broadcast_map_kernel(const std::vector<uint32_t>& out_shape,
                            const std::vector<std::vector<uint32_t>>& in_shapes, Fn fn) {
  constexpr size_t N = sizeof...(In);
  BroadcastLoop loop = make_broadcast_loop(out_shape, in_shapes);
  std::array<size_t, N> stride;
  for (size_t k = 0; k < N; ++k) stride[k] = loop.strides[k].back();
  return [loop = std::move(loop), stride, fn](const KernelArgs& args) {
    constexpr auto seq = std::index_sequence_for<In...>{};
    Out* out = static_cast<Out*>(args.outputs[0]);
    for_each_block<N>(loop, args.pool, [&](const size_t* off, size_t out_offset, size_t count) {
      map_block(fn, out + out_offset, count, block_sources<In...>(args.inputs, off, seq), stride.data(), seq);
    });
  };
}

// ---- scalar functions

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

// ---- kernels per op and dtype

template <BinaryOp Op>
Kernel binary_for_type(DataType type, const std::vector<uint32_t>& a, const std::vector<uint32_t>& b,
                       const std::vector<uint32_t>& out) {
  return visit_type(type, [&](auto tag) {
    using T = decltype(tag);
    return broadcast_map_kernel<T, T, T>(out, {a, b}, [](auto x, auto y) { return apply_binary<Op>(x, y); });
  });
}

template <BinaryPredicate Op>
Kernel binary_predicate_for_type(DataType type, const std::vector<uint32_t>& a, const std::vector<uint32_t>& b,
                          const std::vector<uint32_t>& out) {
  return visit_type(type, [&](auto tag) {
    using T = decltype(tag);
    return broadcast_map_kernel<uint8_t, T, T>(out, {a, b},
                                               [](auto x, auto y) { return apply_binary_predicate<Op>(x, y); });
  });
}

template <UnaryPredicate Op>
Kernel unary_predicate_for_type(DataType type, const std::vector<uint32_t>& shape) {
  return visit_type(type, [&](auto tag) {
    using T = decltype(tag);
    return broadcast_map_kernel<uint8_t, T>(shape, {shape}, [](auto x) { return apply_unary_predicate<Op>(x); });
  });
}

// Calls fn(U{}) with the unsigned integer type of `type`'s size, for ops that only move bits.
template <class Fn>
decltype(auto) visit_bits(DataType type, Fn&& fn) {
  switch (data_type_size(type)) {
    case 1: return fn(uint8_t{});
    case 2: return fn(uint16_t{});
    case 4: return fn(uint32_t{});
    default: return fn(uint64_t{});
  }
}

}  // namespace

Kernel make_binary_kernel(BinaryOp op, DataType type, const std::vector<uint32_t>& a_shape,
                          const std::vector<uint32_t>& b_shape, const std::vector<uint32_t>& out_shape) {
  switch (op) {
    case BinaryOp::kAdd: return binary_for_type<BinaryOp::kAdd>(type, a_shape, b_shape, out_shape);
    case BinaryOp::kSub: return binary_for_type<BinaryOp::kSub>(type, a_shape, b_shape, out_shape);
    case BinaryOp::kMul: return binary_for_type<BinaryOp::kMul>(type, a_shape, b_shape, out_shape);
    case BinaryOp::kDiv: return binary_for_type<BinaryOp::kDiv>(type, a_shape, b_shape, out_shape);
    case BinaryOp::kMax: return binary_for_type<BinaryOp::kMax>(type, a_shape, b_shape, out_shape);
    case BinaryOp::kMin: return binary_for_type<BinaryOp::kMin>(type, a_shape, b_shape, out_shape);
    case BinaryOp::kPow: return binary_for_type<BinaryOp::kPow>(type, a_shape, b_shape, out_shape);
    case BinaryOp::kPrelu: return binary_for_type<BinaryOp::kPrelu>(type, a_shape, b_shape, out_shape);
  }
  throw_type_error("unknown binary op");
}

Kernel make_binary_predicate_kernel(BinaryPredicate op, DataType input_type, const std::vector<uint32_t>& a_shape,
                                    const std::vector<uint32_t>& b_shape, const std::vector<uint32_t>& out_shape) {
  using P = BinaryPredicate;
  const DataType t = input_type;
  const auto &a = a_shape, &b = b_shape, &out = out_shape;
  switch (op) {
    case P::kEqual: return binary_predicate_for_type<P::kEqual>(t, a, b, out);
    case P::kNotEqual: return binary_predicate_for_type<P::kNotEqual>(t, a, b, out);
    case P::kGreater: return binary_predicate_for_type<P::kGreater>(t, a, b, out);
    case P::kGreaterOrEqual: return binary_predicate_for_type<P::kGreaterOrEqual>(t, a, b, out);
    case P::kLesser: return binary_predicate_for_type<P::kLesser>(t, a, b, out);
    case P::kLesserOrEqual: return binary_predicate_for_type<P::kLesserOrEqual>(t, a, b, out);
    case P::kLogicalAnd: return binary_predicate_for_type<P::kLogicalAnd>(t, a, b, out);
    case P::kLogicalOr: return binary_predicate_for_type<P::kLogicalOr>(t, a, b, out);
    case P::kLogicalXor: return binary_predicate_for_type<P::kLogicalXor>(t, a, b, out);
  }
  throw_type_error("unknown binary predicate");
}

Kernel make_unary_predicate_kernel(UnaryPredicate op, DataType input_type, const std::vector<uint32_t>& shape) {
  using P = UnaryPredicate;
  switch (op) {
    case P::kLogicalNot: return unary_predicate_for_type<P::kLogicalNot>(input_type, shape);
    case P::kIsNaN: return unary_predicate_for_type<P::kIsNaN>(input_type, shape);
    case P::kIsInfinite: return unary_predicate_for_type<P::kIsInfinite>(input_type, shape);
  }
  throw_type_error("unknown unary predicate");
}

Kernel make_where_kernel(DataType type, const std::vector<uint32_t>& condition_shape,
                         const std::vector<uint32_t>& true_shape, const std::vector<uint32_t>& false_shape,
                         const std::vector<uint32_t>& out_shape) {
  return visit_bits(type, [&](auto tag) {
    using U = decltype(tag);
    return broadcast_map_kernel<U, uint8_t, U, U>(out_shape, {condition_shape, true_shape, false_shape},
                                                  [](uint8_t c, U t, U f) { return c ? t : f; });
  });
}

Kernel make_copy_kernel(size_t bytes) {
  return [bytes](const KernelArgs& args) { std::memcpy(args.outputs[0], args.inputs[0], bytes); };
}

}  // namespace webnn
