// The int8 GEMM family: quantized convolutions (and products) on integers. A's rows and B are
// 32-bit words (A row by row, B panel by panel as [k_steps][NR] words), and a word
// holds either 4 consecutive K values (uint8 activations x int8 weights: the VNNI dot products) or
// 2 (int16 activations x int16 weights, both already minus their zero points: vpmaddwd). Both sum
// into int32 exactly (no 16-bit saturating step); the requantize epilogue then turns each column
// of int32 sums into 8-bit values while the tile is in L1.
#pragma once
#include <cstddef>
#include <cstdint>

#include "kernels/gemm/tile_epilogue.h"

namespace webnn {

enum class Int8Dot : uint8_t {
  kU8S8x4,  // a word: 4 uint8 of A, or 4 int8 of B
  kS16x2,   // a word: 2 int16 of A, or 2 int16 of B
};
constexpr size_t int8_dot_width(Int8Dot dot) { return dot == Int8Dot::kU8S8x4 ? 4 : 2; }

// tile[MR][NR] (int32, overwritten) = A[MR][k_steps] . Bpanel[k_steps][NR], each word a dot product;
// A's row i starts at a + i * a_stride (in words).
using Int8GemmFn = void (*)(size_t k_steps, const uint32_t* a, size_t a_stride, const uint32_t* b_panel,
                            int32_t* tile);

// The requantize epilogue (TileEpilogue's integer fields) turns the int32 sums of output column j into
// 8-bit values in units of the output's scale: t = float(sum + offset[j]) * multiplier[j] + bias[j]
// (multiplier = input scale x weight scale / output scale, bias = bias / output scale, both finite,
// bias never null: zeros when there is none), clamped to [min, max], then q = roundHalfEven(t) +
// output_zero. min and max are an absorbed relu's or clamp's bounds divided by the output scale, each
// clamped to the 8-bit type's range minus the zero point: so q needs no saturation (clamping to
// integer bounds commutes with rounding).
// rows x cols int32 sums (row stride ld) to 8-bit values at out[i * out_ld + j]. rq's arrays are read
// in whole vectors: pad them by 16 past the last column.
using Int8RequantizeFn = void (*)(size_t rows, size_t cols, const int32_t* sums, size_t ld, const TileEpilogue& rq,
                                  uint8_t* out, size_t out_ld);

// The same sums to float32 values (a product whose result is not quantized again): out[i * out_ld + j]
// = clamp(fma(float(sum + offset[j]), multiplier[j], bias[j]), min, max), multiplier = input scale x
// weight scale (output_zero and output_signed unused). Padded arrays as above.
using Int8DequantizeFn = void (*)(size_t rows, size_t cols, const int32_t* sums, size_t ld, const TileEpilogue& rq,
                                  float* out, size_t out_ld);

// Depthwise convolutions (channel multiplier 1) on NHWC pixels. The filter (int32 weights minus their
// zero points, [tap][channel]) is packed once by Int8DepthwisePackFn as int16 pairs of taps (an odd
// tap count's last pair has a zero weight) in blocks of kInt8DepthwiseBlock channels, ordered as the
// level's kernel reads them.
constexpr size_t kInt8DepthwiseBlock = 32;
constexpr size_t int8_depthwise_packed_count(size_t channels, size_t taps) {
  return (taps + 1) / 2 * (channels + kInt8DepthwiseBlock - 1) / kInt8DepthwiseBlock * kInt8DepthwiseBlock * 2;
}
using Int8DepthwisePackFn = void (*)(size_t channels, size_t taps, const int32_t* filter, int16_t* packed);
// `pixels` output pixels in a row: pixel p reads tap t's channels at x[t] + p * step (a tap outside
// the input points at a run of input zero points) and sums x * w over the taps in int32 (exact:
// rq.offset carries the zero point's share, -input_zero * sum of w), then requantizes the sums into
// out + p * channels. rq's per-channel arrays are read in whole vectors (pad them by 16).
using Int8DepthwiseFn = void (*)(size_t pixels, size_t step, size_t channels, size_t taps, const uint8_t* const* x,
                                 bool input_signed, const int16_t* packed, const TileEpilogue& rq, uint8_t* out);

struct Int8GemmUkernel {
  Int8GemmFn fn = nullptr;  // null: this CPU has no such kernel
  size_t mr = 0, nr = 0;
  Int8Dot dot = Int8Dot::kS16x2;
  const char* name = "";
  // K steps a caller pads to (zero weights) when it can: the kernel takes any count, but runs a
  // multiple of this fastest (AMX: whole 64-byte tile rows).
  size_t k_steps_multiple = 1;
};

// quantizeLinear / dequantizeLinear of contiguous float32 <-> 8-bit values with one scale and zero
// point (the quantize kernels' per-block runs and the element-wise chain's steps): y = saturate(
// roundHalfEven(x / scale) + zero), NaN to 0; and y = float(x - zero) * scale.
// `inverse` is quantize_inverse(scale) (kernels/quantize/quantize.h): the float nearest 1 / scale,
// with which the quotient is computed without a division, or 0 to divide.
using QuantizeRunFn = void (*)(const float* x, float scale, float inverse, int32_t zero, bool is_signed, uint8_t* y,
                               size_t n);
using DequantizeRunFn = void (*)(const uint8_t* x, bool is_signed, int32_t zero, float scale, float* y, size_t n);
// The two in one loop (an element-wise chain's quantize step read only by a dequantize step): y =
// dequantize(quantize(x, scale, zero), dq_scale, dq_zero), the same bits as the two loops.
using QuantizeDequantizeRunFn = void (*)(const float* x, float scale, float inverse, int32_t zero, bool is_signed,
                                         float dq_scale, int32_t dq_zero, float* y, size_t n);

// An element-wise chain on 8-bit tensors in one pass: y = quantize(clamp(dequantize(a) op
// dequantize(b), min, max)), or with b_float, b a float32 tensor read as it is (op add, sub or mul),
// each step in float32 as its op's own loop computes it (the same bits):
// dequantize is float(x - zero) * scale, the quantize divides exactly (with `inverse`, see
// QuantizeRunFn). min and max are an absorbed relu's or clamp's bounds (-inf, inf when none).
enum class Int8BinaryOp : uint8_t { kAdd, kSub, kMul, kMax, kMin };
struct Int8Binary {
  Int8BinaryOp op = Int8BinaryOp::kAdd;
  bool a_signed = false, b_signed = false, out_signed = false;  // int8, else uint8
  bool b_float = false;  // b: float32 values (b_signed, b_zero and b_scale unused)
  int32_t a_zero = 0, b_zero = 0, out_zero = 0;
  float a_scale = 1, b_scale = 1, out_scale = 1, out_inverse = 1;
  float min = 0, max = 0;
  // Every value of the chain and its quotient by the output scale are finite (two 8-bit inputs and
  // scales small enough): the loop may skip its NaN and overflow handling.
  bool finite = false;
};
using Int8BinaryFn = void (*)(const uint8_t* a, const uint8_t* b, size_t n, const Int8Binary& p, uint8_t* y);

// y[i] = table[x[i]] for i < n: an element-wise chain from one 8-bit tensor to another, tabulated.
using Int8LookupFn = void (*)(const uint8_t* x, size_t n, const uint8_t* table, uint8_t* y);

struct Int8Kernels {
  Int8GemmUkernel dot4;  // uint8 x int8 (AMX or VNNI), when the CPU has it
  Int8GemmUkernel dot2;  // int16 x int16, everywhere
  Int8RequantizeFn requantize;
  Int8DequantizeFn dequantize_sums;
  Int8DepthwisePackFn depthwise_pack;
  Int8DepthwiseFn depthwise;
  QuantizeRunFn quantize;
  DequantizeRunFn dequantize;
  QuantizeDequantizeRunFn quantize_dequantize;
  Int8BinaryFn binary;
  Int8LookupFn lookup;
};

const Int8Kernels& int8_kernels_ref();
const Int8Kernels& int8_kernels_avx2();
const Int8Kernels& int8_kernels_avx512();
Int8GemmUkernel u8s8_gemm_12x32_avx512vnni();
Int8GemmUkernel u8s8_gemm_6x16_avxvnni();
Int8GemmUkernel u8s8_gemm_32x32_amx();
void u8_lookup_avx512vbmi(const uint8_t* x, size_t n, const uint8_t* table, uint8_t* y);

}  // namespace webnn
