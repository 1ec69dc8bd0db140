// Scaled dot-product attention, fused: O = softmax(scale * (Q x Kt) + mask) x V per batch item,
// without the score matrix ever leaving the cache (compiler/passes/attention_fusion.cc builds it
// from matmul, div or mul, add, softmax and matmul).
#pragma once
#include <vector>

#include "kernels/kernel.h"

namespace webnn {

// Where a batch of matrices lies in its tensor, in elements: matrix b starts at batch_offsets[b];
// element (r, c) is row_stride * r + col_stride * c further (strides may be 0: broadcast).
struct StridedMatrices {
  std::vector<size_t> batch_offsets;
  size_t row_stride = 0, col_stride = 0;
};

struct AttentionParams {
  size_t batch = 0, queries = 0, keys = 0, depth = 0, value_depth = 0;
  float scale = 1.0f;
  StridedMatrices query;        // queries x depth
  StridedMatrices keys_t;       // depth x keys (the keys transposed)
  StridedMatrices values;       // keys x value_depth
  bool has_mask = false;
  StridedMatrices mask;         // queries x keys, col_stride 1: added to the scaled scores
};

// float32. Inputs: query, keys_t, values, then the mask when has_mask; output: [batch][queries]
// [value_depth], row-major.
Kernel make_attention_kernel(const AttentionParams& params);

}  // namespace webnn
