// The GEMM driver: cache blocking, packing and 2-D threading around the active microkernel.
#include <algorithm>
#include <cstring>

#include "kernels/gemm/gemm.h"
#include "kernels/gemm/tiled_product.h"
#include "kernels/platform.h"
#include "core/shared_constants.h"
#include "core/thread_pool.h"

namespace webnn {

namespace {

// Cache blocks (measured on Zen 5: 1024^3 and the ResNet-50 layers are flat within noise around these).
constexpr size_t kKc = 384;        // K block
constexpr size_t kMcTarget = 112;  // M block: the packed A block (kMcTarget x kKc) stays in L2
constexpr size_t kInPlaceRowBytes = 256 * 1024;  // A rows read in place per group of row tiles
constexpr size_t kNcTarget = 384;  // N block of packed-A GEMMs: the packed B block stays in L2

constexpr size_t kL1Sets = 64, kL1LineBytes = 64, kL1Ways = 8;

// The most of these rows (at byte offsets offset(i)) that share one L1 set.
template <class Offset>
size_t rows_per_l1_set(size_t rows, const Offset& offset) {
  size_t in_set[kL1Sets] = {}, most = 0;
  for (size_t i = 0; i < rows; ++i) most = std::max(most, ++in_set[offset(i) / kL1LineBytes % kL1Sets]);
  return most;
}

BufferPtr float_buffer(size_t count) { return std::make_shared<AlignedBuffer>(count * sizeof(float)); }

// Per-thread packing buffers (slot 0: A block, 1: B block, 2: a whole operand packed by the calling
// thread for the pool), grown on demand and kept across calls (no allocation per GEMM).
float* thread_scratch(size_t slot, size_t count) {
  thread_local BufferPtr buffers[3];  // A block, B block, a whole packed operand
  BufferPtr& buffer = buffers[slot];
  if (!buffer || buffer->size() < count * sizeof(float)) buffer = float_buffer(count);
  return reinterpret_cast<float*>(buffer->data());
}

// Packs rows [m0, m0+mc) x cols [k0, k0+kc) of A into MR-row panels ([kc][MR] each, zero padded).
void pack_a(const float* A, size_t lda, bool transposed, size_t M, size_t m0, size_t mc, size_t k0, size_t kc,
            size_t mr, float* out) {
  for (size_t r0 = 0; r0 < mc; r0 += mr) {
    const size_t rows = std::min(mr, std::min(mc - r0, M - (m0 + r0)));
    float* panel = out + r0 * kc;
    if (!transposed) {
      for (size_t i = 0; i < rows; ++i) {
        const float* src = A + (m0 + r0 + i) * lda + k0;
        for (size_t k = 0; k < kc; ++k) panel[k * mr + i] = src[k];
      }
    } else {
      for (size_t k = 0; k < kc; ++k) {
        const float* src = A + (k0 + k) * lda + m0 + r0;
        for (size_t i = 0; i < rows; ++i) panel[k * mr + i] = src[i];
      }
    }
    for (size_t i = rows; i < mr; ++i)
      for (size_t k = 0; k < kc; ++k) panel[k * mr + i] = 0.0f;
  }
}

// Packs a whole operand of `extent` rows or columns into `width`-wide panels, one (K block, panel)
// item at a time over the pool: per K block, [panels][kc][width], in the calling thread's scratch.
// pack(k0, kc, x0, count, dst) packs one panel.
const float* pack_whole(size_t K, size_t extent, size_t width, ThreadPool* pool,
                        const std::function<void(size_t, size_t, size_t, size_t, float*)>& pack) {
  const size_t panels = (extent + width - 1) / width, padded = panels * width, k_blocks = (K + kKc - 1) / kKc;
  float* packed = thread_scratch(2, K * padded);
  pool->parallel_for(k_blocks * panels, 1, [&](size_t begin, size_t end) {
    for (size_t item = begin; item < end; ++item) {
      const size_t k0 = item / panels * kKc, x0 = item % panels * width, kc = std::min(kKc, K - k0);
      pack(k0, kc, x0, std::min(width, extent - x0), packed + k0 * padded + x0 * kc);
    }
  });
  return packed;
}

// The epilogue of the tile at (row, n0) when its K loop ends; null when nothing applies.
// A rounding-only activation (float16 results held in float32) runs here, in registers.
const TileEpilogue* tile_epilogue(const GemmEpilogue& epilogue, size_t row, size_t n0, TileEpilogue& out) {
  const bool round = epilogue.activation.only_rounds();
  if (!epilogue.active() && !round) return nullptr;
  out = TileEpilogue{nullptr, epilogue.bias_per_row, epilogue.min, epilogue.max, nullptr, epilogue.residual_ld, round};
  if (epilogue.bias) out.bias = epilogue.bias + (epilogue.bias_per_row ? row : n0);
  if (epilogue.residual) out.residual = epilogue.residual + row * epilogue.residual_ld + n0;
  return &out;
}

// The epilogue's activation over a finished tile of C, while it is in L1 (`tile_rounded`: its
// epilogue rounded, and the activation does nothing else).
void activate_tile(const GemmEpilogue& epilogue, float* c, size_t ldc, size_t rows, size_t cols,
                   bool tile_rounded = false) {
  if (!epilogue.activation || tile_rounded) return;
  for (size_t i = 0; i < rows; ++i) epilogue.activation(c + i * ldc, cols);
}

// The blocked GEMM, one loop nest for either operand packed ahead: the `fixed` operand is already
// in panels (A's MR-row panels, or B's NR-column panels), the `streamed` one is packed a cache
// block at a time by pack(k0, kc, x0, count, dst). tile(fixed panel, streamed offset, streamed
// panel, k0, kc) runs the microkernel on one tile.
struct BlockedGemm {
  size_t K;
  size_t fixed_panels;
  size_t streamed_extent, streamed_width;  // M and MR, or N and NR
  size_t block_target;                     // streamed elements per block that keep the packed block in L2
  size_t scratch_slot;
  const std::function<void(size_t k0, size_t kc, size_t x0, size_t count, float* dst)>& pack;
};

template <class Tile>
void gemm_blocked(const BlockedGemm& g, size_t threads, ThreadPool* pool, const Tile& tile) {
  const size_t K = g.K, width = g.streamed_width, extent = g.streamed_extent;
  const size_t streamed_panels = (extent + width - 1) / width;
  // Streamed [x0, x0 + count) (packed at block) against fixed panels [p_begin, p_end).
  auto multiply_block = [&](const float* block, size_t x0, size_t count, size_t k0, size_t kc, size_t p_begin,
                            size_t p_end) {
    for (size_t p = p_begin; p < p_end; ++p)
      for (size_t j0 = 0; j0 < count; j0 += width) tile(p, x0 + j0, block + j0 * kc, k0, kc);
  };
  size_t blocks = (extent + g.block_target - 1) / g.block_target;  // blocks that fit L2
  if (threads > 1 && (streamed_panels < 4 * threads || (blocks < 4 * threads && g.fixed_panels >= 2 * threads))) {
    // Too few cache-sized blocks to share out: pack all of the streamed operand once (in parallel),
    // then give the threads tiles of (L2-sized streamed block) x (a group of fixed panels), each
    // running all its K blocks: one parallel region, and each thread reads the packed operand about
    // once, from L3 into its L2, instead of once per small block or fixed panel.
    const size_t padded = streamed_panels * width;
    const float* packed = pack_whole(K, extent, width, pool, g.pack);
    const size_t block_panels = (streamed_panels + blocks - 1) / blocks;
    blocks = (streamed_panels + block_panels - 1) / block_panels;
    const size_t groups = std::min(g.fixed_panels, (2 * threads + blocks - 1) / blocks);
    const size_t group_panels = (g.fixed_panels + groups - 1) / groups;
    const size_t tiles = blocks * ((g.fixed_panels + group_panels - 1) / group_panels);
    pool->parallel_for(tiles, 1, [&](size_t begin, size_t end) {
      for (size_t t = begin; t < end; ++t) {
        const size_t x0 = t % blocks * block_panels * width, count = std::min(block_panels * width, extent - x0);
        const size_t p0 = t / blocks * group_panels, p1 = std::min(g.fixed_panels, p0 + group_panels);
        for (size_t k0 = 0; k0 < K; k0 += kKc) {
          const size_t kc = std::min(kKc, K - k0);
          multiply_block(packed + k0 * padded + x0 * kc, x0, count, k0, kc, p0, p1);
        }
      }
    });
    return;
  }
  // With threads, at least 4 blocks per thread and a multiple of the threads.
  if (threads > 1) blocks = std::min(streamed_panels, (std::max(blocks, 4 * threads) + threads - 1) / threads * threads);
  const size_t block_size = ((extent + blocks - 1) / blocks + width - 1) / width * width;
  blocks = (extent + block_size - 1) / block_size;
  auto run_blocks = [&](size_t begin, size_t end) {
    float* block = thread_scratch(g.scratch_slot, block_size * kKc);
    for (size_t b = begin; b < end; ++b) {
      const size_t x0 = b * block_size, count = std::min(block_size, extent - x0);
      for (size_t k0 = 0; k0 < K; k0 += kKc) {
        const size_t kc = std::min(kKc, K - k0);
        g.pack(k0, kc, x0, count, block);
        multiply_block(block, x0, count, k0, kc, 0, g.fixed_panels);
      }
    }
  };
  if (threads > 1 && blocks > 1) pool->parallel_for(blocks, 1, run_blocks);
  else run_blocks(0, blocks);
}

// The float32 GEMM kind of the tiled product with A read in place (no packing) through row
// pointers, by the indirect microkernel with one tap. An item is a group of row tiles whose K block
// stays in L2 x a chunk of B panels; each K block of a panel stays in L1 while the group's tiles
// pass over it. Rows that would evict each other in L1 are read from a copy of the group's K block.
class F32GemmRowsInPlace {
 public:
  bool panels_outer() const { return true; }
  struct Scratch {
    float* copies;
  };

