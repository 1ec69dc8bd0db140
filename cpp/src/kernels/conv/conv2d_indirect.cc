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
#include "kernels/gemm/tiled_product.h"
#include "kernels/platform.h"
#include "core/thread_pool.h"

namespace webnn {

namespace {

// The most bytes of A rows copied up front (see copied_once).
constexpr size_t kCopiedOnceMaxBytes = size_t(16) << 20;

// `count` zeros that padding taps point at (a thread's own, grown as needed; never freed).
const float* conv_zero_row(size_t count) {
  thread_local std::vector<float> zeros;
  if (zeros.size() < count) zeros.assign(count, 0.0f);
  return zeros.data();
}

}  // namespace

namespace {

// The float32 kind of the tiled product: A's rows read in place through pointers per tap (padding
// points at zeros), or from copies when they would evict each other in L1; tiles outer, the
// activation per finished tile.
class F32ConvTiles {
 public:
  bool panels_outer() const { return false; }
  struct Scratch {
    std::vector<const float*>* rows;  // [taps][MR] tap pointers, then MR row pointers
    std::vector<float>* copies;       // one tile's copied rows
    const float* const* row_pointers = nullptr;
    size_t tap_count = 1, tap_length = 0;
  };

  F32ConvTiles(const Conv2dParams& p, const std::vector<PackedB>& filter, const float* bias, const float* in,
               const float* residual, float* out, const GemmEpilogue& base)
      : p_(p), filter_(filter), bias_(bias), in_(in), residual_(residual), out_(out), base_(base),
        uk_(kernel_table().gemm_f32) {
    const size_t mr = uk_.mr;
    C_ = p.in_channels, H_ = p.in_h, W_ = p.in_w, OH_ = p.out_h, OW_ = p.out_w, O_ = p.out_channels;
    taps_ = p.kernel_h * p.kernel_w, Ig_ = C_ / p.groups, Og_ = O_ / p.groups;
    pixels_ = p.batch * OH_ * OW_;
    if (mr > kGemmMaxTileRows)
      throw Error(ErrorKind::kUnknownError, "internal: the microkernel has more rows than supported");
    whole_rows_ = p.groups == 1;  // (and one chunk: see end_tile)
    merge_rows_ = p.groups == 1 && p.dilation_w == 1 && p.kernel_w > 1;
    // 1x1, stride 1, no padding: output pixel q reads input pixel q (no index arithmetic per pixel).
    pointwise_ = taps_ == 1 && p.stride_h == 1 && p.stride_w == 1 && p.pad_top == 0 && p.pad_left == 0 &&
                 OH_ == H_ && OW_ == W_;
    // Pixels whose channels evict each other in L1 (a multiple of 4 KiB apart: 1024 channels, or 512
    // at stride 2) are read from a copy of the tile's rows, one row of taps x channels each. The first
    // tiles tell (a tile can span output rows).
    const size_t tiles = (pixels_ + mr - 1) / mr;
    for (size_t t = 0; t < std::min<size_t>(tiles, 4) && !copy_rows_; ++t) {
      size_t offsets[kGemmMaxTileRows];
      const size_t count = std::min(mr, pixels_ - t * mr);
      for (size_t i = 0; i < count; ++i) {
        const size_t q = t * mr + i, n = q / (OH_ * OW_), oy = q / OW_ % OH_, ox = q % OW_;
        offsets[i] = ((n * H_ + oy * p.stride_h) * W_ + ox * p.stride_w) * C_ * sizeof(float);
      }
      copy_rows_ = rows_conflict_in_l1(offsets, count);
    }
    copy_ld_ = copy_rows_ ? spread_row_stride(taps_ * Ig_, mr) : 0;
    zero_row_ = conv_zero_row(p.kernel_w * Ig_);
    round_in_tile_ = base.activation.only_rounds();  // float16 values held in float32: in registers
  }

  TiledProduct product() const {
    const size_t nr = uk_.nr;
    return TiledProduct{p_.groups,
                        pixels_,
                        uk_.mr,
                        (Og_ + nr - 1) / nr,
                        uk_.mr * taps_ * Ig_ * sizeof(float),
                        std::max<size_t>(1, taps_ * Ig_ * nr * sizeof(float)),
                        p_.batch * H_ * W_ * C_ * sizeof(float),
                        pixels_ * O_ * taps_ * Ig_};
  }

