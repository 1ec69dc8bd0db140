// The pooling family's loops (PoolLoops), compiled once per ISA level (see kernel_isa.h), on
// float32 lanes (float16 converts on load and store). nhwc pools across channels. nchw works
// along rows: each output row first pools its window rows into one input-wide row (vertical),
// then that row's windows (horizontal: contiguous, deinterleaved or gathered loads).
#include <cstdint>

#include "kernels/pool/pool.h"
#include "kernels/reduce/reduce_lanes.h"

namespace webnn {
namespace WEBNN_KERNEL_ISA {
namespace {

// Element x map (squares for l2), combined, then finished with the in-bounds element count.
template <PoolOp Op>
struct PoolMath {
  static constexpr float kIdentity = Op == PoolOp::kMax ? kExtremeIdentity<true> : 0.0f;
  static Lanes map(Lanes x) {
    if constexpr (Op == PoolOp::kL2) return x * x;
    else return x;
  }
  static Lanes combine(Lanes acc, Lanes x) {
    if constexpr (Op == PoolOp::kMax) return extreme<true>(acc, x);
    else return acc + x;
  }
  static Lanes finish(Lanes acc, Lanes count) {
    if constexpr (Op == PoolOp::kAverage) return count > 0.0f ? acc / count : Lanes{};  // no element: 0
    if constexpr (Op == PoolOp::kL2) return sqrt_lanes(acc);
    return count > 0.0f ? acc : Lanes{};  // a window wholly in the padding gives 0, as WPT expects
  }
};

// A tile of kVectors lane groups of channels (accumulated in registers), the last with `last` valid lanes.
template <size_t kVectors>
struct ChannelTile {
  static constexpr size_t kCount = kVectors;
  size_t last;
  size_t valid(size_t v) const { return v + 1 < kVectors ? kWidth : last; }
};
constexpr size_t kTileVectors = 8;

// Calls body(c, tile) over tiles covering channels [0, channels) (tile: a ChannelTile<N>, from channel c).
template <class Body>
void for_channel_tiles(size_t channels, const Body& body) {
  size_t c = 0;
  for (; c + kTileVectors * kWidth <= channels; c += kTileVectors * kWidth) body(c, ChannelTile<kTileVectors>{kWidth});
  if (channels - c >= 4 * kWidth) {
    body(c, ChannelTile<4>{kWidth});
    c += 4 * kWidth;
  }
  if (channels - c >= 2 * kWidth) {
    body(c, ChannelTile<2>{kWidth});
    c += 2 * kWidth;
  }
  if (channels - c > kWidth) body(c, ChannelTile<2>{channels - c - kWidth});
  else if (channels > c) body(c, ChannelTile<1>{channels - c});
}

template <PoolOp Op, class T>
void pool_nhwc(const Pool2dParams& p, const T* in, T* out, size_t begin, size_t end) {
  using M = PoolMath<Op>;
  const size_t C = p.channels;
  for (size_t row = begin; row < end; ++row) {
    const size_t n = row / p.out_h, oy = row % p.out_h;
    const TapRange ky = in_bounds_taps(int64_t(oy * p.stride_h) - int64_t(p.pad_top), p.in_h, p.window_h, p.dilation_h);
    const T* image = in + n * p.in_h * p.in_w * C;
    for (size_t ox = 0; ox < p.out_w; ++ox) {
      const TapRange kx =
          in_bounds_taps(int64_t(ox * p.stride_w) - int64_t(p.pad_left), p.in_w, p.window_w, p.dilation_w);
      const Lanes count = splat_lanes(float(ky.count() * kx.count()));
      T* dst = out + (row * p.out_w + ox) * C;
      for_channel_tiles(C, [&](size_t c0, auto tile) {
        using Tile = decltype(tile);
        Lanes acc[Tile::kCount];
#pragma GCC unroll 8
        for (Lanes& a : acc) a = splat_lanes(M::kIdentity);
        for (size_t ty = ky.begin; ty < ky.end; ++ty) {
          const size_t y = oy * p.stride_h + ty * p.dilation_h - p.pad_top;
          for (size_t tx = kx.begin; tx < kx.end; ++tx) {
            const size_t x = ox * p.stride_w + tx * p.dilation_w - p.pad_left;
            const T* src = image + (y * p.in_w + x) * C + c0;
#pragma GCC unroll 8
            for (size_t v = 0; v < Tile::kCount; ++v)
              acc[v] = M::combine(acc[v], M::map(load_lanes(src + v * kWidth, tile.valid(v))));
          }
        }
#pragma GCC unroll 8
        for (size_t v = 0; v < Tile::kCount; ++v)
          store_lanes(dst + c0 + v * kWidth, M::finish(acc[v], count), tile.valid(v));
      });
    }
  }
}

// Strides up to this gather with 32-bit lane offsets.
constexpr size_t kMaxGatherStride = size_t(1) << 24;

// p[0], p[stride], ..., p[(kWidth - 1) * stride] (stride 2 reads p[0, 2 * kWidth)).
inline Lanes load_strided(const float* p, size_t stride) {
#if WEBNN_KERNEL_ISA_LEVEL >= 2
  if (stride == 1) return load_lanes(p);
  if (stride == 2) {
    const __m512i evens = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    return VF(_mm512_permutex2var_ps(_mm512_loadu_ps(p), evens, _mm512_loadu_ps(p + 16)));
  }
  const __m512i lanes = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
  const __m512i offsets = _mm512_mullo_epi32(lanes, _mm512_set1_epi32(int(stride)));
  return VF(_mm512_mask_i32gather_ps(_mm512_setzero_ps(), 0xffff, offsets, p, 4));  // (GCC 12 warns on the unmasked form)
#elif WEBNN_KERNEL_ISA_LEVEL == 1
  if (stride == 1) return load_lanes(p);
  if (stride == 2) {  // [a0 a2 b0 b2 | a4 a6 b4 b6], then the 64-bit pairs reordered
    const __m256 pairs = _mm256_shuffle_ps(_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8), 0x88);
    return VF(_mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(pairs), 0xd8)));
  }
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return VF(_mm256_i32gather_ps(p, _mm256_mullo_epi32(lanes, _mm256_set1_epi32(int(stride))), 4));
#else
  (void)stride;
  return *p;
#endif
}

