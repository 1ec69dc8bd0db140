// The uint8 x int8 microkernel on AMX (built with the avx512 flags, -mavx512vnni, -mamx-tile and
// -mamx-int8): tdpbusd multiplies a 16-row x 64-byte tile of A by a 16-row x 16-column tile of B
// words into 16 x 16 int32 sums, exactly (no saturation). A 32 x 32 output tile is four such sums
// (tiles 0-3), fed by two A tiles (4, 5) and two B tiles (6, 7) per 16 K steps; the last K steps
// (fewer than 16) run on AVX-512 VNNI over the stored sums.
#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>

#include <cstring>

#include "kernels/int8/int8_gemm.h"

namespace webnn {

namespace {

constexpr size_t kMr = 32, kNr = 32, kTileSteps = 16;  // K steps (words) per tile row: 64 bytes

// ldtilecfg's 64-byte operand (palette 1): eight tiles of 16 rows x 64 bytes.
struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t bytes_per_row[16] = {};
  uint8_t rows[16] = {};
};
static_assert(sizeof(TileConfig) == 64);

TileConfig our_config() {
  TileConfig c;
  for (size_t t = 0; t < 8; ++t) c.bytes_per_row[t] = 64, c.rows[t] = 16;
  return c;
}
const TileConfig kConfig = our_config();

// The tile configuration is per thread and anything on the thread may change it (another AMX user,
// such as ONNX Runtime on the caller's thread): it is read back (cheaper than loading it) and loaded
// when it differs.
inline void configure_tiles() {
  TileConfig current;
  _tile_storeconfig(&current);
  if (std::memcmp(&current, &kConfig, sizeof(TileConfig)) != 0) _tile_loadconfig(&kConfig);
}

void u8s8_gemm_amx(size_t k_steps, const uint32_t* a, size_t a_stride, const uint32_t* b, int32_t* tile) {
  configure_tiles();
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  const size_t whole = k_steps / kTileSteps * kTileSteps, a_bytes = a_stride * sizeof(uint32_t);
  const uint32_t* a_low = a + kTileSteps * a_stride;  // rows 16-31
  for (size_t k = 0; k < whole; k += kTileSteps) {
    _tile_loadd(4, a + k, a_bytes);
    _tile_loadd(5, a_low + k, a_bytes);
    _tile_loadd(6, b + k * kNr, kNr * sizeof(uint32_t));       // columns 0-15
    _tile_loadd(7, b + k * kNr + 16, kNr * sizeof(uint32_t));  // columns 16-31
    _tile_dpbusd(0, 4, 6);
    _tile_dpbusd(1, 4, 7);
    _tile_dpbusd(2, 5, 6);
    _tile_dpbusd(3, 5, 7);
  }
  constexpr size_t kLd = kNr * sizeof(int32_t);
  _tile_stored(0, tile, kLd);
  _tile_stored(1, tile + 16, kLd);
  _tile_stored(2, tile + 16 * kNr, kLd);
  _tile_stored(3, tile + 16 * kNr + 16, kLd);
  if (whole == k_steps) return;
  for (size_t i = 0; i < kMr; ++i) {
    int32_t* row = tile + i * kNr;
    __m512i c0 = _mm512_loadu_si512(row), c1 = _mm512_loadu_si512(row + 16);
    for (size_t k = whole; k < k_steps; ++k) {
      const __m512i word = _mm512_set1_epi32(int32_t(a[i * a_stride + k]));
      c0 = _mm512_dpbusd_epi32(c0, word, _mm512_load_si512(b + k * kNr));
      c1 = _mm512_dpbusd_epi32(c1, word, _mm512_load_si512(b + k * kNr + 16));
    }
    _mm512_storeu_si512(row, c0);
    _mm512_storeu_si512(row + 16, c1);
  }
}

}  // namespace

Int8GemmUkernel u8s8_gemm_32x32_amx() {
  return Int8GemmUkernel{u8s8_gemm_amx, kMr, kNr, Int8Dot::kU8S8x4, "u8s8_gemm_32x32_amx", kTileSteps};
}

}  // namespace webnn
#endif