  F32GemmRowsInPlace(size_t M, size_t N, size_t K, const float* A, size_t lda, const PackedB& B, float* C, size_t ldc,
                     const GemmEpilogue& epilogue)
      : M_(M), N_(N), K_(K), A_(A), lda_(lda), B_(B), C_(C), ldc_(ldc), epilogue_(epilogue),
        uk_(kernel_table().gemm_f32) {
    if (uk_.mr > kGemmMaxTileRows)
      throw Error(ErrorKind::kUnknownError, "internal: the microkernel has more rows than supported");
    size_t offsets[kGemmMaxTileRows];
    for (size_t i = 0; i < uk_.mr; ++i) offsets[i] = i * lda * sizeof(float);
    copy_rows_ = rows_conflict_in_l1(offsets, uk_.mr);
    copy_ld_ = copy_rows_ ? spread_row_stride(std::min(K, kKc), uk_.mr) : 0;
  }

  TiledProduct product() const {
    const size_t mr = uk_.mr, nr = uk_.nr, kc = std::min(K_, kKc);
    return TiledProduct{1, M_, mr, (N_ + nr - 1) / nr, mr * kc * sizeof(float), kc * nr * sizeof(float),
                        M_ * K_ * sizeof(float), M_ * N_ * K_};
  }

  Scratch scratch() const { return Scratch{copy_rows_ ? thread_scratch(0, tiles_per_item_ * uk_.mr * copy_ld_) : nullptr}; }
  void set_plan(const TilePlan& plan) { tiles_per_item_ = plan.tiles_per_item; }
  size_t k_blocks() const { return (K_ + kKc - 1) / kKc; }

