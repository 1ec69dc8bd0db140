// conv2d on the GEMM microkernels:
// - NHWC: the indirect GEMM (conv2d_indirect.cc), C[pixels][O/g] = input rows read in place x the
//   filter packed once as B = [kH*kW*I/g][O/g];
// - NCHW k x k: the same through NHWC (the input and the result transposed);
// - NCHW 1x1: C[O/g][pixels] = the filter packed once as A x the input rows (im2col columns when
//   strided) packed into B panels a cache block at a time, or the transposed product;
// - depthwise: its own kernel (conv_depthwise.h).
// Bias and a fused activation run in the GEMM epilogue.
#include <algorithm>
#include <cstring>

#include "kernels/conv/conv.h"
#include "kernels/depthwise/conv_depthwise.h"
#include "kernels/data_movement/data_movement.h"
#include "kernels/gemm/gemm.h"
#include "kernels/kernel_util.h"
#include "kernels/platform.h"
#include "kernels/unary/unary.h"
#include "core/thread_pool.h"

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

bool conv2d_reads_nchw_input(const Conv2dParams& p) {
  return p.nhwc && p.groups == 1 && p.in_channels <= 4;
}

bool is_depthwise(const Conv2dParams& p) {
  return p.groups == p.in_channels && p.groups == p.out_channels && p.groups > 1;
}

void transpose_planes(const float* in, float* out, size_t batch, size_t rows, size_t cols, ThreadPool* pool) {
  constexpr size_t kTile = 64;
  const auto transpose_tile = kernel_table().data_movement->transpose_tile[2];  // 4-byte elements
  const size_t row_tiles = (rows + kTile - 1) / kTile;
  pool->parallel_for(batch * row_tiles, 1, [&](size_t begin, size_t end) {
    for (size_t t = begin; t < end; ++t) {
      const size_t n = t / row_tiles, r0 = (t % row_tiles) * kTile, row_count = std::min(kTile, rows - r0);
      const float* src = in + n * rows * cols + r0 * cols;
      float* dst = out + n * rows * cols + r0;
      // dst[c * rows + r] = src[r * cols + c] for the tile's rows r, every column c
      transpose_tile(src, dst, int64_t(cols), int64_t(row_count), int64_t(cols), int64_t(rows));
    }
  });
}

namespace {

// A 1x1 stride-1 unpadded convolution: the input already is the GEMM operand.
bool is_pointwise(const Conv2dParams& p) {
  return p.kernel_h == 1 && p.kernel_w == 1 && p.stride_h == 1 && p.stride_w == 1 && p.pad_top == 0 &&
         p.pad_left == 0 && p.out_h == p.in_h && p.out_w == p.in_w;
}

// The GEMM epilogue's residual, clamp and activation over `count` values of `out`, after the
// transposed product's final transpose (nothing when all are no-ops).
void finish_epilogue(float* out, const GemmEpilogue& ep, size_t count, ThreadPool* pool) {
  const float lo = ep.min, hi = ep.max;
  if (!ep.residual && !ep.activation && lo == -std::numeric_limits<float>::infinity() &&
      hi == std::numeric_limits<float>::infinity())
    return;
  pool->parallel_for(count, 1 << 14, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      float v = ep.residual ? out[i] + ep.residual[i] : out[i];
      v = v < lo ? lo : v;  // comparisons with NaN are false: NaN passes through
      out[i] = v > hi ? hi : v;
    }
    ep.activation(out + begin, end - begin);
  });
}

}  // namespace

Conv2dParams::NchwPlan conv2d_nchw_plan(const Conv2dParams& p) {
  using Plan = Conv2dParams::NchwPlan;
  if (p.nhwc || is_depthwise(p)) return Plan::kDirect;
  // k x k filters: the indirect GEMM needs no im2col; the two transposes cost less than that (on
  // ResNet-50's 3x3 layers, Zen 3: 1.1-1.6x faster with them).
  if (p.kernel_h * p.kernel_w > 1) return Plan::kViaNhwc;
  // Packing A and the final transpose cost more than packing B: measured worth it at 7x7 outputs, not
  // at 14x14.
  const size_t nr = gemm_panel_width(), pixels = p.out_h * p.out_w, Og = p.out_channels / p.groups;
  const double pixel_fill = double(pixels) / double((pixels + nr - 1) / nr * nr);
  const double channel_fill = double(Og) / double((Og + nr - 1) / nr * nr);
  return pixel_fill < 0.8 * channel_fill ? Plan::kTransposed : Plan::kDirect;
}

