// The quantized conv2d driver: packs the filter once into the chosen microkernel's panels, then per
// block of output pixels gathers im2col rows of the input (zero points for padding), runs every
// panel of the group over them and requantizes each tile while it is in L1.
#include "kernels/int8/int8_conv.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "core/shared_constants.h"
#include "core/thread_pool.h"
#include "kernels/gemm/tiled_product.h"
#include "kernels/platform.h"

namespace webnn {

namespace {

// An item's gathered A rows stay in L2 while every panel passes (B whole: a chunk of panels would
// gather the rows again); with threads, about 2 items each (4 gathered each block twice as often, for
// no better balance).
constexpr TilePolicy kInt8ConvPolicy{256 * 1024, ~size_t(0), 0, 2};
constexpr size_t kMaxNr = 32;
constexpr size_t kColumnPad = 16;  // one vector of int32 columns
constexpr size_t kRowSlack = 16;   // bytes past a staged im2col row that a gather may overwrite

int32_t filter_value(const Conv2dParams& p, const uint8_t* filter, size_t index) {
  return p.quantization->filter_type == DataType::kInt8 ? int32_t(int8_t(filter[index])) : int32_t(filter[index]);
}

bool filter_fits_int8(const Conv2dParams& p, const uint8_t* filter) {
  const FilterStrides fs = filter_strides(p);
  const size_t cg = p.in_channels / p.groups;
  for (size_t o = 0; o < p.out_channels; ++o)
    for (size_t c = 0; c < cg; ++c)
      for (size_t h = 0; h < p.kernel_h; ++h)
        for (size_t w = 0; w < p.kernel_w; ++w) {
          const int32_t v = filter_value(p, filter, o * fs.o + c * fs.i + h * fs.h + w * fs.w) -
                            p.quantization->filter_zero[o];
          if (v < -128 || v > 127) return false;
        }
  return true;
}

// Per-thread buffers, grown on demand and kept across calls.
template <class T>
T* thread_buffer(size_t slot, size_t count) {
  thread_local BufferPtr buffers[4];
  BufferPtr& buffer = buffers[slot];
  if (!buffer || buffer->size() < count * sizeof(T)) buffer = std::make_shared<AlignedBuffer>(count * sizeof(T));
  return reinterpret_cast<T*>(buffer->data());
}

class Int8Conv2d {
 public:
  Int8Conv2d(const Conv2dParams& p, const void* filter_data, const float* bias)
      : p_(p), q_(*p.quantization), kernels_(kernel_table().int8) {
    const uint8_t* filter = static_cast<const uint8_t*>(filter_data);
    const size_t O = p.out_channels;
    cg_ = p.in_channels / p.groups;
    og_ = O / p.groups;
    taps_ = p.kernel_h * p.kernel_w;
    K_ = taps_ * cg_;
    input_signed_ = q_.input_type == DataType::kInt8;
    // Padded by a vector: the requantize epilogue reads whole vectors of columns.
    multiplier_.assign(O + kColumnPad, 0.0f);
    bias_.assign(O + kColumnPad, 0.0f);
    offset_.assign(O + kColumnPad, 0);
    if (q_.float_output) {
      // float32 results: sx * sw (at each dispatch when sx is an input), bias as it is (-0.0 when
      // none: then the product is rounded once, exactly as a multiplication alone).
      for (size_t o = 0; o < O; ++o) {
        multiplier_[o] = float(double(q_.input_scale) * double(q_.filter_scale[o]));
        bias_[o] = bias ? bias[o] : -0.0f;
      }
      min_ = q_.min;
      max_ = q_.max;
      activation_ = activation_loop(q_.activation);
      // With an addend the clamp follows it (after dequantize_sums), and so does the activation.
      if (q_.addend != Conv2dQuantization::Addend::kNone) {
        finishes_tiles_ = true;
        min_ = -std::numeric_limits<float>::infinity();
        max_ = std::numeric_limits<float>::infinity();
      }
    } else {
      // In units of the output scale (TileEpilogue).
      const double output_scale = q_.output_scale;
      for (size_t o = 0; o < O; ++o) {
        multiplier_[o] = float(double(q_.input_scale) * double(q_.filter_scale[o]) / output_scale);
        if (bias) bias_[o] = float(double(bias[o]) / output_scale);
      }
      // The absorbed clamp's bounds and the 8-bit range, in one interval (see TileEpilogue).
      const bool output_signed = q_.output_type == DataType::kInt8;
      const double lowest = (output_signed ? -128.0 : 0.0) - q_.output_zero;
      const double highest = (output_signed ? 127.0 : 255.0) - q_.output_zero;
      min_ = float(std::clamp(double(q_.min) / output_scale, lowest, highest));
      max_ = float(std::clamp(double(q_.max) / output_scale, lowest, highest));
    }
    if ((q_.float_output || q_.runtime_input_parameters) && int8_conv2d_is_depthwise(p))
      throw Error(ErrorKind::kUnknownError, "internal: a depthwise convolution's output is quantized");
    if (q_.addend != Conv2dQuantization::Addend::kNone && !p.nhwc)
      throw Error(ErrorKind::kUnknownError, "internal: an NCHW convolution's output takes no addend");
    const FilterStrides fs = filter_strides(p);
    auto centered = [&](size_t o, size_t c, size_t tap) {
      return filter_value(p, filter, o * fs.o + c * fs.i + tap / p.kernel_w * fs.h + tap % p.kernel_w * fs.w) -
             q_.filter_zero[o];
    };
    depthwise_ = int8_conv2d_is_depthwise(p);
    for (size_t t = 0; t < taps_; ++t) {  // each tap's input offset from the output pixel's origin
      tap_dy_.push_back(ptrdiff_t(t / p.kernel_w * p.dilation_h) - ptrdiff_t(p.pad_top));
      tap_dx_.push_back(ptrdiff_t(t % p.kernel_w * p.dilation_w) - ptrdiff_t(p.pad_left));
    }
    if (depthwise_) {
      // The kernel sums x * w: the zero point's share comes back per channel, and padding taps read
      // a run of zero points.
      std::vector<int32_t> filter_taps(taps_ * O);
      for (size_t t = 0; t < taps_; ++t)
        for (size_t o = 0; o < O; ++o) {
          filter_taps[t * O + o] = centered(o, 0, t);
          offset_[o] -= q_.input_zero * filter_taps[t * O + o];
        }
      auto packed = std::make_shared<AlignedBuffer>(int8_depthwise_packed_count(O, taps_) * sizeof(int16_t));
      kernels_.depthwise_pack(O, taps_, filter_taps.data(), reinterpret_cast<int16_t*>(packed->data()));
      packed_ = share_constant(packed);
      zero_run_.assign((p.out_w * p.stride_w + p.kernel_w * p.dilation_w + 1) * O, uint8_t(q_.input_zero));
      return;
    }
    uk_ = int8_conv2d_ukernel(p, filter_data);
    const size_t width = int8_dot_width(uk_.dot), nr = uk_.nr;
    const size_t multiple = uk_.k_steps_multiple;
    k_steps_ = ((K_ + width - 1) / width + multiple - 1) / multiple * multiple;
    panels_ = (og_ + nr - 1) / nr;
    // dot4 reads uint8 activations: int8 input is flipped (x + 128) as it is gathered, its zero point too.
    a_zero_ = q_.input_zero + (uk_.dot == Int8Dot::kU8S8x4 && input_signed_ ? 128 : 0);
    // 1x1, stride 1, unpadded, NHWC uint8 with whole words per row: A's rows are read in place.
    rows_in_place_ = uk_.dot == Int8Dot::kU8S8x4 && !input_signed_ && p.nhwc && taps_ == 1 && p.stride_h == 1 &&
                     p.stride_w == 1 && p.pad_top == 0 && p.pad_left == 0 && p.out_h == p.in_h && p.out_w == p.in_w &&
                     K_ % 4 == 0;
    spans_ = width == 4 && !input_signed_ && p.nhwc && p.groups == 1 && p.kernel_w > 1 && p.dilation_w == 1;
    packed_ = std::make_shared<AlignedBuffer>(p.groups * panels_ * k_steps_ * nr * sizeof(uint32_t));
    uint32_t* out = reinterpret_cast<uint32_t*>(packed_->data());
    for (size_t g = 0; g < p.groups; ++g)
      for (size_t panel = 0; panel < panels_; ++panel) {
        uint32_t* words = out + (g * panels_ + panel) * k_steps_ * nr;
        for (size_t j = 0; j < nr; ++j) {
          const size_t oj = panel * nr + j, o = g * og_ + oj;
          if (oj >= og_) continue;  // zero columns
          int64_t column_sum = 0;
          for (size_t k = 0; k < K_; ++k) {
            // K runs over (kh, kw, c): a tap's channels are contiguous in an NHWC input row.
            const int32_t v = centered(o, k % cg_, k / cg_);
            column_sum += v;
            uint32_t& word = words[k / width * nr + j];
            if (width == 4) word |= uint32_t(uint8_t(int8_t(v))) << (8 * (k % 4));
            else word |= uint32_t(uint16_t(int16_t(v))) << (16 * (k % 2));
          }
          // dot4 sums x * w: the activation zero point's share, -zx * sum(w), is added back per column.
          if (uk_.dot == Int8Dot::kU8S8x4) offset_[o] = int32_t(-int64_t(a_zero_) * column_sum);
          column_sum_.push_back(column_sum);
        }
      }
    packed_ = share_constant(packed_);  // identical packed filters share one buffer across graphs
  }

