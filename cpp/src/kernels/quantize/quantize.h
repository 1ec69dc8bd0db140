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

}  // namespace webnn
