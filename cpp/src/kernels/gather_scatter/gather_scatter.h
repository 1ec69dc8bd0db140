// Gather/scatter kernel family: gather, gatherElements, gatherND, scatterElements, scatterND.
//
// Index values come from tensors (int32, uint32 or int64). A negative index counts from the end
// (i + n); an index still outside [0, n) after that is clamped to [0, n-1], so no kernel ever
// reads or writes out of bounds. Scatters apply updates in row-major index order: for duplicate
// targets the last write wins.
#pragma once
#include "kernels/kernel.h"

namespace webnn {

// Shapes are seen as [outer, axis, inner] around the indexed axis.
struct AxisSplit {
  size_t outer = 1;
  size_t axis = 1;   // the input's size along the axis (the clamp range)
  size_t inner = 1;
};
AxisSplit split_at_axis(const std::vector<uint32_t>& shape, size_t axis);

// out[o, j, i] = input[o, index[j], i] for j over all `index_count` indices.
Kernel make_gather_kernel(DataType type, DataType index_type, AxisSplit input, size_t index_count);

// out[o, j, i] = input[o, index[o, j, i], i]; j ranges over `index_axis` (indices.shape[axis]).
Kernel make_gather_elements_kernel(DataType type, DataType index_type, AxisSplit input, size_t index_axis);

// Each of the `tuple_count` k-tuples of indices selects input[t0, ..., tk-1, ...] (a slice of
// the trailing dims).
Kernel make_gather_nd_kernel(DataType type, DataType index_type, const std::vector<uint32_t>& input_shape,
                             size_t k, size_t tuple_count);

// A copy of the input, then out[o, index[o, j, i], i] = updates[o, j, i].
Kernel make_scatter_elements_kernel(DataType type, DataType index_type, AxisSplit input, size_t index_axis);

// A copy of the input, then each k-tuple of indices receives its slice of updates.
Kernel make_scatter_nd_kernel(DataType type, DataType index_type, const std::vector<uint32_t>& input_shape,
                              size_t k, size_t tuple_count);

}  // namespace webnn