  // Rows read from copies with B in several chunks: each chunk would copy a tile's rows again, so
  // they are copied once, for every pixel, before the product (when that copy stays moderate).
  void copy_once(const TilePlan& plan, ThreadPool* pool) {
    const size_t mr = uk_.mr, groups = p_.groups;
    if (!copy_rows_ || plan.chunks == 1 || groups * pixels_ * copy_ld_ * sizeof(float) > kCopiedOnceMaxBytes) return;
    thread_local std::vector<float> copied_storage;  // the calling thread's; the pool reads `copied_`
    copied_storage.resize(groups * pixels_ * copy_ld_);
    copied_ = copied_storage.data();
    pool->parallel_for(groups * plan.tiles, 1, [&](size_t begin, size_t end) {
      thread_local std::vector<const float*> rows;
      rows.resize(taps_ * mr);
      for (size_t item = begin; item < end; ++item) {
        const size_t g = item / plan.tiles, q0 = item % plan.tiles * mr, count = std::min(mr, pixels_ - q0);
        copy_tile(rows.data(), count, set_rows(rows.data(), g, q0, count), copied_ + (g * pixels_ + q0) * copy_ld_);
      }
    });
  }

  void set_plan(const TilePlan& plan) { whole_rows_ = whole_rows_ && plan.chunks == 1; }

  Scratch scratch() const {
    thread_local std::vector<const float*> rows;
    thread_local std::vector<float> copies;
    rows.resize(taps_ * uk_.mr + uk_.mr);
    if (copies.size() < uk_.mr * copy_ld_) copies.resize(uk_.mr * copy_ld_);
    return Scratch{&rows, &copies};
  }

  void begin_item(Scratch&, const TileItem&) const {}
  void end_item(Scratch&, const TileItem&) const {}

  // The tile's A rows: in place, from this tile's copy, or from the copies made up front.
  void begin_tile(Scratch& s, const TileItem& item, size_t t) const {
    const size_t mr = uk_.mr, g = item.group, q0 = t * mr, count = std::min(mr, pixels_ - q0);
    const float** const row_slot = s.rows->data();
    const float** const copy_slot = row_slot + taps_ * mr;
    s.row_pointers = copy_slot;
    s.tap_count = 1;
    s.tap_length = taps_ * Ig_;
    if (copied_) {
      for (size_t i = 0; i < count; ++i) copy_slot[i] = copied_ + (g * pixels_ + q0 + i) * copy_ld_;
    } else if (copy_rows_) {
      copy_tile(row_slot, count, set_rows(row_slot, g, q0, count), s.copies->data());
      for (size_t i = 0; i < count; ++i) copy_slot[i] = s.copies->data() + i * copy_ld_;
    } else {
      std::tie(s.tap_count, s.tap_length) = set_rows(row_slot, g, q0, count);
      s.row_pointers = row_slot;
      // The next tile's pixels (one block) into L2: read a float per k from 14 rows, an input
      // larger than L3 outran the hardware prefetchers (256->64 1x1 on 4 x 56x56: 77 -> 94 GFLOP/s).
      if (pointwise_ && p_.groups == 1 && t + 1 < item.t1) {
        const char* next = reinterpret_cast<const char*>(in_ + (q0 + count) * C_);
        const size_t bytes = std::min(mr, pixels_ - q0 - count) * C_ * sizeof(float);
        for (size_t offset = 0; offset < bytes; offset += 64) __builtin_prefetch(next + offset, 0, 2);
      }
    }
  }

  size_t k_blocks() const { return 1; }
  void begin_k_block(Scratch&, const TileItem&, size_t) const {}
  void tile(Scratch& s, const TileItem& item, size_t t, size_t panel, size_t) const {
    const size_t mr = uk_.mr, nr = uk_.nr, q0 = t * mr, count = std::min(mr, pixels_ - q0);
    const size_t n0 = panel * nr, cols = std::min(nr, Og_ - n0), column = item.group * Og_ + n0;
    TileEpilogue ep{bias_ ? bias_ + column : nullptr, false, base_.min, base_.max,
                        residual_ ? residual_ + q0 * O_ + column : nullptr, O_, round_in_tile_};
    uk_.igemm(count, cols, s.tap_count, s.tap_length, s.row_pointers, filter_[item.group].panel(panel),
              out_ + q0 * O_ + column, O_, false, &ep);
  }

  void end_tile(Scratch&, const TileItem& item, size_t t) const {
    const ActivationLoop& activation = base_.activation;
    if (!activation || round_in_tile_) return;
    const size_t mr = uk_.mr, nr = uk_.nr, q0 = t * mr, count = std::min(mr, pixels_ - q0);
    float* const tile_out = out_ + q0 * O_;
    if (whole_rows_) {  // one item covers every output channel of its pixels: the tile's rows, contiguous
      activation(tile_out, count * O_);
      return;
    }
    // Each row's columns of the item's panels in one call (still in cache), not one call per panel.
    const size_t first = item.group * Og_ + item.p0 * nr, width = std::min(Og_, item.p1 * nr) - item.p0 * nr;
    for (size_t i = 0; i < count; ++i) activation(tile_out + i * O_ + first, width);
  }

