// GEMM family: matmul, gemm, linear layers and convolutions as matrix products.
#pragma once
#include <functional>
#include <limits>
#include <memory>

#include "kernels/kernel.h"
#include "kernels/unary/unary.h"

namespace webnn {

// Applied to C while each tile is still in registers: bias, then a residual addend (a tensor of C's
// shape: element (i, j) at residual[i * residual_ld + j]), then clamp (relu = [0, +inf]); then, while
// the tile is in L1, an activation.
struct GemmEpilogue {
  const float* bias = nullptr;  // per column (N values), or per row (M values) when bias_per_row
  bool bias_per_row = false;
  float min = -std::numeric_limits<float>::infinity();
  float max = std::numeric_limits<float>::infinity();
  const float* residual = nullptr;
  size_t residual_ld = 0;
  ActivationLoop activation;
  // Whether the microkernel has work in its tile epilogue (the activation runs after it).
  bool active() const { return bias || residual || min > -std::numeric_limits<float>::infinity() ||
                               max < std::numeric_limits<float>::infinity(); }
};

// B packed for the active microkernel: NR-column panels spanning all of K ([K][NR] each, zero padded).
// Constant weights are packed once, at build time.
struct PackedB {
  size_t K = 0, N = 0, nr = 0;
  BufferPtr data;
  const float* panel(size_t p) const { return reinterpret_cast<const float*>(data->data()) + p * K * nr; }
};
// The panel width (NR) of the active microkernel, for code that packs B itself.
size_t gemm_panel_width();
// B is [K][N] with row stride ldb, or, when `transposed`, [N][K] with row stride ldb. A transposed
// row may hold its K values as [K / taps][taps] (an oihw filter's (i, kh, kw) order), packed in
// [taps][K / taps] order (the NHWC convolution's (kh, kw, i)).
PackedB pack_b_f32(size_t K, size_t N, const float* B, size_t ldb, bool transposed = false, size_t taps = 1);
// The same into `packed`, reusing its buffer when it is large enough (a per-thread scratch).
void pack_b_f32_into(size_t K, size_t N, const float* B, size_t ldb, bool transposed, PackedB& packed,
                     size_t taps = 1);

// A packed for the active microkernel: panels of `panel_rows` <= MR rows spanning all of K ([K][MR]
// each, zero padded), the rows shared evenly (M = 16 on a 14-row kernel: two tiles of 8 rows, not 14
// and 2). Used when A is the constant operand (filters of NCHW convolutions).
struct PackedA {
  size_t M = 0, K = 0, mr = 0, panel_rows = 0;
  BufferPtr data;
  const float* panel(size_t p) const { return reinterpret_cast<const float*>(data->data()) + p * K * mr; }
};
// A is [M][K] with row stride lda.
PackedA pack_a_f32(size_t M, size_t K, const float* A, size_t lda);

// The same operand with its buffer shared by every graph in the process that packed identical bytes
// (core/shared_constants.h): for constants packed at build time, once nothing writes them again.
PackedB share_packed(PackedB packed);
PackedA share_packed(PackedA packed);

// Packs B[k0, k0+kc) x [n0, n0+nc) into NR-column panels ([kc][NR] each, columns past nc zeroed),
// panel after panel at `dst`. Called once per cache block, from any pool thread.
using BBlockPacker = std::function<void(size_t k0, size_t kc, size_t n0, size_t nc, float* dst)>;
// The packer for a row-major B ([K][N], row stride ldb).
void pack_b_block_rows(const float* B, size_t ldb, size_t k0, size_t kc, size_t n0, size_t nc, float* dst);

// A's rows read in place by the microkernel, MR streams: when they lie a multiple of 4 KiB apart
// they all fall in one L1 set (64 sets of 64-byte lines on the x86 CPUs we target, 8 or more ways)
// and evict each other on every k (1024^3 ran at 57 GFLOP/s instead of 95 on Zen 4). Whether
// `rows` rows at these byte offsets do; such rows are copied first, at a stride that spreads them.
bool rows_conflict_in_l1(const size_t* byte_offsets, size_t rows);
// The most rows of any microkernel's tile (AVX-512: 14), for per-tile arrays on the stack.
constexpr size_t kGemmMaxTileRows = 16;
// The row stride (floats, a multiple of 16) for copies of `rows` rows of `length` floats.
size_t spread_row_stride(size_t length, size_t rows);

// C[M][N] (row stride ldc) = A * B with A constant and B packed a cache block at a time by
// `pack_b`, then the epilogue. Splits N blocks (or M chunks when N is small) over `pool`.
void gemm_f32_packed_a(size_t M, size_t N, size_t K, const PackedA& A, const BBlockPacker& pack_b, float* C,
                       size_t ldc, const GemmEpilogue& epilogue, ThreadPool* pool);

// Packs A[m0, m0+mc) x [k0, k0+kc) into MR-row panels ([kc][MR] each, rows past M zeroed), panel
// after panel at `dst`. Called once per cache block, from any pool thread.
using ABlockPacker = std::function<void(size_t m0, size_t mc, size_t k0, size_t kc, float* dst)>;
// C[M][N] (row stride ldc) = A * B with A packed a cache block at a time by `pack_a`, then the
// epilogue. Splits 2-D tiles over `pool` (null: the calling thread only).
void gemm_f32_packed(size_t M, size_t N, size_t K, const ABlockPacker& pack_a, const PackedB& B, float* C,
                     size_t ldc, const GemmEpilogue& epilogue, ThreadPool* pool);

// C[M][N] (row stride ldc) = A * B, then the epilogue. A is [M][K] (row stride lda), read in place
// (GEMV rows when M is small, else the indirect microkernel's row pointers), or [K][M] when
// `transposed_a` (packed a block at a time). Splits 2-D tiles over `pool` (null: the calling thread
// only).
void gemm_f32_packed(size_t M, size_t N, size_t K, const float* A, size_t lda, bool transposed_a, const PackedB& B,
                     float* C, size_t ldc, const GemmEpilogue& epilogue, ThreadPool* pool);

// C[M,N] = A[M,K] * B[K,N], row-major with leading dimensions; C is overwritten. Single-threaded.
void gemm_f32(size_t M, size_t N, size_t K, const float* A, size_t lda, const float* B, size_t ldb, float* C,
              size_t ldc);
// The portable reference (plain loops), for tests.
void gemm_f32_ref(size_t M, size_t N, size_t K, const float* A, size_t lda, const float* B, size_t ldb, float* C,
                  size_t ldc);

// What a matmul kernel applies to its output tiles (fused by the compiler; float32 only): an extra
// input (its third) that is a residual of the output's shape or a row of N values, then a clamp,
// then an activation.
struct MatmulEpilogue {
  bool residual = false, column_bias = false;
  float min = -std::numeric_limits<float>::infinity();
  float max = std::numeric_limits<float>::infinity();
  FusedActivation activation{};
};

// matmul with broadcast batch dims; float32 or float16 (computed in float32). A constant 2-D-batch B
// (`b_constant` non-null) is packed once here.
Kernel make_matmul_kernel(DataType type, const std::vector<uint32_t>& a_shape, const std::vector<uint32_t>& b_shape,
                          const std::vector<uint32_t>& out_shape, const void* b_constant = nullptr,
                          const MatmulEpilogue& epilogue = {});

}  // namespace webnn