  void begin_item(Scratch&, const TileItem&) const {}
  void begin_k_block(Scratch& s, const TileItem& item, size_t kb) const {
    if (!copy_rows_) return;
    const size_t k0 = kb * kKc, kc = std::min(kKc, K_ - k0), r0 = item.t0 * uk_.mr, r1 = std::min(M_, item.t1 * uk_.mr);
    for (size_t r = r0; r < r1; ++r) std::memcpy(s.copies + (r - r0) * copy_ld_, A_ + r * lda_ + k0, kc * sizeof(float));
  }
  void begin_tile(Scratch&, const TileItem&, size_t) const {}
  void end_tile(Scratch&, const TileItem&, size_t) const {}

  void tile(Scratch& s, const TileItem& item, size_t t, size_t panel, size_t kb) const {
    const size_t mr = uk_.mr, nr = uk_.nr, k0 = kb * kKc, kc = std::min(kKc, K_ - k0);
    const size_t n0 = panel * nr, cols = std::min(nr, N_ - n0), row = t * mr, count = std::min(mr, M_ - row);
    const size_t r0 = item.t0 * mr;
    const float* rows[kGemmMaxTileRows];
    for (size_t i = 0; i < count; ++i)
      rows[i] = copy_rows_ ? s.copies + (row + i - r0) * copy_ld_ : A_ + (row + i) * lda_ + k0;
    TileEpilogue ep;
    uk_.igemm(count, cols, 1, kc, rows, B_.panel(panel) + k0 * nr, C_ + row * ldc_ + n0, ldc_, k0 > 0,
              k0 + kc == K_ ? tile_epilogue(epilogue_, row, n0, ep) : nullptr);
  }

