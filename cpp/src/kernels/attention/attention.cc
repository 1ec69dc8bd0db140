// The fused attention kernel: per batch item, tiles of query rows run Q x Kt on the GEMM
// microkernel (the keys packed once, scaled, the mask added in the tile epilogue), the softmax on the
// tile's score rows while they are in L1, then the rows times the packed values.
#include "kernels/attention/attention.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>

#include "core/thread_pool.h"
#include "kernels/gemm/gemm.h"
#include "kernels/platform.h"
#include "kernels/reduce/reduce.h"

namespace webnn {

namespace {

// At least `count` floats of a thread's buffer, 64-byte aligned (the microkernel's panel loads are).
float* aligned_scratch(BufferPtr& buffer, size_t count) {
  if (!buffer || buffer->size() < count * sizeof(float)) buffer = std::make_shared<AlignedBuffer>(count * sizeof(float));
  return reinterpret_cast<float*>(buffer->data());
}

// rows x cols of a strided matrix, times `scale`, as nr-column panels ([rows][nr] each, zero padded).
void pack_panels(const float* src, size_t row_stride, size_t col_stride, size_t rows, size_t cols, size_t nr,
                 float scale, float* dst) {
  for (size_t n0 = 0; n0 < cols; n0 += nr, dst += rows * nr) {
    const size_t width = std::min(nr, cols - n0);
    if (col_stride == 1) {
      for (size_t r = 0; r < rows; ++r) {
        const float* s = src + r * row_stride + n0;
        float* d = dst + r * nr;
        for (size_t j = 0; j < width; ++j) d[j] = s[j] * scale;
        std::fill(d + width, d + nr, 0.0f);
      }
      continue;
    }
    for (size_t r = 0; r < rows; ++r) std::fill(dst + r * nr + width, dst + (r + 1) * nr, 0.0f);
    for (size_t j = 0; j < width; ++j) {  // down each source column: contiguous when row_stride is 1
      const float* s = src + (n0 + j) * col_stride;
      for (size_t r = 0; r < rows; ++r) dst[r * nr + j] = s[r * row_stride] * scale;
    }
  }
}

}  // namespace

Kernel make_attention_kernel(const AttentionParams& params) {
  return [p = params](const KernelArgs& args) {
    const float* const query = static_cast<const float*>(args.inputs[0]);
    const float* const keys_t = static_cast<const float*>(args.inputs[1]);
    const float* const values = static_cast<const float*>(args.inputs[2]);
    const float* const mask = p.has_mask ? static_cast<const float*>(args.inputs[3]) : nullptr;
    float* const out = static_cast<float*>(args.outputs[0]);
    if (p.batch == 0 || p.queries == 0 || p.value_depth == 0) return;
    const GemmUkernel uk = kernel_table().gemm_f32;
    const SoftmaxRowsFn softmax = kernel_table().reduce->softmax_rows(DataType::kFloat32);
    const size_t mr = uk.mr, nr = uk.nr;
    if (mr > kGemmMaxTileRows)
      throw Error(ErrorKind::kUnknownError, "internal: the microkernel has more rows than supported");
    const size_t tiles = (p.queries + mr - 1) / mr;
    const size_t key_panels = (p.keys + nr - 1) / nr, value_panels = (p.value_depth + nr - 1) / nr;
    const size_t score_ld = spread_row_stride(p.keys, mr);
    const size_t work = p.batch * p.queries * p.keys * (p.depth + p.value_depth);
    const size_t threads = args.pool && work >= (size_t(1) << 18) ? size_t(args.pool->max_threads()) : 1;
    // Items are a batch item's row tiles in groups, enough for each thread to get several; a thread
    // packs the keys and values again only when its next item is another batch item's.
    size_t groups = threads > 1 ? std::clamp<size_t>((4 * threads + p.batch - 1) / p.batch, 1, tiles) : 1;
    const size_t group_tiles = (tiles + groups - 1) / groups;
    groups = (tiles + group_tiles - 1) / group_tiles;
    const bool query_in_place = p.query.col_stride == 1;
    const float lowest = -std::numeric_limits<float>::infinity(), highest = std::numeric_limits<float>::infinity();
    auto run = [&](size_t begin, size_t end) {
      thread_local BufferPtr packed_keys_buffer, packed_values_buffer, scores_buffer, query_buffer;
      float* const packed_keys = aligned_scratch(packed_keys_buffer, key_panels * nr * p.depth);
      float* const packed_values = aligned_scratch(packed_values_buffer, value_panels * nr * p.keys);
      float* const scores = aligned_scratch(scores_buffer, mr * score_ld);
      float* const query_rows = query_in_place ? nullptr : aligned_scratch(query_buffer, mr * p.depth);
      const float* rows[kGemmMaxTileRows];
      size_t packed_for = SIZE_MAX;
      for (size_t item = begin; item < end; ++item) {
        const size_t b = item / groups, t0 = item % groups * group_tiles, t1 = std::min(tiles, t0 + group_tiles);
        if (b != packed_for) {
          pack_panels(keys_t + p.keys_t.batch_offsets[b], p.keys_t.row_stride, p.keys_t.col_stride, p.depth, p.keys,
                      nr, p.scale, packed_keys);
          pack_panels(values + p.values.batch_offsets[b], p.values.row_stride, p.values.col_stride, p.keys,
                      p.value_depth, nr, 1.0f, packed_values);
          packed_for = b;
        }
        const float* const q = query + p.query.batch_offsets[b];
        const float* const m = mask ? mask + p.mask.batch_offsets[b] : nullptr;
        float* const o = out + b * p.queries * p.value_depth;
        for (size_t t = t0; t < t1; ++t) {
          const size_t row0 = t * mr, count = std::min(mr, p.queries - row0);
          for (size_t i = 0; i < count; ++i) {
            const float* src = q + (row0 + i) * p.query.row_stride;
            if (query_in_place) {
              rows[i] = src;
              continue;
            }
            float* copy = query_rows + i * p.depth;
            for (size_t k = 0; k < p.depth; ++k) copy[k] = src[k * p.query.col_stride];
            rows[i] = copy;
          }
          for (size_t panel = 0; panel < key_panels; ++panel) {
            const size_t n0 = panel * nr, cols = std::min(nr, p.keys - n0);
            const TileEpilogue ep{nullptr, false, lowest, highest, m ? m + row0 * p.mask.row_stride + n0 : nullptr,
                                      p.mask.row_stride};
            uk.igemm(count, cols, 1, p.depth, rows, packed_keys + panel * p.depth * nr, scores + n0, score_ld, false,
                     m ? &ep : nullptr);
          }
          softmax(scores, scores, count, p.keys, score_ld);
          for (size_t i = 0; i < count; ++i) rows[i] = scores + i * score_ld;
          for (size_t panel = 0; panel < value_panels; ++panel) {
            const size_t n0 = panel * nr, cols = std::min(nr, p.value_depth - n0);
            uk.igemm(count, cols, 1, p.keys, rows, packed_values + panel * p.keys * nr, o + row0 * p.value_depth + n0,
                     p.value_depth, false, nullptr);
          }
        }
      }
    };
    if (threads > 1 && p.batch * groups > 1) args.pool->parallel_for(p.batch * groups, 1, run);
    else run(0, p.batch * groups);
  };
}

}  // namespace webnn
