// The depthwise loops, included inside an ISA namespace by conv_depthwise_{ref,avx2,avx512}.cc after
// the vector traits they use. A traits class V provides: the vector type T and its kLanes floats;
// Mask and first(n) (the first n lanes); zero, splat, load and store (plain and masked: masked-off
// lanes are neither read nor written and load as 0); fma(a, b, c) = a * b + c; clamp(v, lo, hi),
// which keeps NaN; shift_up(v, shift_by(n)): lanes moved up by n <= kLanes, zeros below;
// deinterleave(a, b, even, odd): the even and odd elements of the 2 * kLanes run a, b; (for
// kLanes > 1) shift_down<n>(a, b), 0 < n < kLanes: lanes n .. n + kLanes - 1 of that run;
// kRegisters, the vector register count; and with kPermute2: Index, load_index(int32_t[kLanes]),
// mask_bits(bits) and permute2(a, index, b, mask): lane j = run[index[j]] where mask, else 0.
// T supports + (GCC / Clang vector extensions, or float).

namespace {

constexpr size_t kMaxTileRows = 8;    // NCHW tile: output rows x one vector of columns
constexpr size_t kMaxTilePixels = 8;  // NHWC tile: output pixels x one vector of channels

// Calls fn(std::integral_constant<size_t, n>()) for 1 <= n <= kMax.
template <size_t kMax, class Fn>
inline void with_count(size_t n, const Fn& fn) {
  if constexpr (kMax > 1) {
    if (n < kMax) return with_count<kMax - 1>(n, fn);
  }
  fn(std::integral_constant<size_t, kMax>());
}

// Calls fn(i, std::integral_constant<size_t, n>()) over tiles [i, i + n) covering [begin, end): tiles of
// kMax; a rest of kMax - 1 (the 7 rows of a 7x7 plane) in one tile; else one of kMax / 2 if that much
// is left, then the rest (under kMax / 2) in one tile. Fewer tile sizes than every one up to kMax (the
// unrolled NCHW tiles were most of the build's compile time).
template <size_t kMax, class Fn>
inline void for_tiles(size_t begin, size_t end, const Fn& fn) {
  static_assert(kMax % 2 == 0 && kMax >= 4, "kMax must be even and at least 4");
  size_t i = begin;
  for (; i + kMax <= end; i += kMax) fn(i, std::integral_constant<size_t, kMax>());
  if (end - i == kMax - 1) return fn(i, std::integral_constant<size_t, kMax - 1>());
  if (end - i >= kMax / 2) {
    fn(i, std::integral_constant<size_t, kMax / 2>());
    i += kMax / 2;
  }
  if (i < end) with_count<kMax / 2 - 1>(end - i, [&](auto rest) { fn(i, rest); });
}

// The filter taps t < k with base + t * dilation inside [0, extent): [first, end).
inline void valid_taps(ptrdiff_t base, size_t dilation, size_t k, size_t extent, size_t& first, size_t& end) {
  const ptrdiff_t d = ptrdiff_t(dilation), last = ptrdiff_t(extent) - 1 - base;
  first = base >= 0 ? 0 : size_t((-base + d - 1) / d);
  end = last < 0 ? 0 : std::min(k, size_t(last / d) + 1);
  if (first > end) first = end;
}

// What a finished tile gets after its bias (the accumulators' start value), like the GEMM epilogue:
// the residual addend, then the clamp, then rounding to float16 values. Passed by value, so it stays
// in registers.
template <class V>
struct OutputEpilogue {
  typename V::T lo, hi;
  const float* residual;  // null, or the addend of the output element at out[i] at residual[i]
  const float* out;
  bool round;

  OutputEpilogue(const DepthwisePlan& g, const float* residual_, const float* out_)
      : lo(V::splat(g.activation_min)), hi(V::splat(g.activation_max)), residual(residual_), out(out_),
        round(g.round_to_half) {}
  __attribute__((always_inline)) typename V::T finish(typename V::T acc) const {
    acc = V::clamp(acc, lo, hi);
    return round ? V::round_to_half(acc) : acc;
  }
  // Stores the finished acc at dst (with a mask: those lanes only).
  __attribute__((always_inline)) void store(float* dst, typename V::T acc) const {
    if (residual) acc = acc + V::load(residual + (dst - out));
    V::store(dst, finish(acc));
  }
  __attribute__((always_inline)) void store(float* dst, typename V::T acc, typename V::Mask mask) const {
    if (residual) acc = acc + V::load(residual + (dst - out), mask);
    V::store(dst, finish(acc), mask);
  }
};

// ---------------------------------------------------------------- NCHW

// Loads lanes i = row[x0 + i], 0 outside [0, width), from any row: one masked load and one lane
// shift, set up once for a column.
template <class V>
struct PaddedLoad {
  ptrdiff_t offset;
  typename V::Mask mask;
  typename V::Shift shift;