  // The activation once the item's tiles are done, over rows as wide as its panels: a tile's
  // 16-column rows are too short to overlap the activation's long dependency chains (GELU over
  // 6 x 16 tiles took 1.5-2x its time over whole rows). (Rounding: in the tiles.)
  void end_item(Scratch&, const TileItem& item) const {
    if (!epilogue_.activation || epilogue_.activation.only_rounds()) return;
    const size_t mr = uk_.mr, nr = uk_.nr, n0 = item.p0 * nr, n1 = std::min(N_, item.p1 * nr);
    for (size_t r = item.t0 * mr; r < std::min(M_, item.t1 * mr); ++r) epilogue_.activation(C_ + r * ldc_ + n0, n1 - n0);
  }

 private:
  size_t M_, N_, K_;
  const float* A_;
  size_t lda_;
  const PackedB& B_;
  float* C_;
  size_t ldc_;
  const GemmEpilogue& epilogue_;
  const GemmUkernel uk_;
  bool copy_rows_ = false;
  size_t copy_ld_ = 0, tiles_per_item_ = 1;
};

// Row groups whose K block stays in L2 while every B panel (often weights read from memory) streams
// past them once; with threads, B is split first, to about 4 items per thread.
constexpr TilePolicy kF32GemmRowsPolicy{kInPlaceRowBytes, ~size_t(0), 0, 4, true};

void gemm_rows_in_place(size_t M, size_t N, size_t K, const float* A, size_t lda, const PackedB& B, float* C,
                        size_t ldc, const GemmEpilogue& epilogue, ThreadPool* pool) {
  F32GemmRowsInPlace kind(M, N, K, A, lda, B, C, ldc, epilogue);
  const TilePlan plan = plan_tiles(kind.product(), kF32GemmRowsPolicy, pool);
  kind.set_plan(plan);
  run_tiled(plan, pool, kind);
}

}  // namespace

bool rows_conflict_in_l1(const size_t* byte_offsets, size_t rows) {
  return rows_per_l1_set(rows, [&](size_t i) { return byte_offsets[i]; }) > kL1Ways;
}

size_t spread_row_stride(size_t length, size_t rows) {
  size_t stride = (length + 15) / 16 * 16;
  while (rows_per_l1_set(rows, [&](size_t i) { return i * stride * sizeof(float); }) > 2) stride += 16;
  return stride;
}

size_t gemm_panel_width() { return kernel_table().gemm_f32.nr; }

void pack_b_f32_into(size_t K, size_t N, const float* B, size_t ldb, bool transposed, PackedB& packed,
                     size_t taps) {
  if (taps == 0 || K % taps != 0) throw Error(ErrorKind::kUnknownError, "internal: K is not a multiple of the taps");
  packed.K = K;
  packed.N = N;
  packed.nr = kernel_table().gemm_f32.nr;
  const size_t nr = packed.nr, panels = (N + nr - 1) / nr;
  if (!packed.data || packed.data->size() < panels * K * nr * sizeof(float)) packed.data = float_buffer(panels * K * nr);
  float* out = reinterpret_cast<float*>(packed.data->data());
  for (size_t p = 0; p < panels; ++p) {
    const size_t n0 = p * nr, cols = std::min(nr, N - n0);
    float* panel = out + p * K * nr;
    if (cols < nr) std::memset(panel, 0, K * nr * sizeof(float));  // padding columns are 0
    if (!transposed) {
      for (size_t k = 0; k < K; ++k) std::memcpy(panel + k * nr, B + k * ldb + n0, cols * sizeof(float));
    } else {
      // K blocks of 64 panel rows (8 KiB with 32 columns): the column-by-column writes stay in L1.
      // Panel row k = tap * inner + i reads the source row at i * taps + tap.
      constexpr size_t kBlock = 64;
      const size_t inner = K / taps;
      for (size_t k0 = 0; k0 < K; k0 += kBlock) {
        const size_t k1 = std::min(K, k0 + kBlock);
        for (size_t j = 0; j < cols; ++j) {
          const float* src = B + (n0 + j) * ldb;
          if (taps == 1) {
            for (size_t k = k0; k < k1; ++k) panel[k * nr + j] = src[k];
            continue;
          }
          for (size_t k = k0, tap = k0 / inner, i = k0 % inner; k < k1; ++k) {
            panel[k * nr + j] = src[i * taps + tap];
            if (++i == inner) i = 0, ++tap;
          }
        }
      }
    }
  }
}

PackedB pack_b_f32(size_t K, size_t N, const float* B, size_t ldb, bool transposed, size_t taps) {
  PackedB packed;
  pack_b_f32_into(K, N, B, ldb, transposed, packed, taps);
  return packed;
}

PackedA pack_a_f32(size_t M, size_t K, const float* A, size_t lda) {
  PackedA packed;
  packed.M = M;
  packed.K = K;
  packed.mr = kernel_table().gemm_f32.mr;
  const size_t panels = (M + packed.mr - 1) / packed.mr;
  packed.panel_rows = panels ? (M + panels - 1) / panels : packed.mr;
  packed.data = float_buffer(panels * K * packed.mr);  // zero-filled: rows past panel_rows stay 0
  float* out = reinterpret_cast<float*>(packed.data->data());
  for (size_t p = 0; p < panels; ++p) {
    const size_t row0 = p * packed.panel_rows, rows = std::min(packed.panel_rows, M - row0);
    float* panel = out + p * K * packed.mr;
    for (size_t i = 0; i < rows; ++i)
      for (size_t k = 0; k < K; ++k) panel[k * packed.mr + i] = A[(row0 + i) * lda + k];
  }
  return packed;
}

PackedB share_packed(PackedB packed) {
  packed.data = share_constant(packed.data);
  return packed;
}

PackedA share_packed(PackedA packed) {
  packed.data = share_constant(packed.data);
  return packed;
}

void pack_b_block_rows(const float* B, size_t ldb, size_t k0, size_t kc, size_t n0, size_t nc, float* dst) {
  const size_t nr = kernel_table().gemm_f32.nr;
  for (size_t j0 = 0; j0 < nc; j0 += nr, dst += kc * nr) {
    const size_t cols = std::min(nr, nc - j0);
    const float* src = B + k0 * ldb + n0 + j0;
    for (size_t k = 0; k < kc; ++k, src += ldb) {
      float* row = dst + k * nr;
      std::memcpy(row, src, cols * sizeof(float));
      if (cols < nr) std::memset(row + cols, 0, (nr - cols) * sizeof(float));
    }
  }
}

void gemm_f32_packed_a(size_t M, size_t N, size_t K, const PackedA& A, const BBlockPacker& pack_b, float* C,
                       size_t ldc, const GemmEpilogue& epilogue, ThreadPool* pool) {
  const GemmUkernel uk = kernel_table().gemm_f32;
  const size_t mr = uk.mr, nr = uk.nr;
  if (A.mr != mr) throw Error(ErrorKind::kUnknownError, "internal: A was packed for another microkernel");
  if (M == 0 || N == 0) return;
  const size_t threads = pool && M * N * K >= (size_t(1) << 18) ? size_t(pool->max_threads()) : 1;
  const size_t panel_rows = A.panel_rows;
  const BlockedGemm g{K, (M + panel_rows - 1) / panel_rows, N, nr, kNcTarget, 1, pack_b};
  gemm_blocked(g, threads, pool, [&](size_t ap, size_t n0, const float* b_panel, size_t k0, size_t kc) {
    TileEpilogue ep;
    const size_t row = ap * panel_rows, rows = std::min(panel_rows, M - row), cols = std::min(nr, N - n0);
    const TileEpilogue* tile_ep = k0 + kc == K ? tile_epilogue(epilogue, row, n0, ep) : nullptr;
    uk.fn(rows, cols, kc, A.panel(ap) + k0 * mr, b_panel, C + row * ldc + n0, ldc, k0 > 0, tile_ep);
    if (k0 + kc == K) activate_tile(epilogue, C + row * ldc + n0, ldc, rows, cols, tile_ep && tile_ep->round_to_half);
  });
}

void gemm_f32_packed(size_t M, size_t N, size_t K, const float* A, size_t lda, bool transposed_a, const PackedB& B,
                     float* C, size_t ldc, const GemmEpilogue& epilogue, ThreadPool* pool) {
  const GemmUkernel uk = kernel_table().gemm_f32;
  const size_t mr = uk.mr, nr = uk.nr;
  if (B.nr != nr) throw Error(ErrorKind::kUnknownError, "internal: B was packed for another microkernel");
  if (M == 0 || N == 0) return;
  const size_t threads_available = pool ? size_t(pool->max_threads()) : 1;
  if (M <= kGemvMaxRows && !transposed_a) {
    // Small M: stream each B panel once, no A packing (GEMV when M = 1).
    const size_t panels = (N + nr - 1) / nr;
    auto run_panels = [&](size_t begin, size_t end) {
      alignas(64) float tile[kGemvMaxRows * 32];
      for (size_t p = begin; p < end; ++p) {
        const size_t n0 = p * nr, cols = std::min(nr, N - n0);
        uk.gemv(M, K, A, lda, B.panel(p), tile, nr);
        for (size_t i = 0; i < M; ++i) {
          float* c = C + i * ldc + n0;
          for (size_t j = 0; j < cols; ++j) {
            float v = tile[i * nr + j];
            if (epilogue.bias) v += epilogue.bias[epilogue.bias_per_row ? i : n0 + j];
            if (epilogue.residual) v += epilogue.residual[i * epilogue.residual_ld + n0 + j];
            c[j] = std::min(std::max(v, epilogue.min), epilogue.max);  // keeps NaN
          }
        }
        activate_tile(epilogue, C + n0, ldc, M, cols);
      }
    };
    const size_t grain = std::max<size_t>(1, (size_t(1) << 16) / std::max<size_t>(1, K * nr * M));
    if (pool && threads_available > 1 && panels > grain) pool->parallel_for(panels, grain, run_panels);
    else run_panels(0, panels);
    return;
  }
  if (!transposed_a) return gemm_rows_in_place(M, N, K, A, lda, B, C, ldc, epilogue, pool);
  gemm_f32_packed(
      M, N, K,
      [&](size_t m0, size_t mc, size_t k0, size_t kc, float* dst) {
        pack_a(A, lda, transposed_a, M, m0, mc, k0, kc, mr, dst);
      },
      B, C, ldc, epilogue, pool);
}

void gemm_f32_packed(size_t M, size_t N, size_t K, const ABlockPacker& pack_a_block, const PackedB& B, float* C,
                     size_t ldc, const GemmEpilogue& epilogue, ThreadPool* pool) {
  const GemmUkernel uk = kernel_table().gemm_f32;
  const size_t mr = uk.mr, nr = uk.nr;
  if (B.nr != nr) throw Error(ErrorKind::kUnknownError, "internal: B was packed for another microkernel");
  if (M == 0 || N == 0) return;
  const size_t threads = pool && M * N * K >= (size_t(1) << 18) ? size_t(pool->max_threads()) : 1;
  const std::function<void(size_t, size_t, size_t, size_t, float*)> pack_a =
      [&](size_t k0, size_t kc, size_t m0, size_t mc, float* dst) { pack_a_block(m0, mc, k0, kc, dst); };
  const BlockedGemm g{K, (N + nr - 1) / nr, M, mr, kMcTarget, 0, pack_a};
  gemm_blocked(g, threads, pool, [&](size_t p, size_t row, const float* a_panel, size_t k0, size_t kc) {
    TileEpilogue ep;
    const size_t n0 = p * nr, cols = std::min(nr, N - n0), rows = std::min(mr, M - row);
    const TileEpilogue* tile_ep = k0 + kc == K ? tile_epilogue(epilogue, row, n0, ep) : nullptr;
    uk.fn(rows, cols, kc, a_panel, B.panel(p) + k0 * nr, C + row * ldc + n0, ldc, k0 > 0, tile_ep);
    if (k0 + kc == K) activate_tile(epilogue, C + row * ldc + n0, ldc, rows, cols, tile_ep && tile_ep->round_to_half);
  });
}

void gemm_f32(size_t M, size_t N, size_t K, const float* A, size_t lda, const float* B, size_t ldb, float* C,
              size_t ldc) {
  PackedB packed = pack_b_f32(K, N, B, ldb);
  gemm_f32_packed(M, N, K, A, lda, false, packed, C, ldc, GemmEpilogue{}, nullptr);
}

void gemm_f32_ref(size_t M, size_t N, size_t K, const float* A, size_t lda, const float* B, size_t ldb, float* C,
                  size_t ldc) {
  for (size_t i = 0; i < M; ++i) {
    float* c = C + i * ldc;
    std::memset(c, 0, N * sizeof(float));
    const float* a = A + i * lda;
    for (size_t k = 0; k < K; ++k) {
      const float aik = a[k];
      const float* b = B + k * ldb;
      for (size_t j = 0; j < N; ++j) c[j] += aik * b[j];
    }
  }
}

}  // namespace webnn
