// The cast algorithm (spec §2.2) for scalar parameters: floats round to nearest even with
// overflow to infinity; integers map NaN to 0, clamp to the type's range, then round half to even.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/common.h"
#include "core/float16.h"

namespace webnn {

namespace {

template <class T>
T to_int(const Number& n) {
  constexpr int64_t lo = int64_t(std::numeric_limits<T>::min());
  switch (n.kind) {
    case Number::Kind::kDimension: return 0;  // not a value (GraphBuilder::constant refuses it)
    case Number::Kind::kInt:
      if constexpr (std::is_unsigned_v<T>) {
        if (n.i < 0) return 0;
        if (uint64_t(n.i) > uint64_t(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
        return T(n.i);
      } else {
        if (n.i < lo) return std::numeric_limits<T>::min();
        if (n.i > int64_t(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
        return T(n.i);
      }
    case Number::Kind::kUint:
      if (n.u > uint64_t(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
      return T(n.u);
    case Number::Kind::kFloat: {
      double x = n.f;
      if (std::isnan(x)) return 0;
      double min = double(std::numeric_limits<T>::min()), max = double(std::numeric_limits<T>::max());
      if (x <= min) return std::numeric_limits<T>::min();
      if (x >= max) return std::numeric_limits<T>::max();  // double(max) of 64-bit rounds up
      double r = std::nearbyint(x);                         // default mode: ties to even
      if (r >= max) return std::numeric_limits<T>::max();
      return T(r);
    }
  }
  return 0;
}

}  // namespace

void cast_number_to(const Number& value, DataType type, void* out) {
  auto store = [out](auto v) { std::memcpy(out, &v, sizeof(v)); };
  switch (type) {
    case DataType::kFloat32: {
      if (value.kind == Number::Kind::kFloat) {
        store(float(value.f));  // IEEE double->float rounds to nearest even, overflow -> inf
      } else {
        store(float(value.as_double()));
      }
      return;
    }
    case DataType::kFloat16: store(float_to_half(float(value.as_double()))); return;
    case DataType::kInt32: store(to_int<int32_t>(value)); return;
    case DataType::kUint32: store(to_int<uint32_t>(value)); return;
    case DataType::kInt64: store(to_int<int64_t>(value)); return;
    case DataType::kUint64: store(to_int<uint64_t>(value)); return;
    case DataType::kInt8: store(to_int<int8_t>(value)); return;
    case DataType::kUint8: store(to_int<uint8_t>(value)); return;
    case DataType::kInt4: store(int8_t(std::clamp<int>(to_int<int8_t>(value), -8, 7))); return;
    case DataType::kUint4: store(uint8_t(std::min<int>(to_int<uint8_t>(value), 15))); return;
  }
}

double number_to_double_as(const Number& value, DataType type) {
  uint8_t bytes[8];
  cast_number_to(value, type, bytes);
  switch (type) {
    case DataType::kFloat32: { float v; std::memcpy(&v, bytes, 4); return v; }
    case DataType::kFloat16: { uint16_t v; std::memcpy(&v, bytes, 2); return half_to_float(v); }
    case DataType::kInt32: { int32_t v; std::memcpy(&v, bytes, 4); return v; }
    case DataType::kUint32: { uint32_t v; std::memcpy(&v, bytes, 4); return v; }
    case DataType::kInt64: { int64_t v; std::memcpy(&v, bytes, 8); return double(v); }
    case DataType::kUint64: { uint64_t v; std::memcpy(&v, bytes, 8); return double(v); }
    case DataType::kInt8:
    case DataType::kInt4: return double(int8_t(bytes[0]));
    case DataType::kUint8:
    case DataType::kUint4: return double(bytes[0]);
  }
  return 0;
}

}  // namespace webnn