  const char* kernel_name() const { return depthwise_ ? "depthwise" : uk_.name; }

  void operator()(const KernelArgs& args) const {
    const uint8_t* in = static_cast<const uint8_t*>(args.inputs[0]);
    if (depthwise_) return run_depthwise(in, static_cast<uint8_t*>(args.outputs[0]), args.pool);
    // A fused addend is the last input.
    const float* addend = q_.addend != Conv2dQuantization::Addend::kNone
                              ? static_cast<const float*>(args.inputs[q_.addend_input])
                              : nullptr;
    if (!q_.runtime_input_parameters) return run_gemm(in, args.outputs[0], columns(), addend, args.pool);
    // The input's scale and zero point of this dispatch: the per-column factors and zero point terms.
    float scale;
    std::memcpy(&scale, args.inputs[1], sizeof(float));
    const uint8_t zero_byte = *static_cast<const uint8_t*>(args.inputs[2]);
    const int32_t zero = input_signed_ ? int32_t(int8_t(zero_byte)) : int32_t(zero_byte);
    const int32_t a_zero = zero + (uk_.dot == Int8Dot::kU8S8x4 && input_signed_ ? 128 : 0);
    // (Per-thread arrays kept across dispatches: no allocation per call once grown.)
    thread_local std::vector<float> multiplier;
    thread_local std::vector<int32_t> offset;
    multiplier.assign(multiplier_.size(), 0.0f);
    offset.assign(offset_.size(), 0);
    for (size_t o = 0; o < p_.out_channels; ++o) {
      multiplier[o] = float(double(scale) * double(q_.filter_scale[o]) / (q_.float_output ? 1.0 : double(q_.output_scale)));
      if (uk_.dot == Int8Dot::kU8S8x4) offset[o] = int32_t(-int64_t(a_zero) * column_sum_[o]);
    }
    run_gemm(in, args.outputs[0], Columns{offset.data(), multiplier.data(), a_zero}, addend, args.pool);
  }

