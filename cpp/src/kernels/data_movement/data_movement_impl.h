// The data-movement family's inner loops (DataMovementLoops), compiled once per ISA level (see
// kernel_isa.h). Elements are moved as unsigned integers of their size, never converted. At the
// AVX levels, transposed tiles go through register transposes of 8 x 8 blocks (4 x 4 for 8-byte
// elements) and fills through full-width vector stores.
#include <cstdint>
#include <cstring>

#include "kernels/data_movement/data_movement.h"
#include "kernels/kernel_isa.h"

namespace webnn {
namespace WEBNN_KERNEL_ISA {
namespace {

template <size_t kSize>
using Bits = std::conditional_t<
    kSize == 1, uint8_t, std::conditional_t<kSize == 2, uint16_t, std::conditional_t<kSize == 4, uint32_t, uint64_t>>>;

template <class E>
void transpose_scalar(const E* src, E* dst, int64_t rows, int64_t cols, int64_t src_stride, int64_t dst_stride) {
  for (int64_t i = 0; i < rows; ++i) {
    E* d = dst + i * dst_stride;
    for (int64_t j = 0; j < cols; ++j) d[j] = src[i + j * src_stride];
  }
}

#if WEBNN_KERNEL_ISA_LEVEL >= 1
// One block: dst row i (at dst + i * ds) gets element i of every src row j (at src + j * ss). The
// loops are unrolled so the blocks stay in registers (GCC kept them on the stack: 3x slower).
inline void transpose_block(const uint32_t* src, int64_t ss, uint32_t* dst, int64_t ds) {  // 8 x 8
  __m256 r[8], t[8];
#pragma GCC unroll 8
  for (int j = 0; j < 8; ++j) r[j] = _mm256_loadu_ps(reinterpret_cast<const float*>(src + j * ss));
#pragma GCC unroll 8
  for (int j = 0; j < 8; j += 2) {
    t[j] = _mm256_unpacklo_ps(r[j], r[j + 1]);
    t[j + 1] = _mm256_unpackhi_ps(r[j], r[j + 1]);
  }
#pragma GCC unroll 8
  for (int j = 0; j < 8; j += 4) {
    r[j] = _mm256_shuffle_ps(t[j], t[j + 2], 0x44);
    r[j + 1] = _mm256_shuffle_ps(t[j], t[j + 2], 0xee);
    r[j + 2] = _mm256_shuffle_ps(t[j + 1], t[j + 3], 0x44);
    r[j + 3] = _mm256_shuffle_ps(t[j + 1], t[j + 3], 0xee);
  }
#pragma GCC unroll 8
  for (int i = 0; i < 4; ++i) {
    _mm256_storeu_ps(reinterpret_cast<float*>(dst + i * ds), _mm256_permute2f128_ps(r[i], r[i + 4], 0x20));
    _mm256_storeu_ps(reinterpret_cast<float*>(dst + (i + 4) * ds), _mm256_permute2f128_ps(r[i], r[i + 4], 0x31));
  }
}
inline void transpose_block(const uint64_t* src, int64_t ss, uint64_t* dst, int64_t ds) {  // 4 x 4
  __m256d r[4];
#pragma GCC unroll 8
  for (int j = 0; j < 4; ++j) r[j] = _mm256_loadu_pd(reinterpret_cast<const double*>(src + j * ss));
  const __m256d t0 = _mm256_unpacklo_pd(r[0], r[1]), t1 = _mm256_unpackhi_pd(r[0], r[1]);
  const __m256d t2 = _mm256_unpacklo_pd(r[2], r[3]), t3 = _mm256_unpackhi_pd(r[2], r[3]);
  _mm256_storeu_pd(reinterpret_cast<double*>(dst), _mm256_permute2f128_pd(t0, t2, 0x20));
  _mm256_storeu_pd(reinterpret_cast<double*>(dst + ds), _mm256_permute2f128_pd(t1, t3, 0x20));
  _mm256_storeu_pd(reinterpret_cast<double*>(dst + 2 * ds), _mm256_permute2f128_pd(t0, t2, 0x31));
  _mm256_storeu_pd(reinterpret_cast<double*>(dst + 3 * ds), _mm256_permute2f128_pd(t1, t3, 0x31));
}
inline void transpose_block(const uint16_t* src, int64_t ss, uint16_t* dst, int64_t ds) {  // 8 x 8
  __m128i r[8], t[8];
#pragma GCC unroll 8
  for (int j = 0; j < 8; ++j) r[j] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + j * ss));
#pragma GCC unroll 8
  for (int j = 0; j < 8; j += 2) {
    t[j] = _mm_unpacklo_epi16(r[j], r[j + 1]);
    t[j + 1] = _mm_unpackhi_epi16(r[j], r[j + 1]);
  }
#pragma GCC unroll 8
  for (int j = 0; j < 8; j += 4) {  // rows j..j+3 of source, elements 2k and 2k+1 per lane pair
    r[j] = _mm_unpacklo_epi32(t[j], t[j + 2]);
    r[j + 1] = _mm_unpackhi_epi32(t[j], t[j + 2]);
    r[j + 2] = _mm_unpacklo_epi32(t[j + 1], t[j + 3]);
    r[j + 3] = _mm_unpackhi_epi32(t[j + 1], t[j + 3]);
  }
#pragma GCC unroll 8
  for (int k = 0; k < 4; ++k) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 2 * k * ds), _mm_unpacklo_epi64(r[k], r[k + 4]));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + (2 * k + 1) * ds), _mm_unpackhi_epi64(r[k], r[k + 4]));
  }
}
inline void transpose_block(const uint8_t* src, int64_t ss, uint8_t* dst, int64_t ds) {  // 8 x 8
  __m128i r[8];
#pragma GCC unroll 8
  for (int j = 0; j < 8; ++j) r[j] = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(src + j * ss));
  const __m128i a0 = _mm_unpacklo_epi8(r[0], r[1]), a1 = _mm_unpacklo_epi8(r[2], r[3]);
  const __m128i a2 = _mm_unpacklo_epi8(r[4], r[5]), a3 = _mm_unpacklo_epi8(r[6], r[7]);
  const __m128i b0 = _mm_unpacklo_epi16(a0, a1), b1 = _mm_unpackhi_epi16(a0, a1);
  const __m128i b2 = _mm_unpacklo_epi16(a2, a3), b3 = _mm_unpackhi_epi16(a2, a3);
  const __m128i c[4] = {_mm_unpacklo_epi32(b0, b2), _mm_unpackhi_epi32(b0, b2), _mm_unpacklo_epi32(b1, b3),
                        _mm_unpackhi_epi32(b1, b3)};