namespace {

// Everything derived from the filter (and bias) once: per-group packed GEMM matrices.
struct PreparedFilter {
  std::vector<PackedB> groups;   // NHWC, or NCHW run transposed: per group, B = [kH*kW*I/g][O/g] packed
  std::vector<PackedA> rows;     // NCHW: per group, A = [O/g][I/g*kH*kW] packed
  std::vector<float> bias;
};

// Multiplies the values of output channel c by scale[c], in place, in a packed GEMM operand: panels
// of `per_panel` channels (each a row of A, or a column of B) over K, `stride` floats per k.
void scale_packed_channels(float* data, size_t channels, size_t K, size_t per_panel, size_t stride,
                           const float* scale) {
  for (size_t c0 = 0; c0 < channels; c0 += per_panel, data += K * stride) {
    const size_t count = std::min(per_panel, channels - c0);
    for (size_t k = 0; k < K; ++k)
      for (size_t i = 0; i < count; ++i) data[k * stride + i] *= scale[c0 + i];
  }
}

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
  // A float32 filter whose per-output-channel rows already are the GEMM's K order (oihw for NCHW,
  // ohwi for NHWC) is packed straight from the caller's memory.
  const bool hwi = (p.nhwc && !p.nchw_input) || p.nchw_plan == Conv2dParams::NchwPlan::kViaNhwc;
  const bool rows_in_k_order = type == DataType::kFloat32 && (p.filter_layout == (hwi ? "ohwi" : "oihw"));
  const auto channel_scale = [&](size_t o) { return p.filter_scale.empty() ? 1.0f : p.filter_scale[o]; };
  // An oihw float32 filter for the NHWC order is packed straight from it too, each row read as
  // (kh, kw, i) (ONNX models: no reordered copy, 100 MB for ResNet-50).
  const bool oihw_as_hwi = type == DataType::kFloat32 && hwi && p.filter_layout == "oihw";
  // Another float32 layout is first reordered to that order in one float copy (the general path
  // below converts element by element: a third of ResNet-50's build time).
  std::vector<float> reordered;
  if (type == DataType::kFloat32 && !rows_in_k_order && !oihw_as_hwi) {
    const float* f = static_cast<const float*>(filter);
    reordered.resize(p.out_channels * rows);
    for (size_t o = 0; o < p.out_channels; ++o) {
      float* dst = reordered.data() + o * rows;
      for (size_t i = 0; i < Ig; ++i)
        for (size_t kh = 0; kh < KH; ++kh)
          for (size_t kw = 0; kw < KW; ++kw)
            dst[hwi ? (kh * KW + kw) * Ig + i : (i * KH + kh) * KW + kw] = f[o * fs.o + i * fs.i + kh * fs.h + kw * fs.w];
    }
  }
  if (rows_in_k_order || oihw_as_hwi || !reordered.empty()) {
    const float* f = reordered.empty() ? static_cast<const float*>(filter) : reordered.data();
    for (size_t g = 0; g < p.groups; ++g) {
      const float* group = f + g * Og * rows;
      if (!p.nhwc && p.nchw_plan == Conv2dParams::NchwPlan::kDirect) {
        prepared->rows.push_back(pack_a_f32(Og, rows, group, rows));
        const PackedA& a = prepared->rows.back();
        if (!p.filter_scale.empty())
          scale_packed_channels(reinterpret_cast<float*>(a.data->data()), Og, rows, a.panel_rows, a.mr,
                                p.filter_scale.data() + g * Og);
      } else {
        prepared->groups.push_back(pack_b_f32(rows, Og, group, rows, true, oihw_as_hwi ? KH * KW : 1));
        const PackedB& b = prepared->groups.back();
        if (!p.filter_scale.empty())
          scale_packed_channels(reinterpret_cast<float*>(b.data->data()), Og, rows, b.nr, b.nr,
                                p.filter_scale.data() + g * Og);
      }
    }
    return prepared;
  }
  if (!p.nhwc && p.nchw_plan == Conv2dParams::NchwPlan::kDirect) {
    std::vector<float> matrix(Og * rows);
    for (size_t g = 0; g < p.groups; ++g) {
      for (size_t o = 0; o < Og; ++o)
        for (size_t i = 0; i < Ig; ++i)
          for (size_t kh = 0; kh < KH; ++kh)
            for (size_t kw = 0; kw < KW; ++kw)
              matrix[o * rows + (i * KH + kh) * KW + kw] =
                  load_float(filter, type, (g * Og + o) * fs.o + i * fs.i + kh * fs.h + kw * fs.w) *
                  channel_scale(g * Og + o);
      prepared->rows.push_back(pack_a_f32(Og, rows, matrix.data(), rows));
    }
    return prepared;
  }
  // B = [kH*kW*I/g][O/g] rows in (kh, kw, i) order for NHWC rows, (i, kh, kw) for NCHW im2col rows.
  std::vector<float> matrix(rows * Og);
  for (size_t g = 0; g < p.groups; ++g) {
    for (size_t kh = 0; kh < KH; ++kh)
      for (size_t kw = 0; kw < KW; ++kw)
        for (size_t i = 0; i < Ig; ++i)
          for (size_t o = 0; o < Og; ++o)
            matrix[(hwi ? (kh * KW + kw) * Ig + i : (i * KH + kh) * KW + kw) * Og + o] =
                load_float(filter, type, (g * Og + o) * fs.o + i * fs.i + kh * fs.h + kw * fs.w) *
                channel_scale(g * Og + o);
    prepared->groups.push_back(pack_b_f32(rows, Og, matrix.data(), Og));
  }
  return prepared;
}