 private:
  // The per-column epilogue factors and the zero point the gathered rows are centered on.
  struct Columns {
    const int32_t* offset;
    const float* multiplier;
    int32_t a_zero;
  };
  Columns columns() const { return Columns{offset_.data(), multiplier_.data(), a_zero_}; }

  TileEpilogue requantize_at(size_t o, const Columns& c) const {
    TileEpilogue ep;
    ep.offset = c.offset + o;
    ep.multiplier = c.multiplier + o;
    ep.bias = bias_.data() + o;
    ep.min = min_;
    ep.max = max_;
    ep.output_zero = q_.output_zero;
    ep.output_signed = q_.output_type == DataType::kInt8;
    return ep;
  }

  // The element stride between an input pixel's channels: NHWC or NCHW.
  size_t input_channel_stride() const { return p_.nhwc ? 1 : p_.in_h * p_.in_w; }

  // The im2col row of output pixel m for group g, as `width`-element words' elements: uint8
  // (flipped for int8 input) with the zero point as padding, or int16 minus the zero point.
  // Output pixel (n, oh, ow) of row m: the position is carried from row to row (no divisions per row).
  struct Pixel {
    size_t n, oh, ow;
  };
  Pixel pixel_of(size_t m) const {
    const size_t ohw = p_.out_h * p_.out_w, pix = m % ohw;
    return {m / ohw, pix / p_.out_w, pix % p_.out_w};
  }
  void next_pixel(Pixel& at) const {
    if (++at.ow < p_.out_w) return;
    at.ow = 0;
    if (++at.oh < p_.out_h) return;
    at.oh = 0;
    ++at.n;
  }