#pragma GCC unroll 8
  for (int k = 0; k < 4; ++k) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(dst + 2 * k * ds), c[k]);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(dst + (2 * k + 1) * ds), _mm_srli_si128(c[k], 8));
  }
}

// Three planes of bytes into packed triples (an RGB image's NCHW -> NHWC): dst[3i + j] = plane j's
// byte i, 16 pixels (48 bytes) per step, each output vector the OR of one byte shuffle per plane.
// Returns the rows done (a multiple of 16).
inline int64_t interleave_three_planes(const uint8_t* src, int64_t ss, uint8_t* dst, int64_t rows) {
  alignas(16) static const struct Masks {
    int8_t m[3][3][16];  // [output vector][plane][byte]
    Masks() : m{} {
      for (int v = 0; v < 3; ++v)
        for (int plane = 0; plane < 3; ++plane)
          for (int k = 0; k < 16; ++k) {
            const int g = 16 * v + k;
            m[v][plane][k] = int8_t(g % 3 == plane ? g / 3 : -128);  // -128: a zero byte
          }
    }
  } masks;
  int64_t i = 0;
  for (; i + 16 <= rows; i += 16) {
    const __m128i p[3] = {_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)),
                          _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + ss)),
                          _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 2 * ss))};
#pragma GCC unroll 3
    for (int v = 0; v < 3; ++v) {
      const auto mask = [&](int plane) { return _mm_load_si128(reinterpret_cast<const __m128i*>(masks.m[v][plane])); };
      const __m128i out = _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(p[0], mask(0)), _mm_shuffle_epi8(p[1], mask(1))),
                                       _mm_shuffle_epi8(p[2], mask(2)));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 3 * i + 16 * v), out);
    }
  }
  return i;
}
#endif