  PaddedLoad() = default;
  PaddedLoad(ptrdiff_t x0, size_t width) {
    const ptrdiff_t lanes = ptrdiff_t(V::kLanes), w = ptrdiff_t(width);
    const ptrdiff_t lo = x0 < 0 ? std::min(-x0, lanes) : 0, hi = std::max(lo, std::min(lanes, w - x0));
    offset = hi > lo ? x0 + lo : 0;
    mask = V::first(size_t(hi - lo));
    shift = V::shift_by(size_t(lo));
  }
  typename V::T operator()(const float* row) const { return V::shift_up(V::load(row + offset, mask), shift); }
};

// Lanes i of row[x0 + i], 0 outside [0, width).
template <class V>
inline typename V::T load_padded(const float* row, ptrdiff_t x0, size_t width) {
  if (x0 >= 0 && x0 + ptrdiff_t(V::kLanes) <= ptrdiff_t(width)) return V::load(row + x0);
  return PaddedLoad<V>(x0, width)(row);
}

// One scratch row from input row `src` (null: a padding row): stride_w phase rows of phase_len
// floats, phase r holding padded columns stride_w * j + r.
template <class V>
void fill_scratch_row(const DepthwisePlan& g, const float* src, float* __restrict dst) {
  const size_t L = V::kLanes, len = g.phase_len, s = g.stride_w;
  const ptrdiff_t pad = ptrdiff_t(g.pad_left);
  if (!src) {
    for (size_t j = 0; j < s * len; j += L) V::store(dst + j, V::zero());
  } else if (s == 1) {
    for (size_t j = 0; j < len; j += L) V::store(dst + j, load_padded<V>(src, ptrdiff_t(j) - pad, g.in_w));
  } else if (s == 2) {
    for (size_t j = 0; j < len; j += L) {
      typename V::T even, odd;
      V::deinterleave(load_padded<V>(src, ptrdiff_t(2 * j) - pad, g.in_w),
                      load_padded<V>(src, ptrdiff_t(2 * j + L) - pad, g.in_w), even, odd);
      V::store(dst + j, even);
      V::store(dst + len + j, odd);
    }
  } else {
    for (size_t r = 0; r < s; ++r)
      for (size_t j = 0; j < len; ++j) {
        const ptrdiff_t x = ptrdiff_t(s * j + r) - pad;
        dst[r * len + j] = x >= 0 && x < ptrdiff_t(g.in_w) ? src[x] : 0.0f;
      }
  }
}

// Stores kRows output rows of a tile through the epilogue; columns < kLanes: a masked store.
template <class V, size_t kRows>
inline void store_nchw_rows(const typename V::T* acc, OutputEpilogue<V> ep, float* dst, size_t dst_step,
                            size_t columns) {
  if (columns >= V::kLanes) {
#pragma GCC unroll 8
    for (size_t r = 0; r < kRows; ++r) ep.store(dst + r * dst_step, acc[r]);
  } else {
    const typename V::Mask mask = V::first(columns);
#pragma GCC unroll 8
    for (size_t r = 0; r < kRows; ++r) ep.store(dst + r * dst_step, acc[r], mask);
  }
}

// kRows output rows x one vector of columns, any filter: src is the tile's first row in scratch,
// columns the valid output columns.
template <class V, size_t kRows>
inline void f32_dwconv_nchw_scratch_tile(const float* src, size_t row_step, const size_t* tap_offsets, size_t taps,
                                 const float* w, typename V::T bias, OutputEpilogue<V> ep,
                                 float* dst, size_t dst_step, size_t columns) {
  using T = typename V::T;
  const float* rows[kRows];
  T acc[kRows];
#pragma GCC unroll 8
  for (size_t r = 0; r < kRows; ++r) {
    rows[r] = src + r * row_step;
    acc[r] = bias;
  }
  for (size_t t = 0; t < taps; ++t) {
    const T wt = V::splat(w[t]);
    const size_t offset = tap_offsets[t];
#pragma GCC unroll 8
    for (size_t r = 0; r < kRows; ++r) acc[r] = V::fma(V::load(rows[r] + offset), wt, acc[r]);
  }
  store_nchw_rows<V, kRows>(acc, ep, dst, dst_step, columns);
}

// Output rows [oy0, oy1) of one plane, any filter, through a scratch band.
template <class V>
void f32_dwconv_nchw_scratch_band(const DepthwisePlan& g, const float* w, float bias, const float* plane, float* out_plane,
                          size_t oy0, size_t oy1, float* scratch, OutputEpilogue<V> ep) {
  const size_t pitch = g.row_pitch(), rows = (oy1 - oy0 - 1) * g.stride_h + (g.kernel_h - 1) * g.dilation_h + 1;
  for (size_t i = 0; i < rows; ++i) {
    const ptrdiff_t y = ptrdiff_t(oy0 * g.stride_h + i) - ptrdiff_t(g.pad_top);
    fill_scratch_row<V>(g, y >= 0 && y < ptrdiff_t(g.in_h) ? plane + size_t(y) * g.in_w : nullptr, scratch + i * pitch);
  }
  const typename V::T b = V::splat(bias);
  const size_t taps = g.kernel_h * g.kernel_w, row_step = g.stride_h * pitch, OW = g.out_w;
  for_tiles<kMaxTileRows>(oy0, oy1, [&](size_t oy, auto tile_rows) {
    const float* src = scratch + (oy - oy0) * row_step;
    float* dst = out_plane + oy * OW;
    for (size_t ox = 0; ox < OW; ox += V::kLanes)
      f32_dwconv_nchw_scratch_tile<V, tile_rows()>(src + ox, row_step, g.tap_offsets, taps, w, b, ep, dst + ox, OW,
                                                   OW - ox);
  });
}

// Calls fn(c, input plane, output plane, oy0, oy1) for NCHW work items [begin, end): output rows
// [oy0, oy1) of the plane of channel c.
template <class Fn>
inline void for_each_band(const DepthwisePlan& g, const float* in, float* out, size_t begin, size_t end, const Fn& fn) {
  size_t plane = begin / g.bands, band = begin % g.bands, c = plane % g.channels;  // advanced without divisions
  for (size_t item = begin; item < end; ++item) {
    const size_t oy0 = band * g.band_rows;
    fn(c, in + plane * g.in_h * g.in_w, out + plane * g.out_h * g.out_w, oy0, std::min(g.out_h, oy0 + g.band_rows));
    if (++band == g.bands) {
      band = 0;
      ++plane;
      if (++c == g.channels) c = 0;
    }
  }
}

// ---------------------------------------------------------------- NCHW, 3x3 and 5x5 filters

// Calls fn(std::integral_constant<size_t, i>()) for i = 0 .. kCount - 1, unrolled.
template <class Fn, size_t... kI>
__attribute__((always_inline)) inline void static_for_each(const Fn& fn, std::index_sequence<kI...>) {
  (fn(std::integral_constant<size_t, kI>()), ...);
}
template <size_t kCount, class Fn>
__attribute__((always_inline)) inline void static_for(const Fn& fn) {
  static_for_each(fn, std::make_index_sequence<kCount>());
}

// Input vectors an output column vector reads from one row, from its first tap's column on: two
// for stride 1, three for stride 2 (fewer for narrow filters).
template <size_t kKW, size_t kSW>
constexpr size_t kRowVectors = kSW == 1 ? (kKW > 1 ? 2 : 1) : (kKW > 2 ? 3 : 2);

// The kKW filter-column taps of one input row for an output column vector: lane j of tap kw is
// input column x0 + j * kSW + kw, built from the row's vectors load(m) (columns x0 + m * kLanes
// on) by in-register shifts (stride 2: after splitting even and odd columns). Whole-vector loads
// and shifts beat loads at every tap offset, which straddle cache lines.
template <class V, size_t kKW, size_t kSW, class Load>
__attribute__((always_inline)) inline void load_taps(const Load& load, typename V::T (&tap)[kKW]) {
  using T = typename V::T;
  if constexpr (kSW == 1) {
    static_assert(kKW <= V::kLanes, "taps span at most two vectors");
    const T a = load(0);
    const T b = kKW > 1 ? load(1) : a;
    static_for<kKW>([&](auto kw) __attribute__((always_inline)) {
      if constexpr (kw == 0) tap[kw] = a;
      else tap[kw] = V::template shift_down<kw>(a, b);
    });
  } else {
    static_assert(kSW == 2 && (kKW - 1) / 2 <= V::kLanes / 2, "taps span at most three vectors");
    T even, odd, even_next = V::zero(), odd_next = V::zero();
    V::deinterleave(load(0), load(1), even, odd);
    if constexpr (kKW > 2) {
      const T c = load(2);
      if constexpr (kKW > 3) V::deinterleave(c, c, even_next, odd_next);
      else even_next = c;  // only its lane 0 (column x0 + 2 kLanes) is used
    }
    static_for<kKW>([&](auto kw) __attribute__((always_inline)) {
      constexpr size_t shift = kw / 2;
      const T& head = kw % 2 ? odd : even;
      const T& tail = kw % 2 ? odd_next : even_next;
      if constexpr (shift == 0) tap[kw] = head;
      else tap[kw] = V::template shift_down<shift>(head, tail);
    });
  }
}

// Tap sources of the tile below: taps(row, c, tap) gives the kKW taps of input row `row` for the
// tile's column vector c.

// Every column inside the rows; x0: the first tap's column.
template <class V, size_t kKW, size_t kSW>
struct InsideTaps {
  ptrdiff_t x0;
  __attribute__((always_inline)) void operator()(const float* row, size_t c, typename V::T (&tap)[kKW]) const {
    load_taps<V, kKW, kSW>([&](size_t m) __attribute__((always_inline)) { return V::load(row + x0 + ptrdiff_t((c * kSW + m) * V::kLanes)); }, tap);
  }
};

// kCols column vectors reaching past either end of the rows, for x0 > -kLanes: the row vectors
// are masked to the row, the first shifted into place when it starts left of the row.
template <class V, size_t kKW, size_t kSW, size_t kCols>
struct EdgeTaps {
  static constexpr size_t kVectors = (kCols - 1) * kSW + kRowVectors<kKW, kSW>;
  typename V::Mask mask[kVectors];
  ptrdiff_t offset[kVectors];
  typename V::Shift shift;