  template <class T>
  void gather_row(const uint8_t* in, const Pixel& at, size_t g, int32_t zero, T* row) const {
    const ptrdiff_t y0 = ptrdiff_t(at.oh * p_.stride_h), x0 = ptrdiff_t(at.ow * p_.stride_w);
    const uint8_t* image = in + at.n * p_.in_channels * p_.in_h * p_.in_w + g * cg_ * input_channel_stride();
    if constexpr (sizeof(T) == 1) {
      if (spans_) return gather_spans(in, image, y0, x0, zero, row);
    }
    gather_taps(image, y0, x0, 0, taps_, zero, row);
  }

  // Taps [first, first + count) of the im2col row of the pixel at (y0, x0), one at a time.
  // (`zero`: the zero point the rows are centered on, as gathered.)
  template <class T>
  void gather_taps(const uint8_t* image, ptrdiff_t y0, ptrdiff_t x0, size_t first, size_t count, int32_t zero,
                   T* row) const {
    // Locals: stores through uint8_t may alias the members, which would be reloaded per byte.
    const size_t cg = cg_, cs = input_channel_stride(), in_h = p_.in_h, in_w = p_.in_w;
    const size_t pixel_stride = p_.nhwc ? p_.in_channels : 1;
    const bool flip = input_signed_;
    constexpr bool kWords16 = sizeof(T) == 2;
    const T pad = kWords16 ? T(0) : T(zero);
    for (size_t t = first; t < first + count; ++t, row += cg) {
      const ptrdiff_t ih = y0 + tap_dy_[t], iw = x0 + tap_dx_[t];
      if (ih < 0 || iw < 0 || ih >= ptrdiff_t(in_h) || iw >= ptrdiff_t(in_w)) {
        std::fill(row, row + cg, pad);
        continue;
      }
      const uint8_t* x = image + (size_t(ih) * in_w + size_t(iw)) * pixel_stride;
      if constexpr (kWords16) {
        if (flip)
          for (size_t c = 0; c < cg; ++c) row[c] = T(int32_t(int8_t(x[c * cs])) - zero);
        else
          for (size_t c = 0; c < cg; ++c) row[c] = T(int32_t(x[c * cs]) - zero);
      } else if (flip && cs == 1) {
        for (size_t c = 0; c < cg; ++c) row[c] = T(x[c] ^ 0x80);  // (contiguous: vectorized)
      } else if (flip) {
        for (size_t c = 0; c < cg; ++c) row[c] = T(x[c * cs] ^ 0x80);
      } else if (cs == 1 && cg >= 8) {
        std::memcpy(row, x, cg);
      } else {  // a few channels (a stem's 3): a call to memcpy per tap would cost more than the copy
        for (size_t c = 0; c < cg; ++c) row[c] = x[c * cs];
      }
    }
  }

