// conv2d on the GEMM driver. Work happens in NHWC: 1x1 convolutions are plain GEMMs, k x k ones
// build im2col rows a chunk of output pixels at a time, depthwise ones have their own loop. The
// filter becomes one packed [kH*kW*I/g][O/g] matrix per group; bias and activation run in the GEMM
// epilogue.
#include <algorithm>
#include <cstring>

#include "kernels/conv.h"
#include "kernels/gemm.h"
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

float load_float(const void* base, DataType type, size_t i) {
  if (type == DataType::kFloat16) return half_to_float(static_cast<const float16*>(base)[i].bits);
  return static_cast<const float*>(base)[i];
}

// Everything derived from the filter (and bias) once: per-group packed GEMM matrices, or for
// depthwise convolutions a [kH][kW][C] weight array.
struct PreparedFilter {
  std::vector<PackedB> groups;
  std::vector<float> depthwise;
  std::vector<float> bias;
};

bool is_depthwise(const Conv2dParams& p) {
  return p.groups == p.in_channels && p.groups == p.out_channels && p.groups > 1;
}

std::shared_ptr<PreparedFilter> prepare_filter(const Conv2dParams& p, DataType type, const void* filter,
                                               const void* bias) {
  auto prepared = std::make_shared<PreparedFilter>();
  const FilterStrides fs = filter_strides(p);
  const size_t Ig = p.in_channels / p.groups, Og = p.out_channels / p.groups, KH = p.kernel_h, KW = p.kernel_w;
  if (bias) {
    prepared->bias.resize(p.out_channels);
    for (size_t o = 0; o < p.out_channels; ++o) prepared->bias[o] = load_float(bias, type, o);
  }
  if (is_depthwise(p)) {
    prepared->depthwise.resize(KH * KW * p.out_channels);
    for (size_t kh = 0; kh < KH; ++kh)
      for (size_t kw = 0; kw < KW; ++kw)
        for (size_t c = 0; c < p.out_channels; ++c)
          prepared->depthwise[(kh * KW + kw) * p.out_channels + c] = load_float(filter, type, c * fs.o + kh * fs.h + kw * fs.w);
    return prepared;
  }
  const size_t rows = KH * KW * Ig;
  std::vector<float> matrix(rows * Og);
  for (size_t g = 0; g < p.groups; ++g) {
    for (size_t kh = 0; kh < KH; ++kh)
      for (size_t kw = 0; kw < KW; ++kw)
        for (size_t i = 0; i < Ig; ++i)
          for (size_t o = 0; o < Og; ++o)
            matrix[((kh * KW + kw) * Ig + i) * Og + o] =
                load_float(filter, type, (g * Og + o) * fs.o + i * fs.i + kh * fs.h + kw * fs.w);
    prepared->groups.push_back(pack_b_f32(rows, Og, matrix.data(), Og));
  }
  return prepared;
}

// Copies the input into float32 NHWC.
void input_to_nhwc(const Conv2dParams& p, DataType type, const void* in, float* out, ThreadPool* pool) {
  const size_t C = p.in_channels, HW = p.in_h * p.in_w;
  if (p.nhwc) {
    if (type == DataType::kFloat32) {
      std::memcpy(out, in, p.batch * HW * C * sizeof(float));
      return;
    }
    const float16* h = static_cast<const float16*>(in);
    for (size_t i = 0; i < p.batch * HW * C; ++i) out[i] = half_to_float(h[i].bits);
    return;
  }
  pool->parallel_for(p.batch * C, 4, [&](size_t begin, size_t end) {
    for (size_t nc = begin; nc < end; ++nc) {
      const size_t n = nc / C, c = nc % C;
      float* dst = out + n * HW * C + c;
      for (size_t i = 0; i < HW; ++i) dst[i * C] = load_float(in, type, nc * HW + i);
    }
  });
}

// Writes float32 NHWC results to the output in its layout and dtype.
void output_from_nhwc(const Conv2dParams& p, DataType type, const float* in, void* out, ThreadPool* pool) {
  const size_t O = p.out_channels, HW = p.out_h * p.out_w, total = p.batch * HW * O;
  auto store_at = [&](size_t index, float v) {
    if (type == DataType::kFloat16) static_cast<float16*>(out)[index].bits = float_to_half(v);
    else static_cast<float*>(out)[index] = v;
  };
  if (p.nhwc) {
    for (size_t i = 0; i < total; ++i) store_at(i, in[i]);
    return;
  }
  pool->parallel_for(p.batch * O, 4, [&](size_t begin, size_t end) {
    for (size_t no = begin; no < end; ++no) {
      const size_t n = no / O, o = no % O;
      const float* src = in + n * HW * O + o;
      for (size_t i = 0; i < HW; ++i) store_at(no * HW + i, src[i * O]);
    }
  });
}

void depthwise_nhwc(const Conv2dParams& p, const PreparedFilter& f, const float* in, float* out, ThreadPool* pool) {
  const size_t C = p.in_channels, H = p.in_h, W = p.in_w, OH = p.out_h, OW = p.out_w;
  const size_t KH = p.kernel_h, KW = p.kernel_w;
  const float lo = p.activation_min, hi = p.activation_max;
  pool->parallel_for(p.batch * OH, 1, [&](size_t begin, size_t end) {
    std::vector<float> acc(C);
    for (size_t row = begin; row < end; ++row) {
      const size_t n = row / OH, oy = row % OH;
      for (size_t ox = 0; ox < OW; ++ox) {
        if (f.bias.empty()) std::fill(acc.begin(), acc.end(), 0.0f);
        else std::copy(f.bias.begin(), f.bias.end(), acc.begin());
        for (size_t kh = 0; kh < KH; ++kh) {
          const long long y = (long long)(oy * p.stride_h + kh * p.dilation_h) - (long long)p.pad_top;
          if (y < 0 || y >= (long long)H) continue;
          for (size_t kw = 0; kw < KW; ++kw) {
            const long long x = (long long)(ox * p.stride_w + kw * p.dilation_w) - (long long)p.pad_left;
            if (x < 0 || x >= (long long)W) continue;
            const float* src = in + ((n * H + size_t(y)) * W + size_t(x)) * C;
            const float* w = &f.depthwise[(kh * KW + kw) * C];
            for (size_t c = 0; c < C; ++c) acc[c] += src[c] * w[c];
          }
        }
        float* dst = out + ((n * OH + oy) * OW + ox) * C;
        for (size_t c = 0; c < C; ++c) dst[c] = std::min(hi, std::max(lo, acc[c]));
      }
    }
  });
}