template <size_t kSize>
void transpose_tile(const void* src_ptr, void* dst_ptr, int64_t rows, int64_t cols, int64_t src_stride,
                    int64_t dst_stride) {
  using E = Bits<kSize>;
  const E* src = static_cast<const E*>(src_ptr);
  E* dst = static_cast<E*>(dst_ptr);
#if WEBNN_KERNEL_ISA_LEVEL >= 1
  if constexpr (kSize == 1) {
    if (cols == 3 && dst_stride == 3) {
      const int64_t done = interleave_three_planes(src, src_stride, dst, rows);
      return transpose_scalar(src + done, dst + done * 3, rows - done, cols, src_stride, dst_stride);
    }
  }
  constexpr int64_t kBlock = kSize == 8 ? 4 : 8;
  const int64_t full_rows = rows / kBlock * kBlock, full_cols = cols / kBlock * kBlock;
  for (int64_t i = 0; i < full_rows; i += kBlock)
    for (int64_t j = 0; j < full_cols; j += kBlock)
      transpose_block(src + i + j * src_stride, src_stride, dst + i * dst_stride + j, dst_stride);
  // The right edge of the blocked rows, then the rows below them.
  transpose_scalar(src + full_cols * src_stride, dst + full_cols, full_rows, cols - full_cols, src_stride,
                   dst_stride);
  transpose_scalar(src + full_rows, dst + full_rows * dst_stride, rows - full_rows, cols, src_stride, dst_stride);
#else
  transpose_scalar(src, dst, rows, cols, src_stride, dst_stride);
#endif
}

template <size_t kSize>
void fill(void* dst_ptr, const void* value, int64_t count) {
  using E = Bits<kSize>;
  E* dst = static_cast<E*>(dst_ptr);
  E v;
  std::memcpy(&v, value, kSize);
  int64_t j = 0;
#if WEBNN_KERNEL_ISA_LEVEL >= 1
  using V = simd::NativeVec<E>;
  constexpr int64_t kStep = sizeof(V) / kSize;
  const V splat = V{} + v;
  for (; j + kStep <= count; j += kStep) simd::store(dst + j, splat);
#endif
  for (; j < count; ++j) dst[j] = v;
}

#if WEBNN_KERNEL_ISA_LEVEL >= 1
// One row of n >= 32 bytes in 32-byte moves, the last one overlapping the one before.
inline void copy_row_wide(char* d, const char* s, int64_t n) {
  typedef uint8_t Bytes32 __attribute__((vector_size(32)));
  int64_t j = 0;
  for (; j + 32 < n; j += 32) simd::store(d + j, simd::load<Bytes32>(s + j));
  simd::store(d + n - 32, simd::load<Bytes32>(s + n - 32));
}
#endif

// Short rows are moved inline (no call per row); long ones by memcpy.
void copy_rows(void* dst_ptr, int64_t dst_stride, const void* src_ptr, int64_t src_stride, int64_t rows,
               int64_t bytes) {
  char* d = static_cast<char*>(dst_ptr);
  const char* s = static_cast<const char*>(src_ptr);
#if WEBNN_KERNEL_ISA_LEVEL >= 1
  if (bytes >= 32 && bytes <= 512) {
    for (int64_t r = 0; r < rows; ++r, d += dst_stride, s += src_stride) copy_row_wide(d, s, bytes);
    return;
  }
#endif
  for (int64_t r = 0; r < rows; ++r, d += dst_stride, s += src_stride) std::memcpy(d, s, size_t(bytes));
}

constexpr DataMovementLoops kDataMovementLoops = {
    {transpose_tile<1>, transpose_tile<2>, transpose_tile<4>, transpose_tile<8>},
    {fill<1>, fill<2>, fill<4>, fill<8>},
    copy_rows,
};

}  // namespace
}  // namespace WEBNN_KERNEL_ISA
}  // namespace webnn