  // spans_: an NHWC uint8 input read whole (one group), dilation 1 across, so a kernel row's taps
  // are one run of kernel_w x channels bytes. A short run moves as 16-byte pieces when the input has them:
  // the bytes written past it are overwritten by the next run, or land in the row's slack (K's
  // padding, whose filter words are zero, or kRowSlack).
  void gather_spans(const uint8_t* in, const uint8_t* image, ptrdiff_t y0, ptrdiff_t x0, int32_t zero,
                    uint8_t* row) const {
    const size_t kw = p_.kernel_w, span = kw * cg_;
    const uint8_t* in_end = in + p_.batch * p_.in_channels * p_.in_h * p_.in_w;
    const ptrdiff_t iw = x0 + tap_dx_[0];
    const bool across = iw >= 0 && iw + ptrdiff_t(kw) <= ptrdiff_t(p_.in_w);
    for (size_t kh = 0; kh < p_.kernel_h; ++kh, row += span) {
      const ptrdiff_t ih = y0 + tap_dy_[kh * kw];
      if (!across || ih < 0 || ih >= ptrdiff_t(p_.in_h)) {
        gather_taps(image, y0, x0, kh * kw, kw, zero, row);
        continue;
      }
      const uint8_t* x = image + (size_t(ih) * p_.in_w + size_t(iw)) * cg_;
      const size_t moves = (span + kRowSlack - 1) / kRowSlack;
      if (moves <= 4 && x + moves * kRowSlack <= in_end)
        for (size_t m = 0; m < moves; ++m) std::memcpy(row + m * kRowSlack, x + m * kRowSlack, kRowSlack);
      else
        std::memcpy(row, x, span);
    }
  }

  // Gathers the im2col rows of the MR output pixels from m0 into `rows_out` (k_steps words each; rows
  // past M are zero). K's padding to k_steps words is left as it is: its weights are zero, so
  // whatever it holds adds nothing (the buffer starts zeroed, so it is never uninitialized).
  void gather_tile(const uint8_t* in, size_t m0, size_t rows, size_t g, int32_t zero, uint32_t* rows_out) const {
    const size_t mr = uk_.mr, width = int8_dot_width(uk_.dot), stride_words = k_steps_;
    Pixel at = pixel_of(m0);
    for (size_t i = 0; i < mr; ++i, next_pixel(at)) {
      uint32_t* row_words = rows_out + i * stride_words;
      if (i >= rows) {
        std::memset(row_words, 0, stride_words * sizeof(uint32_t));
        continue;
      }
      if (width == 4) gather_row(in, at, g, zero, reinterpret_cast<uint8_t*>(row_words));
      else gather_row(in, at, g, zero, reinterpret_cast<int16_t*>(row_words));
    }
  }

  // A float output tile's epilogue after its sums became floats, while it is in L1: the addend, then
  // the clamp (the activation follows over whole rows: finish_float_rows).
  void finish_float_tile(float* out, size_t m0, size_t o0, size_t rows, size_t cols, const float* addend) const {
    const size_t O = p_.out_channels;
    const float lo = q_.min, hi = q_.max;
    const bool clamps = lo > -std::numeric_limits<float>::infinity() || hi < std::numeric_limits<float>::infinity();
    for (size_t i = 0; i < rows; ++i) {
      float* __restrict row = out + (m0 + i) * O + o0;
      if (addend) {
        const float* __restrict add =
            q_.addend == Conv2dQuantization::Addend::kRow ? addend + o0 : addend + (m0 + i) * O + o0;
        for (size_t j = 0; j < cols; ++j) row[j] += add[j];
      }
      if (clamps)
        for (size_t j = 0; j < cols; ++j) {
          const float v = row[j] < lo ? lo : row[j];  // NaN passes through
          row[j] = v > hi ? hi : v;
        }
    }
  }
  // The activation over output rows [m0, m1), columns [o0, o1): a tile's 32-column rows are too short
  // for the activation's long dependency chains (GELU), so it runs once the block's panels are done.
  void finish_float_rows(float* out, size_t m0, size_t m1, size_t o0, size_t o1) const {
    for (size_t m = m0; m < m1; ++m) activation_(out + m * p_.out_channels + o0, o1 - o0);
  }

  // The int8 kind of the tiled product: an item's A rows are gathered as im2col rows (or read in
  // place: pointwise), then each panel passes over its tiles while it is in L1, each tile's sums
  // requantized (or dequantized) while they are in L1.
  struct GemmTiles {
    bool panels_outer() const { return true; }
    struct Scratch {
      uint32_t* a;
      int32_t* tile;
      uint8_t* staged_out;
    };
    const Int8Conv2d& conv;
    const uint8_t* in;
    void* out;
    const Columns& columns;
    const float* addend;
    size_t block_tiles;