// Grouped or plain convolution through im2col chunks of output pixels.
void conv_gemm_nhwc(const Conv2dParams& p, const PreparedFilter& f, const float* in, float* out, ThreadPool* pool) {
  const size_t C = p.in_channels, H = p.in_h, W = p.in_w, OH = p.out_h, OW = p.out_w, O = p.out_channels;
  const size_t KH = p.kernel_h, KW = p.kernel_w, Ig = C / p.groups, Og = O / p.groups;
  const size_t K = KH * KW * Ig, pixels = p.batch * OH * OW;
  const bool pointwise = KH == 1 && KW == 1 && p.stride_h == 1 && p.stride_w == 1 && p.pad_top == 0 &&
                         p.pad_left == 0 && OH == H && OW == W;
  GemmEpilogue ep;
  ep.min = p.activation_min;
  ep.max = p.activation_max;
  if (pointwise) {  // the input already is the [pixels][C] matrix
    for (size_t g = 0; g < p.groups; ++g) {
      ep.bias = f.bias.empty() ? nullptr : f.bias.data() + g * Og;
      gemm_f32_packed(pixels, Og, K, in + g * Ig, C, false, f.groups[g], out + g * Og, O, ep, pool);
    }
    return;
  }
  // Chunks of output pixels: each builds its im2col rows and runs a single-threaded GEMM.
  const size_t chunk = std::max<size_t>(16, std::min<size_t>(256, (size_t(1) << 17) / std::max<size_t>(K, 1)));
  const size_t chunks = (pixels + chunk - 1) / chunk;
  pool->parallel_for(chunks * p.groups, 1, [&](size_t begin, size_t end) {
    thread_local std::vector<float> rows;
    rows.resize(chunk * K);
    for (size_t t = begin; t < end; ++t) {
      const size_t g = t % p.groups, c0 = (t / p.groups) * chunk, count = std::min(chunk, pixels - c0);
      for (size_t r = 0; r < count; ++r) {
        const size_t pixel = c0 + r, n = pixel / (OH * OW), oy = (pixel / OW) % OH, ox = pixel % OW;
        float* dst = rows.data() + r * K;
        for (size_t kh = 0; kh < KH; ++kh) {
          const long long y = (long long)(oy * p.stride_h + kh * p.dilation_h) - (long long)p.pad_top;
          for (size_t kw = 0; kw < KW; ++kw, dst += Ig) {
            const long long x = (long long)(ox * p.stride_w + kw * p.dilation_w) - (long long)p.pad_left;
            if (y < 0 || y >= (long long)H || x < 0 || x >= (long long)W) {
              std::memset(dst, 0, Ig * sizeof(float));
              continue;
            }
            std::memcpy(dst, in + ((n * H + size_t(y)) * W + size_t(x)) * C + g * Ig, Ig * sizeof(float));
          }
        }
      }
      GemmEpilogue chunk_ep = ep;
      chunk_ep.bias = f.bias.empty() ? nullptr : f.bias.data() + g * Og;
      gemm_f32_packed(count, Og, K, rows.data(), K, false, f.groups[g], out + c0 * O + g * Og, O, chunk_ep, nullptr);
    }
  });
}

}  // namespace

Kernel make_conv2d_kernel(DataType type, const Conv2dParams& p, const void* filter_constant,
                          const void* bias_constant) {
  std::shared_ptr<PreparedFilter> constant;
  if (filter_constant && (!p.has_bias || bias_constant))
    constant = prepare_filter(p, type, filter_constant, p.has_bias ? bias_constant : nullptr);
  const bool direct_in = p.nhwc && type == DataType::kFloat32;
  const bool direct_out = p.nhwc && type == DataType::kFloat32;
  const size_t in_count = p.batch * p.in_h * p.in_w * p.in_channels;
  const size_t out_count = p.batch * p.out_h * p.out_w * p.out_channels;
  return [=](const KernelArgs& args) {
    auto filter = constant ? constant : prepare_filter(p, type, args.inputs[1], p.has_bias ? args.inputs[2] : nullptr);
    thread_local std::vector<float> in_buffer, out_buffer;
    const float* in = static_cast<const float*>(args.inputs[0]);
    if (!direct_in) {
      in_buffer.resize(in_count);
      input_to_nhwc(p, type, args.inputs[0], in_buffer.data(), args.pool);
      in = in_buffer.data();
    }
    float* out = static_cast<float*>(args.outputs[0]);
    if (!direct_out) {
      out_buffer.resize(out_count);
      out = out_buffer.data();
    }
    if (is_depthwise(p)) depthwise_nhwc(p, *filter, in, out, args.pool);
    else conv_gemm_nhwc(p, *filter, in, out, args.pool);
    if (!direct_out) output_from_nhwc(p, type, out, args.outputs[0], args.pool);
  };
}

}  // namespace webnn
