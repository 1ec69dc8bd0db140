// GEMM microkernels: C[rows x cols] (+)= Apanel[kc][MR] * Bpanel[kc][NR], then the epilogue, for
// rows <= MR and cols <= NR (edge tiles are computed in place: no wasted rows, masked columns).
// One per ISA level, picked once at start-up (platform.h): the SIMD levels instantiate
// gemm_ukernel_impl.h, the ref level is portable loops (gemm_ukernel_ref.cc).
#pragma once
#include <cstddef>

#include "kernels/gemm/tile_epilogue.h"

namespace webnn {

using GemmUkernelFn = void (*)(size_t rows, size_t cols, size_t kc, const float* a_panel, const float* b_panel,
                               float* c, size_t ldc, bool accumulate, const TileEpilogue* epilogue);

// Small M (at most 4 rows of A, given unpacked with row stride lda) against one packed B panel:
// C[m x NR] = A[m x kc] * Bpanel[kc][NR] (overwritten; no epilogue). For M=1 this is GEMV.
using GemvUkernelFn = void (*)(size_t m, size_t kc, const float* a, size_t lda, const float* b_panel, float* c,
                               size_t ldc);
constexpr size_t kGemvMaxRows = 4;

// The indirect GEMM (convolution without im2col, and GEMMs with A read in place): C[rows x cols]
// (+)= A * Bpanel[taps * channels][NR], then the epilogue, where A's row i is read in place, for
// each tap t, at a[t * MR + i][0, channels) (a pointer to the input pixel's channels, or to zeros
// for padding).
using IgemmUkernelFn = void (*)(size_t rows, size_t cols, size_t taps, size_t channels, const float* const* a,
                                const float* b_panel, float* c, size_t ldc, bool accumulate,
                                const TileEpilogue* epilogue);

// The strided-rows GEMM (a first convolution over padded NCHW input rows): C[rows x cols] =
// A * Bpanel[taps * tap_length][NR], then the epilogue, where A's row i reads, for each tap t,
// a[t][i * stride + k] for k < tap_length: a tile's pixels lie `stride` (1 or 2) floats apart in
// every tap's row, so one pointer per tap does instead of one per tap and row.
using StridedGemmUkernelFn = void (*)(size_t rows, size_t cols, size_t taps, size_t tap_length, const float* const* a,
                                      size_t stride, const float* b_panel, float* c, size_t ldc,
                                      const TileEpilogue* epilogue);

struct GemmUkernel {
  GemmUkernelFn fn;
  size_t mr, nr;
  const char* name;
  GemvUkernelFn gemv;
  IgemmUkernelFn igemm;
  StridedGemmUkernelFn strided;  // stride 1 or 2
};

GemmUkernel f32_gemm_4x16_ref();
GemmUkernel f32_gemm_6x16_avx2();
GemmUkernel f32_gemm_14x32_avx512();

}  // namespace webnn