// The nchw scratch: the vertically pooled row (in_w floats, then kRowSlack floats for full-width
// loads), then each output column's in-bounds tap count (out_w floats).
constexpr size_t kRowSlack = 2 * kWidth;

// Lanes l < n: line[first + l * stride], or `fill` where that lies outside [0, width).
inline Lanes load_taps(const float* line, size_t width, int64_t first, size_t stride, size_t n, float fill) {
  const int64_t last_valid = first + int64_t((n - 1) * stride);
  const int64_t last_read = first + int64_t((kWidth - 1) * stride);
  if (first >= 0 && last_valid < int64_t(width) && last_read < int64_t(width + kRowSlack) &&
      stride <= kMaxGatherStride)
    return load_strided(line + first, stride);
  float staged[kWidth];
  for (size_t l = 0; l < kWidth; ++l) {
    const int64_t x = first + int64_t(l * stride);
    staged[l] = l < n && x >= 0 && x < int64_t(width) ? line[x] : fill;
  }
  return load_lanes(staged);
}

template <PoolOp Op, class T>
void pool_nchw(const Pool2dParams& p, const T* in, T* out, size_t begin, size_t end, float* scratch) {
  using M = PoolMath<Op>;
  const size_t W = p.in_w;
  float* line = scratch;
  float* column_taps = scratch + W + kRowSlack;
  for (size_t x = W; x < W + kRowSlack; ++x) line[x] = M::kIdentity;
  for (size_t ox = 0; ox < p.out_w; ++ox)
    column_taps[ox] = float(
        in_bounds_taps(int64_t(ox * p.stride_w) - int64_t(p.pad_left), W, p.window_w, p.dilation_w).count());
  for (size_t row = begin; row < end; ++row) {
    const size_t plane = row / p.out_h, oy = row % p.out_h;
    const TapRange ky = in_bounds_taps(int64_t(oy * p.stride_h) - int64_t(p.pad_top), p.in_h, p.window_h, p.dilation_h);
    const T* src = in + plane * p.in_h * W;
    for (size_t x = 0; x < W; x += kWidth) {
      const size_t n = min_size(kWidth, W - x);
      Lanes acc = splat_lanes(M::kIdentity);
      for (size_t ty = ky.begin; ty < ky.end; ++ty)
        acc = M::combine(acc, M::map(load_lanes(src + (oy * p.stride_h + ty * p.dilation_h - p.pad_top) * W + x, n)));
      store_lanes(line + x, acc, n);
    }
    T* dst = out + row * p.out_w;
    const float rows_in = float(ky.count());
    for (size_t ox = 0; ox < p.out_w; ox += kWidth) {
      const size_t n = min_size(kWidth, p.out_w - ox);
      Lanes acc = splat_lanes(M::kIdentity);
      for (size_t tx = 0; tx < p.window_w; ++tx) {
        const int64_t first = int64_t(ox * p.stride_w + tx * p.dilation_w) - int64_t(p.pad_left);
        const int64_t last = first + int64_t((n - 1) * p.stride_w);
        if (last < 0 || first >= int64_t(W)) continue;  // every lane in the padding
        acc = M::combine(acc, load_taps(line, W, first, p.stride_w, n, M::kIdentity));
      }
      store_lanes(dst + ox, M::finish(acc, load_lanes(column_taps + ox, n) * rows_in), n);
    }
  }
}

template <PoolOp Op, class T>
void pool_rows_loop(const Pool2dParams& p, const void* in, void* out, size_t begin, size_t end, float* scratch) {
  if (p.nhwc) pool_nhwc<Op>(p, static_cast<const T*>(in), static_cast<T*>(out), begin, end);
  else pool_nchw<Op>(p, static_cast<const T*>(in), static_cast<T*>(out), begin, end, scratch);
}

PoolRowsFn pool_rows_fn(PoolOp op, DataType type) {
  return for_float_type(type, [op](auto t) -> PoolRowsFn {
    using T = decltype(t);
    switch (op) {
      case PoolOp::kAverage: return pool_rows_loop<PoolOp::kAverage, T>;
      case PoolOp::kL2: return pool_rows_loop<PoolOp::kL2, T>;
      case PoolOp::kMax: break;
    }
    return pool_rows_loop<PoolOp::kMax, T>;
  });
}

size_t pool_scratch_floats(const Pool2dParams& p) { return p.nhwc ? 0 : p.in_w + kRowSlack + p.out_w; }

constexpr PoolLoops kPoolLoops = {pool_rows_fn, pool_scratch_floats};

}  // namespace
}  // namespace WEBNN_KERNEL_ISA
}  // namespace webnn