// The fused clamp and activation (bias and residual are set per group by each path).
GemmEpilogue conv_epilogue(const Conv2dParams& p) {
  GemmEpilogue ep;
  ep.min = p.activation_min;
  ep.max = p.activation_max;
  ep.activation = activation_loop(p.activation);
  return ep;
}

void conv_indirect(const Conv2dParams& p, const PreparedFilter& f, const float* in, const float* residual, float* out,
                   ThreadPool* pool) {
  conv_indirect_nhwc(p, f.groups, f.bias.empty() ? nullptr : f.bias.data(), in, residual, out, conv_epilogue(p), pool);
}

// NCHW through the NHWC indirect GEMM: the input transposed in, the result transposed out; a
// residual (NCHW) and what follows it in the epilogue are applied after the transpose.
void conv_nchw_via_nhwc(const Conv2dParams& p, const PreparedFilter& f, const float* in, const float* residual,
                        float* out, ThreadPool* pool) {
  thread_local std::vector<float> in_nhwc, out_nhwc;
  in_nhwc.resize(p.batch * p.in_h * p.in_w * p.in_channels);
  out_nhwc.resize(p.batch * p.out_h * p.out_w * p.out_channels);
  transpose_planes(in, in_nhwc.data(), p.batch, p.in_channels, p.in_h * p.in_w, pool);
  Conv2dParams nhwc = p;
  nhwc.nhwc = true;
  const GemmEpilogue ep = conv_epilogue(p);
  conv_indirect_nhwc(nhwc, f.groups, f.bias.empty() ? nullptr : f.bias.data(), in_nhwc.data(), nullptr,
                     out_nhwc.data(), residual ? GemmEpilogue{} : ep, pool);
  transpose_planes(out_nhwc.data(), out, p.batch, p.out_h * p.out_w, p.out_channels, pool);
  if (residual) {
    GemmEpilogue after = ep;
    after.residual = residual;
    finish_epilogue(out, after, p.batch * p.out_channels * p.out_h * p.out_w, pool);
  }
}

// Output pixels of one output row within a panel: `count` pixels from (oy, ox), at panel column
// `column`; per filter tap, where their input lies.
struct PixelRun {
  size_t oy, ox, count, column;
  bool row_inside;    // the tap's input row is inside the image
  size_t first, end;  // pixels [first, end) read inside the image; the others are zeros
  size_t offset;      // the input element (within a plane) of pixel `first`
};

