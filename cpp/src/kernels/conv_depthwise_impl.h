// The depthwise row loops; included inside an ISA namespace by conv_depthwise_{ref,avx2,avx512}.cc.
// Inner loops are unit-stride and free of aliasing so they vectorize at every level.

namespace {

inline float clamp_keep_nan(float v, float lo, float hi) {
  v = v < lo ? lo : v;  // comparisons with NaN are false: NaN passes through
  return v > hi ? hi : v;
}

// NCHW: each output row accumulates shifted input row segments, one per filter tap.
void depthwise_nchw(const Conv2dParams& p, const float* weights, const float* bias, const float* in, float* out,
                    size_t begin, size_t end, float* __restrict acc) {
  const size_t C = p.in_channels, H = p.in_h, W = p.in_w, OH = p.out_h, OW = p.out_w;
  const size_t KH = p.kernel_h, KW = p.kernel_w, sw = p.stride_w;
  const float lo = p.activation_min, hi = p.activation_max;  // locals: stores to out cannot alias them
  for (size_t nc = begin; nc < end; ++nc) {
    const size_t c = nc % C;
    const float* plane = in + nc * H * W;
    float* dst_plane = out + nc * OH * OW;
    const float b = bias ? bias[c] : 0.0f;
    for (size_t oy = 0; oy < OH; ++oy) {
      for (size_t ox = 0; ox < OW; ++ox) acc[ox] = b;
      for (size_t kh = 0; kh < KH; ++kh) {
        const long long y = (long long)(oy * p.stride_h + kh * p.dilation_h) - (long long)p.pad_top;
        if (y < 0 || y >= (long long)H) continue;
        const float* src_row = plane + size_t(y) * W;
        for (size_t kw = 0; kw < KW; ++kw) {
          const float w = weights[(kh * KW + kw) * C + c];
          // Output columns whose input column ox*sw + shift lies in [0, W).
          const long long shift = (long long)(kw * p.dilation_w) - (long long)p.pad_left;
          const long long first = shift >= 0 ? 0 : (-shift + (long long)sw - 1) / (long long)sw;
          long long last = ((long long)W - 1 - shift) < 0 ? -1 : ((long long)W - 1 - shift) / (long long)sw;
          if (last > (long long)OW - 1) last = (long long)OW - 1;
          if (first > last) continue;
          const float* __restrict src = src_row + first * (long long)sw + shift;
          float* __restrict a = acc + first;
          const size_t n = size_t(last - first + 1);
          if (sw == 1) {
            for (size_t i = 0; i < n; ++i) a[i] += w * src[i];
          } else {
            for (size_t i = 0; i < n; ++i) a[i] += w * src[i * sw];
          }
        }
      }
      float* __restrict dst = dst_plane + oy * OW;
      for (size_t ox = 0; ox < OW; ++ox) dst[ox] = clamp_keep_nan(acc[ox], lo, hi);
    }
  }
}

// NHWC: each output pixel accumulates the channel vectors of its taps.
void depthwise_nhwc(const Conv2dParams& p, const float* weights, const float* bias, const float* in, float* out,
                    size_t begin, size_t end, float* __restrict acc) {
  const size_t C = p.in_channels, H = p.in_h, W = p.in_w, OH = p.out_h, OW = p.out_w;
  const size_t KH = p.kernel_h, KW = p.kernel_w;
  const float lo = p.activation_min, hi = p.activation_max;
  for (size_t r = begin; r < end; ++r) {
    const size_t n = r / OH, oy = r % OH;
    for (size_t ox = 0; ox < OW; ++ox) {
      if (bias) {
        for (size_t c = 0; c < C; ++c) acc[c] = bias[c];
      } else {
        for (size_t c = 0; c < C; ++c) acc[c] = 0.0f;
      }
      for (size_t kh = 0; kh < KH; ++kh) {
        const long long y = (long long)(oy * p.stride_h + kh * p.dilation_h) - (long long)p.pad_top;
        if (y < 0 || y >= (long long)H) continue;
        for (size_t kw = 0; kw < KW; ++kw) {
          const long long x = (long long)(ox * p.stride_w + kw * p.dilation_w) - (long long)p.pad_left;
          if (x < 0 || x >= (long long)W) continue;
          const float* __restrict src = in + ((n * H + size_t(y)) * W + size_t(x)) * C;
          const float* __restrict w = weights + (kh * KW + kw) * C;
          for (size_t c = 0; c < C; ++c) acc[c] += src[c] * w[c];
        }
      }
      float* __restrict dst = out + ((n * OH + oy) * OW + ox) * C;
      for (size_t c = 0; c < C; ++c) dst[c] = clamp_keep_nan(acc[c], lo, hi);
    }
  }
}

}  // namespace

WEBNN_DEPTHWISE_ROWS_DECL {
  if (p.nhwc) depthwise_nhwc(p, weights, bias, in, out, begin, end, scratch);
  else depthwise_nchw(p, weights, bias, in, out, begin, end, scratch);
}
