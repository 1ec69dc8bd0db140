// Portable reference convolution: the filter is repacked to [O][kH][kW][I/g] float32 once per
// dispatch, then each output pixel is a dot product over the receptive field.
#include <cstring>

#include "kernels/conv.h"
#include "kernels/kernel_util.h"
#include "runtime/thread_pool.h"

namespace webnn {

namespace {

struct FilterStrides {
  size_t o, i, h, w;
};
FilterStrides filter_strides(const Conv2dParams& p) {
  const size_t O = p.out_channels, I = p.in_channels / p.groups, KH = p.kernel_h, KW = p.kernel_w;
  if (p.filter_layout == "hwio") return {1, O, KW * I * O, I * O};
  if (p.filter_layout == "ohwi") return {KH * KW * I, 1, KW * I, I};
  if (p.filter_layout == "ihwo") return {1, KH * KW * O, KW * O, O};
  return {I * KH * KW, KH * KW, KW, 1};  // oihw
}

template <class T>
void conv2d_run(const Conv2dParams& p, const KernelArgs& args) {
  const T* input = static_cast<const T*>(args.inputs[0]);
  const T* filter = static_cast<const T*>(args.inputs[1]);
  const T* bias = p.has_bias ? static_cast<const T*>(args.inputs[2]) : nullptr;
  T* output = static_cast<T*>(args.outputs[0]);
  const size_t Ig = p.in_channels / p.groups, Og = p.out_channels / p.groups;
  const size_t KH = p.kernel_h, KW = p.kernel_w;

  // Repack the filter to [O][kH][kW][Ig] float32.
  std::vector<float> w(p.out_channels * KH * KW * Ig);
  const FilterStrides fs = filter_strides(p);
  for (size_t o = 0; o < p.out_channels; ++o)
    for (size_t kh = 0; kh < KH; ++kh)
      for (size_t kw = 0; kw < KW; ++kw)
        for (size_t i = 0; i < Ig; ++i)
          w[((o * KH + kh) * KW + kw) * Ig + i] = float(load(filter[o * fs.o + i * fs.i + kh * fs.h + kw * fs.w]));

  // Input element (n, c, y, x) and output element (n, o, y, x) strides.
  const size_t H = p.in_h, W = p.in_w, C = p.in_channels, OH = p.out_h, OW = p.out_w, O = p.out_channels;
  const size_t in_n = C * H * W, in_c = p.nhwc ? 1 : H * W, in_y = p.nhwc ? W * C : W, in_x = p.nhwc ? C : 1;
  const size_t out_n = O * OH * OW, out_c = p.nhwc ? 1 : OH * OW, out_y = p.nhwc ? OW * O : OW,
               out_x = p.nhwc ? O : 1;

  args.pool->parallel_for(p.batch * OH, 1, [&](size_t begin, size_t end) {
    std::vector<float> patch(KH * KW * Ig);
    for (size_t row = begin; row < end; ++row) {
      const size_t n = row / OH, oy = row % OH;
      for (size_t ox = 0; ox < OW; ++ox) {
        for (size_t g = 0; g < p.groups; ++g) {
          // Gather the receptive field of group g (zeros outside the input).
          for (size_t kh = 0; kh < KH; ++kh) {
            const long long y = (long long)(oy * p.stride_h + kh * p.dilation_h) - (long long)p.pad_top;
            for (size_t kw = 0; kw < KW; ++kw) {
              const long long x = (long long)(ox * p.stride_w + kw * p.dilation_w) - (long long)p.pad_left;
              float* dst = &patch[(kh * KW + kw) * Ig];
              if (y < 0 || y >= (long long)H || x < 0 || x >= (long long)W) {
                std::memset(dst, 0, Ig * sizeof(float));
                continue;
              }
              const T* src = input + n * in_n + size_t(y) * in_y + size_t(x) * in_x + g * Ig * in_c;
              for (size_t i = 0; i < Ig; ++i) dst[i] = float(load(src[i * in_c]));
            }
          }
          for (size_t oc = g * Og; oc < (g + 1) * Og; ++oc) {
            const float* wo = &w[oc * KH * KW * Ig];
            float acc = 0;
            for (size_t k = 0; k < KH * KW * Ig; ++k) acc += patch[k] * wo[k];
            if (bias) acc += float(load(bias[oc]));
            store(output + n * out_n + oc * out_c + oy * out_y + ox * out_x, compute_t<T>(acc));
          }
        }
      }
    }
  });
}

}  // namespace

Kernel make_conv2d_kernel(DataType type, const Conv2dParams& params) {
  if (type == DataType::kFloat16) return [params](const KernelArgs& a) { conv2d_run<float16>(params, a); };
  return [params](const KernelArgs& a) { conv2d_run<float>(params, a); };
}

}  // namespace webnn
