#include "kernels/kernel_util.h"

#include <stdexcept>

namespace webnn {

size_t BroadcastLoop::outer() const {
  size_t n = 1;
  for (size_t i = 0; i + 1 < shape.size(); ++i) n *= shape[i];
  return n;
}

void BroadcastLoop::offsets(size_t row, size_t* out) const {
  for (size_t k = 0; k < strides.size(); ++k) out[k] = 0;
  for (size_t d = shape.size() - 1; d-- > 0;) {
    size_t i = row % shape[d];
    row /= shape[d];
    for (size_t k = 0; k < strides.size(); ++k) out[k] += i * strides[k][d];
  }
}

BroadcastLoop::RowWalk::RowWalk(const BroadcastLoop& loop, size_t row) : loop_(loop) {
  outer_dims_ = loop.shape.empty() ? 0 : loop.shape.size() - 1;
  if (loop.strides.size() > kMaxOperands || outer_dims_ > kMaxRank)
    throw std::logic_error("internal: too many operands or dims for RowWalk");
  loop.offsets(row, offsets_);
  for (size_t d = outer_dims_; d-- > 0;) {
    index_[d] = row % loop.shape[d];
    row /= loop.shape[d];
  }
}

void BroadcastLoop::RowWalk::next() {
  const size_t operands = loop_.strides.size();
  for (size_t d = outer_dims_; d-- > 0;) {
    for (size_t k = 0; k < operands; ++k) offsets_[k] += loop_.strides[k][d];
    if (++index_[d] < loop_.shape[d]) return;
    for (size_t k = 0; k < operands; ++k) offsets_[k] -= loop_.shape[d] * loop_.strides[k][d];
    index_[d] = 0;
  }
}

BroadcastLoop make_broadcast_loop(const std::vector<uint32_t>& out_shape,
                                  const std::vector<std::vector<uint32_t>>& operand_shapes) {
  const size_t rank = out_shape.size();
  std::vector<std::vector<size_t>> full;
  for (const auto& s : operand_shapes) full.push_back(broadcast_strides(s, rank));
  BroadcastLoop loop;
  loop.strides.resize(operand_shapes.size());
  // Drop size-1 dims, then merge a dim into the next inner one when every operand is
  // contiguous across the pair (or broadcast across both).
  for (size_t d = 0; d < rank; ++d) {
    if (out_shape[d] == 1) continue;
    bool merge = !loop.shape.empty();
    for (size_t k = 0; merge && k < full.size(); ++k) {
      size_t prev = loop.strides[k].back();
      merge = prev == full[k][d] * out_shape[d];
    }
    if (merge) {
      loop.shape.back() *= out_shape[d];
      for (size_t k = 0; k < full.size(); ++k) loop.strides[k].back() = full[k][d];
    } else {
      loop.shape.push_back(out_shape[d]);
      for (size_t k = 0; k < full.size(); ++k) loop.strides[k].push_back(full[k][d]);
    }
  }
  if (loop.shape.empty()) {
    loop.shape.push_back(1);
    for (auto& s : loop.strides) s.push_back(0);
  }
  return loop;
}

}  // namespace webnn
