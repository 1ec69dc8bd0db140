// Helpers that present float32/float16 matrices as float32 operands for the GEMM driver.
#pragma once
#include <type_traits>
#include <vector>

#include "kernels/kernel_util.h"

namespace webnn {

// The n values at `src` as float32: float32 data is used in place, float16 is widened into `buf`.
template <class T>
const float* as_f32(const T* src, size_t n, std::vector<float>& buf) {
  if constexpr (std::is_same_v<T, float>) {
    return src;
  } else {
    buf.resize(n);
    for (size_t i = 0; i < n; ++i) buf[i] = load(src[i]);
    return buf.data();
  }
}

// dst[cols][rows] (float32) = the transpose of src[rows][cols].
template <class T>
void transpose_to_f32(const T* src, size_t rows, size_t cols, float* dst) {
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c) dst[c * rows + r] = load(src[r * cols + c]);
}

}  // namespace webnn