  EdgeTaps(ptrdiff_t x0, size_t width) {
    const ptrdiff_t lanes = ptrdiff_t(V::kLanes), lead = x0 < 0 ? -x0 : 0;
    for (size_t m = 0; m < kVectors; ++m) {
      const ptrdiff_t start = x0 + ptrdiff_t(m) * lanes, lo = m == 0 ? lead : 0;
      const ptrdiff_t hi = std::max(lo, std::min(lanes, ptrdiff_t(width) - start));
      mask[m] = V::first(size_t(hi - lo));
      offset[m] = hi > lo ? start + lo : 0;
    }
    shift = V::shift_by(size_t(lead));
  }
  __attribute__((always_inline)) void operator()(const float* row, size_t c, typename V::T (&tap)[kKW]) const {
    load_taps<V, kKW, kSW>(
        [&](size_t m) __attribute__((always_inline)) {
          const size_t vector = c * kSW + m;
          const typename V::T v = V::load(row + offset[vector], mask[vector]);
          return vector == 0 ? V::shift_up(v, shift) : v;
        },
        tap);
  }
};

// Planes whose output rows fit one vector and input rows two (traits with a two-source permute):
// each input row is loaded whole and each tap picked from it by one permute, whose lane indices
// and zero mask (the padding) are fixed for the plan. Any stride, dilation and padding.
template <class V, size_t kKW>
struct NarrowTaps {
  typename V::Index index[kKW];
  typename V::Mask valid[kKW];
  typename V::Mask low, high;  // the row's columns in its first and second vector
  size_t high_offset;

