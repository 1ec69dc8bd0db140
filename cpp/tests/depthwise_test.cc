// Depthwise conv2d tester: every level's loops (kernel_table_for) against plain loops, NCHW and NHWC,
// over filter sizes, strides, padding, dilations and channel counts off the lane width, with bias,
// residual, clamp and a fused activation (SiLU, after the clamp).
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/thread_pool.h"
#include "kernels/conv/conv.h"
#include "kernels/depthwise/conv_depthwise.h"
#include "kernels/platform.h"
#include "tester.h"

using namespace webnn;
using namespace webnn_test;

namespace {

struct Shape {
  size_t channels, h, w, k, stride, dilation, pad;
};

void check(const DepthwiseLoops& loops, const char* level, const Shape& s, bool nhwc, bool residual, bool clamp,
           ThreadPool* pool, std::mt19937& rng) {
  Conv2dParams p{};
  p.batch = 2;
  p.in_channels = p.out_channels = p.groups = s.channels;
  p.in_h = s.h, p.in_w = s.w;
  p.kernel_h = p.kernel_w = s.k;
  p.stride_h = p.stride_w = s.stride;
  p.dilation_h = p.dilation_w = s.dilation;
  p.pad_top = p.pad_left = s.pad;
  const size_t window = (s.k - 1) * s.dilation + 1;
  if (s.h + 2 * s.pad < window || s.w + 2 * s.pad < window) return;
  p.out_h = (s.h + 2 * s.pad - window) / s.stride + 1;
  p.out_w = (s.w + 2 * s.pad - window) / s.stride + 1;
  p.nhwc = nhwc;
  p.filter_layout = "oihw";
  p.has_bias = true;
  p.has_residual = residual;
  if (clamp) p.activation_min = -0.25f, p.activation_max = 0.25f, p.activation = {true, UnaryOp::kSilu, {}};
  const size_t C = s.channels, taps = s.k * s.k, N = p.batch;
  const size_t in_count = N * C * s.h * s.w, out_count = N * C * p.out_h * p.out_w;
  const std::vector<float> in = random_floats(in_count, rng), filter = random_floats(C * taps, rng);
  const std::vector<float> bias = random_floats(C, rng), addend = random_floats(out_count, rng);
  std::vector<float> out(out_count);
  // NCHW: (n, c, y, x) at ((n * C + c) * H + y) * W + x; NHWC: ((n * H + y) * W + x) * C + c.
  auto at = [&](size_t n, size_t c, size_t y, size_t x, size_t H, size_t W) {
    return nhwc ? ((n * H + y) * W + x) * C + c : ((n * C + c) * H + y) * W + x;
  };
  Kernel kernel = make_depthwise_conv2d_kernel(DataType::kFloat32, p, filter.data(), bias.data(), &loops);
  const void* inputs[4] = {in.data(), filter.data(), bias.data(), addend.data()};
  void* outputs[1] = {out.data()};
  kernel(KernelArgs{inputs, outputs, pool});
  const std::string where = std::string(level) + (nhwc ? " nhwc" : " nchw") + " C=" + std::to_string(C) + " " +
                            std::to_string(s.h) + "x" + std::to_string(s.w) + " k=" + std::to_string(s.k) +
                            " stride=" + std::to_string(s.stride) + " dilation=" + std::to_string(s.dilation) +
                            " pad=" + std::to_string(s.pad) + " residual=" + std::to_string(residual) +
                            " clamp+silu=" + std::to_string(clamp);
  for (size_t n = 0; n < N; ++n)
    for (size_t c = 0; c < C; ++c)
      for (size_t oy = 0; oy < p.out_h; ++oy)
        for (size_t ox = 0; ox < p.out_w; ++ox) {
          double v = bias[c];
          for (size_t kh = 0; kh < s.k; ++kh)
            for (size_t kw = 0; kw < s.k; ++kw) {
              const ptrdiff_t y = ptrdiff_t(oy * s.stride + kh * s.dilation) - ptrdiff_t(s.pad);
              const ptrdiff_t x = ptrdiff_t(ox * s.stride + kw * s.dilation) - ptrdiff_t(s.pad);
              if (y < 0 || x < 0 || y >= ptrdiff_t(s.h) || x >= ptrdiff_t(s.w)) continue;
              v += double(filter[c * taps + kh * s.k + kw]) * in[at(n, c, size_t(y), size_t(x), s.h, s.w)];
            }
          const size_t o = at(n, c, oy, ox, p.out_h, p.out_w);
          if (residual) v += addend[o];
          if (clamp) v = std::min(std::max(v, -0.25), 0.25), v /= 1.0 + std::exp(-v);
          if (!near(out[o], v, 1e-5 * (taps + 2),
                    where + " at n=" + std::to_string(n) + " c=" + std::to_string(c) + " y=" + std::to_string(oy) +
                        " x=" + std::to_string(ox)))
            return;
        }
}

}  // namespace

int main() {
  std::mt19937 rng(7);
  ThreadPool pool(2);
  // Widths around the 8- and 16-float vectors and the narrow-plane paths; channels off the lanes.
  const std::vector<Shape> shapes = {
      {3, 5, 5, 3, 1, 1, 1},   {5, 9, 9, 3, 2, 1, 1},    {17, 12, 17, 3, 1, 1, 1}, {16, 14, 33, 3, 2, 1, 0},
      {7, 11, 20, 5, 1, 1, 2}, {9, 16, 31, 5, 2, 1, 2},  {33, 6, 7, 3, 1, 2, 2},   {2, 10, 12, 3, 3, 1, 1},
      {4, 8, 40, 7, 1, 1, 3},  {19, 4, 4, 1, 1, 1, 0},   {65, 6, 9, 3, 1, 1, 1},   {8, 3, 18, 2, 2, 1, 0},
      {3, 13, 64, 3, 1, 1, 1}, {6, 7, 26, 5, 2, 2, 4},
  };
  for (CpuIsa isa : levels()) {
    const KernelTable table = kernel_table_for(isa);
    for (const Shape& s : shapes)
      for (bool nhwc : {false, true})
        for (bool residual : {false, true})
          for (bool clamp : {false, true}) check(*table.depthwise, isa_name(isa), s, nhwc, residual, clamp, &pool, rng);
  }
  return tester_exit("depthwise_test");
}
