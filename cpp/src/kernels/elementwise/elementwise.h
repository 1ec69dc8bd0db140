// Element-wise kernel family: broadcasting binary ops, predicates (uint8 0/1 results), where,
// unary ops.
#pragma once
#include "kernels/kernel.h"
#include "kernels/unary/unary.h"

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

// One op of a fused element-wise chain (make_elementwise_chain_kernel) and where its operands come
// from: a >= 0 is the result of step a (an earlier one), a < 0 the chain's input -1 - a; b likewise
// for binary steps.
struct ChainStep {
  // kDequantize reads an 8-bit chain input; kQuantize, the last step only, writes the 8-bit output.
  enum class Kind { kUnary, kBinary, kClamp, kDequantize, kQuantize };
  Kind kind = Kind::kUnary;
  UnaryOp unary = UnaryOp::kLinear;  // kUnary
  UnaryParams params;
  BinaryOp binary = BinaryOp::kAdd;  // kBinary
  float min = 0.0f, max = 0.0f;      // kClamp
  float scale = 1.0f;                // kDequantize, kQuantize: per tensor
  int32_t zero_point = 0;
  bool is_signed = false;            // int8, else uint8
  int a = 0, b = 0;
};
// The most inputs a chain reads.
constexpr size_t kMaxChainInputs = 8;
// float32 steps (after 8-bit inputs are dequantized, before an 8-bit output is quantized) run block by block over the output, each block's values in L1 from step to step:
// only the last step writes memory. The inputs broadcast to out_shape (those of unary and clamp
// steps have out_shape). Each step runs the loop its op runs alone: results are the same bits.
// constants: per input, its data when it is a constant (else null). A chain whose only other input
// is one 8-bit tensor read by dequantize steps, all other inputs single constant values, runs as a
// 256-entry table of its own results.
Kernel make_elementwise_chain_kernel(const std::vector<ChainStep>& steps, const std::vector<uint32_t>& out_shape,
                                     const std::vector<std::vector<uint32_t>>& input_shapes,
                                     const std::vector<const void*>& constants = {});

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
