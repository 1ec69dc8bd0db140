// The tiled-product driver's contract, over edge shapes and thread counts: every (group, tile, panel)
// of the output runs exactly once, in each kind's loop order, with every K block; items stay within
// the policy's byte budgets, and with threads there are items enough for each thread.
#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

#include "kernels/gemm/tiled_product.h"
#include "tester.h"

using namespace webnn;
using webnn_test::expect;

namespace {

// A kind that records which (group, tile, panel, K block) ran, and checks the loop's order.
template <bool kOuterPanels>
struct CountingKind {
  bool panels_outer() const { return kOuterPanels; }
  struct Scratch {
    size_t current_tile = ~size_t(0);
  };
  const TilePlan& plan;
  size_t blocks;
  std::vector<std::atomic<int>>* hits;  // [group][tile][panel][k block]
  std::atomic<int>* misordered;

  Scratch scratch() const { return {}; }
  size_t k_blocks() const { return blocks; }
  void begin_item(Scratch&, const TileItem& item) const {
    if (item.t0 >= item.t1 || item.p0 >= item.p1) misordered->fetch_add(1);
  }
  void begin_k_block(Scratch&, const TileItem&, size_t) const {}
  void begin_tile(Scratch& s, const TileItem&, size_t t) const { s.current_tile = t; }
  void tile(Scratch& s, const TileItem& item, size_t t, size_t panel, size_t kb) const {
    if (t < item.t0 || t >= item.t1 || panel < item.p0 || panel >= item.p1) misordered->fetch_add(1);
    if (!kOuterPanels && s.current_tile != t) misordered->fetch_add(1);
    (*hits)[((item.group * plan.tiles + t) * plan.panels + panel) * blocks + kb].fetch_add(1);
  }
  void end_tile(Scratch& s, const TileItem&, size_t) const { s.current_tile = ~size_t(0); }
  void end_item(Scratch&, const TileItem&) const {}
};

template <bool kOuterPanels>
void check(const TiledProduct& product, const TilePolicy& policy, ThreadPool& pool, size_t blocks) {
  const TilePlan plan = plan_tiles(product, policy, &pool);
  const std::string shape = " (groups " + std::to_string(product.groups) + ", rows " + std::to_string(product.rows) +
                            ", mr " + std::to_string(product.mr) + ", panels " + std::to_string(product.panels) +
                            ", threads " + std::to_string(pool.max_threads()) + ")";
  std::vector<std::atomic<int>> hits(product.groups * plan.tiles * plan.panels * blocks);
  std::atomic<int> misordered{0};
  run_tiled(plan, &pool, CountingKind<kOuterPanels>{plan, blocks, &hits, &misordered});
  size_t wrong = 0;
  for (auto& h : hits) wrong += h.load() != 1;
  expect(wrong == 0, std::to_string(wrong) + " (tile, panel, K block) not run exactly once" + shape);
  expect(misordered.load() == 0, "a tile ran outside its item or out of loop order" + shape);
  if (plan.tiles == 0 || plan.panels == 0) return;
  // An item's A rows stay within the budget unless one tile alone is larger.
  const size_t item_bytes = plan.tiles_per_item * product.tile_bytes;
  expect(plan.tiles_per_item == 1 || item_bytes <= policy.block_bytes, "an item's A rows exceed the budget" + shape);
  expect(plan.tiles_per_item <= policy.max_tiles, "more tiles per item than the policy allows" + shape);
  if (plan.threads > 1) {
    // (Evening the groups and chunks out may halve the count asked for, never more.)
    const size_t wanted = policy.items_per_thread * plan.threads;
    expect(2 * plan.items() >= std::min(wanted, plan.groups * plan.tiles * plan.panels),
           "too few items for the threads" + shape);
  }
}

}  // namespace

int main() {
  const TilePolicy policies[] = {{256 * 1024, ~size_t(0), 0, 2, false},
                                 {~size_t(0), 32, 256 * 1024, 8, false},
                                 {256 * 1024, ~size_t(0), 0, 4, true}};
  for (int threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    for (const TilePolicy& policy : policies)
      for (size_t groups : {1, 3})
        for (size_t rows : {0, 1, 13, 14, 15, 49, 196, 3136})
          for (size_t mr : {1, 12, 14, 32})
            for (size_t panels : {0, 1, 2, 7, 64})
              for (size_t tile_bytes : {64, 40000, 300000}) {
                const TiledProduct product{groups, rows, mr, panels, tile_bytes, tile_bytes / 2,
                                           tile_bytes * ((rows + mr - 1) / mr), rows * panels * 4096};
                check<true>(product, policy, pool, 1);
                check<true>(product, policy, pool, 3);
                check<false>(product, policy, pool, 1);
              }
  }
  return webnn_test::tester_exit("tiled_product_test");
}
