// Helpers shared by the reference kernels: dtype dispatch and float16 handling.
#pragma once
#include <cstdint>
#include <type_traits>

#include "core/common.h"
#include "core/float16.h"

namespace webnn {

// The arithmetic type for a storage type: float16 computes in float32.
template <class T>
struct ComputeOf {
  using type = T;
};
template <>
struct ComputeOf<float16> {
  using type = float;
};
template <class T>
using compute_t = typename ComputeOf<T>::type;

template <class T>
inline compute_t<T> load(const T& v) {
  if constexpr (std::is_same_v<T, float16>) return half_to_float(v.bits);
  else return v;
}
template <class T>
inline void store(T* p, compute_t<T> v) {
  if constexpr (std::is_same_v<T, float16>) p->bits = float_to_half(v);
  else *p = v;
}

// Calls fn(T{}) with the storage type for `type`.
template <class Fn>
decltype(auto) visit_type(DataType type, Fn&& fn) {
  switch (type) {
    case DataType::kFloat32: return fn(float{});
    case DataType::kFloat16: return fn(float16{});
    case DataType::kInt32: return fn(int32_t{});
    case DataType::kUint32: return fn(uint32_t{});
    case DataType::kInt64: return fn(int64_t{});
    case DataType::kUint64: return fn(uint64_t{});
    case DataType::kInt8:
    case DataType::kInt4: return fn(int8_t{});
    case DataType::kUint8:
    case DataType::kUint4: return fn(uint8_t{});
  }
  return fn(float{});
}

// A broadcast iteration space: the output shape with merged dims and per-operand strides.
struct BroadcastLoop {
  std::vector<size_t> shape;                 // merged output dims, outermost first
  std::vector<std::vector<size_t>> strides;  // per operand, aligned with shape
  size_t inner() const { return shape.empty() ? 1 : shape.back(); }
  size_t outer() const;
  // Offsets of each operand at the start of outer row `row`.
  void offsets(size_t row, size_t* out) const;
  // Walks the outer rows in order from `row`, keeping each operand's offset without a division per
  // row: at() is the current row's offsets, next() moves to the following row.
  class RowWalk {
   public:
    static constexpr size_t kMaxOperands = 8;
    RowWalk(const BroadcastLoop& loop, size_t row);
    const size_t* at() const { return offsets_; }
    void next();

   private:
    const BroadcastLoop& loop_;
    size_t offsets_[kMaxOperands];
    size_t index_[kMaxRank];  // the row's digit per outer dim
    size_t outer_dims_;
  };
};
BroadcastLoop make_broadcast_loop(const std::vector<uint32_t>& out_shape,
                                  const std::vector<std::vector<uint32_t>>& operand_shapes);

}  // namespace webnn
