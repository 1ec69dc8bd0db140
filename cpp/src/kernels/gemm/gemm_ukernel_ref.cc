// Portable GEMM microkernel (4x16), written so compilers vectorize the inner loop.
#include <algorithm>

#include "core/float16.h"
#include "kernels/gemm/gemm_ukernel.h"

namespace webnn {

namespace {

constexpr size_t MR = 4, NR = 16;

void store(const float (&acc)[MR][NR], size_t rows, size_t cols, float* c, size_t ldc, bool accumulate,
           const TileEpilogue* ep) {
  for (size_t i = 0; i < rows; ++i) {
    float* row = c + i * ldc;
    for (size_t j = 0; j < cols; ++j) {
      float v = acc[i][j] + (accumulate ? row[j] : 0.0f);
      if (ep) {
        if (ep->bias) v += ep->bias_per_row ? ep->bias[i] : ep->bias[j];
        if (ep->residual) v += ep->residual[i * ep->residual_ld + j];
        v = std::min(std::max(v, ep->min), ep->max);
        if (ep->round_to_half) v = half_to_float(float_to_half(v));
      }
      row[j] = v;
    }
  }
}

void ukernel(size_t rows, size_t cols, size_t kc, const float* a, const float* b, float* c, size_t ldc,
             bool accumulate, const TileEpilogue* ep) {
  float acc[MR][NR] = {};
  for (size_t k = 0; k < kc; ++k, a += MR, b += NR)
    for (size_t i = 0; i < MR; ++i)
      for (size_t j = 0; j < NR; ++j) acc[i][j] += a[i] * b[j];
  store(acc, rows, cols, c, ldc, accumulate, ep);
}

void igemm(size_t rows, size_t cols, size_t taps, size_t channels, const float* const* a, const float* b, float* c,
           size_t ldc, bool accumulate, const TileEpilogue* ep) {
  float acc[MR][NR] = {};
  for (size_t t = 0; t < taps; ++t, a += MR)
    for (size_t k = 0; k < channels; ++k, b += NR)
      for (size_t i = 0; i < rows; ++i)
        for (size_t j = 0; j < NR; ++j) acc[i][j] += a[i][k] * b[j];
  store(acc, rows, cols, c, ldc, accumulate, ep);
}

void strided(size_t rows, size_t cols, size_t taps, size_t tap_length, const float* const* a, size_t stride,
             const float* b, float* c, size_t ldc, const TileEpilogue* ep) {
  float acc[MR][NR] = {};
  for (size_t t = 0; t < taps; ++t)
    for (size_t k = 0; k < tap_length; ++k, b += NR)
      for (size_t i = 0; i < rows; ++i)
        for (size_t j = 0; j < NR; ++j) acc[i][j] += a[t][i * stride + k] * b[j];
  store(acc, rows, cols, c, ldc, false, ep);
}

void gemv(size_t m, size_t kc, const float* a, size_t lda, const float* b, float* c, size_t ldc) {
  for (size_t i = 0; i < m; ++i) {
    float acc[NR] = {};
    for (size_t k = 0; k < kc; ++k)
      for (size_t j = 0; j < NR; ++j) acc[j] += a[i * lda + k] * b[k * NR + j];
    for (size_t j = 0; j < NR; ++j) c[i * ldc + j] = acc[j];
  }
}

}  // namespace

GemmUkernel f32_gemm_4x16_ref() { return {ukernel, MR, NR, "f32_gemm_4x16_ref", gemv, igemm, strided}; }

}  // namespace webnn
