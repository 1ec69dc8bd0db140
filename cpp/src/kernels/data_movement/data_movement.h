// Data-movement kernel family: elements are copied, never converted, so every kernel serves every dtype.
//   - strided N-d copies: transpose, slice, expand, tile, reverse, concat, split;
//   - padding (constant, edge, reflection);
//   - triangular masking.
#pragma once
#include "kernels/kernel.h"

namespace webnn {

// Copies `shape` elements from args.inputs[input] to args.outputs[output]. Element k of the walk
// (coordinates c) reads src_offset + Σ c[d]·src_strides[d] and writes dst_offset + Σ c[d]·dst_strides[d]
// (in elements). Strides may be 0 (broadcast) or negative (reverse); every address must be in bounds.
struct StridedCopy {
  int input = 0;
  int output = 0;
  std::vector<int64_t> shape;
  int64_t src_offset = 0;
  int64_t dst_offset = 0;
  std::vector<int64_t> src_strides;
  std::vector<int64_t> dst_strides;
};

// Row-major strides of `shape`, in elements.
std::vector<int64_t> row_major_strides(const std::vector<uint32_t>& shape);

// A contiguous copy of a tensor of `shape`: src and dst both row-major from offset 0.
StridedCopy contiguous_copy(const std::vector<uint32_t>& shape);

// Runs every copy (they must write disjoint elements). Dims are simplified once, here.
Kernel make_strided_copy_kernel(DataType type, std::vector<StridedCopy> copies);

enum class PadMode { kConstant, kEdge, kReflection };
// In kConstant mode the padding is `value`, cast to `type` by the spec's cast algorithm.
// kReflection needs every padding < its dim (checked by the caller).
Kernel make_pad_kernel(DataType type, const std::vector<uint32_t>& input_shape, const std::vector<int64_t>& begin,
                       const std::vector<int64_t>& end, PadMode mode, const Number& value);

// Keeps the upper (j - i >= diagonal) or lower (j - i <= diagonal) triangle of the last two dims;
// zeroes the rest.
Kernel make_triangular_kernel(DataType type, const std::vector<uint32_t>& shape, bool upper, int64_t diagonal);

// ---- the inner loops, one set per ISA level (kernel_table().data_movement picks the active one),
// for elements of 1, 2, 4 or 8 bytes (index: log2 of the size)

// A transposed tile: dst[i * dst_stride + j] = src[i + j * src_stride] for i < rows, j < cols.
using TransposeTileFn = void (*)(const void* src, void* dst, int64_t rows, int64_t cols, int64_t src_stride,
                                 int64_t dst_stride);
// dst[j] = *value for j < count.
using FillFn = void (*)(void* dst, const void* value, int64_t count);
// Row r of `rows` (`bytes` bytes each) from src + r * src_stride to dst + r * dst_stride (strides
// in bytes): a concat's or split's channel slices, short rows that a memcpy call per row made slow.
using CopyRowsFn = void (*)(void* dst, int64_t dst_stride, const void* src, int64_t src_stride, int64_t rows,
                            int64_t bytes);
struct DataMovementLoops {
  TransposeTileFn transpose_tile[4];
  FillFn fill[4];
  CopyRowsFn copy_rows;
};
const DataMovementLoops& data_movement_loops_ref();
const DataMovementLoops& data_movement_loops_avx2();    // x86-64 only
const DataMovementLoops& data_movement_loops_avx512();  // x86-64 only

}  // namespace webnn
