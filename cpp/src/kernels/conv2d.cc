// conv2d on the GEMM driver, in the caller's layout (no transposes):
// - NHWC: C[pixels][O/g] = im2col rows (built a chunk of pixels at a time; 1x1 needs none) x the
//   filter packed once as B = [kH*kW*I/g][O/g];
// - NCHW: C[O/g][pixels] = filter rows x im2col columns packed straight into B panels;
// - depthwise: its own kernel (conv_depthwise.h).
// Bias and a fused activation run in the GEMM epilogue.
#include <algorithm>
#include <cstring>

#include "kernels/conv.h"
#include "kernels/conv_depthwise.h"
#include "kernels/gemm.h"
#include "kernels/kernel_util.h"
#include "runtime/thread_pool.h"

namespace webnn {

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

bool is_depthwise(const Conv2dParams& p) {
  return p.groups == p.in_channels && p.groups == p.out_channels && p.groups > 1;
}

void transpose_planes(const float* in, float* out, size_t batch, size_t rows, size_t cols, ThreadPool* pool) {
  constexpr size_t kTile = 32;
  const size_t row_tiles = (rows + kTile - 1) / kTile;
  pool->parallel_for(batch * row_tiles, 1, [&](size_t begin, size_t end) {
    for (size_t t = begin; t < end; ++t) {
      const size_t n = t / row_tiles, r0 = (t % row_tiles) * kTile, r1 = std::min(rows, r0 + kTile);
      const float* src = in + n * rows * cols;
      float* dst = out + n * rows * cols;
      for (size_t c0 = 0; c0 < cols; c0 += kTile)
        for (size_t r = r0; r < r1; ++r)
          for (size_t c = c0; c < std::min(cols, c0 + kTile); ++c) dst[c * rows + r] = src[r * cols + c];
    }
  });
}

namespace {

// Everything derived from the filter (and bias) once: per-group packed GEMM matrices.
struct PreparedFilter {
  std::vector<PackedB> groups;   // NHWC: per group, B = [kH*kW*I/g][O/g] packed
  std::vector<float> rows;       // NCHW: per group, A = [O/g][I/g*kH*kW] row-major, groups concatenated
  std::vector<float> bias;
};

std::shared_ptr<PreparedFilter> prepare_filter(const Conv2dParams& p, DataType type, const void* filter,
                                               const void* bias) {
  // NCHW convolutions multiply the filter rows by im2col columns built from the input.
  auto prepared = std::make_shared<PreparedFilter>();
  const FilterStrides fs = filter_strides(p);
  const size_t Ig = p.in_channels / p.groups, Og = p.out_channels / p.groups, KH = p.kernel_h, KW = p.kernel_w;
  if (bias) {
    prepared->bias.resize(p.out_channels);
    for (size_t o = 0; o < p.out_channels; ++o) prepared->bias[o] = load_float(bias, type, o);
  }
  const size_t rows = KH * KW * Ig;
  if (!p.nhwc) {
    prepared->rows.resize(p.out_channels * rows);
    for (size_t o = 0; o < p.out_channels; ++o)
      for (size_t i = 0; i < Ig; ++i)
        for (size_t kh = 0; kh < KH; ++kh)
          for (size_t kw = 0; kw < KW; ++kw)
            prepared->rows[o * rows + (i * KH + kh) * KW + kw] = load_float(filter, type, o * fs.o + i * fs.i + kh * fs.h + kw * fs.w);
    return prepared;
  }
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

// Packs the im2col matrix of one image and group, [I/g*kH*kW][OH*OW], straight into GEMM B panels.
void pack_im2col_nchw(const Conv2dParams& p, const float* image, size_t g, PackedB& packed, ThreadPool* pool) {
  const size_t H = p.in_h, W = p.in_w, OW = p.out_w, KH = p.kernel_h, KW = p.kernel_w;
  const size_t Ig = p.in_channels / p.groups, pixels = p.out_h * p.out_w, nr = packed.nr, K = packed.K;
  const size_t panels = (pixels + nr - 1) / nr;
  float* base = reinterpret_cast<float*>(packed.data->data());
  pool->parallel_for(panels, 1, [&](size_t begin, size_t end) {
    std::vector<long long> y0(nr), x0(nr);
    for (size_t panel = begin; panel < end; ++panel) {
      float* dst = base + panel * K * nr;
      const size_t p0 = panel * nr, count = std::min(nr, pixels - p0);
      for (size_t j = 0; j < count; ++j) {  // top-left input corner of each output pixel
        y0[j] = (long long)((p0 + j) / OW * p.stride_h) - (long long)p.pad_top;
        x0[j] = (long long)((p0 + j) % OW * p.stride_w) - (long long)p.pad_left;
      }
      for (size_t i = 0; i < Ig; ++i) {
        const float* plane = image + (g * Ig + i) * H * W;
        for (size_t kh = 0; kh < KH; ++kh)
          for (size_t kw = 0; kw < KW; ++kw, dst += nr) {
            const long long dy = (long long)(kh * p.dilation_h), dx = (long long)(kw * p.dilation_w);
            for (size_t j = 0; j < count; ++j) {
              const long long y = y0[j] + dy, x = x0[j] + dx;
              dst[j] = (y < 0 || y >= (long long)H || x < 0 || x >= (long long)W) ? 0.0f : plane[y * (long long)W + x];
            }
            for (size_t j = count; j < nr; ++j) dst[j] = 0.0f;
          }
      }
    }
  });
}

// NCHW: per image and group, C[O/g][pixels] = filter rows x im2col columns; output is NCHW as is.
void conv_gemm_nchw(const Conv2dParams& p, const PreparedFilter& f, const float* in, float* out, ThreadPool* pool,
                    BufferPtr& scratch) {
  const size_t Ig = p.in_channels / p.groups, Og = p.out_channels / p.groups;
  const size_t K = Ig * p.kernel_h * p.kernel_w, pixels = p.out_h * p.out_w;
  const bool pointwise = p.kernel_h == 1 && p.kernel_w == 1 && p.stride_h == 1 && p.stride_w == 1 &&
                         p.pad_top == 0 && p.pad_left == 0 && p.out_h == p.in_h && p.out_w == p.in_w;
  PackedB packed;
  packed.K = K;
  packed.N = pixels;
  packed.nr = gemm_panel_width();
  const size_t bytes = (pixels + packed.nr - 1) / packed.nr * packed.nr * K * sizeof(float);
  if (!pointwise) {
    if (!scratch || scratch->size() < bytes) scratch = std::make_shared<AlignedBuffer>(bytes);
    packed.data = scratch;
  }
  GemmEpilogue ep;
  ep.bias_per_row = true;
  ep.min = p.activation_min;
  ep.max = p.activation_max;
  for (size_t n = 0; n < p.batch; ++n) {
    const float* image = in + n * p.in_channels * p.in_h * p.in_w;
    for (size_t g = 0; g < p.groups; ++g) {
      if (pointwise) packed = pack_b_f32(K, pixels, image + g * Ig * pixels, pixels);
      else pack_im2col_nchw(p, image, g, packed, pool);
      ep.bias = f.bias.empty() ? nullptr : f.bias.data() + g * Og;
      gemm_f32_packed(Og, pixels, K, f.rows.data() + g * Og * K, K, false, packed,
                      out + (n * p.out_channels + g * Og) * pixels, pixels, ep, pool);
    }
  }
}

}  // namespace

Kernel make_conv2d_kernel(DataType type, const Conv2dParams& p, const void* filter_constant,
                          const void* bias_constant) {
  // NCHW k x k convolutions run through the NHWC path (see the kernel below).
  const bool pointwise = p.kernel_h == 1 && p.kernel_w == 1 && p.stride_h == 1 && p.stride_w == 1 &&
                         p.pad_top == 0 && p.pad_left == 0 && p.out_h == p.in_h && p.out_w == p.in_w;
  if (is_depthwise(p)) return make_depthwise_conv2d_kernel(type, p, filter_constant, bias_constant);
  const bool nchw_as_nhwc = !p.nhwc && !pointwise;
  Conv2dParams nhwc_params = p;
  nhwc_params.nhwc = true;
  const Conv2dParams& filter_params = nchw_as_nhwc ? nhwc_params : p;
  std::shared_ptr<PreparedFilter> constant;
  if (filter_constant && (!p.has_bias || bias_constant))
    constant = prepare_filter(filter_params, type, filter_constant, p.has_bias ? bias_constant : nullptr);
  const bool f32 = type == DataType::kFloat32;
  auto scratch = std::make_shared<BufferPtr>();  // im2col panels, reused across dispatches
  const size_t in_count = p.batch * p.in_h * p.in_w * p.in_channels;
  const size_t out_count = p.batch * p.out_h * p.out_w * p.out_channels;
  return [=](const KernelArgs& args) {
    auto filter = constant ? constant
                           : prepare_filter(filter_params, type, args.inputs[1], p.has_bias ? args.inputs[2] : nullptr);
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
    if (p.nhwc) {
      conv_gemm_nhwc(p, *filter, in, out, args.pool);
    } else if (nchw_as_nhwc) {
      // k x k on NCHW: im2col rows in NHWC beat packing im2col columns; transpose in and out.
      thread_local std::vector<float> in_nhwc, out_nhwc;
      in_nhwc.resize(in_count);
      out_nhwc.resize(out_count);
      transpose_planes(in, in_nhwc.data(), p.batch, p.in_channels, p.in_h * p.in_w, args.pool);
      conv_gemm_nhwc(nhwc_params, *filter, in_nhwc.data(), out_nhwc.data(), args.pool);
      transpose_planes(out_nhwc.data(), out, p.batch, p.out_h * p.out_w, p.out_channels, args.pool);
    } else {
      conv_gemm_nchw(p, *filter, in, out, args.pool, *scratch);
    }
    if (!f32) {
      float16* h = static_cast<float16*>(args.outputs[0]);
      for (size_t i = 0; i < out_count; ++i) h[i].bits = float_to_half(out[i]);
    }
  };
}

}  // namespace webnn
