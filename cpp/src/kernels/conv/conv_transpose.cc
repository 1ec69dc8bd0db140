// Transposed convolution as GEMM + col2im, per image and group, a tile of input pixels at a time:
// cols[pixel][tap, o] = input[pixel][c] x filter[c][tap, o] (the packed GEMM; NHWC input read in
// place, NCHW input packed transposed), then every column added into the output position it scatters
// to while the tile is in L2: NHWC, a run of O/g channels per pixel and tap; NCHW (columns ordered
// [o, tap]), values plane by plane. The filter is packed once (at kernel creation when constant).
#include <algorithm>
#include <memory>

#include "kernels/conv/conv.h"
#include "kernels/conv/conv_transpose.h"
#include "kernels/gemm/gemm.h"
#include "kernels/kernel_util.h"
#include "kernels/unary/unary.h"
#include "core/thread_pool.h"

namespace webnn {

namespace {

constexpr size_t kColsTileBytes = 256 * 1024;  // the GEMM's output tile, scattered while in L2

// Per group, B = [C/g][O/g * kH * kW] packed, columns in (kh, kw, o) order for NHWC, (o, kh, kw) for NCHW.
std::shared_ptr<std::vector<PackedB>> pack_filter(const ConvTranspose2dParams& p, DataType type, const void* filter) {
  const size_t G = p.groups, Cg = p.in_channels / G, Og = p.out_channels / G, KH = p.kernel_h, KW = p.kernel_w;
  const size_t width = Og * KH * KW;
  auto packed = std::make_shared<std::vector<PackedB>>();
  std::vector<float> rows(Cg * width);
  for (size_t g = 0; g < G; ++g) {
    for (size_t c = 0; c < Cg; ++c)
      for (size_t o = 0; o < Og; ++o)
        for (size_t ky = 0; ky < KH; ++ky)
          for (size_t kx = 0; kx < KW; ++kx)
            rows[c * width + (p.nhwc ? (ky * KW + kx) * Og + o : o * KH * KW + ky * KW + kx)] =
                load_float(filter, type, (g * Cg + c) * p.filter_stride_c + o * p.filter_stride_o +
                                             ky * p.filter_stride_h + kx * p.filter_stride_w);
    packed->push_back(pack_b_f32(Cg, width, rows.data(), width));
  }
  return packed;
}

// Adds the tile's columns (input pixels [q0, q0 + count) of one image) into output planes [o0, o1) of
// group g's channels; `acc` is the image's NCHW float32 output (columns ordered [o][tap]). With `cover` (every output written
// by exactly one tap) the values are stored, after the bias, instead of added.
void scatter_tile(const ConvTranspose2dParams& p, const float* cols, size_t width, size_t q0, size_t count, size_t g,
                  size_t o0, size_t o1, const float* bias, bool cover, float* acc) {
  const size_t W = p.in_w, OH = p.out_h, OW = p.out_w, KH = p.kernel_h, KW = p.kernel_w, KK = KH * KW;
  const size_t Og = p.out_channels / p.groups, sw = p.stride_w, dw = p.dilation_w;
  for (size_t o = o0; o < o1; ++o) {
    float* plane = acc + (g * Og + o) * OH * OW;
    const float b = bias ? bias[g * Og + o] : 0.0f;
    // Runs of pixels within one input row: no division per pixel.
    for (size_t i = 0; i < count;) {
      const size_t q = q0 + i, iy = q / W, ix0 = q % W, run = std::min(count - i, W - ix0);
      for (size_t ky = 0; ky < KH; ++ky) {
        // Positions before the output crop (padding) or past its end receive nothing.
        const size_t y = iy * p.stride_h + ky * p.dilation_h;
        if (y < p.pad_top || y - p.pad_top >= OH) continue;
        float* dst = plane + (y - p.pad_top) * OW;
        const float* src = cols + i * width + o * KK + ky * KW;
        for (size_t j = 0; j < run; ++j, src += width) {
          const size_t x0 = (ix0 + j) * sw;
          for (size_t kx = 0; kx < KW; ++kx) {
            const size_t x = x0 + kx * dw;
            if (x < p.pad_left || x - p.pad_left >= OW) continue;
            if (cover) dst[x - p.pad_left] = src[kx] + b;
            else dst[x - p.pad_left] += src[kx];
          }
        }
      }
      i += run;
    }
  }
}

// NHWC: adds the tile's columns (input pixels [q0, q0 + count) of one image) into output channels
// [o0, o1) of group g at every position they scatter to; `out` is the image's float32 output.
void scatter_tile_nhwc(const ConvTranspose2dParams& p, const float* cols, size_t width, size_t q0, size_t count,
                       size_t g, size_t o0, size_t o1, const float* bias, bool cover, float* out) {
  const size_t W = p.in_w, OH = p.out_h, OW = p.out_w, KH = p.kernel_h, KW = p.kernel_w, O = p.out_channels;
  const size_t Og = O / p.groups, channels = o1 - o0;
  const float* b = bias ? bias + g * Og + o0 : nullptr;
  for (size_t i = 0; i < count;) {
    const size_t q = q0 + i, iy = q / W, ix0 = q % W, run = std::min(count - i, W - ix0);
    for (size_t ky = 0; ky < KH; ++ky) {
      const size_t y = iy * p.stride_h + ky * p.dilation_h;
      if (y < p.pad_top || y - p.pad_top >= OH) continue;
      float* row = out + (y - p.pad_top) * OW * O + g * Og + o0;
      for (size_t j = 0; j < run; ++j) {
        const float* src = cols + (i + j) * width + ky * KW * Og + o0;
        const size_t x0 = (ix0 + j) * p.stride_w;
        for (size_t kx = 0; kx < KW; ++kx, src += Og) {
          const size_t x = x0 + kx * p.dilation_w;
          if (x < p.pad_left || x - p.pad_left >= OW) continue;
          float* dst = row + (x - p.pad_left) * O;
          if (cover && b) for (size_t o = 0; o < channels; ++o) dst[o] = src[o] + b[o];
          else if (cover) std::copy_n(src, channels, dst);
          else for (size_t o = 0; o < channels; ++o) dst[o] += src[o];
        }
      }
    }
    i += run;
  }
}

// float32 input -> float32 output, both in the op's layout.
void conv_transpose_f32(const ConvTranspose2dParams& p, const std::vector<PackedB>& filter, const float* input,
                        const float* bias, float* acc, ThreadPool* pool) {
  const size_t N = p.batch, C = p.in_channels, HW = p.in_h * p.in_w, O = p.out_channels, OHW = p.out_h * p.out_w;
  const size_t G = p.groups, Cg = C / G, Og = O / G, width = Og * p.kernel_h * p.kernel_w;
  // Windows that never overlap (stride >= dilated kernel): any two input pixels write different outputs,
  // so a tile's scatter also splits by pixels, not only by output channel. When they also tile the
  // output exactly (stride = kernel, no dilation, padding or output padding), nothing is accumulated.
  const bool disjoint = p.stride_h >= (p.kernel_h - 1) * p.dilation_h + 1 && p.stride_w >= (p.kernel_w - 1) * p.dilation_w + 1;
  const bool cover = p.stride_h == p.kernel_h && p.stride_w == p.kernel_w && p.dilation_h == 1 && p.dilation_w == 1 &&
                     p.pad_top == 0 && p.pad_left == 0 && p.out_h == p.in_h * p.kernel_h && p.out_w == p.in_w * p.kernel_w;
  if (!cover && p.nhwc)
    pool->parallel_for(N * OHW, 1024, [&](size_t begin, size_t end) {
      for (size_t q = begin; q < end; ++q) {
        if (bias) std::copy_n(bias, O, acc + q * O);
        else std::fill_n(acc + q * O, O, 0.0f);
      }
    });
  else if (!cover)
    pool->parallel_for(N * O, 1, [&](size_t begin, size_t end) {
      for (size_t plane = begin; plane < end; ++plane) std::fill_n(acc + plane * OHW, OHW, bias ? bias[plane % O] : 0.0f);
    });
  const size_t tile = std::min(HW, std::max<size_t>(16, kColsTileBytes / sizeof(float) / width));
  thread_local std::vector<float> cols_scratch;  // the calling thread's: pool threads use the pointer
  cols_scratch.resize(tile * width);
  float* const cols = cols_scratch.data();
  const size_t threads = size_t(pool->max_threads());
  for (size_t n = 0; n < N; ++n)
    for (size_t g = 0; g < G; ++g)
      for (size_t q0 = 0; q0 < HW; q0 += tile) {
        const size_t count = std::min(tile, HW - q0);
        const float* a = p.nhwc ? input + (n * HW + q0) * C + g * Cg : input + (n * C + g * Cg) * HW + q0;
        gemm_f32_packed(count, width, Cg, a, p.nhwc ? C : HW, !p.nhwc, filter[g], cols, width, GemmEpilogue{}, pool);
        float* image = acc + n * O * OHW;
        // NHWC splits the channels into blocks (each item writes whole runs); NCHW, one plane per block.
        const size_t block = p.nhwc ? std::max<size_t>(16, (Og + 4 * threads - 1) / (4 * threads)) : 1;
        const size_t blocks = (Og + block - 1) / block;
        const size_t bands = disjoint ? std::max<size_t>(1, std::min(count, 4 * threads / std::min(blocks, 4 * threads))) : 1;
        const size_t band = (count + bands - 1) / bands;
        pool->parallel_for(blocks * bands, 1, [&](size_t begin, size_t end) {
          for (size_t item = begin; item < end; ++item) {
            const size_t o0 = item / bands * block, o1 = std::min(Og, o0 + block);
            const size_t i0 = item % bands * band, i1 = std::min(count, i0 + band);
            if (i0 >= i1) continue;
            if (p.nhwc) scatter_tile_nhwc(p, cols + i0 * width, width, q0 + i0, i1 - i0, g, o0, o1, bias, cover, image);
            else scatter_tile(p, cols + i0 * width, width, q0 + i0, i1 - i0, g, o0, o1, bias, cover, image);
          }
        });
      }
}

}  // namespace

Kernel make_conv_transpose2d_kernel(DataType type, const ConvTranspose2dParams& p, const void* filter_constant) {
  std::shared_ptr<std::vector<PackedB>> constant;
  if (filter_constant) {
    constant = pack_filter(p, type, filter_constant);
    for (PackedB& group : *constant) group = share_packed(std::move(group));
  }
  const size_t in_count = p.batch * p.in_channels * p.in_h * p.in_w;
  const size_t out_count = p.batch * p.out_channels * p.out_h * p.out_w;
  return [=](const KernelArgs& args) {
    const auto filter = constant ? constant : pack_filter(p, type, args.inputs[1]);
    thread_local std::vector<float> in_buffer, acc_buffer, bias_buffer;
    const float* input = static_cast<const float*>(args.inputs[0]);
    if (type != DataType::kFloat32) {
      in_buffer.resize(in_count);
      widen_halves(args.inputs[0], in_buffer.data(), in_count, args.pool);
      input = in_buffer.data();
    }
    const float* bias = nullptr;
    if (p.has_bias) {
      bias_buffer.resize(p.out_channels);
      for (size_t o = 0; o < p.out_channels; ++o) bias_buffer[o] = load_float(args.inputs[2], type, o);
      bias = bias_buffer.data();
    }
    // float32 accumulates in the output itself; float16 in a float32 buffer, rounded once at the end.
    if (type == DataType::kFloat32)
      return conv_transpose_f32(p, *filter, input, bias, static_cast<float*>(args.outputs[0]), args.pool);
    acc_buffer.resize(out_count);
    conv_transpose_f32(p, *filter, input, bias, acc_buffer.data(), args.pool);
    narrow_to_halves(acc_buffer.data(), args.outputs[0], out_count, args.pool);
  };
}

}  // namespace webnn
