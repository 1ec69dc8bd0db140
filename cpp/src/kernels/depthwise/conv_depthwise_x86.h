// Vector traits of the depthwise loops (see conv_depthwise_impl.h) for AVX2 (F32x8) and AVX-512
// (F32x16; F32x8 with AVX-512VL masks), included inside an ISA namespace by the _avx2 / _avx512
// files after <immintrin.h>.

namespace {

struct F32x8 {
  using T = __m256;
  static constexpr size_t kLanes = 8;
#if defined(__AVX512F__)
  static constexpr size_t kRegisters = 32;
#else
  static constexpr size_t kRegisters = 16;
#endif
  static T zero() { return _mm256_setzero_ps(); }
  static T splat(float x) { return _mm256_set1_ps(x); }
  static T load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, T v) { _mm256_storeu_ps(p, v); }
  static T fma(T a, T b, T c) { return _mm256_fmadd_ps(a, b, c); }
  static T clamp(T v, T lo, T hi) { return _mm256_min_ps(hi, _mm256_max_ps(lo, v)); }  // order keeps NaN
  static T round_to_half(T v) { return _mm256_cvtph_ps(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT)); }
  static __m256i lane_index(size_t n) {
    return _mm256_sub_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(int(n)));
  }
#if defined(__AVX512VL__)
  // Mask registers (AMD's vmaskmovps is slow), kept in 16 bits: an 8-bit __mmask8 is a char type,
  // which any float store may alias, so masks held in memory would be reloaded after each store.
  using Mask = __mmask16;
  struct Shift {
    __m256i index;
    Mask keep;
  };
  static Mask first(size_t n) { return n < kLanes ? Mask((1u << n) - 1) : Mask(0xff); }
  static T load(const float* p, Mask m) { return _mm256_maskz_loadu_ps(__mmask8(m), p); }
  static void store(float* p, T v, Mask m) { _mm256_mask_storeu_ps(p, __mmask8(m), v); }
  static Shift shift_by(size_t n) { return {lane_index(n), Mask(~first(n))}; }
  static T shift_up(T v, const Shift& s) { return _mm256_maskz_permutexvar_ps(__mmask8(s.keep), s.index, v); }
  static constexpr bool kPermute2 = true;
  using Index = __m256i;
  static Index load_index(const int32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static Mask mask_bits(uint32_t bits) { return Mask(bits); }
  static T permute2(T a, Index i, T b, Mask m) { return _mm256_maskz_permutex2var_ps(__mmask8(m), a, i, b); }
  template <int kN>
  static T shift_down(T a, T b) {
    return _mm256_castsi256_ps(_mm256_alignr_epi32(_mm256_castps_si256(b), _mm256_castps_si256(a), kN));
  }
#else
  using Mask = __m256i;
  struct Shift {
    __m256i index;
    __m256 keep;
  };
  static Mask first(size_t n) { return _mm256_cmpgt_epi32(_mm256_set1_epi32(int(n < kLanes ? n : kLanes)), lane_index(0)); }
  static T load(const float* p, Mask m) { return _mm256_maskload_ps(p, m); }
  static void store(float* p, T v, Mask m) { _mm256_maskstore_ps(p, m, v); }
  static Shift shift_by(size_t n) { return {lane_index(n), _mm256_castsi256_ps(_mm256_cmpgt_epi32(lane_index(n), _mm256_set1_epi32(-1)))}; }
  static T shift_up(T v, const Shift& s) { return _mm256_and_ps(s.keep, _mm256_permutevar8x32_ps(v, s.index)); }
  static constexpr bool kPermute2 = false;
  template <int kN>
  static T shift_down(T a, T b) {
    // middle = a4..a7 b0..b3; each 128-bit lane then shifts within its pair of lanes.
    const __m256i lo = _mm256_castps_si256(a), hi = _mm256_castps_si256(b);
    const __m256i middle = _mm256_permute2x128_si256(lo, hi, 0x21);
    if constexpr (kN < 4) return _mm256_castsi256_ps(_mm256_alignr_epi8(middle, lo, kN * 4));
    else if constexpr (kN == 4) return _mm256_castsi256_ps(middle);
    else return _mm256_castsi256_ps(_mm256_alignr_epi8(hi, middle, (kN - 4) * 4));
  }
#endif
  static void deinterleave(T a, T b, T& even, T& odd) {
    // In-lane shuffles give a0 a2 b0 b2 | a4 a6 b4 b6; the 64-bit permute orders the halves.
    even = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0x88)), 0xd8));
    odd = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0xdd)), 0xd8));
  }
};

#if defined(__AVX512F__)
// (The maskz_ forms, with all lanes set, avoid GCC 12's false -Wmaybe-uninitialized in the plain ones.)
struct F32x16 {
  using T = __m512;
  using Mask = __mmask16;
  struct Shift {
    __m512i index;
    Mask keep;
  };
  static constexpr size_t kLanes = 16;
  static constexpr size_t kRegisters = 32;
  static T zero() { return _mm512_setzero_ps(); }
  static T splat(float x) { return _mm512_set1_ps(x); }
  static T load(const float* p) { return _mm512_loadu_ps(p); }
  static T load(const float* p, Mask m) { return _mm512_maskz_loadu_ps(m, p); }
  static void store(float* p, T v) { _mm512_storeu_ps(p, v); }
  static void store(float* p, T v, Mask m) { _mm512_mask_storeu_ps(p, m, v); }
  static Mask first(size_t n) { return n < kLanes ? Mask((1u << n) - 1) : Mask(0xffff); }
  static T fma(T a, T b, T c) { return _mm512_fmadd_ps(a, b, c); }
  static T clamp(T v, T lo, T hi) {  // operand order keeps NaN
    return _mm512_maskz_min_ps(0xffff, hi, _mm512_maskz_max_ps(0xffff, lo, v));
  }
  static T round_to_half(T v) {
    return _mm512_maskz_cvtph_ps(0xffff, _mm512_maskz_cvtps_ph(0xffff, v, _MM_FROUND_TO_NEAREST_INT));
  }
  static Shift shift_by(size_t n) {
    const __m512i lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    return {_mm512_sub_epi32(lanes, _mm512_set1_epi32(int(n))), Mask(~first(n))};
  }
  static T shift_up(T v, const Shift& s) { return _mm512_maskz_permutexvar_ps(s.keep, s.index, v); }
  static constexpr bool kPermute2 = true;
  using Index = __m512i;
  static Index load_index(const int32_t* p) { return _mm512_loadu_si512(p); }
  static Mask mask_bits(uint32_t bits) { return Mask(bits); }
  static T permute2(T a, Index i, T b, Mask m) { return _mm512_maskz_permutex2var_ps(m, a, i, b); }
  template <int kN>
  static T shift_down(T a, T b) {
    return _mm512_castsi512_ps(_mm512_maskz_alignr_epi32(0xffff, _mm512_castps_si512(b), _mm512_castps_si512(a), kN));
  }
  static void deinterleave(T a, T b, T& even, T& odd) {
    const __m512i evens = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    even = _mm512_permutex2var_ps(a, evens, b);
    odd = _mm512_permutex2var_ps(a, _mm512_add_epi32(evens, _mm512_set1_epi32(1)), b);
  }
};
#endif

}  // namespace
