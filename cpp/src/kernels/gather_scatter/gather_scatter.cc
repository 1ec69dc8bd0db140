// Portable reference kernels for the gather/scatter family. Elements move with fixed-size memcpy
// (ES bytes), so one instantiation serves every dtype of that size.
#include <algorithm>
#include <cstring>

#include "kernels/gather_scatter/gather_scatter.h"
#include "core/thread_pool.h"

namespace webnn {

namespace {

constexpr size_t kElementGrain = 1 << 15;

// A negative index counts from the end; the result is clamped into [0, n-1].
template <class I>
inline size_t normalize_index(I raw, size_t n) {
  int64_t i = int64_t(raw);
  if (i < 0) i += int64_t(n);
  return size_t(std::clamp<int64_t>(i, 0, int64_t(n) - 1));
}

// Calls fn(std::integral_constant<size_t, element bytes>, index storage type).
template <class Fn>
Kernel visit_sizes(DataType type, DataType index_type, Fn&& fn) {
  auto with_index = [&](auto size) -> Kernel {
    switch (index_type) {
      case DataType::kInt32: return fn(size, int32_t{});
      case DataType::kUint32: return fn(size, uint32_t{});
      default: return fn(size, int64_t{});
    }
  };
  switch (data_type_size(type)) {
    case 1: return with_index(std::integral_constant<size_t, 1>{});
    case 2: return with_index(std::integral_constant<size_t, 2>{});
    case 4: return with_index(std::integral_constant<size_t, 4>{});
    default: return with_index(std::integral_constant<size_t, 8>{});
  }
}

size_t grain_for(size_t elements_per_item) { return std::max<size_t>(1, kElementGrain / std::max<size_t>(1, elements_per_item)); }

void parallel_copy(ThreadPool* pool, void* dst, const void* src, size_t bytes) {
  constexpr size_t kChunk = size_t(1) << 18;
  pool->parallel_for((bytes + kChunk - 1) / kChunk, 1, [&](size_t begin, size_t end) {
    size_t first = begin * kChunk, last = std::min(bytes, end * kChunk);
    std::memcpy(static_cast<uint8_t*>(dst) + first, static_cast<const uint8_t*>(src) + first, last - first);
  });
}

// Element offsets of k-tuples: offset = Σ normalize(t[d], shape[d]) · strides[d].
struct TupleIndexer {
  std::vector<size_t> dims, strides;
  size_t slice = 1;  // elements per tuple (the trailing dims)
  TupleIndexer(const std::vector<uint32_t>& shape, size_t k) : dims(shape.begin(), shape.begin() + k), strides(k) {
    for (size_t d = k; d < shape.size(); ++d) slice *= shape[d];
    size_t stride = slice;
    for (size_t d = k; d-- > 0;) {
      strides[d] = stride;
      stride *= shape[d];
    }
  }
  template <class I>
  size_t offset(const I* tuple) const {
    size_t off = 0;
    for (size_t d = 0; d < dims.size(); ++d) off += normalize_index(tuple[d], dims[d]) * strides[d];
    return off;
  }
};

template <size_t ES, class I>
Kernel gather_kernel(AxisSplit in, size_t count) {
  return [=](const KernelArgs& args) {
    const uint8_t* input = static_cast<const uint8_t*>(args.inputs[0]);
    const I* index = static_cast<const I*>(args.inputs[1]);
    uint8_t* out = static_cast<uint8_t*>(args.outputs[0]);
    const size_t row_bytes = in.inner * ES;
    args.pool->parallel_for(in.outer * count, grain_for(in.inner), [&](size_t begin, size_t end) {
      for (size_t r = begin; r < end; ++r) {
        const size_t o = r / count, src_row = o * in.axis + normalize_index(index[r % count], in.axis);
        std::memcpy(out + r * row_bytes, input + src_row * row_bytes, row_bytes);
      }
    });
  };
}

template <size_t ES, class I>
Kernel gather_elements_kernel(AxisSplit in, size_t index_axis) {
  return [=](const KernelArgs& args) {
    const uint8_t* input = static_cast<const uint8_t*>(args.inputs[0]);
    const I* index = static_cast<const I*>(args.inputs[1]);
    uint8_t* out = static_cast<uint8_t*>(args.outputs[0]);
    args.pool->parallel_for(in.outer * index_axis, grain_for(in.inner), [&](size_t begin, size_t end) {
      for (size_t r = begin; r < end; ++r) {
        const size_t base = (r / index_axis) * in.axis;
        for (size_t i = 0; i < in.inner; ++i) {
          const size_t p = r * in.inner + i;
          const size_t src = (base + normalize_index(index[p], in.axis)) * in.inner + i;
          std::memcpy(out + p * ES, input + src * ES, ES);
        }
      }
    });
  };
}

template <size_t ES, class I>
Kernel gather_nd_kernel(TupleIndexer tuples, size_t tuple_count) {
  return [=](const KernelArgs& args) {
    const uint8_t* input = static_cast<const uint8_t*>(args.inputs[0]);
    const I* index = static_cast<const I*>(args.inputs[1]);
    uint8_t* out = static_cast<uint8_t*>(args.outputs[0]);
    const size_t k = tuples.dims.size(), slice_bytes = tuples.slice * ES;
    args.pool->parallel_for(tuple_count, grain_for(tuples.slice), [&](size_t begin, size_t end) {
      for (size_t m = begin; m < end; ++m)
        std::memcpy(out + m * slice_bytes, input + tuples.offset(index + m * k) * ES, slice_bytes);
    });
  };
}

template <size_t ES, class I>
Kernel scatter_elements_kernel(AxisSplit in, size_t index_axis) {
  return [=](const KernelArgs& args) {
    const I* index = static_cast<const I*>(args.inputs[1]);
    const uint8_t* updates = static_cast<const uint8_t*>(args.inputs[2]);
    uint8_t* out = static_cast<uint8_t*>(args.outputs[0]);
    parallel_copy(args.pool, out, args.inputs[0], in.outer * in.axis * in.inner * ES);
    // Distinct outer rows never collide; within one, updates apply in order.
    args.pool->parallel_for(in.outer, grain_for(index_axis * in.inner), [&](size_t begin, size_t end) {
      for (size_t o = begin; o < end; ++o)
        for (size_t j = 0; j < index_axis; ++j)
          for (size_t i = 0; i < in.inner; ++i) {
            const size_t p = (o * index_axis + j) * in.inner + i;
            const size_t dst = (o * in.axis + normalize_index(index[p], in.axis)) * in.inner + i;
            std::memcpy(out + dst * ES, updates + p * ES, ES);
          }
    });
  };
}

template <size_t ES, class I>
Kernel scatter_nd_kernel(TupleIndexer tuples, size_t tuple_count, size_t input_count) {
  return [=](const KernelArgs& args) {
    const I* index = static_cast<const I*>(args.inputs[1]);
    const uint8_t* updates = static_cast<const uint8_t*>(args.inputs[2]);
    uint8_t* out = static_cast<uint8_t*>(args.outputs[0]);
    parallel_copy(args.pool, out, args.inputs[0], input_count * ES);
    const size_t k = tuples.dims.size(), slice = tuples.slice;
    // Threads split the slice's element range; each applies every tuple in order to its part.
    args.pool->parallel_for(slice, kElementGrain, [&](size_t begin, size_t end) {
      for (size_t m = 0; m < tuple_count; ++m) {
        const size_t dst = tuples.offset(index + m * k) + begin;
        std::memcpy(out + dst * ES, updates + (m * slice + begin) * ES, (end - begin) * ES);
      }
    });
  };
}

}  // namespace

AxisSplit split_at_axis(const std::vector<uint32_t>& shape, size_t axis) {
  AxisSplit s;
  for (size_t d = 0; d < axis; ++d) s.outer *= shape[d];
  s.axis = shape[axis];
  for (size_t d = axis + 1; d < shape.size(); ++d) s.inner *= shape[d];
  return s;
}

Kernel make_gather_kernel(DataType type, DataType index_type, AxisSplit input, size_t index_count) {
  return visit_sizes(type, index_type, [&](auto size, auto index) {
    return gather_kernel<decltype(size)::value, decltype(index)>(input, index_count);
  });
}

Kernel make_gather_elements_kernel(DataType type, DataType index_type, AxisSplit input, size_t index_axis) {
  return visit_sizes(type, index_type, [&](auto size, auto index) {
    return gather_elements_kernel<decltype(size)::value, decltype(index)>(input, index_axis);
  });
}

Kernel make_gather_nd_kernel(DataType type, DataType index_type, const std::vector<uint32_t>& input_shape, size_t k,
                             size_t tuple_count) {
  return visit_sizes(type, index_type, [&](auto size, auto index) {
    return gather_nd_kernel<decltype(size)::value, decltype(index)>(TupleIndexer(input_shape, k), tuple_count);
  });
}

Kernel make_scatter_elements_kernel(DataType type, DataType index_type, AxisSplit input, size_t index_axis) {
  return visit_sizes(type, index_type, [&](auto size, auto index) {
    return scatter_elements_kernel<decltype(size)::value, decltype(index)>(input, index_axis);
  });
}

Kernel make_scatter_nd_kernel(DataType type, DataType index_type, const std::vector<uint32_t>& input_shape, size_t k,
                              size_t tuple_count) {
  return visit_sizes(type, index_type, [&](auto size, auto index) {
    return scatter_nd_kernel<decltype(size)::value, decltype(index)>(TupleIndexer(input_shape, k), tuple_count,
                                                                     element_count(input_shape));
  });
}

}  // namespace webnn
