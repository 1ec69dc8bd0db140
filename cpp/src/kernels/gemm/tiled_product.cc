#include "kernels/gemm/tiled_product.h"

namespace webnn {

namespace {

size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

// Below this many multiply-adds a product runs on the calling thread (waking the pool costs more).
constexpr size_t kThreadedWork = size_t(1) << 18;

}  // namespace

TileItem TilePlan::item(size_t index) const {
  const size_t per_group = chunks * tile_groups, rest = index % per_group;
  const size_t chunk = group_major ? rest % chunks : rest / tile_groups;
  const size_t tile_group = group_major ? rest / chunks : rest % tile_groups;
  const size_t t0 = tile_group * tiles_per_item, p0 = chunk * chunk_panels;
  return {index / per_group, t0, std::min(tiles, t0 + tiles_per_item), p0, std::min(panels, p0 + chunk_panels)};
}

TilePlan plan_tiles(const TiledProduct& product, const TilePolicy& policy, ThreadPool* pool) {
  TilePlan plan;
  plan.groups = product.groups;
  plan.panels = product.panels;
  plan.tiles = ceil_div(product.rows, product.mr);
  plan.threads = pool && product.work >= kThreadedWork ? size_t(pool->max_threads()) : 1;
  if (plan.tiles == 0 || plan.panels == 0) return plan;
  // B in chunks that stay in L2 (one a little over the size stays whole: split, its last chunk would
  // be a narrow panel whose rows take the activation in calls of a few values).
  const size_t panel_bytes = std::max<size_t>(1, product.panel_bytes);
  plan.chunk_panels = policy.chunk_bytes == 0 || plan.panels * panel_bytes <= policy.chunk_bytes * 5 / 4
                          ? plan.panels
                          : std::clamp<size_t>(policy.chunk_bytes / panel_bytes, 1, plan.panels);
  plan.chunks = ceil_div(plan.panels, plan.chunk_panels);
  // Tile groups whose A rows stay in L2.
  const size_t fit = policy.block_bytes / std::max<size_t>(1, product.tile_bytes);
  const size_t tile_groups = ceil_div(plan.tiles, std::clamp<size_t>(std::min(fit, policy.max_tiles), 1, plan.tiles));
  plan.tiles_per_item = ceil_div(plan.tiles, tile_groups);
  plan.tile_groups = ceil_div(plan.tiles, plan.tiles_per_item);
  if (plan.threads > 1) {
    // With threads: enough items for each to get several. Splitting the tiles reads B once more
    // per group, splitting the panels reads (or stages) A once more per chunk: the policy says which
    // goes first. Tile groups come in a multiple of the threads (equal shares).
    const size_t wanted = policy.items_per_thread * plan.threads;
    const auto split_tiles = [&] {
      size_t groups = std::max(plan.tile_groups, ceil_div(wanted, plan.groups * plan.chunks));
      groups = std::min(plan.tiles, ceil_div(groups, plan.threads) * plan.threads);
      plan.tiles_per_item = ceil_div(plan.tiles, groups);
      plan.tile_groups = ceil_div(plan.tiles, plan.tiles_per_item);
    };
    const auto split_panels = [&] {
      if (plan.groups * plan.tile_groups * plan.chunks >= wanted) return;
      const size_t chunks = std::clamp<size_t>(ceil_div(wanted, plan.groups * plan.tile_groups), plan.chunks,
                                               plan.panels);
      plan.chunk_panels = ceil_div(plan.panels, chunks);
      plan.chunks = ceil_div(plan.panels, plan.chunk_panels);
    };
    if (policy.panels_first) {
      split_panels();
      if (plan.groups * plan.tile_groups * plan.chunks < wanted) split_tiles();
    } else {
      split_tiles();
      split_panels();
    }
  }
  // Whichever order reads fewer bytes: B once per tile group, or A once per chunk.
  plan.group_major = plan.tile_groups * plan.panels * panel_bytes < plan.chunks * product.a_bytes;
  return plan;
}

}  // namespace webnn
