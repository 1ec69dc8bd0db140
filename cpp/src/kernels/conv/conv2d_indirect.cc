// NHWC convolution as an indirect GEMM (no im2col): C[pixels][O/g] = A x B, where A's row for an
// output pixel and filter tap is read in place from the input through a pointer (padding points at
// zeros) and B is the filter packed once as [kH*kW*I/g][O/g].
#include <algorithm>
#include <cstring>
#include <tuple>
#include <utility>
#include <vector>

#include "kernels/conv/conv.h"
#include "kernels/gemm/gemm.h"
#include "kernels/platform.h"
#include "core/thread_pool.h"

namespace webnn {

namespace {

// B panels per chunk are limited so a chunk stays in L2 while a group of pixel tiles runs over it.
constexpr size_t kFilterChunkBytes = 256 * 1024;
constexpr size_t kMaxTilesPerItem = 32;
// The most bytes of A rows copied up front (see copied_once).
constexpr size_t kCopiedOnceMaxBytes = size_t(16) << 20;

// `count` zeros that padding taps point at (a thread's own, grown as needed; never freed).
const float* conv_zero_row(size_t count) {
  thread_local std::vector<float> zeros;
  if (zeros.size() < count) zeros.assign(count, 0.0f);
  return zeros.data();
}

}  // namespace

void conv_indirect_nhwc(const Conv2dParams& p, const std::vector<PackedB>& filter, const float* bias, const float* in,
                        const float* residual, float* out, const GemmEpilogue& base, ThreadPool* pool) {
  const GemmUkernel uk = kernel_table().gemm_f32;
  const size_t mr = uk.mr, nr = uk.nr;
  const size_t C = p.in_channels, H = p.in_h, W = p.in_w, OH = p.out_h, OW = p.out_w, O = p.out_channels;
  const size_t KH = p.kernel_h, KW = p.kernel_w, dh = p.dilation_h, dw = p.dilation_w;
  const size_t taps = KH * KW, Ig = C / p.groups, Og = O / p.groups, groups = p.groups;
  const size_t pixels = p.batch * OH * OW, tiles = (pixels + mr - 1) / mr, panels = (Og + nr - 1) / nr;
  if (pixels == 0 || Og == 0) return;
  if (mr > kGemmMaxTileRows)
    throw Error(ErrorKind::kUnknownError, "internal: the microkernel has more rows than supported");
  const size_t panel_bytes = std::max<size_t>(1, taps * Ig * nr * sizeof(float));
  // A filter a little over the chunk size stays one chunk: split, its last chunk would be a narrow
  // panel whose rows take the activation in calls of a few values (80 channels: 64 + 16).
  const size_t chunk_panels = panels * panel_bytes <= kFilterChunkBytes * 5 / 4
                                  ? panels
                                  : std::clamp<size_t>(kFilterChunkBytes / panel_bytes, 1, panels);
  const size_t chunks = (panels + chunk_panels - 1) / chunk_panels;
  // Enough items for every thread to get several (pool threads take contiguous ranges).
  const size_t threads = size_t(pool->max_threads());
  const size_t wanted_groups = std::max<size_t>(1, (8 * threads + groups * chunks - 1) / (groups * chunks));
  const size_t tiles_per_item = std::clamp<size_t>((tiles + wanted_groups - 1) / wanted_groups, 1, kMaxTilesPerItem);
  const size_t tile_groups = (tiles + tiles_per_item - 1) / tiles_per_item;
  // Consecutive items (one thread's) either share a B chunk (chunk-major: the input is read from L3
  // once per chunk) or a group of tiles (group-major: the filter is read once per group, while the
  // group's input stays in L2): whichever reads fewer bytes. (ResNet-50's stride-2 3x3 128->128 at
  // batch 8, 4 images per step: 87 -> 100 GFLOP/s group-major.)
  const size_t input_bytes = p.batch * H * W * C * sizeof(float), filter_bytes = taps * Ig * O * sizeof(float);
  const bool group_major = tile_groups * filter_bytes < chunks * input_bytes;
  // One item covers every output channel of its pixels: the activation runs once per tile (else once
  // per row of the tile, over the item's columns).
  const bool whole_rows = groups == 1 && chunks == 1;
  const bool merge_rows = groups == 1 && p.dilation_w == 1 && p.kernel_w > 1;
  // 1x1, stride 1, no padding: output pixel q reads input pixel q (no index arithmetic per pixel).
  const bool pointwise = taps == 1 && p.stride_h == 1 && p.stride_w == 1 && p.pad_top == 0 && p.pad_left == 0 &&
                         OH == H && OW == W;
  // Pixels whose channels evict each other in L1 (a multiple of 4 KiB apart: 1024 channels, or 512
  // at stride 2) are read from a copy of the tile's rows, one row of taps x channels each. The first
  // tiles tell (a tile can span output rows).
  bool copy_rows = false;
  for (size_t t = 0; t < std::min<size_t>(tiles, 4) && !copy_rows; ++t) {
    size_t offsets[kGemmMaxTileRows];
    const size_t count = std::min(mr, pixels - t * mr);
    for (size_t i = 0; i < count; ++i) {
      const size_t q = t * mr + i, n = q / (OH * OW), oy = q / OW % OH, ox = q % OW;
      offsets[i] = ((n * H + oy * p.stride_h) * W + ox * p.stride_w) * C * sizeof(float);
    }
    copy_rows = rows_conflict_in_l1(offsets, count);
  }
  const size_t copy_ld = copy_rows ? spread_row_stride(taps * Ig, mr) : 0;
  // Points row_slot[t * mr + i] at tap t of pixel q0 + i (group g); returns the taps per row and the
  // values per tap. The first pixel's coordinates are divided out, the rest stepped along the output
  // rows (no division per pixel: small-channel layers spend as long here as in the GEMM).
  const float* const zero_row = conv_zero_row(p.kernel_w * Ig);
  auto set_rows = [&, in_h = H, in_w = W, row_floats = W * C](const float** row_slot, size_t g, size_t q0,
                                                               size_t count) -> std::pair<size_t, size_t> {
    if (pointwise) {
      for (size_t i = 0; i < count; ++i) row_slot[i] = in + (q0 + i) * C + g * Ig;
      return {1, Ig};
    }
    long long first_x[kGemmMaxTileRows], first_y[kGemmMaxTileRows];
    const float* image[kGemmMaxTileRows];
    size_t n = q0 / (OH * OW), oy = q0 / OW % OH, ox = q0 % OW;
    // When each pixel's filter rows lie inside the image horizontally (and channels are not split
    // into groups), a filter row's taps are contiguous: one pointer per row, KW * I values.
    bool rows_inside = merge_rows;
    for (size_t i = 0; i < count; ++i) {
      first_x[i] = (long long)(ox * p.stride_w) - (long long)p.pad_left;
      first_y[i] = (long long)(oy * p.stride_h) - (long long)p.pad_top;
      image[i] = in + n * H * W * C + g * Ig;
      rows_inside = rows_inside && first_x[i] >= 0 && first_x[i] + (long long)KW <= (long long)W;
      if (++ox == OW) {
        ox = 0;
        if (++oy == OH) oy = 0, ++n;
      }
    }
    const size_t row_taps = rows_inside ? KW : 1, row_pointers = KW / row_taps, x_step = row_taps * dw;
    for (size_t i = 0; i < count; ++i) {
      const float** slot = row_slot + i;
      for (size_t kh = 0; kh < KH; ++kh) {
        const long long y = first_y[i] + (long long)(kh * dh);
        if (y < 0 || y >= (long long)in_h) {
          for (size_t j = 0; j < row_pointers; ++j, slot += mr) *slot = zero_row;
          continue;
        }
        const float* image_row = image[i] + size_t(y) * row_floats;
        if (rows_inside) {  // the common case: one pointer, inside the image
          *slot = image_row + size_t(first_x[i]) * C;
          slot += mr;
          continue;
        }
        for (size_t j = 0; j < row_pointers; ++j, slot += mr) {
          const long long x = first_x[i] + (long long)(j * x_step);
          *slot = x >= 0 && x < (long long)in_w ? image_row + size_t(x) * C : zero_row;
        }
      }
    }
    return {taps / row_taps, Ig * row_taps};
  };
  // Copies pixel rows set up in row_slot (tap_count taps of tap_length values) to dst, copy_ld apart.
  const auto copy_tile = [&](const float* const* row_slot, size_t count, std::pair<size_t, size_t> taps_of,
                             float* dst) {
    const auto [tap_count, tap_length] = taps_of;
    for (size_t i = 0; i < count; ++i, dst += copy_ld)
      for (size_t t = 0; t < tap_count; ++t)
        std::memcpy(dst + t * tap_length, row_slot[t * mr + i], tap_length * sizeof(float));
  };
  // Rows read from copies with B in several chunks: each chunk would copy a tile's rows again, so
  // they are copied once, for every pixel, before the GEMM (when that copy stays moderate).
  const bool copied_once =
      copy_rows && chunks > 1 && groups * pixels * copy_ld * sizeof(float) <= kCopiedOnceMaxBytes;
  thread_local std::vector<float> copied_storage;  // the calling thread's; the pool reads `copied`
  if (copied_once) copied_storage.resize(groups * pixels * copy_ld);
  float* const copied = copied_once ? copied_storage.data() : nullptr;
  if (copied_once)
    pool->parallel_for(groups * tiles, 1, [&](size_t begin, size_t end) {
      thread_local std::vector<const float*> rows;
      rows.resize(taps * mr);
      for (size_t item = begin; item < end; ++item) {
        const size_t g = item / tiles, q0 = item % tiles * mr, count = std::min(mr, pixels - q0);
        copy_tile(rows.data(), count, set_rows(rows.data(), g, q0, count), copied + (g * pixels + q0) * copy_ld);
      }
    });
  pool->parallel_for(groups * chunks * tile_groups, 1, [&](size_t begin, size_t end) {
    thread_local std::vector<float> copies;
    thread_local std::vector<const float*> rows;
    rows.resize(taps * mr + mr);
    if (copies.size() < mr * copy_ld) copies.resize(mr * copy_ld);
    // Loop invariants in locals: the per-panel loop below runs once per tile of a few pixels.
    const float** const row_slot = rows.data();
    const float** const copy_slot = row_slot + taps * mr;
    const IgemmUkernelFn igemm = uk.igemm;
    const ActivationLoop activation = base.activation;
    const bool round_in_tile = activation.only_rounds();  // float16 values held in float32: in registers
    const float lo = base.min, hi = base.max;
    const size_t panel_floats = taps * Ig * nr;
    for (size_t item = begin; item < end; ++item) {
      const size_t g = item / (chunks * tile_groups), rest = item % (chunks * tile_groups);
      const size_t chunk = group_major ? rest % chunks : rest / tile_groups;
      const size_t group = group_major ? rest / chunks : rest % tile_groups;
      const size_t p0 = chunk * chunk_panels, p1 = std::min(panels, p0 + chunk_panels);
      const size_t t0 = group * tiles_per_item, t1 = std::min(tiles, t0 + tiles_per_item);
      for (size_t t = t0; t < t1; ++t) {
        const size_t q0 = t * mr, count = std::min(mr, pixels - q0);
        // The tile's A rows: in place, from this tile's copy, or from the copies made up front.
        const float* const* row_pointers = copy_slot;
        size_t tap_count = 1, tap_length = taps * Ig;
        if (copied) {
          for (size_t i = 0; i < count; ++i) copy_slot[i] = copied + (g * pixels + q0 + i) * copy_ld;
        } else if (copy_rows) {
          copy_tile(row_slot, count, set_rows(row_slot, g, q0, count), copies.data());
          for (size_t i = 0; i < count; ++i) copy_slot[i] = copies.data() + i * copy_ld;
        } else {
          std::tie(tap_count, tap_length) = set_rows(row_slot, g, q0, count);
          row_pointers = row_slot;
          // The next tile's pixels (one block) into L2: read a float per k from 14 rows, an input
          // larger than L3 outran the hardware prefetchers (256->64 1x1 on 4 x 56x56: 77 -> 94 GFLOP/s).
          if (pointwise && groups == 1 && t + 1 < t1) {
            const char* next = reinterpret_cast<const char*>(in + (q0 + count) * C);
            const size_t bytes = std::min(mr, pixels - q0 - count) * C * sizeof(float);
            for (size_t offset = 0; offset < bytes; offset += 64) __builtin_prefetch(next + offset, 0, 2);
          }
        }
        const float* b = filter[g].panel(p0);
        float* const tile_out = out + q0 * O;
        for (size_t panel = p0; panel < p1; ++panel, b += panel_floats) {
          const size_t n0 = panel * nr, cols = std::min(nr, Og - n0), column = g * Og + n0;
          GemmTileEpilogue ep{bias ? bias + column : nullptr, false, lo, hi,
                              residual ? residual + q0 * O + column : nullptr, O, round_in_tile};
          igemm(count, cols, tap_count, tap_length, row_pointers, b, tile_out + column, O, false, &ep);
        }
        if (!activation || round_in_tile) continue;
        if (whole_rows) {  // the tile's rows, contiguous
          activation(tile_out, count * O);
          continue;
        }
        // Each row's columns of panels [p0, p1) in one call (still in cache), not one call per panel.
        const size_t first = g * Og + p0 * nr, width = std::min(Og, p1 * nr) - p0 * nr;
        for (size_t i = 0; i < count; ++i) activation(tile_out + i * O + first, width);
      }
    }
  });
}

}  // namespace webnn