    Scratch scratch() const {
      const size_t mr = conv.uk_.mr, tile_words = conv.k_steps_ * mr;
      return Scratch{thread_buffer<uint32_t>(0, block_tiles * tile_words + kRowSlack / sizeof(uint32_t)),
                     thread_buffer<int32_t>(2, mr * conv.uk_.nr),
                     thread_buffer<uint8_t>(3, mr * kMaxNr * sizeof(float))};
    }
    void begin_item(Scratch& s, const TileItem& item) const {
      const size_t mr = conv.uk_.mr, tile_words = conv.k_steps_ * mr, M = conv.rows();
      for (size_t t = item.t0; t < item.t1; ++t)
        if (!conv.in_place(item.group, t))
          conv.gather_tile(in, t * mr, std::min(mr, M - t * mr), item.group, columns.a_zero,
                           s.a + (t - item.t0) * tile_words);
    }
    void begin_tile(Scratch&, const TileItem&, size_t) const {}
    void end_tile(Scratch&, const TileItem&, size_t) const {}
    size_t k_blocks() const { return 1; }
    void begin_k_block(Scratch&, const TileItem&, size_t) const {}
    // One tile of sums (rows of tile t, columns of the panel), then its epilogue.
    void tile(Scratch& s, const TileItem& item, size_t t, size_t panel, size_t) const {
      conv.multiply(in, out, columns, addend, s, item, t, panel);
    }
    void end_item(Scratch&, const TileItem& item) const {
      if (!conv.q_.float_output || !conv.activation_) return;  // (NHWC: the epilogue is channels-last only)
      const size_t mr = conv.uk_.mr, nr = conv.uk_.nr, og = conv.og_, g = item.group;
      conv.finish_float_rows(static_cast<float*>(out), item.t0 * mr, std::min(conv.rows(), item.t1 * mr),
                             g * og + item.p0 * nr, g * og + std::min(og, item.p1 * nr));
    }
  };

  size_t rows() const { return p_.batch * p_.out_h * p_.out_w; }

  // A pointwise convolution's full tiles read the input's pixels in place; the others are gathered.
  // (A row's k_steps words may run past its K bytes, into the next pixel: they meet zero weights,
  // but must lie inside the input.)
  bool in_place(size_t g, size_t t) const {
    const size_t mr = uk_.mr, M = rows();
    return rows_in_place_ && (t + 1) * mr <= M &&
           ((t + 1) * mr - 1) * p_.in_channels + g * cg_ + 4 * k_steps_ <= M * p_.in_channels;
  }

  void multiply(const uint8_t* in, void* out_data, const Columns& columns, const float* addend,
                GemmTiles::Scratch& s, const TileItem& item, size_t t, size_t panel) const {
    uint8_t* out = static_cast<uint8_t*>(out_data);
    float* out_float = static_cast<float*>(out_data);
    const size_t mr = uk_.mr, nr = uk_.nr, O = p_.out_channels, ohw = p_.out_h * p_.out_w, g = item.group;
    const uint32_t* b = reinterpret_cast<const uint32_t*>(packed_->data()) + (g * panels_ + panel) * k_steps_ * nr;
    const size_t o0 = g * og_ + panel * nr, cols = std::min(nr, og_ - panel * nr);
    const TileEpilogue rq = requantize_at(o0, columns);
    const size_t m0 = t * mr, rows = std::min(mr, this->rows() - m0);
    int32_t* tile = s.tile;
    if (in_place(g, t))
      uk_.fn(k_steps_, reinterpret_cast<const uint32_t*>(in + m0 * p_.in_channels + g * cg_), p_.in_channels / 4, b,
             tile);
    else
      uk_.fn(k_steps_, s.a + (t - item.t0) * k_steps_ * mr, k_steps_, b, tile);
    if (q_.float_output && p_.nhwc) {
      kernels_.dequantize_sums(rows, cols, tile, nr, rq, out_float + m0 * O + o0, O);
      if (finishes_tiles_) finish_float_tile(out_float, m0, o0, rows, cols, addend);
      return;
    }
    if (q_.float_output) {  // NCHW: each column is a plane (no addend; a clamp in dequantize_sums)
      float* staged_float = reinterpret_cast<float*>(s.staged_out);
      kernels_.dequantize_sums(rows, cols, tile, nr, rq, staged_float, kMaxNr);
      for (size_t i = 0; i < rows; ++i) {
        const size_t m = m0 + i, n = m / ohw, pix = m % ohw;
        float* dst = out_float + (n * O + o0) * ohw + pix;
        for (size_t j = 0; j < cols; ++j) dst[j * ohw] = staged_float[i * kMaxNr + j];
      }
      return;
    }
    if (p_.nhwc) return kernels_.requantize(rows, cols, tile, nr, rq, out + m0 * O + o0, O);
    kernels_.requantize(rows, cols, tile, nr, rq, s.staged_out, kMaxNr);
    for (size_t i = 0; i < rows; ++i) {
      const size_t m = m0 + i, n = m / ohw, pix = m % ohw;
      uint8_t* dst = out + (n * O + o0) * ohw + pix;
      for (size_t j = 0; j < cols; ++j) dst[j * ohw] = s.staged_out[i * kMaxNr + j];
    }
  }

