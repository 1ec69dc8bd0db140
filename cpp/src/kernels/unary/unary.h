// Unary kernel family: element-wise math, activations, clamp and cast. Every kernel maps
// element i of the input to element i of the output (same element count).
#pragma once
#include "kernels/kernel.h"

namespace webnn {

enum class UnaryOp {
  // element-wise unary
  kAbs, kCeil, kCos, kErf, kExp, kFloor, kLog, kNeg, kReciprocal, kRoundEven, kSign, kSin, kSqrt, kTan,
  // activations
  kElu, kGelu, kHardSigmoid, kHardSwish, kLeakyRelu, kLinear, kRelu, kSigmoid, kSoftplus, kSoftsign, kTanh,
  // fused only (no WebNN op): x * sigmoid(x), the compiler's fusion of sigmoid and mul
  kSilu,
  // compiler only (no WebNN op): x rounded to the nearest float16 value (to even), kept in float32:
  // what a float16 op's store does, for float16 values the compiler holds in float32
  kRoundToHalf,
};

// Scalar options of the activations, already cast to the input's data type.
struct UnaryParams {
  float alpha = 0;
  float beta = 0;
};

// out[i] = op(in[i]) for i < count (in == out allowed).
using UnaryLoopFn = void (*)(const void* in, void* out, size_t count, const UnaryParams& params);

// An element-wise op a kernel applies to its float32 output while it is still in cache (the
// compiler fuses it into the kernel's epilogue): out = op(out), after the epilogue's add and clamp;
// then out = out * scale + shift (a multiplication and an addition by single values after it).
struct FusedActivation {
  bool present = false;
  UnaryOp op = UnaryOp::kLinear;
  UnaryParams params;
  float scale = 1.0f, shift = 0.0f;
  bool round_to_half = false;  // last, the result rounded to float16 (UnaryOp::kRoundToHalf)
  bool affine() const { return scale != 1.0f || shift != 0.0f; }
};
// Applies a fused activation (and its affine tail) in place with the active level's float32 loop
// (nothing when absent).
struct ActivationLoop {
  UnaryLoopFn fn = nullptr;
  UnaryParams params;
  float scale = 1.0f, shift = 0.0f;
  UnaryLoopFn round = nullptr;  // rounds to float16 values, last
  void operator()(float* values, size_t count) const {
    if (fn) fn(values, values, count, params);
    if (scale != 1.0f || shift != 0.0f)
      for (size_t i = 0; i < count; ++i) values[i] = values[i] * scale + shift;
    if (round) round(values, values, count, params);
  }
  explicit operator bool() const { return fn != nullptr || scale != 1.0f || shift != 0.0f || round != nullptr; }
  // Nothing but the rounding (which a GEMM tile's epilogue does in registers).
  bool only_rounds() const { return round != nullptr && fn == nullptr && scale == 1.0f && shift == 0.0f; }
};
ActivationLoop activation_loop(const FusedActivation& activation);

// `type` must be one the op allows (the builder has checked it against the op's limits).
Kernel make_unary_kernel(UnaryOp op, DataType type, size_t count, UnaryParams params = {});

// min(max(x, min_value), max_value), with the bounds already cast to `type` (raw bytes of one
// element each). A NaN bound never clamps.
Kernel make_clamp_kernel(DataType type, size_t count, const void* min_value, const void* max_value);

// The cast() operation from `from` to `to`.
Kernel make_cast_kernel(DataType from, DataType to, size_t count);

// Whole float16 arrays widened to float32 and float32 rounded to float16 (round to nearest even, as
// cast() does), with the active level's vector loops, split among `pool`'s threads: the float16
// forms of the kernels that compute in float32 convert their operands with these.
void widen_halves(const void* in, float* out, size_t count, ThreadPool* pool);
void narrow_to_halves(const float* in, void* out, size_t count, ThreadPool* pool);
// Rounds float32 values in place to the nearest float16 values (kept in float32), split among
// `pool`'s threads: the store of float16 values the compiler holds in float32.
void round_to_halves(float* values, size_t count, ThreadPool* pool);

// ---- the inner loops, one set per ISA level (kernel_table().unary picks the active one)

using ClampLoopFn = void (*)(const void* in, void* out, size_t count, const void* min_value, const void* max_value);
using CastLoopFn = void (*)(const void* in, void* out, size_t count);
struct UnaryLoops {
  UnaryLoopFn (*unary)(UnaryOp op, DataType type);  // null where the op has no variant for the type
  ClampLoopFn (*clamp)(DataType type);
  CastLoopFn (*cast)(DataType from, DataType to);
};
const UnaryLoops& unary_loops_ref();
const UnaryLoops& unary_loops_avx2();    // x86-64 only
const UnaryLoops& unary_loops_avx512();  // x86-64 only

}  // namespace webnn
