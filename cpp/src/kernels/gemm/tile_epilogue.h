// The epilogue every product kernel applies to a finished tile, whatever its kernel kind, while the
// tile is in registers or L1.
#pragma once
#include <cstddef>
#include <cstdint>

namespace webnn {

// Float sums (the float32 kind's microkernels): bias, then a residual addend, then clamp to
// [min, max], then rounding to float16 values (float16 results held in float32).
// Integer sums (the int8 kinds' requantize and dequantize passes), column j at column 0 of the tile:
// t = float(sum + offset[j]) * multiplier[j] + bias[j], clamped to [min, max]; then, for a quantized
// output, q = roundHalfEven(t) + output_zero (kernels/int8/int8_gemm.h gives the units and ranges).
struct TileEpilogue {
  const float* bias = nullptr;  // per column (cols values) or per row (rows values)
  bool bias_per_row = false;
  float min = -__builtin_inff(), max = __builtin_inff();
  const float* residual = nullptr;  // element (i, j) at residual[i * residual_ld + j]
  size_t residual_ld = 0;
  bool round_to_half = false;
  // Integer sums only:
  const int32_t* offset = nullptr;  // the activation zero point's term (zeros when it has none)
  const float* multiplier = nullptr;
  int32_t output_zero = 0;
  bool output_signed = false;  // int8 output, else uint8
};

}  // namespace webnn
