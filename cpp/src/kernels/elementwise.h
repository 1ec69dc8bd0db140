// Element-wise kernel family: binary ops with broadcasting, unary ops.
#pragma once
#include "graph/op_def.h"

namespace webnn {

enum class BinaryOp { kAdd, kSub, kMul, kDiv, kMax, kMin, kPow };
Kernel make_binary_kernel(BinaryOp op, DataType type, const std::vector<uint32_t>& a_shape,
                          const std::vector<uint32_t>& b_shape, const std::vector<uint32_t>& out_shape);

enum class UnaryOp { kRelu };
Kernel make_unary_kernel(UnaryOp op, DataType type, size_t count);

// Copies `bytes` (used by identity-like ops that cannot alias).
Kernel make_copy_kernel(size_t bytes);

}  // namespace webnn
