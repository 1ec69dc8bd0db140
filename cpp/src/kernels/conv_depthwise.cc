// Depthwise conv2d: weights reordered once to [kH][kW][C]; narrow NCHW planes run in NHWC, where
// the channels vectorize.
#include <memory>
#include <vector>

#include "kernels/conv_depthwise.h"
#include "kernels/kernel_util.h"

namespace webnn {

namespace {

struct DepthwiseWeights {
  std::vector<float> weights;  // [kH][kW][C]
  std::vector<float> bias;     // C values, or empty
};

std::shared_ptr<DepthwiseWeights> prepare_depthwise(const Conv2dParams& p, DataType type, const void* filter,
                                                    const void* bias) {
  auto prepared = std::make_shared<DepthwiseWeights>();
  const FilterStrides fs = filter_strides(p);
  const size_t C = p.out_channels, KH = p.kernel_h, KW = p.kernel_w;
  prepared->weights.resize(KH * KW * C);
  for (size_t kh = 0; kh < KH; ++kh)
    for (size_t kw = 0; kw < KW; ++kw)
      for (size_t c = 0; c < C; ++c)
        prepared->weights[(kh * KW + kw) * C + c] = load_float(filter, type, c * fs.o + kh * fs.h + kw * fs.w);
  if (bias) {
    prepared->bias.resize(C);
    for (size_t c = 0; c < C; ++c) prepared->bias[c] = load_float(bias, type, c);
  }
  return prepared;
}

}  // namespace

Kernel make_depthwise_conv2d_kernel(DataType type, const Conv2dParams& p, const void* filter_constant,
                                    const void* bias_constant) {
  // Narrow NCHW planes vectorize poorly along rows: they run in NHWC, vectorized over channels.
  const bool nchw_as_nhwc = !p.nhwc && p.out_w < 16;
  Conv2dParams nhwc_params = p;
  nhwc_params.nhwc = true;
  std::shared_ptr<DepthwiseWeights> constant;
  if (filter_constant && (!p.has_bias || bias_constant))
    constant = prepare_depthwise(p, type, filter_constant, p.has_bias ? bias_constant : nullptr);
  const bool f32 = type == DataType::kFloat32;
  const size_t in_count = p.batch * p.in_h * p.in_w * p.in_channels;
  const size_t out_count = p.batch * p.out_h * p.out_w * p.out_channels;
  return [=](const KernelArgs& args) {
    auto prepared = constant ? constant : prepare_depthwise(p, type, args.inputs[1], p.has_bias ? args.inputs[2] : nullptr);
    const float* weights = prepared->weights.data();
    const float* bias = prepared->bias.empty() ? nullptr : prepared->bias.data();
    thread_local std::vector<float> in_buffer, out_buffer;
    const float* in = static_cast<const float*>(args.inputs[0]);
    float* out = static_cast<float*>(args.outputs[0]);
    if (!f32) {  // float16 computes in float32: convert on the way in and out
      in_buffer.resize(in_count);
      for (size_t i = 0; i < in_count; ++i) in_buffer[i] = load_float(args.inputs[0], type, i);
      in = in_buffer.data();
      out_buffer.resize(out_count);
      out = out_buffer.data();
    }
    if (nchw_as_nhwc) {
      thread_local std::vector<float> in_nhwc, out_nhwc;
      in_nhwc.resize(in_count);
      out_nhwc.resize(out_count);
      transpose_planes(in, in_nhwc.data(), p.batch, p.in_channels, p.in_h * p.in_w, args.pool);
      depthwise_conv2d(nhwc_params, weights, bias, in_nhwc.data(), out_nhwc.data(), args.pool);
      transpose_planes(out_nhwc.data(), out, p.batch, p.out_h * p.out_w, p.out_channels, args.pool);
    } else {
      depthwise_conv2d(p, weights, bias, in, out, args.pool);
    }
    if (!f32) {
      float16* h = static_cast<float16*>(args.outputs[0]);
      for (size_t i = 0; i < out_count; ++i) h[i].bits = float_to_half(out[i]);
    }
  };
}

}  // namespace webnn
