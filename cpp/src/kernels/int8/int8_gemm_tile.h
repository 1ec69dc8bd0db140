// The int8 GEMM tile, written once for every vector width and dot product: MR rows x 2 vectors of
// int32 sums in registers; each K step loads two vectors of B words and, per row, broadcasts one A
// word (row i's words start at a + i * a_stride: staged im2col rows, or an NHWC input's pixels) and adds its dot product with them. `Dot` gives the vector type and its operations (zero,
// load, broadcast, dot, store); each ISA's file instantiates it with its own Dot.
#pragma once
#include <cstddef>
#include <cstdint>

namespace webnn {
namespace {

template <class Dot, size_t kMr>
void int8_gemm_tile(size_t k_steps, const uint32_t* a, size_t a_stride, const uint32_t* b, int32_t* tile) {
  using V = typename Dot::Vector;
  constexpr size_t kLanes = sizeof(V) / sizeof(int32_t), kNr = 2 * kLanes;
  V acc[kMr][2];
#pragma GCC unroll 16
  for (size_t i = 0; i < kMr; ++i) acc[i][0] = acc[i][1] = Dot::zero();
  for (size_t k = 0; k < k_steps; ++k, b += kNr) {
    const V b0 = Dot::load(b), b1 = Dot::load(b + kLanes);
#pragma GCC unroll 16
    for (size_t i = 0; i < kMr; ++i) {
      const V av = Dot::broadcast(a[i * a_stride + k]);
      acc[i][0] = Dot::dot(acc[i][0], av, b0);
      acc[i][1] = Dot::dot(acc[i][1], av, b1);
    }
  }
#pragma GCC unroll 16
  for (size_t i = 0; i < kMr; ++i) {
    Dot::store(tile + i * kNr, acc[i][0]);
    Dot::store(tile + i * kNr + kLanes, acc[i][1]);
  }
}

}  // namespace
}  // namespace webnn