  // `out`: 8-bit values, or float32 ones (float_output, with `addend` when one is fused).
  void run_gemm(const uint8_t* in, void* out, const Columns& columns, const float* addend, ThreadPool* pool) const {
    const size_t mr = uk_.mr, nr = uk_.nr, M = rows();
    const size_t tile_bytes = k_steps_ * mr * sizeof(uint32_t);
    const TiledProduct product{p_.groups, M, mr, panels_, tile_bytes, k_steps_ * nr * sizeof(uint32_t),
                               (M + mr - 1) / mr * tile_bytes, M * p_.out_channels * K_};
    const TilePlan plan = plan_tiles(product, kInt8ConvPolicy, pool);
    run_tiled(plan, pool, GemmTiles{*this, in, out, columns, addend, plan.tiles_per_item});
  }

  // NCHW runs through NHWC copies of the input and output: the loop vectorizes over channels.
  void run_depthwise(const uint8_t* in, uint8_t* out, ThreadPool* pool) const {
    if (p_.nhwc) return run_depthwise_nhwc(in, out, pool);
    const size_t C = p_.out_channels, in_plane = p_.in_h * p_.in_w, out_plane = p_.out_h * p_.out_w;
    std::vector<uint8_t> in_nhwc(p_.batch * in_plane * C), out_nhwc(p_.batch * out_plane * C);
    for (size_t n = 0; n < p_.batch; ++n)
      for (size_t c = 0; c < C; ++c)
        for (size_t i = 0; i < in_plane; ++i) in_nhwc[(n * in_plane + i) * C + c] = in[(n * C + c) * in_plane + i];
    run_depthwise_nhwc(in_nhwc.data(), out_nhwc.data(), pool);
    for (size_t n = 0; n < p_.batch; ++n)
      for (size_t c = 0; c < C; ++c)
        for (size_t i = 0; i < out_plane; ++i) out[(n * C + c) * out_plane + i] = out_nhwc[(n * out_plane + i) * C + c];
  }