// Packs a block of the im2col matrix of one image and group, taps (i, kh, kw) [k0, k0+kc) x output
// pixels [n0, n0+nc), into panels of `nr` pixels ([kc][nr] each, pixels past nc zeroed): GEMM B
// panels (nr = NR), or, for the transposed product, A panels (nr = MR). Out-of-image taps are zeros.
// Where each pixel run reads is worked out once per filter position and used for every channel.
void pack_im2col_block(const Conv2dParams& p, const float* image, size_t k0, size_t kc, size_t n0, size_t nc,
                       size_t nr, float* dst) {
  const size_t H = p.in_h, W = p.in_w, OW = p.out_w, taps = p.kernel_h * p.kernel_w, sw = p.stride_w;
  const size_t i_first = k0 / taps, i_last = (k0 + kc - 1) / taps;  // input channels the block touches
  PixelRun runs[64];
  for (size_t j0 = 0; j0 < nc; j0 += nr, dst += kc * nr) {
    const size_t cols = std::min(nr, nc - j0);
    size_t run_count = 0;
    for (size_t j = 0; j < cols;) {
      const size_t pixel = n0 + j0 + j, ox = pixel % OW, count = std::min(cols - j, OW - ox);
      runs[run_count++] = PixelRun{pixel / OW, ox, count, j, false, 0, 0, 0};
      j += count;
    }
    for (size_t tap = 0; tap < taps; ++tap) {
      const long long dy = (long long)(tap / p.kernel_w * p.dilation_h) - (long long)p.pad_top;
      const long long dx = (long long)(tap % p.kernel_w * p.dilation_w) - (long long)p.pad_left;
      for (size_t r = 0; r < run_count; ++r) {
        PixelRun& run = runs[r];
        const long long y = (long long)(run.oy * p.stride_h) + dy, x0 = (long long)(run.ox * sw) + dx;
        run.row_inside = y >= 0 && y < (long long)H;
        // Pixels t whose column x0 + t*sw lies in [0, W).
        const long long first = x0 >= 0 ? 0 : (-x0 + (long long)sw - 1) / (long long)sw;
        const long long last = (long long)W - 1 - x0 < 0 ? -1 : ((long long)W - 1 - x0) / (long long)sw;
        run.first = std::min<size_t>(run.count, size_t(first));
        run.end = last < (long long)run.first ? run.first : std::min<size_t>(run.count, size_t(last) + 1);
        run.offset = run.row_inside && run.first < run.end ? size_t(y) * W + size_t(x0 + first * (long long)sw) : 0;
      }
      for (size_t i = i_first; i <= i_last; ++i) {
        const size_t k = i * taps + tap;
        if (k < k0 || k >= k0 + kc) continue;
        float* row = dst + (k - k0) * nr;
        const float* plane = image + i * H * W;
        for (size_t r = 0; r < run_count; ++r) {
          const PixelRun& run = runs[r];
          float* out = row + run.column;
          if (!run.row_inside) {
            for (size_t t = 0; t < run.count; ++t) out[t] = 0.0f;
            continue;
          }
          for (size_t t = 0; t < run.first; ++t) out[t] = 0.0f;
          const float* src = plane + run.offset;
          if (sw == 1) {
            std::memcpy(out + run.first, src, (run.end - run.first) * sizeof(float));
          } else {
            for (size_t t = run.first; t < run.end; ++t) out[t] = src[(t - run.first) * sw];
          }
          for (size_t t = run.end; t < run.count; ++t) out[t] = 0.0f;
        }
        for (size_t j = cols; j < nr; ++j) row[j] = 0.0f;
      }
    }
  }
}

