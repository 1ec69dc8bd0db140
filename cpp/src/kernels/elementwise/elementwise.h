// Element-wise kernel family: broadcasting binary ops, predicates (uint8 0/1 results), where,
// unary ops.
#pragma once
#include "kernels/kernel.h"

namespace webnn {

// out = op(a, b), a and b broadcast to out_shape; all of `type`. kPrelu: a is the input, b the slope.
enum class BinaryOp { kAdd, kSub, kMul, kDiv, kMax, kMin, kPow, kPrelu };
Kernel make_binary_kernel(BinaryOp op, DataType type, const std::vector<uint32_t>& a_shape,
                          const std::vector<uint32_t>& b_shape, const std::vector<uint32_t>& out_shape);

// out = op(a, b) as uint8 0/1, a and b (of `input_type`) broadcast to out_shape. The logical ops
// read any non-zero value as true.
enum class BinaryPredicate {
  kEqual, kNotEqual, kGreater, kGreaterOrEqual, kLesser, kLesserOrEqual,
  kLogicalAnd, kLogicalOr, kLogicalXor,
};
Kernel make_binary_predicate_kernel(BinaryPredicate op, DataType input_type, const std::vector<uint32_t>& a_shape,
                                    const std::vector<uint32_t>& b_shape, const std::vector<uint32_t>& out_shape);

// out = op(a) as uint8 0/1, same shape.
enum class UnaryPredicate { kLogicalNot, kIsNaN, kIsInfinite };
Kernel make_unary_predicate_kernel(UnaryPredicate op, DataType input_type, const std::vector<uint32_t>& shape);

// out = condition != 0 ? true_value : false_value, the three broadcast to out_shape; condition is
// uint8, the values and the output `type`.
Kernel make_where_kernel(DataType type, const std::vector<uint32_t>& condition_shape,
                         const std::vector<uint32_t>& true_shape, const std::vector<uint32_t>& false_shape,
                         const std::vector<uint32_t>& out_shape);


// ---- the inner loops, one set per ISA level (kernel_table().elementwise picks the active one)

// out[i] = op(src_0[i * stride_0], ..., src_{N-1}[i * stride_{N-1}]) for i < count (the operand
// order and types of the makers above; broadcast strides are 0, contiguous ones 1).
using ElementwiseBlockFn = void (*)(void* out, size_t count, const void* const* src, const size_t* stride);
struct ElementwiseLoops {
  ElementwiseBlockFn (*binary)(BinaryOp op, DataType type);
  ElementwiseBlockFn (*binary_predicate)(BinaryPredicate op, DataType input_type);
  ElementwiseBlockFn (*unary_predicate)(UnaryPredicate op, DataType input_type);
  ElementwiseBlockFn (*where)(DataType type);
};
const ElementwiseLoops& elementwise_loops_ref();
const ElementwiseLoops& elementwise_loops_avx2();    // x86-64 only
const ElementwiseLoops& elementwise_loops_avx512();  // x86-64 only

}  // namespace webnn
