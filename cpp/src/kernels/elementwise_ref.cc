// Portable reference kernels for the element-wise family.
#include <cmath>
#include <cstring>

#include "kernels/elementwise.h"
#include "kernels/kernel_util.h"
#include "runtime/thread_pool.h"

namespace webnn {

namespace {

constexpr size_t kElementGrain = 1 << 15;

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
template <class C>
inline C safe_div(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    if (b == 0) return 0;  // integer division by zero is undefined by the spec: define it as 0
    if constexpr (std::is_signed_v<C>)
      if (b == C(-1)) return wrap_sub<C>(0, a);
    return a / b;
  } else {
    return a / b;
  }
}
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

template <BinaryOp Op, class C>
inline C apply_binary(C a, C b) {
  if constexpr (Op == BinaryOp::kAdd) return wrap_add(a, b);
  if constexpr (Op == BinaryOp::kSub) return wrap_sub(a, b);
  if constexpr (Op == BinaryOp::kMul) return wrap_mul(a, b);
  if constexpr (Op == BinaryOp::kDiv) return safe_div(a, b);
  if constexpr (Op == BinaryOp::kMax) {
    if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(a) || std::isnan(b)) return NAN;
    }
    return a > b ? a : b;
  }
  if constexpr (Op == BinaryOp::kMin) {
    if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(a) || std::isnan(b)) return NAN;
    }
    return a < b ? a : b;
  }
  if constexpr (Op == BinaryOp::kPow) {
    if constexpr (std::is_floating_point_v<C>) return C(std::pow(a, b));
    else return int_pow(a, b);
  }
}

template <BinaryOp Op, class T>
Kernel binary_kernel(const std::vector<uint32_t>& a_shape, const std::vector<uint32_t>& b_shape,
                     const std::vector<uint32_t>& out_shape) {
  BroadcastLoop loop = make_broadcast_loop(out_shape, {a_shape, b_shape});
  return [loop](const KernelArgs& args) {
    const T* a = static_cast<const T*>(args.inputs[0]);
    const T* b = static_cast<const T*>(args.inputs[1]);
    T* out = static_cast<T*>(args.outputs[0]);
    const size_t inner = loop.inner(), rows = loop.outer();
    const size_t sa = loop.strides[0].back(), sb = loop.strides[1].back();
    size_t grain = std::max<size_t>(1, kElementGrain / inner);
    args.pool->parallel_for(rows, grain, [&](size_t begin, size_t end) {
      size_t off[2];
      for (size_t r = begin; r < end; ++r) {
        loop.offsets(r, off);
        const T* pa = a + off[0];
        const T* pb = b + off[1];
        T* po = out + r * inner;
        if (sa == 1 && sb == 1) {
          for (size_t i = 0; i < inner; ++i) store(po + i, apply_binary<Op>(load(pa[i]), load(pb[i])));
        } else if (sa == 1 && sb == 0) {
          auto vb = load(pb[0]);
          for (size_t i = 0; i < inner; ++i) store(po + i, apply_binary<Op>(load(pa[i]), vb));
        } else if (sa == 0 && sb == 1) {
          auto va = load(pa[0]);
          for (size_t i = 0; i < inner; ++i) store(po + i, apply_binary<Op>(va, load(pb[i])));
        } else {
          for (size_t i = 0; i < inner; ++i) store(po + i, apply_binary<Op>(load(pa[i * sa]), load(pb[i * sb])));
        }
      }
    });
  };
}

template <BinaryOp Op>
Kernel binary_for_type(DataType type, const std::vector<uint32_t>& a, const std::vector<uint32_t>& b,
                       const std::vector<uint32_t>& out) {
  return visit_type(type, [&](auto tag) { return binary_kernel<Op, decltype(tag)>(a, b, out); });
}

template <class T>
inline compute_t<T> apply_unary(UnaryOp op, compute_t<T> x) {
  using C = compute_t<T>;
  switch (op) {
    case UnaryOp::kRelu:
      if constexpr (std::is_unsigned_v<C>) return x;
      else return x > C(0) ? x : (x != x ? x : C(0));  // NaN passes through
  }
  return x;
}

template <class T>
Kernel unary_kernel(UnaryOp op, size_t count) {
  return [op, count](const KernelArgs& args) {
    const T* in = static_cast<const T*>(args.inputs[0]);
    T* out = static_cast<T*>(args.outputs[0]);
    args.pool->parallel_for(count, kElementGrain, [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) store(out + i, apply_unary<T>(op, load(in[i])));
    });
  };
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
  }
  throw_type_error("unknown binary op");
}

Kernel make_unary_kernel(UnaryOp op, DataType type, size_t count) {
  return visit_type(type, [&](auto tag) { return unary_kernel<decltype(tag)>(op, count); });
}

Kernel make_copy_kernel(size_t bytes) {
  return [bytes](const KernelArgs& args) { std::memcpy(args.outputs[0], args.inputs[0], bytes); };
}

}  // namespace webnn
