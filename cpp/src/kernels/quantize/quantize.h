// Quantization kernel family: quantizeLinear and dequantizeLinear.
//
// args.inputs = {input, scale, zeroPoint}. scale and zeroPoint have the input's rank and each of
// their elements covers a contiguous block of input.shape[d] / param_shape[d] along every dim d
// (blockwise broadcast; the caller has checked divisibility).
#pragma once
#include "kernels/kernel.h"

namespace webnn {

// y = saturate(roundEven(x / scale) + zeroPoint) in zeroPoint's dtype. The division is in
// float32; NaN quantizes to 0 (as the spec's cast algorithm maps NaN to 0).
Kernel make_quantize_kernel(DataType input_type, DataType zero_point_type, const std::vector<uint32_t>& input_shape,
                            const std::vector<uint32_t>& param_shape);

// y = (x - zeroPoint) * scale in scale's dtype; the difference is exact and the product is
// computed in double.
Kernel make_dequantize_kernel(DataType input_type, DataType scale_type, const std::vector<uint32_t>& input_shape,
                              const std::vector<uint32_t>& param_shape);

// The per-tensor 8-bit loops of the two kernels above, for the element-wise chain: n values of x
// (int8 if `is_signed`, else uint8; element stride 0 or 1) dequantized into y, and n float32
// values quantized into 8-bit y. The same numbers as the kernels.
void dequantize_8bit(const uint8_t* x, size_t stride, bool is_signed, float scale, int32_t zero_point, float* y,
                     size_t n);
// `inverse` is quantize_inverse(scale).
void quantize_8bit(const float* x, float scale, float inverse, int32_t zero_point, bool is_signed, uint8_t* y,
                   size_t n);

// The float nearest 1 / scale when 2^-100 <= scale <= 2^100, with which the 8-bit quantize loops
// compute x / scale exactly without dividing (QuantizeRunFn); otherwise 0 (they divide).
float quantize_inverse(float scale);

}  // namespace webnn
