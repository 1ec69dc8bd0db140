// The tiled-product driver: every convolution, and every GEMM whose A rows are read in place, runs
// here, whatever its kernel kind (float32 x float32
// into float32; uint8 x int8 or int16 x int16 into int32, then requantized or dequantized). The
// output is, per group, [rows][columns] in tiles of MR rows against NR-column panels of the packed
// B. The driver cuts the work into items (a group of tiles x a chunk of panels), shares them over
// the pool and runs each item's loop nest; the kind finds a tile's A rows (in place, or staged),
// runs its microkernel and its epilogue.
#pragma once
#include <algorithm>
#include <cstddef>

#include "core/thread_pool.h"

namespace webnn {

// A product's shape, and what its kernel kind's operands cost in cache.
struct TiledProduct {
  size_t groups = 1;
  size_t rows = 0;         // output rows (pixels) per group
  size_t mr = 1;           // rows per tile
  size_t panels = 0;       // B panels per group
  size_t tile_bytes = 0;   // the A bytes one tile reads (all of K)
  size_t panel_bytes = 0;  // one packed B panel
  size_t a_bytes = 0;      // all of A, as the kind reads it (the input in place, or staged rows)
  size_t work = 0;         // multiply-adds: a small product runs on the calling thread
};

// How a kind wants its work cut.
struct TilePolicy {
  size_t block_bytes;       // an item's A rows, kept in L2 while its panels pass
  size_t max_tiles;         // the most tiles per item
  size_t chunk_bytes;       // a chunk of B panels, kept in L2 while the tiles pass (0: B whole)
  size_t items_per_thread;  // with threads: about this many items each (they take contiguous ranges)
  bool panels_first = false;  // with threads, split the panels before the tiles (A is read in place, B is large)
};

// One item: tiles [t0, t1) of group `group` against its panels [p0, p1).
struct TileItem {
  size_t group, t0, t1, p0, p1;
};

struct TilePlan {
  size_t groups = 1, tiles = 0, tiles_per_item = 1, tile_groups = 0;
  size_t panels = 0, chunk_panels = 1, chunks = 0;
  // Consecutive items share a group of tiles (A stays in cache; B is read once per tile group), else
  // a chunk of panels (A is read once per chunk).
  bool group_major = true;
  size_t threads = 1;
  size_t items() const { return groups * chunks * tile_groups; }
  TileItem item(size_t index) const;
};

TilePlan plan_tiles(const TiledProduct& product, const TilePolicy& policy, ThreadPool* pool);

// Runs every item of `plan`. A kind has:
//   Scratch scratch() const;                                   per thread and call
//   bool panels_outer() const;                                 the loop order within an item
//   size_t k_blocks() const;                                   K blocks (panels outer only; else 1)
//   void begin_item(Scratch&, const TileItem&) const;          (stage the item's A rows)
//   void begin_k_block(Scratch&, const TileItem&, size_t kb) const;  (panels outer)
//   void begin_tile(Scratch&, const TileItem&, size_t t) const;  (tiles outer: find the tile's rows)
//   void tile(Scratch&, const TileItem&, size_t t, size_t panel, size_t kb) const;  microkernel, epilogue
//   void end_tile(Scratch&, const TileItem&, size_t t) const;    (tiles outer: e.g. the activation)
//   void end_item(Scratch&, const TileItem&) const;
template <class Kind>
void run_tiled(const TilePlan& plan, ThreadPool* pool, const Kind& kind) {
  auto run = [&](size_t begin, size_t end) {
    auto scratch = kind.scratch();
    for (size_t index = begin; index < end; ++index) {
      const TileItem item = plan.item(index);
      kind.begin_item(scratch, item);
      if (kind.panels_outer()) {
        for (size_t kb = 0; kb < kind.k_blocks(); ++kb) {
          kind.begin_k_block(scratch, item, kb);
          for (size_t panel = item.p0; panel < item.p1; ++panel)  // the panel stays in L1 while tiles pass
            for (size_t t = item.t0; t < item.t1; ++t) kind.tile(scratch, item, t, panel, kb);
        }
      } else {
        for (size_t t = item.t0; t < item.t1; ++t) {  // the tile's rows stay in L1 while panels pass
          kind.begin_tile(scratch, item, t);
          for (size_t panel = item.p0; panel < item.p1; ++panel) kind.tile(scratch, item, t, panel, 0);
          kind.end_tile(scratch, item, t);
        }
      }
      kind.end_item(scratch, item);
    }
  };
  const size_t items = plan.items();
  if (pool && plan.threads > 1 && items > 1) pool->parallel_for(items, 1, run);
  else run(0, items);
}

}  // namespace webnn