namespace webnn {

void conv_indirect_nchw_input(const Conv2dParams& p, const PackedB& filter, const float* bias, const float* in,
                              const float* residual, float* out, const GemmEpilogue& base, ThreadPool* pool) {
  const GemmUkernel uk = kernel_table().gemm_f32;
  const size_t mr = uk.mr, nr = uk.nr;
  const size_t C = p.in_channels, H = p.in_h, W = p.in_w, OH = p.out_h, OW = p.out_w, O = p.out_channels;
  const size_t KH = p.kernel_h, KW = p.kernel_w, sw = p.stride_w, dw = p.dilation_w;
  if (OH * OW == 0 || O == 0) return;
  // A scratch row holds the padded input columns an output row reads: [0, (OW-1)*sw + (KW-1)*dw + 1).
  const size_t span = (OW - 1) * sw + (KW - 1) * dw + 1;
  // With dilation 1 a pixel's KW taps of one scratch row are contiguous: one pointer per row.
  const size_t tap_length = dw == 1 ? KW : 1, taps = C * KH * (KW / tap_length), panels = (O + nr - 1) / nr;
  // At stride 1 or 2 the strided microkernel reads a tile's pixels from one pointer per tap (the
  // indirect one loads a pointer per pixel and tap, for only KW values each: 3 with a 3x3 filter).
  const bool strided = uk.strided && (sw == 1 || sw == 2);
  pool->parallel_for(p.batch * OH, 1, [&](size_t begin, size_t end) {
    thread_local std::vector<float> scratch;
    thread_local std::vector<const float*> rows;
    scratch.resize(C * KH * span);
    rows.resize(taps * mr);
    float* const padded = scratch.data();
    const float** const row_slot = rows.data();
    for (size_t row = begin; row < end; ++row) {
      const size_t n = row / OH, oy = row % OH;
      for (size_t c = 0; c < C; ++c)
        for (size_t kh = 0; kh < KH; ++kh) {
          float* dst = padded + (c * KH + kh) * span;
          const long long y = (long long)(oy * p.stride_h + kh * p.dilation_h) - (long long)p.pad_top;
          if (y < 0 || y >= (long long)H) {
            std::fill(dst, dst + span, 0.0f);
            continue;
          }
          const size_t left = std::min(span, p.pad_left), copied = std::min(span - left, W);
          std::fill(dst, dst + left, 0.0f);
          std::copy_n(in + ((n * C + c) * H + size_t(y)) * W, copied, dst + left);
          std::fill(dst + left + copied, dst + span, 0.0f);
        }
      float* out_row = out + row * OW * O;
      for (size_t ox0 = 0; ox0 < OW; ox0 += mr) {
        const size_t count = std::min(mr, OW - ox0);
        // Tap t: scratch row t / per_row, filter column (t % per_row) * dw; the tile's pixels sw apart.
        const size_t per_row = KW / tap_length;
        for (size_t t = 0; t < taps; ++t) {
          const float* first = padded + t / per_row * span + t % per_row * dw + ox0 * sw;
          if (strided) {
            row_slot[t] = first;
            continue;
          }
          for (size_t i = 0; i < count; ++i) row_slot[t * mr + i] = first + i * sw;
        }
        float* c = out_row + ox0 * O;
        for (size_t panel = 0; panel < panels; ++panel) {
          const size_t n0 = panel * nr, cols = std::min(nr, O - n0);
          GemmTileEpilogue ep{bias ? bias + n0 : nullptr, false, base.min, base.max,
                              residual ? residual + (row * OW + ox0) * O + n0 : nullptr, O,
                              base.activation.only_rounds()};
          if (strided)
            uk.strided(count, cols, taps, tap_length, row_slot, sw, filter.panel(panel), c + n0, O, &ep);
          else
            uk.igemm(count, cols, taps, tap_length, row_slot, filter.panel(panel), c + n0, O, false, &ep);
        }
      }
      if (base.activation && !base.activation.only_rounds())
        base.activation(out_row, OW * O);  // the row is still in cache
    }
  });
}

}  // namespace webnn