 private:
  // Points row_slot[t * mr + i] at tap t of pixel q0 + i (group g); returns the taps per row and the
  // values per tap. The first pixel's coordinates are divided out, the rest stepped along the output
  // rows (no division per pixel: small-channel layers spend as long here as in the GEMM).
  std::pair<size_t, size_t> set_rows(const float** row_slot, size_t g, size_t q0, size_t count) const {
    const size_t mr = uk_.mr, KH = p_.kernel_h, KW = p_.kernel_w, dh = p_.dilation_h, dw = p_.dilation_w;
    if (pointwise_) {
      for (size_t i = 0; i < count; ++i) row_slot[i] = in_ + (q0 + i) * C_ + g * Ig_;
      return {1, Ig_};
    }
    long long first_x[kGemmMaxTileRows], first_y[kGemmMaxTileRows];
    const float* image[kGemmMaxTileRows];
    size_t n = q0 / (OH_ * OW_), oy = q0 / OW_ % OH_, ox = q0 % OW_;
    // When each pixel's filter rows lie inside the image horizontally (and channels are not split
    // into groups), a filter row's taps are contiguous: one pointer per row, KW * I values.
    bool rows_inside = merge_rows_;
    for (size_t i = 0; i < count; ++i) {
      first_x[i] = (long long)(ox * p_.stride_w) - (long long)p_.pad_left;
      first_y[i] = (long long)(oy * p_.stride_h) - (long long)p_.pad_top;
      image[i] = in_ + n * H_ * W_ * C_ + g * Ig_;
      rows_inside = rows_inside && first_x[i] >= 0 && first_x[i] + (long long)KW <= (long long)W_;
      if (++ox == OW_) {
        ox = 0;
        if (++oy == OH_) oy = 0, ++n;
      }
    }
    const size_t row_taps = rows_inside ? KW : 1, row_pointers = KW / row_taps, x_step = row_taps * dw;
    const size_t row_floats = W_ * C_;
    for (size_t i = 0; i < count; ++i) {
      const float** slot = row_slot + i;
      for (size_t kh = 0; kh < KH; ++kh) {
        const long long y = first_y[i] + (long long)(kh * dh);
        if (y < 0 || y >= (long long)H_) {
          for (size_t j = 0; j < row_pointers; ++j, slot += mr) *slot = zero_row_;
          continue;
        }
        const float* image_row = image[i] + size_t(y) * row_floats;
        if (rows_inside) {  // the common case: one pointer, inside the image
          *slot = image_row + size_t(first_x[i]) * C_;
          slot += mr;
          continue;
        }
        for (size_t j = 0; j < row_pointers; ++j, slot += mr) {
          const long long x = first_x[i] + (long long)(j * x_step);
          *slot = x >= 0 && x < (long long)W_ ? image_row + size_t(x) * C_ : zero_row_;
        }
      }
    }
    return {taps_ / row_taps, Ig_ * row_taps};
  }

  // Copies pixel rows set up in row_slot (tap_count taps of tap_length values) to dst, copy_ld apart.
  void copy_tile(const float* const* row_slot, size_t count, std::pair<size_t, size_t> taps_of, float* dst) const {
    const auto [tap_count, tap_length] = taps_of;
    for (size_t i = 0; i < count; ++i, dst += copy_ld_)
      for (size_t t = 0; t < tap_count; ++t)
        std::memcpy(dst + t * tap_length, row_slot[t * uk_.mr + i], tap_length * sizeof(float));
  }

  const Conv2dParams& p_;
  const std::vector<PackedB>& filter_;
  const float* bias_;
  const float* in_;
  const float* residual_;
  float* out_;
  const GemmEpilogue& base_;
  const GemmUkernel uk_;
  size_t C_, H_, W_, OH_, OW_, O_, taps_, Ig_, Og_, pixels_;
  bool whole_rows_, merge_rows_, pointwise_, copy_rows_ = false, round_in_tile_;
  size_t copy_ld_;
  const float* zero_row_;
  float* copied_ = nullptr;
};

// Chunks of B stay in L2 while a group of pixel tiles runs over them; about 8 items per thread.
constexpr TilePolicy kF32ConvPolicy{~size_t(0), 32, 256 * 1024, 8};

}  // namespace

void conv_indirect_nhwc(const Conv2dParams& p, const std::vector<PackedB>& filter, const float* bias, const float* in,
                        const float* residual, float* out, const GemmEpilogue& base, ThreadPool* pool) {
  if (p.batch * p.out_h * p.out_w == 0 || p.out_channels == 0) return;
  F32ConvTiles kind(p, filter, bias, in, residual, out, base);
  const TilePlan plan = plan_tiles(kind.product(), kF32ConvPolicy, pool);
  kind.set_plan(plan);
  kind.copy_once(plan, pool);
  run_tiled(plan, pool, kind);
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
          TileEpilogue ep{bias ? bias + n0 : nullptr, false, base.min, base.max,
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
