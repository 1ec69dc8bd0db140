// Reference transposed convolution as GEMM + col2im: per group,
// cols[pixel][o, ky, kx] = input[pixel][c] * filter[c][o, ky, kx] (gemm_f32), then every column
// is added into the output position it scatters to.
#include <algorithm>

#include "kernels/conv/conv_transpose.h"
#include "kernels/gemm/gemm.h"
#include "kernels/kernel_util.h"
#include "core/thread_pool.h"

namespace webnn {

namespace {

constexpr size_t kColsTileElements = size_t(1) << 20;

template <class T>
void conv_transpose2d_run(const ConvTranspose2dParams& p, const KernelArgs& args) {
  const T* input = static_cast<const T*>(args.inputs[0]);
  const T* filter = static_cast<const T*>(args.inputs[1]);
  const T* bias = p.has_bias ? static_cast<const T*>(args.inputs[2]) : nullptr;
  T* output = static_cast<T*>(args.outputs[0]);
  const size_t N = p.batch, C = p.in_channels, H = p.in_h, W = p.in_w, HW = H * W;
  const size_t O = p.out_channels, OH = p.out_h, OW = p.out_w, OHW = OH * OW;
  const size_t G = p.groups, Cg = C / G, Og = O / G, KH = p.kernel_h, KW = p.kernel_w, KK = KH * KW;
  const size_t cols_width = Og * KK;

  // The filter as float32 [C][Og][kH][kW] (group g owns rows [g*Cg, (g+1)*Cg)).
  std::vector<float> w(C * cols_width);
  for (size_t c = 0; c < C; ++c)
    for (size_t o = 0; o < Og; ++o)
      for (size_t ky = 0; ky < KH; ++ky)
        for (size_t kx = 0; kx < KW; ++kx)
          w[(c * Og + o) * KK + ky * KW + kx] = load(filter[c * p.filter_stride_c + o * p.filter_stride_o +
                                                            ky * p.filter_stride_h + kx * p.filter_stride_w]);

  // The input as float32 [N*H*W][C].
  std::vector<float> pixels(N * HW * C);
  args.pool->parallel_for(N * HW, 1024, [&](size_t begin, size_t end) {
    for (size_t row = begin; row < end; ++row) {
      const size_t n = row / HW, q = row % HW;
      for (size_t c = 0; c < C; ++c)
        pixels[row * C + c] = load(input[p.nhwc ? row * C + c : (n * C + c) * HW + q]);
    }
  });

  // float32 accumulator [N][O][OH*OW] seeded with the bias (the output itself for float32 nchw).
  const bool direct = std::is_same_v<T, float> && !p.nhwc;
  std::vector<float> acc_buf(direct ? 0 : N * O * OHW);
  float* acc = direct ? reinterpret_cast<float*>(output) : acc_buf.data();
  args.pool->parallel_for(N * O, 1, [&](size_t begin, size_t end) {
    for (size_t plane = begin; plane < end; ++plane)
      std::fill_n(acc + plane * OHW, OHW, bias ? float(load(bias[plane % O])) : 0.0f);
  });

  const size_t rows_total = N * HW;
  const size_t tile = std::min(rows_total, std::max<size_t>(1, kColsTileElements / cols_width));
  std::vector<float> cols(tile * cols_width);
  const size_t gemm_grain = std::max<size_t>(1, (size_t(1) << 16) / std::max<size_t>(1, cols_width * Cg));
  for (size_t g = 0; g < G; ++g) {
    const float* wg = w.data() + g * Cg * cols_width;
    for (size_t r0 = 0; r0 < rows_total; r0 += tile) {
      const size_t rows = std::min(tile, rows_total - r0);
      args.pool->parallel_for(rows, gemm_grain, [&](size_t begin, size_t end) {
        gemm_f32(end - begin, cols_width, Cg, pixels.data() + (r0 + begin) * C + g * Cg, C, wg, cols_width,
                 cols.data() + begin * cols_width, cols_width);
      });
      // col2im: each (image, output channel) plane is written by one worker.
      const size_t n_first = r0 / HW, n_count = (r0 + rows - 1) / HW - n_first + 1;
      args.pool->parallel_for(n_count * Og, 1, [&](size_t begin, size_t end) {
        for (size_t item = begin; item < end; ++item) {
          const size_t n = n_first + item / Og, o = item % Og;
          float* plane = acc + (n * O + g * Og + o) * OHW;
          const size_t row_begin = std::max(r0, n * HW), row_end = std::min(r0 + rows, (n + 1) * HW);
          for (size_t row = row_begin; row < row_end; ++row) {
            const size_t q = row - n * HW, iy = q / W, ix = q % W;
            const float* src = cols.data() + (row - r0) * cols_width + o * KK;
            for (size_t ky = 0; ky < KH; ++ky) {
              // Positions before the output crop (padding) or past its end receive nothing.
              const size_t y = iy * p.stride_h + ky * p.dilation_h;
              if (y < p.pad_top || y - p.pad_top >= OH) continue;
              float* dst = plane + (y - p.pad_top) * OW;
              for (size_t kx = 0; kx < KW; ++kx) {
                const size_t x = ix * p.stride_w + kx * p.dilation_w;
                if (x < p.pad_left || x - p.pad_left >= OW) continue;
                dst[x - p.pad_left] += src[ky * KW + kx];
              }
            }
          }
        }
      });
    }
  }

  if (direct) return;
  args.pool->parallel_for(N * O, 1, [&](size_t begin, size_t end) {
    for (size_t plane = begin; plane < end; ++plane) {
      const size_t n = plane / O, o = plane % O;
      const float* src = acc + plane * OHW;
      for (size_t q = 0; q < OHW; ++q)
        store(output + (p.nhwc ? (n * OHW + q) * O + o : plane * OHW + q), src[q]);
    }
  });
}

}  // namespace

Kernel make_conv_transpose2d_kernel(DataType type, const ConvTranspose2dParams& params) {
  if (type == DataType::kFloat16)
    return [params](const KernelArgs& a) { conv_transpose2d_run<float16>(params, a); };
  return [params](const KernelArgs& a) { conv_transpose2d_run<float>(params, a); };
}

}  // namespace webnn
