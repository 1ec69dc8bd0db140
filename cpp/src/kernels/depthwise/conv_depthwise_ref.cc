// The depthwise loops for any CPU: one float per "vector".
#include <algorithm>
#include <type_traits>
#include <utility>

#include "core/float16.h"
#include "kernels/depthwise/conv_depthwise.h"

namespace webnn {
namespace ref {

namespace {

struct F32x1 {
  using T = float;
  using Mask = bool;
  using Shift = bool;  // clears the lane
  static constexpr size_t kLanes = 1;
  static constexpr size_t kRegisters = 16;
  static constexpr bool kPermute2 = false;
  static T zero() { return 0.0f; }
  static T splat(float x) { return x; }
  static T load(const float* p) { return *p; }
  static T load(const float* p, Mask m) { return m ? *p : 0.0f; }
  static void store(float* p, T v) { *p = v; }
  static void store(float* p, T v, Mask m) {
    if (m) *p = v;
  }
  static Mask first(size_t n) { return n > 0; }
  static T fma(T a, T b, T c) { return a * b + c; }
  static T clamp(T v, T lo, T hi) {
    v = v < lo ? lo : v;  // comparisons with NaN are false: NaN passes through
    return v > hi ? hi : v;
  }
  static T round_to_half(T v) { return half_to_float(float_to_half(v)); }
  static Shift shift_by(size_t n) { return n > 0; }
  static T shift_up(T v, Shift clear) { return clear ? 0.0f : v; }
  static void deinterleave(T a, T b, T& even, T& odd) {
    even = a;
    odd = b;
  }
};

}  // namespace

#include "kernels/depthwise/conv_depthwise_impl.h"

void f32_dwconv_items(const DepthwisePlan& plan, const float* weights, const float* bias, const float* in,
                      float* out, const float* residual, size_t begin, size_t end, float* scratch) {
  if (plan.nhwc) f32_dwconv_nhwc<F32x1>(plan, weights, bias, in, out, residual, begin, end);
  else f32_dwconv_nchw<F32x1>(plan, weights, bias, in, out, residual, begin, end, scratch);
}

}  // namespace ref

const DepthwiseLoops& depthwise_loops_ref() {
  static const DepthwiseLoops loops{ref::f32_dwconv_items, 1, 1};
  return loops;
}

}  // namespace webnn