  // Per output row: the pixels whose taps all lie inside the input's width run as one call (each
  // tap a fixed offset from the pixel); the border pixels go one at a time. A tap outside the input
  // reads the run of zero points (advancing with the pixels like an input row would).
  void run_depthwise_nhwc(const uint8_t* in, uint8_t* out, ThreadPool* pool) const {
    const size_t C = p_.out_channels, rows = p_.batch * p_.out_h, sw = p_.stride_w, out_w = p_.out_w;
    const ptrdiff_t in_w = ptrdiff_t(p_.in_w), in_h = ptrdiff_t(p_.in_h);
    const ptrdiff_t dx_min = *std::min_element(tap_dx_.begin(), tap_dx_.end());
    const ptrdiff_t dx_max = *std::max_element(tap_dx_.begin(), tap_dx_.end());
    // [inner_begin, inner_end): output columns with every tap inside the row
    const size_t inner_begin = std::min(out_w, size_t(dx_min < 0 ? (-dx_min + ptrdiff_t(sw) - 1) / ptrdiff_t(sw) : 0));
    const ptrdiff_t last_inside = in_w - 1 - dx_max;
    const size_t inner_end = std::max(inner_begin, last_inside < 0 ? 0 : std::min(out_w, size_t(last_inside) / sw + 1));
    const int16_t* packed = reinterpret_cast<const int16_t*>(packed_->data());
    const uint8_t* zeros = zero_run_.data();
    auto run = [&](size_t begin, size_t end) {
      const TileEpilogue rq = requantize_at(0, columns());
      const uint8_t** x = reinterpret_cast<const uint8_t**>(thread_buffer<uintptr_t>(0, taps_));
      for (size_t r = begin; r < end; ++r) {
        const size_t n = r / p_.out_h, oh = r % p_.out_h;
        const uint8_t* image = in + n * p_.in_h * p_.in_w * C;
        uint8_t* out_row = out + r * out_w * C;
        auto call = [&](size_t ow, size_t pixels) {
          for (size_t t = 0; t < taps_; ++t) {
            const ptrdiff_t ih = ptrdiff_t(oh * p_.stride_h) + tap_dy_[t], iw = ptrdiff_t(ow * sw) + tap_dx_[t];
            const bool inside = ih >= 0 && ih < in_h && iw >= 0 && iw < in_w;
            x[t] = inside ? image + (size_t(ih) * p_.in_w + size_t(iw)) * C : zeros;
          }
          kernels_.depthwise(pixels, sw * C, C, taps_, x, input_signed_, packed, rq, out_row + ow * C);
        };
        for (size_t ow = 0; ow < inner_begin; ++ow) call(ow, 1);
        if (inner_end > inner_begin) call(inner_begin, inner_end - inner_begin);
        for (size_t ow = inner_end; ow < out_w; ++ow) call(ow, 1);
      }
    };
    const size_t grain = std::max<size_t>(1, (size_t(1) << 15) / std::max<size_t>(1, out_w * C * taps_));
    if (pool && pool->max_threads() > 1 && rows > grain) pool->parallel_for(rows, grain, run);
    else run(0, rows);
  }

  Conv2dParams p_;
  Conv2dQuantization q_;
  Int8Kernels kernels_;
  Int8GemmUkernel uk_;
  size_t cg_ = 0, og_ = 0, taps_ = 0, K_ = 0, k_steps_ = 0, panels_ = 0;
  bool input_signed_ = false, depthwise_ = false, rows_in_place_ = false, spans_ = false;
  int32_t a_zero_ = 0;
  float min_ = 0, max_ = 0;
  ActivationLoop activation_;    // float_output: a fused activation
  bool finishes_tiles_ = false;  // float_output with an addend or a clamp after the sums
  BufferPtr packed_;
  std::vector<int32_t> offset_;
  std::vector<int64_t> column_sum_;  // GEMM: per output channel, the sum of its centered weights
  std::vector<float> multiplier_, bias_;
  std::vector<uint8_t> zero_run_;  // depthwise: input zero points read by taps outside the input
  std::vector<ptrdiff_t> tap_dy_, tap_dx_;
};

}  // namespace

bool int8_conv2d_is_depthwise(const Conv2dParams& p) {
  return p.groups == p.in_channels && p.out_channels == p.in_channels;
}

const Int8GemmUkernel& int8_conv2d_ukernel(const Conv2dParams& p, const void* filter) {
  const Int8Kernels& k = kernel_table().int8;
  if (k.dot4.fn && filter_fits_int8(p, static_cast<const uint8_t*>(filter))) return k.dot4;
  return k.dot2;
}

Kernel make_int8_conv2d_kernel(const Conv2dParams& p, const void* filter, const float* bias) {
  if (!p.quantization || !filter)
    throw Error(ErrorKind::kUnknownError, "internal: a quantized conv2d needs its quantization and constant filter");
  auto conv = std::make_shared<const Int8Conv2d>(p, filter, bias);
  return [conv](const KernelArgs& args) { (*conv)(args); };
}

}  // namespace webnn