  static bool fits(const DepthwisePlan& g) { return g.out_w <= V::kLanes && g.in_w <= 2 * V::kLanes; }
  explicit NarrowTaps(const DepthwisePlan& g) {
    const ptrdiff_t W = ptrdiff_t(g.in_w);
    for (size_t kw = 0; kw < kKW; ++kw) {
      int32_t lanes[V::kLanes];
      uint32_t bits = 0;
      for (size_t j = 0; j < V::kLanes; ++j) {
        const ptrdiff_t x = ptrdiff_t(j * g.stride_w + kw * g.dilation_w) - ptrdiff_t(g.pad_left);
        const bool inside = j < g.out_w && x >= 0 && x < W;
        lanes[j] = inside ? int32_t(x) : 0;
        bits |= uint32_t(inside) << j;
      }
      index[kw] = V::load_index(lanes);
      valid[kw] = V::mask_bits(bits);
    }
    low = V::first(std::min(g.in_w, V::kLanes));
    high = V::first(g.in_w > V::kLanes ? g.in_w - V::kLanes : 0);
    high_offset = g.in_w > V::kLanes ? V::kLanes : 0;
  }
  __attribute__((always_inline)) void operator()(const float* row, size_t, typename V::T (&tap)[kKW]) const {
    const typename V::T a = V::load(row, low), b = V::load(row + high_offset, high);
    static_for<kKW>([&](auto kw) __attribute__((always_inline)) { tap[kw] = V::permute2(a, index[kw], b, valid[kw]); });
  }
};

// kRows output rows x kCols vectors of columns for a kKH x kKW filter, vertical stride kSH, no
// vertical dilation: each input row's taps are loaded once and feed every output row they reach;
// rows outside the input (padding) are skipped. y0: the input row of the tile's first tap;
// columns: valid output columns.
template <class V> __attribute__((always_inline)) inline typename V::T weight_vector(const float* w, size_t t) { return V::splat(w[t]); }
template <class V> __attribute__((always_inline)) inline typename V::T weight_vector(const typename V::T* w, size_t t) { return w[t]; }

// The tile row that input row kI feeds through filter row kKh (vertical stride kS), or kRows: none.
template <size_t kI, size_t kKh, size_t kS, size_t kRows>
constexpr size_t kFedRow = kI >= kKh && (kI - kKh) % kS == 0 && (kI - kKh) / kS < kRows ? (kI - kKh) / kS : kRows;

// Every tap of input row kI into the tile rows it feeds: acc[r] += tap[kw] * w[kh][kw], kT = kw * kKH +
// kh. One pack expansion, not nested static_for lambdas: a function per (row, kw, kh) of every tile
// was most of the file's compile time.
template <class V, size_t kI, size_t kRows, size_t kKH, size_t kKW, size_t kSH, class Wt, size_t... kT>
__attribute__((always_inline)) inline void accumulate_input_row(typename V::T (&acc)[kRows], const typename V::T (&tap)[kKW],
                                                                const Wt* w, std::index_sequence<kT...>) {
  ((kFedRow<kI, kT % kKH, kSH, kRows> < kRows
        ? void(acc[kFedRow<kI, kT % kKH, kSH, kRows> % kRows] =
                   V::fma(tap[kT / kKH], weight_vector<V>(w, kT % kKH * kKW + kT / kKH),
                          acc[kFedRow<kI, kT % kKH, kSH, kRows> % kRows]))
        : void()),
   ...);
}
template <class V, size_t kRows, size_t kCols, size_t kKH, size_t kKW, size_t kSH, class Taps, class Wt = float>
__attribute__((always_inline)) inline void f32_dwconv_nchw_tile(const float* plane, size_t height, size_t width,
                                                                ptrdiff_t y0, const Taps& taps, const Wt* w,
                                                                typename V::T bias, OutputEpilogue<V> ep,
                                                                float* dst, size_t dst_step,
                                                                size_t columns) {
  using T = typename V::T;
  T acc[kCols][kRows];
  static_for<kCols>([&](auto c) __attribute__((always_inline)) {
    static_for<kRows>([&](auto r) __attribute__((always_inline)) { acc[c][r] = bias; });
  });
  static_for<(kRows - 1) * kSH + kKH>([&](auto i) __attribute__((always_inline)) {
    const ptrdiff_t y = y0 + ptrdiff_t(i());
    if (y < 0 || y >= ptrdiff_t(height)) return;
    static_for<kCols>([&](auto c) __attribute__((always_inline)) {
      T tap[kKW];
      taps(plane + size_t(y) * width, c, tap);
      accumulate_input_row<V, i(), kRows, kKH, kKW, kSH>(acc[c], tap, w, std::make_index_sequence<kKW * kKH>());
    });
  });
  static_for<kCols>([&](auto c) __attribute__((always_inline)) {
    store_nchw_rows<V, kRows>(acc[c], ep, dst + c * V::kLanes, dst_step, columns - c * V::kLanes);
  });
}

// The tile as a call of its own: measured faster at stride 2, where GCC schedules it worse when
// inlined into the row loop (stride 1 is the other way round).
template <class V, size_t kRows, size_t kCols, size_t kKH, size_t kKW, size_t kSH, class Taps, class Wt>
__attribute__((noinline)) void f32_dwconv_nchw_tile_call(const float* plane, size_t height, size_t width, ptrdiff_t y0,
                                                         const Taps& taps, const Wt* w, typename V::T bias,
                                                         OutputEpilogue<V> ep, float* dst,
                                                         size_t dst_step, size_t columns) {
  f32_dwconv_nchw_tile<V, kRows, kCols, kKH, kKW, kSH>(plane, height, width, y0, taps, w, bias, ep, dst, dst_step,
                                                       columns);
}

// Output rows [oy, oy + kRows) of a plane, kK x kK filter, strides kS x kS, no dilation, pad_left <
// kLanes, straight from the input: tiles of two column vectors (more independent sums) where they
// fit, at stride 1 only inside the rows (there the edge loads crowd the registers), else one.
template <class V, size_t kRows, size_t kK, size_t kS>
void f32_dwconv_nchw_tile_row(const DepthwisePlan& g, const float* plane, float* out_plane, size_t oy, const typename V::T* w,
                              typename V::T bias, OutputEpilogue<V> ep) {
  constexpr size_t L = V::kLanes, vectors = kRowVectors<kK, kS>;  // each further column vector adds kS
  const size_t OW = g.out_w, H = g.in_h, W = g.in_w;
  const ptrdiff_t y0 = ptrdiff_t(oy * kS) - ptrdiff_t(g.pad_top);
  for (size_t ox = 0; ox < OW;) {
    const ptrdiff_t x0 = ptrdiff_t(ox * kS) - ptrdiff_t(g.pad_left);
    float* dst = out_plane + oy * OW + ox;
    const auto tile = [&](auto cols, const auto& taps) __attribute__((always_inline)) {
      if constexpr (kS == 1)
        f32_dwconv_nchw_tile<V, kRows, cols(), kK, kK, kS>(plane, H, W, y0, taps, w, bias, ep, dst, OW, OW - ox);
      else
        f32_dwconv_nchw_tile_call<V, kRows, cols(), kK, kK, kS>(plane, H, W, y0, taps, w, bias, ep, dst, OW, OW - ox);
      ox += cols * L;
    };
    const std::integral_constant<size_t, 1> one;
    const std::integral_constant<size_t, 2> two;
    const bool pair = V::kRegisters >= 32 && ox + L < OW;
    const bool inside = x0 >= 0 && size_t(x0) + vectors * L <= W;
    if (pair && x0 >= 0 && size_t(x0) + (kS + vectors) * L <= W) tile(two, InsideTaps<V, kK, kS>{x0});
    else if (pair && kS == 2) tile(two, EdgeTaps<V, kK, kS, 2>(x0, W));
    else if (inside) tile(one, InsideTaps<V, kK, kS>{x0});
    else tile(one, EdgeTaps<V, kK, kS, 1>(x0, W));
  }
}

// A kK x kK filter with strides kS x kS, no dilation, pad_left < kLanes, straight from the input.
template <class V, size_t kK, size_t kS>
void f32_dwconv_nchw_fixed(const DepthwisePlan& g, const float* weights, const float* bias, const float* in,
                           float* out, size_t begin, size_t end, OutputEpilogue<V> ep) {
  const size_t OW = g.out_w, H = g.in_h, W = g.in_w;
  // Runs fn(oy, rows) over the row tiles of [oy0, oy1), rows a std::integral_constant.
  const auto row_tiles = [](size_t oy0, size_t oy1, const auto& fn) { for_tiles<kMaxTileRows>(oy0, oy1, fn); };
  if constexpr (V::kPermute2) {
    if (NarrowTaps<V, kK>::fits(g)) {
      const NarrowTaps<V, kK> taps(g);
      return for_each_band(g, in, out, begin, end, [&](size_t c, const float* plane, float* out_plane, size_t oy0,
                                                        size_t oy1) {
        const float* w = weights + c * kK * kK;
        const typename V::T b = V::splat(bias[c]);
        row_tiles(oy0, oy1, [&](size_t oy, auto rows) {
          f32_dwconv_nchw_tile<V, rows(), 1, kK, kK, kS>(plane, H, W, ptrdiff_t(oy * kS) - ptrdiff_t(g.pad_top), taps,
                                                        w, b, ep, out_plane + oy * OW, OW, OW);
        });
      });
    }
  }
  for_each_band(g, in, out, begin, end, [&](size_t c, const float* plane, float* out_plane, size_t oy0, size_t oy1) {
    typename V::T w[kK * kK];
    for (size_t t = 0; t < kK * kK; ++t) w[t] = V::splat(weights[c * kK * kK + t]);
    const typename V::T b = V::splat(bias[c]);
    row_tiles(oy0, oy1, [&](size_t oy, auto rows) {
      f32_dwconv_nchw_tile_row<V, rows(), kK, kS>(g, plane, out_plane, oy, w, b, ep);
    });
  });
}

template <class V>
void f32_dwconv_nchw(const DepthwisePlan& g, const float* weights, const float* bias, const float* in, float* out,
                     const float* residual, size_t begin, size_t end, float* scratch) {
  const OutputEpilogue<V> ep(g, residual, out);
  if constexpr (V::kLanes >= 8) {
    const size_t k = g.kernel_h, s = g.stride_h;
    if (g.dilation_h == 1 && g.dilation_w == 1 && k == g.kernel_w && s == g.stride_w && g.pad_left < V::kLanes) {
      if (k == 3 && s == 1) return f32_dwconv_nchw_fixed<V, 3, 1>(g, weights, bias, in, out, begin, end, ep);
      if (k == 3 && s == 2) return f32_dwconv_nchw_fixed<V, 3, 2>(g, weights, bias, in, out, begin, end, ep);
      if (k == 5 && s == 1) return f32_dwconv_nchw_fixed<V, 5, 1>(g, weights, bias, in, out, begin, end, ep);
      if (k == 5 && s == 2) return f32_dwconv_nchw_fixed<V, 5, 2>(g, weights, bias, in, out, begin, end, ep);
    }
  }
  const size_t taps = g.kernel_h * g.kernel_w;
  for_each_band(g, in, out, begin, end, [&](size_t c, const float* plane, float* out_plane, size_t oy0, size_t oy1) {
    f32_dwconv_nchw_scratch_band<V>(g, weights + c * taps, bias[c], plane, out_plane, oy0, oy1, scratch, ep);
  });
}

// ---------------------------------------------------------------- NHWC

// kPixels output pixels x one vector of channels over the filter window [kh_count x kw_count],
// all inside the input. src: the window's first input element for the first pixel; w: its first
// weight. kMasked: a partial channel vector (`mask`).
template <class V, size_t kPixels, bool kMasked>
inline void f32_dwconv_nhwc_tile(const float* src, size_t pixel_step, size_t kh_count, size_t row_step,
                                 size_t kw_count, size_t col_step, const float* w, size_t w_row_step,
                                 size_t w_col_step, typename V::T bias, OutputEpilogue<V> ep,
                                 float* dst, size_t dst_step, typename V::Mask mask) {
  using T = typename V::T;
  T acc[kPixels];
#pragma GCC unroll 8
  for (size_t i = 0; i < kPixels; ++i) acc[i] = bias;
  for (size_t kh = 0; kh < kh_count; ++kh) {
    for (size_t kw = 0; kw < kw_count; ++kw) {
      const T wt = V::load(w + kh * w_row_step + kw * w_col_step);
      const float* s = src + kh * row_step + kw * col_step;
#pragma GCC unroll 8
      for (size_t i = 0; i < kPixels; ++i) {
        const T x = kMasked ? V::load(s + i * pixel_step, mask) : V::load(s + i * pixel_step);
        acc[i] = V::fma(x, wt, acc[i]);
      }
    }
  }
#pragma GCC unroll 8
  for (size_t i = 0; i < kPixels; ++i) {
    if constexpr (kMasked) ep.store(dst + i * dst_step, acc[i], mask);
    else ep.store(dst + i * dst_step, acc[i]);
  }
}

// kPixels adjacent output pixels (stride and dilation 1) x one vector of channels over a window of
// kh_count rows x kKW columns, all inside the input: each input vector of a window row is loaded
// once and used by every tap that reads it (kPixels + kKW - 1 loads per row, not kPixels * kKW),
// the row's weights held in registers.
template <class V, size_t kPixels, size_t kKW, bool kMasked>
inline void f32_dwconv_nhwc_tile_s1(const float* src, size_t pixel_step, size_t kh_count, size_t row_step,
                                    const float* w, size_t w_row_step, size_t w_col_step, typename V::T bias,
                                    OutputEpilogue<V> ep, float* dst, size_t dst_step, typename V::Mask mask) {
  using T = typename V::T;
  T acc[kPixels];
#pragma GCC unroll 8
  for (size_t i = 0; i < kPixels; ++i) acc[i] = bias;
  for (size_t kh = 0; kh < kh_count; ++kh) {
    T wt[kKW];
#pragma GCC unroll 8
    for (size_t kw = 0; kw < kKW; ++kw) wt[kw] = V::load(w + kh * w_row_step + kw * w_col_step);
    const float* s = src + kh * row_step;
#pragma GCC unroll 16
    for (size_t j = 0; j < kPixels + kKW - 1; ++j) {
      const T x = kMasked ? V::load(s + j * pixel_step, mask) : V::load(s + j * pixel_step);
#pragma GCC unroll 8
      for (size_t kw = 0; kw < kKW; ++kw)
        if (j >= kw && j - kw < kPixels) acc[j - kw] = V::fma(x, wt[kw], acc[j - kw]);
    }
  }
#pragma GCC unroll 8
  for (size_t i = 0; i < kPixels; ++i) {
    if constexpr (kMasked) ep.store(dst + i * dst_step, acc[i], mask);
    else ep.store(dst + i * dst_step, acc[i]);
  }
}

// Output row oy of image n, channels [c0, c1).
template <class V, bool kMasked>
void f32_dwconv_nhwc_row(const DepthwisePlan& g, const float* weights, const float* bias, const float* image,
                         float* dst_row, size_t oy, size_t c0, size_t c1, OutputEpilogue<V> ep) {
  const size_t C = g.channels, W = g.in_w, OW = g.out_w, KW = g.kernel_w, sw = g.stride_w, dw = g.dilation_w;
  const size_t pixel_step = sw * C, col_step = dw * C, row_step = g.dilation_h * W * C, w_col_step = g.channel_stride;
  const size_t w_row_step = KW * w_col_step;
  size_t kh0, kh1;
  valid_taps(ptrdiff_t(oy * g.stride_h) - ptrdiff_t(g.pad_top), g.dilation_h, g.kernel_h, g.in_h, kh0, kh1);
  const float* rows = image + (kh1 > kh0 ? (oy * g.stride_h + kh0 * g.dilation_h - g.pad_top) * W * C : 0);
  // Interior output columns [ox_lo, ox_hi) have every filter column inside the input.
  const size_t ox_lo = std::min(OW, (g.pad_left + sw - 1) / sw);
  const ptrdiff_t last = ptrdiff_t(W - 1 + g.pad_left) - ptrdiff_t((KW - 1) * dw);
  const size_t ox_hi = std::max(ox_lo, last < 0 ? 0 : std::min(OW, size_t(last) / sw + 1));
  // Pixels outer, channel vectors inner: every vector of an input pixel's channels is read while the
  // pixel is in L1 (channels outer streamed the window's rows from L2 once per vector).
  const auto channels = [&](auto&& run) {
    for (size_t c = c0; c < c1; c += V::kLanes) run(c, V::first(c1 - c), V::load(bias + c), weights + kh0 * w_row_step + c);
  };
  // The input rows the next output row adds (stride_h of them) stream in from memory while this row
  // computes, a tile's width ahead (a tensor past the cache read in channel blocks defeats the
  // hardware prefetchers). The first channel block of a row issues them.
  const ptrdiff_t ahead_first = ptrdiff_t((oy + 1) * g.stride_h + (g.kernel_h - 1) * g.dilation_h) -
                                ptrdiff_t(g.pad_top) - ptrdiff_t(g.stride_h) + 1;
  const size_t ahead_rows = c0 != 0 || oy + 1 >= g.out_h || ahead_first >= ptrdiff_t(g.in_h) ? 0
                            : std::min<size_t>(g.stride_h, g.in_h - size_t(std::max<ptrdiff_t>(ahead_first, 0)));
  const float* ahead = image + size_t(std::max<ptrdiff_t>(ahead_first, 0)) * W * C;
  size_t prefetched = 0;  // bytes of each ahead row issued
  const auto prefetch_to = [&](size_t ox_end) {
    const size_t end = std::min(W, ox_end * sw) * C * sizeof(float);
    for (size_t r = 0; r < ahead_rows; ++r) {
      const char* row = reinterpret_cast<const char*>(ahead + r * W * C);
      for (size_t b = prefetched; b < end; b += 64) __builtin_prefetch(row + b, 0, 2);
    }
    if (end > prefetched) prefetched = (end + 63) / 64 * 64;
  };
  for (size_t ox = 0; ox < OW; ++ox) {  // edge pixels, one at a time with their clipped window
    if (ox == ox_lo) ox = ox_hi;
    if (ox == OW) break;
    size_t kw0, kw1;
    valid_taps(ptrdiff_t(ox * sw) - ptrdiff_t(g.pad_left), dw, KW, W, kw0, kw1);
    const float* src = rows + (kw1 > kw0 ? (ox * sw + kw0 * dw - g.pad_left) * C : 0);
    channels([&](size_t c, typename V::Mask mask, typename V::T b, const float* w) {
      f32_dwconv_nhwc_tile<V, 1, kMasked>(src + c, pixel_step, kh1 - kh0, row_step, kw1 - kw0, col_step,
                                          w + kw0 * w_col_step, w_row_step, w_col_step, b, ep, dst_row + ox * C + c, C,
                                          mask);
    });
  }
  size_t ox = ox_lo;
  if (sw == 1 && dw == 1 && (KW == 3 || KW == 5)) {  // full tiles reuse each loaded input vector
    for (; ox + kMaxTilePixels <= ox_hi; ox += kMaxTilePixels) {
      prefetch_to(ox + 2 * kMaxTilePixels);
      const float* src = rows + (ox - g.pad_left) * C;
      channels([&](size_t c, typename V::Mask mask, typename V::T b, const float* w) {
        if (KW == 3)
          f32_dwconv_nhwc_tile_s1<V, kMaxTilePixels, 3, kMasked>(src + c, pixel_step, kh1 - kh0, row_step, w, w_row_step,
                                                                 w_col_step, b, ep, dst_row + ox * C + c, C, mask);
        else
          f32_dwconv_nhwc_tile_s1<V, kMaxTilePixels, 5, kMasked>(src + c, pixel_step, kh1 - kh0, row_step, w, w_row_step,
                                                                 w_col_step, b, ep, dst_row + ox * C + c, C, mask);
      });
    }
  }
  for (; ox < ox_hi; ox += kMaxTilePixels) {
    prefetch_to(ox + 2 * kMaxTilePixels);
    with_count<kMaxTilePixels>(std::min(kMaxTilePixels, ox_hi - ox), [&](auto pixels) {
      const float* src = rows + (ox * sw - g.pad_left) * C;
      channels([&](size_t c, typename V::Mask mask, typename V::T b, const float* w) {
        f32_dwconv_nhwc_tile<V, pixels(), kMasked>(src + c, pixel_step, kh1 - kh0, row_step, KW, col_step, w,
                                                   w_row_step, w_col_step, b, ep, dst_row + ox * C + c, C, mask);
      });
    });
  }
  prefetch_to(W);
}

template <class V>
void f32_dwconv_nhwc(const DepthwisePlan& g, const float* weights, const float* bias, const float* in, float* out,
                     const float* residual, size_t begin, size_t end) {
  const OutputEpilogue<V> ep(g, residual, out);
  const size_t blocks = g.channel_blocks(), C = g.channels;
  for (size_t item = begin; item < end; ++item) {
    const size_t row = item / blocks, n = row / g.out_h, oy = row % g.out_h;
    const size_t c0 = (item % blocks) * g.channel_block, c1 = std::min(C, c0 + g.channel_block);
    const size_t full = c0 + (c1 - c0) / V::kLanes * V::kLanes;
    const float* image = in + n * g.in_h * g.in_w * C;
    float* dst_row = out + row * g.out_w * C;
    if (full > c0) f32_dwconv_nhwc_row<V, false>(g, weights, bias, image, dst_row, oy, c0, full, ep);
    if (c1 > full) f32_dwconv_nhwc_row<V, true>(g, weights, bias, image, dst_row, oy, full, c1, ep);
  }
}

}  // namespace
