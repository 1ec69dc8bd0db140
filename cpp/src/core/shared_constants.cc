#include "core/shared_constants.h"

#include <cstring>
#include <mutex>
#include <unordered_map>

namespace webnn {

namespace {

constexpr size_t kMinSharedBytes = 4096;

struct Registry {
  std::mutex mutex;
  std::unordered_multimap<uint64_t, std::weak_ptr<AlignedBuffer>> entries;
  size_t inserted_since_sweep = 0;
};

Registry& registry() {
  static Registry* shared = new Registry;  // outlives every holder (graphs freed at exit)
  return *shared;
}

// A fast 64-bit content hash (four independent multiply-xorshift lanes over 8-byte words): it only
// picks candidates, which are then compared byte for byte.
uint64_t content_hash(const uint8_t* p, size_t n) {
  constexpr uint64_t kMul = 0x9e3779b97f4a7c15ull;
  uint64_t lane[4] = {n, n ^ 0x243f6a8885a308d3ull, n ^ 0x13198a2e03707344ull, n ^ 0xa4093822299f31d0ull};
  size_t i = 0;
  for (; i + 32 <= n; i += 32)
    for (int k = 0; k < 4; ++k) {
      uint64_t w;
      std::memcpy(&w, p + i + 8 * k, 8);
      lane[k] = (lane[k] ^ w) * kMul;
      lane[k] ^= lane[k] >> 29;
    }
  uint64_t h = lane[0] ^ (lane[1] * 3) ^ (lane[2] * 5) ^ (lane[3] * 7);
  for (; i < n; ++i) h = (h ^ p[i]) * kMul;
  return h ^ (h >> 31);
}

}  // namespace

BufferPtr share_constant(BufferPtr buffer) {
  if (!buffer || buffer->size() < kMinSharedBytes) return buffer;
  const uint64_t hash = content_hash(buffer->data(), buffer->size());
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto [begin, end] = r.entries.equal_range(hash);
  for (auto it = begin; it != end;) {
    BufferPtr held = it->second.lock();
    if (!held) {
      it = r.entries.erase(it);
      continue;
    }
    if (held != buffer && held->size() == buffer->size() &&
        std::memcmp(held->data(), buffer->data(), buffer->size()) == 0)
      return held;
    if (held == buffer) return buffer;
    ++it;
  }
  r.entries.emplace(hash, buffer);
  if (++r.inserted_since_sweep >= 1024) {  // drop entries whose buffers are gone
    r.inserted_since_sweep = 0;
    for (auto it = r.entries.begin(); it != r.entries.end();) it = it->second.expired() ? r.entries.erase(it) : std::next(it);
  }
  return buffer;
}

SharedConstantStats shared_constant_stats() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  SharedConstantStats stats;
  for (const auto& entry : r.entries)
    if (BufferPtr held = entry.second.lock()) {
      ++stats.buffers;
      stats.bytes += held->size();
    }
  return stats;
}

}  // namespace webnn
