// IEEE binary16 <-> binary32 conversion, round to nearest even.
#pragma once
#include <cstdint>
#include <cstring>

namespace webnn {

inline float half_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {  // subnormal: normalise
    int shift = 0;
    while ((mantissa & 0x400u) == 0) { mantissa <<= 1; ++shift; }
    mantissa &= 0x3ffu;
    bits = sign | (uint32_t(113 - shift) << 23) | (mantissa << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t float_to_half(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  uint16_t sign = uint16_t((bits >> 16) & 0x8000u);
  uint32_t abs = bits & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or nan
    return uint16_t(sign | 0x7c00u | (abs > 0x7f800000u ? (0x200u | ((abs >> 13) & 0x3ffu)) : 0));
  }
  if (abs >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // rounds to >= 65520 -> inf
  if (abs < 0x38800000u) {  // subnormal half or zero
    if (abs < 0x33000000u) return sign;  // < 2^-25 rounds to 0
    uint32_t exponent = abs >> 23;
    uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - exponent;  // 14..24
    uint32_t value = mantissa >> shift;
    uint32_t remainder = mantissa & ((1u << shift) - 1);
    uint32_t half_way = 1u << (shift - 1);
    if (remainder > half_way || (remainder == half_way && (value & 1u))) ++value;
    return uint16_t(sign | value);
  }
  uint32_t value = abs - 0x38000000u;  // rebias exponent
  uint32_t remainder = value & 0x1fffu;
  value >>= 13;
  if (remainder > 0x1000u || (remainder == 0x1000u && (value & 1u))) ++value;
  return uint16_t(sign | value);
}

// Storage type for float16 elements in kernels.
struct float16 {
  uint16_t bits;
};

}  // namespace webnn