// NCHW: per image and group, C[O/g][pixels] = the packed filter (A) x im2col columns packed a
// cache block at a time (B). When the pixels fill the B panels poorly (small images), the product
// runs transposed, C^T[pixels][O/g] = im2col rows x the packed filter (B), then C^T is transposed.
void conv_gemm_nchw(const Conv2dParams& p, const PreparedFilter& f, const float* in, const float* residual, float* out,
                    ThreadPool* pool) {
  const size_t Ig = p.in_channels / p.groups, Og = p.out_channels / p.groups;
  const size_t K = Ig * p.kernel_h * p.kernel_w, pixels = p.out_h * p.out_w;
  const bool pointwise = is_pointwise(p), transposed = !f.groups.empty();
  const size_t mr = kernel_table().gemm_f32.mr, nr = gemm_panel_width();
  GemmEpilogue ep = conv_epilogue(p);
  ep.bias_per_row = !transposed;
  ep.residual_ld = pixels;
  GemmEpilogue transposed_ep;  // the residual, clamp and activation follow the final transpose
  thread_local std::vector<float> transposed_out;
  if (transposed) transposed_out.resize(pixels * Og);
  for (size_t n = 0; n < p.batch; ++n) {
    for (size_t g = 0; g < p.groups; ++g) {
      const float* image = in + (n * p.in_channels + g * Ig) * p.in_h * p.in_w;
      float* dst = out + (n * p.out_channels + g * Og) * pixels;
      ep.bias = f.bias.empty() ? nullptr : f.bias.data() + g * Og;
      ep.residual = residual ? residual + (n * p.out_channels + g * Og) * pixels : nullptr;
      if (transposed) {
        transposed_ep.bias = ep.bias;
        if (pointwise)  // A = the input planes read transposed
          gemm_f32_packed(pixels, Og, K, image, pixels, true, f.groups[g], transposed_out.data(), Og, transposed_ep,
                          pool);
        else
          gemm_f32_packed(
              pixels, Og, K,
              [&](size_t m0, size_t mc, size_t k0, size_t kc, float* panels) {
                pack_im2col_block(p, image, k0, kc, m0, mc, mr, panels);
              },
              f.groups[g], transposed_out.data(), Og, transposed_ep, pool);
        transpose_planes(transposed_out.data(), dst, 1, pixels, Og, pool);
        finish_epilogue(dst, ep, Og * pixels, pool);
        continue;
      }
      BBlockPacker pack_b;
      if (pointwise)
        pack_b = [&](size_t k0, size_t kc, size_t n0, size_t nc, float* panels) {
          pack_b_block_rows(image, pixels, k0, kc, n0, nc, panels);
        };
      else
        pack_b = [&](size_t k0, size_t kc, size_t n0, size_t nc, float* panels) {
          pack_im2col_block(p, image, k0, kc, n0, nc, nr, panels);
        };
      gemm_f32_packed_a(Og, pixels, K, f.rows[g], pack_b, dst, pixels, ep, pool);
    }
  }
}

}  // namespace

Kernel make_conv2d_kernel(DataType type, const Conv2dParams& p, const void* filter_constant,
                          const void* bias_constant) {
  // NCHW k x k convolutions run through the NHWC path (see the kernel below).
  if (is_depthwise(p)) return make_depthwise_conv2d_kernel(type, p, filter_constant, bias_constant);
  std::shared_ptr<PreparedFilter> constant;
  if (filter_constant && (!p.has_bias || bias_constant)) {
    constant = prepare_filter(p, type, filter_constant, p.has_bias ? bias_constant : nullptr);
    for (PackedA& rows : constant->rows) rows = share_packed(std::move(rows));
    for (PackedB& group : constant->groups) group = share_packed(std::move(group));
  }
  const bool f32 = type == DataType::kFloat32;
  const size_t in_count = p.batch * p.in_h * p.in_w * p.in_channels;
  const size_t out_count = p.batch * p.out_h * p.out_w * p.out_channels;
  return [=](const KernelArgs& args) {
    auto filter = constant ? constant
                           : prepare_filter(p, type, args.inputs[1], p.has_bias ? args.inputs[2] : nullptr);
    thread_local std::vector<float> in_buffer, out_buffer;
    const float* in = static_cast<const float*>(args.inputs[0]);
    float* out = static_cast<float*>(args.outputs[0]);
    if (!f32) {  // float16 computes in float32: convert on the way in and out
      in_buffer.resize(in_count);
      widen_halves(args.inputs[0], in_buffer.data(), in_count, args.pool);
      in = in_buffer.data();
      out_buffer.resize(out_count);
      out = out_buffer.data();
    }
    const float* residual = p.has_residual ? static_cast<const float*>(args.inputs[p.has_bias ? 3 : 2]) : nullptr;
    if (p.nchw_input)
      conv_indirect_nchw_input(p, filter->groups[0], filter->bias.empty() ? nullptr : filter->bias.data(), in,
                               residual, out, conv_epilogue(p), args.pool);
    else if (p.nhwc) conv_indirect(p, *filter, in, residual, out, args.pool);
    else if (p.nchw_plan == Conv2dParams::NchwPlan::kViaNhwc) conv_nchw_via_nhwc(p, *filter, in, residual, out, args.pool);
    else conv_gemm_nchw(p, *filter, in, residual, out, args.pool);
    if (!f32) narrow_to_halves(out, args.outputs[0], out_count, args.pool);
  };
}

}  // namespace webnn
