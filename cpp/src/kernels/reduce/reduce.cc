// The reduction family: the kernels (the loops per ISA level are in reduce_impl.h). Float
// reductions (but reduceProduct) and softmax run on the ReduceLoops; integer reductions and float
// reduceProduct accumulate here (double for floats; integers wrap), as do argMin/argMax and
// cumulativeSum.
#include <limits>

#include "kernels/platform.h"
#include "kernels/reduce/reduce.h"
#include "core/thread_pool.h"

namespace webnn {

namespace {

constexpr size_t kElementGrain = 1 << 15;
// Output elements of one block reduced together (their accumulators live on the stack).
constexpr size_t kColumnTile = 1024;

// Integer arithmetic in the unsigned type of the same width (promoted at least to unsigned),
// so overflow wraps instead of being undefined.
template <class C>
using wrap_t = std::conditional_t<(sizeof(C) < sizeof(unsigned)), unsigned, std::make_unsigned_t<C>>;
template <class C>
inline C add_wrapping(C a, C b) {
  if constexpr (std::is_integral_v<C>) return C(wrap_t<C>(a) + wrap_t<C>(b));
  else return a + b;
}
template <class C>
inline C mul_wrapping(C a, C b) {
  if constexpr (std::is_integral_v<C>) return C(wrap_t<C>(a) * wrap_t<C>(b));
  else return a * b;
}
template <class C>
inline C abs_wrapping(C a) {
  if constexpr (std::is_unsigned_v<C>) return a;
  else if constexpr (std::is_integral_v<C>) return a < 0 ? C(wrap_t<C>(0) - wrap_t<C>(a)) : a;
  else return std::fabs(a);
}

template <class T>
constexpr bool kIsFloat = std::is_floating_point_v<compute_t<T>>;

// The larger (smaller) of a and b; a NaN in either is the result.
template <bool kMax, class C>
inline C extreme_of(C a, C b) {
  if constexpr (std::is_floating_point_v<C>)
    if (b != b) return b;
  return (kMax ? b > a : b < a) ? b : a;
}

// The reductions that accumulate here, as a monoid: map each element, combine. Floats
// (reduceProduct only) accumulate in double.
template <ReduceOp Op, class T>
struct ScalarReduction {
  using Acc = std::conditional_t<kIsFloat<T>, double, T>;

  static Acc identity() {
    if constexpr (Op == ReduceOp::kMax) return std::numeric_limits<T>::lowest();
    else if constexpr (Op == ReduceOp::kMin) return std::numeric_limits<T>::max();
    else if constexpr (Op == ReduceOp::kProduct) return Acc(1);
    else return Acc(0);
  }
  static Acc map(compute_t<T> x) {
    const Acc v = Acc(x);
    if constexpr (Op == ReduceOp::kL1) return abs_wrapping(v);
    if constexpr (Op == ReduceOp::kSumSquare) return mul_wrapping(v, v);
    return v;
  }
  static Acc combine(Acc a, Acc b) {
    if constexpr (Op == ReduceOp::kMax || Op == ReduceOp::kMin) return extreme_of<Op == ReduceOp::kMax>(a, b);
    if constexpr (Op == ReduceOp::kProduct) return mul_wrapping(a, b);
    return add_wrapping(a, b);
  }
};

// Output elements [k0, k0 + width) of kept group g: one tile of reduction work.
struct OutputTile {
  size_t g, k0, width;
};

// Calls fn(p, length) for each run of the tile's reduced positions [begin, end): p points at the
// run's first element in the tile's first column; the run's positions are
// layout.reduced.strides.back() elements apart (1 when the layout's block is 1).
template <class T, class Fn>
void for_each_tile_run(const ReductionLayout& layout, const T* input, const OutputTile& tile, size_t begin,
                       size_t end, Fn&& fn) {
  size_t base, unused;
  layout.groups.offsets(tile.g, &base, &unused);
  layout.reduced.for_each_run(begin, end,
                              [&](size_t offset, size_t, size_t length) { fn(input + base + offset + tile.k0, length); });
}

// Reduces every output tile of `layout`: accumulate(tile, begin, end, acc) adds the reduced
// positions [begin, end) into acc[0, tile.width) (each starting at `identity`), then
// sink(tile, acc) takes the result. Few tiles over many elements split the reduced range into a
// fixed number of slices (so the result does not depend on the thread count), combined in order.
template <class Acc, class Accumulate, class Combine, class Sink>
void run_reduction(const ReductionLayout& layout, ThreadPool* pool, Acc identity, const Accumulate& accumulate,
                   const Combine& combine, const Sink& sink) {
  const size_t block = layout.block, count = layout.reduced.count();
  const size_t tiles_per_group = (block + kColumnTile - 1) / kColumnTile;
  const size_t tiles = layout.groups.count() * tiles_per_group;
  const auto tile_at = [&](size_t t) {
    if (tiles_per_group == 1) return OutputTile{t, 0, block};  // (no division)
    const size_t k0 = t % tiles_per_group * kColumnTile;
    return OutputTile{t / tiles_per_group, k0, std::min(kColumnTile, block - k0)};
  };
  const size_t width = std::min(block, kColumnTile), work = count * width;  // the widest tile, its elements
  if (tiles >= 8 || work < 2 * kElementGrain) {
    pool->parallel_for(tiles, std::max<size_t>(1, kElementGrain / work), [&](size_t begin, size_t end) {
      Acc acc[kColumnTile];
      for (size_t t = begin; t < end; ++t) {
        const OutputTile tile = tile_at(t);
        std::fill(acc, acc + tile.width, identity);
        accumulate(tile, 0, count, acc);
        sink(tile, acc);
      }
    });
    return;
  }
  const size_t slices = std::min<size_t>({64, count, work / kElementGrain});
  std::vector<Acc> partial(slices * width);
  for (size_t t = 0; t < tiles; ++t) {
    const OutputTile tile = tile_at(t);
    std::fill(partial.begin(), partial.end(), identity);
    pool->parallel_for(slices, 1, [&](size_t begin, size_t end) {
      for (size_t s = begin; s < end; ++s)
        accumulate(tile, count * s / slices, count * (s + 1) / slices, &partial[s * width]);
    });
    for (size_t s = 1; s < slices; ++s)
      for (size_t k = 0; k < tile.width; ++k) partial[k] = combine(partial[k], partial[s * width + k]);
    sink(tile, partial.data());
  }
}

template <ReduceOp Op, class T>
void reduce_scalar(const ReductionLayout& layout, const T* input, T* output, ThreadPool* pool) {
  using R = ScalarReduction<Op, T>;
  using Acc = typename R::Acc;
  const size_t block = layout.block, step = layout.reduced.strides.back();
  const auto accumulate = [&](const OutputTile& tile, size_t begin, size_t end, Acc* acc) {
    for_each_tile_run(layout, input, tile, begin, end, [&](const T* p, size_t length) {
      for (size_t j = 0; j < length; ++j, p += step)
        for (size_t k = 0; k < tile.width; ++k) acc[k] = R::combine(acc[k], R::map(load(p[k])));
    });
  };
  run_reduction<Acc>(layout, pool, R::identity(), accumulate, R::combine, [&](const OutputTile& tile, const Acc* acc) {
    T* out = output + tile.g * block + tile.k0;
    for (size_t k = 0; k < tile.width; ++k) {
      if constexpr (kIsFloat<T>) store_rounded(out + k, acc[k]);
      else out[k] = acc[k];
    }
  });
}

// The maxima (minima) of the float outputs, handed to sink(tile, const float* acc).
template <class T, class Sink>
void reduce_extreme(bool is_max, DataType type, const ReductionLayout& layout, const T* input, ThreadPool* pool,
                    const Sink& sink) {
  const ExtremeRowFn row = kernel_table().reduce->extreme_row(is_max, type);
  const ExtremeColumnsFn columns = kernel_table().reduce->extreme_columns(is_max, type);
  const size_t step = layout.reduced.strides.back();
  const auto combine = [is_max](float a, float b) { return is_max ? extreme_of<true>(a, b) : extreme_of<false>(a, b); };
  const auto accumulate = [&](const OutputTile& tile, size_t begin, size_t end, float* acc) {
    for_each_tile_run(layout, input, tile, begin, end, [&](const T* p, size_t length) {
      if (layout.block == 1) acc[0] = combine(acc[0], row(p, length));
      else columns(p, length, step, tile.width, acc);
    });
  };
  run_reduction<float>(layout, pool, is_max ? -INFINITY : INFINITY, accumulate, combine, sink);
}

// The sums of map(x) of the float outputs (shift: one per output, or null), handed to
// sink(tile, const double* acc).
template <class T, class Sink>
void reduce_sum(SumMap map, DataType type, const ReductionLayout& layout, const T* input, const double* shift,
                ThreadPool* pool, const Sink& sink) {
  const SumRowFn row = kernel_table().reduce->sum_row(map, type);
  const SumColumnsFn columns = kernel_table().reduce->sum_columns(map, type);
  const size_t step = layout.reduced.strides.back();
  const auto accumulate = [&](const OutputTile& tile, size_t begin, size_t end, double* acc) {
    const double* tile_shift = shift ? shift + tile.g * layout.block + tile.k0 : nullptr;
    for_each_tile_run(layout, input, tile, begin, end, [&](const T* p, size_t length) {
      if (layout.block == 1) acc[0] += row(p, length, tile_shift ? tile_shift[0] : 0.0);
      else columns(p, length, step, tile.width, tile_shift, acc);
    });
  };
  run_reduction<double>(layout, pool, 0.0, accumulate, std::plus<double>(), sink);
}

template <class T>
void reduce_float(ReduceOp op, DataType type, const ReductionLayout& layout, const T* input, T* output,
                  ThreadPool* pool) {
  const size_t block = layout.block;
  const double count = double(layout.reduced.count());
  if (op == ReduceOp::kMax || op == ReduceOp::kMin) {
    reduce_extreme(op == ReduceOp::kMax, type, layout, input, pool, [&](const OutputTile& tile, const float* acc) {
      for (size_t k = 0; k < tile.width; ++k) store(output + tile.g * block + tile.k0 + k, acc[k]);
    });
    return;
  }
  std::vector<double> shift;  // logSumExp: the maximum per output (0 where not finite)
  if (op == ReduceOp::kLogSumExp) {
    shift.resize(layout.groups.count() * block);
    reduce_extreme(true, type, layout, input, pool, [&](const OutputTile& tile, const float* acc) {
      for (size_t k = 0; k < tile.width; ++k)
        shift[tile.g * block + tile.k0 + k] = std::isfinite(acc[k]) ? acc[k] : 0.0;
    });
  }
  const SumMap map = op == ReduceOp::kL1                                   ? SumMap::kAbs
                     : op == ReduceOp::kL2 || op == ReduceOp::kSumSquare ? SumMap::kSquare
                     : op == ReduceOp::kLogSumExp                         ? SumMap::kExp
                                                                          : SumMap::kIdentity;
  reduce_sum(map, type, layout, input, shift.empty() ? nullptr : shift.data(), pool,
             [&](const OutputTile& tile, const double* acc) {
               const size_t first = tile.g * block + tile.k0;
               for (size_t k = 0; k < tile.width; ++k) {
                 const double a = acc[k];
                 double result = a;
                 if (op == ReduceOp::kL2) result = std::sqrt(a);
                 if (op == ReduceOp::kLogSum) result = std::log(a);
                 if (op == ReduceOp::kLogSumExp) result = shift[first + k] + std::log(a);
                 if (op == ReduceOp::kMean) result = a / count;
                 store_rounded(output + first + k, result);
               }
             });
}

template <ReduceOp Op, class T>
Kernel reduce_kernel(DataType type, const ReductionLayout& layout) {
  if constexpr (kIsFloat<T> && Op != ReduceOp::kProduct) {
    return [type, layout](const KernelArgs& args) {
      reduce_float(Op, type, layout, static_cast<const T*>(args.inputs[0]), static_cast<T*>(args.outputs[0]), args.pool);
    };
  } else {
    return [layout](const KernelArgs& args) {
      reduce_scalar<Op>(layout, static_cast<const T*>(args.inputs[0]), static_cast<T*>(args.outputs[0]), args.pool);
    };
  }
}

// Data types each reduction accepts (the op's limits; other combinations are never built).
template <ReduceOp Op, class T>
constexpr bool reduce_supports() {
  constexpr bool small_int = std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>;
  switch (Op) {
    case ReduceOp::kMax:
    case ReduceOp::kMin: return true;
    case ReduceOp::kL1:
    case ReduceOp::kProduct:
    case ReduceOp::kSum:
    case ReduceOp::kSumSquare: return !small_int;
    default: return kIsFloat<T>;
  }
}

template <ReduceOp Op>
Kernel reduce_for_type(DataType type, const ReductionLayout& layout) {
  return visit_type(type, [&](auto tag) -> Kernel {
    using T = decltype(tag);
    if constexpr (reduce_supports<Op, T>()) return reduce_kernel<Op, T>(type, layout);
    else throw_type_error(str_cat("reduction: unsupported data type ", data_type_name(type)));
  });
}

// Runs fn(row, count) in parallel over tiles of the split that each span the whole axis: `row`
// points at the tile's first element (element (a, i) of the tile is row[a * inner + i]) and
// `count` is the tile's width along the inner dim. Tiling the inner dim keeps a large inner
// extent parallel even when the outer one is 1.
template <class Fn>
void for_each_axis_tile(const AxisSplit& split, ThreadPool* pool, Fn&& fn) {
  const size_t inner = split.inner, axis = split.axis;
  const size_t tile = std::min(inner, std::max<size_t>(64, kElementGrain / axis));
  const size_t tiles = (inner + tile - 1) / tile;
  const size_t grain = std::max<size_t>(1, kElementGrain / (axis * tile));
  pool->parallel_for(split.outer * tiles, grain, [&](size_t begin, size_t end) {
    for (size_t u = begin; u < end; ++u) {
      const size_t o = u / tiles, i = u % tiles * tile;
      fn(o * axis * inner + i, std::min(tile, inner - i));
    }
  });
}

template <class T, class I>
Kernel arg_min_max_kernel(bool is_max, AxisSplit split) {
  return [is_max, split](const KernelArgs& args) {
    const T* input = static_cast<const T*>(args.inputs[0]);
    I* output = static_cast<I*>(args.outputs[0]);
    const size_t inner = split.inner, axis = split.axis;
    for_each_axis_tile(split, args.pool, [&](size_t row, size_t count) {
      const T* in = input + row;
      I* out = output + row / (axis * inner) * inner + row % inner;
      std::vector<compute_t<T>> best(count);
      for (size_t i = 0; i < count; ++i) {
        best[i] = load(in[i]);
        out[i] = 0;
      }
      for (size_t a = 1; a < axis; ++a) {
        const T* line = in + a * inner;
        for (size_t i = 0; i < count; ++i) {
          const compute_t<T> v = load(line[i]);
          bool better = is_max ? v > best[i] : v < best[i];
          if constexpr (kIsFloat<T>) better = (better || v != v) && best[i] == best[i];  // the first NaN wins
          if (better) {
            best[i] = v;
            out[i] = I(a);
          }
        }
      }
    });
  };
}

Kernel softmax_kernel(DataType type, AxisSplit split) {
  if (split.inner == 1) {  // contiguous rows along the axis
    const SoftmaxRowsFn rows = kernel_table().reduce->softmax_rows(type);
    const size_t size = data_type_size(type);
    return [rows, split, size](const KernelArgs& args) {
      const char* input = static_cast<const char*>(args.inputs[0]);
      char* output = static_cast<char*>(args.outputs[0]);
      const size_t axis = split.axis;
      args.pool->parallel_for(split.outer, std::max<size_t>(1, kElementGrain / axis), [&](size_t begin, size_t end) {
        rows(input + begin * axis * size, output + begin * axis * size, end - begin, axis, axis);
      });
    };
  }
  const SoftmaxColumnsFn columns = kernel_table().reduce->softmax_columns(type);
  const size_t size = data_type_size(type);
  return [columns, split, size](const KernelArgs& args) {
    const char* input = static_cast<const char*>(args.inputs[0]);
    char* output = static_cast<char*>(args.outputs[0]);
    for_each_axis_tile(split, args.pool, [&](size_t row, size_t count) {
      columns(input + row * size, output + row * size, split.axis, split.inner, count);
    });
  };
}

template <class T>
Kernel cumulative_sum_kernel(AxisSplit split, bool exclusive, bool reversed) {
  return [split, exclusive, reversed](const KernelArgs& args) {
    using Acc = std::conditional_t<kIsFloat<T>, double, T>;
    const T* input = static_cast<const T*>(args.inputs[0]);
    T* output = static_cast<T*>(args.outputs[0]);
    const size_t inner = split.inner, axis = split.axis;
    for_each_axis_tile(split, args.pool, [&](size_t row, size_t count) {
      std::vector<Acc> acc(count, Acc(0));
      for (size_t step = 0; step < axis; ++step) {
        const size_t offset = row + (reversed ? axis - 1 - step : step) * inner;
        const T* in = input + offset;
        T* out = output + offset;
        for (size_t i = 0; i < count; ++i) {
          const Acc before = acc[i];
          acc[i] = add_wrapping(acc[i], Acc(load(in[i])));
          const Acc v = exclusive ? before : acc[i];
          if constexpr (kIsFloat<T>) store_rounded(out + i, v);
          else out[i] = v;
        }
      }
    });
  };
}

}  // namespace

ReductionLayout make_reduction_layout(const std::vector<uint32_t>& shape, const std::vector<bool>& reduced,
                                      const std::vector<size_t>& param_strides) {
  struct Dim {
    size_t size, stride, param_stride;
    bool reduced;
  };
  std::vector<Dim> dims;
  size_t stride = element_count(shape);
  for (size_t d = 0; d < shape.size(); ++d) {
    stride /= shape[d];
    if (shape[d] == 1) continue;
    const Dim dim{shape[d], stride, param_strides.empty() ? 0 : param_strides[d], reduced[d]};
    Dim* last = dims.empty() ? nullptr : &dims.back();
    if (last && last->reduced == dim.reduced && last->stride == dim.stride * dim.size &&
        last->param_stride == dim.param_stride * dim.size) {
      last->size *= dim.size;
      last->stride = dim.stride;
      last->param_stride = dim.param_stride;
    } else {
      dims.push_back(dim);
    }
  }
  ReductionLayout layout;
  if (!dims.empty() && !dims.back().reduced) {
    layout.block = dims.back().size;
    layout.block_param_stride = dims.back().param_stride;
    dims.pop_back();
  }
  for (bool want_reduced : {false, true}) {
    StridedWalk walk;
    walk.sizes.clear();
    walk.strides.clear();
    walk.param_strides.clear();
    for (const Dim& dim : dims) {
      if (dim.reduced != want_reduced) continue;
      walk.sizes.push_back(dim.size);
      walk.strides.push_back(dim.stride);
      walk.param_strides.push_back(dim.param_stride);
    }
    if (walk.sizes.empty()) walk = StridedWalk{};
    (want_reduced ? layout.reduced : layout.groups) = std::move(walk);
  }
  return layout;
}

Kernel make_reduce_kernel(ReduceOp op, DataType type, const std::vector<uint32_t>& shape,
                          const std::vector<bool>& reduced) {
  const ReductionLayout layout = make_reduction_layout(shape, reduced);
  switch (op) {
    case ReduceOp::kL1: return reduce_for_type<ReduceOp::kL1>(type, layout);
    case ReduceOp::kL2: return reduce_for_type<ReduceOp::kL2>(type, layout);
    case ReduceOp::kLogSum: return reduce_for_type<ReduceOp::kLogSum>(type, layout);
    case ReduceOp::kLogSumExp: return reduce_for_type<ReduceOp::kLogSumExp>(type, layout);
    case ReduceOp::kMax: return reduce_for_type<ReduceOp::kMax>(type, layout);
    case ReduceOp::kMean: return reduce_for_type<ReduceOp::kMean>(type, layout);
    case ReduceOp::kMin: return reduce_for_type<ReduceOp::kMin>(type, layout);
    case ReduceOp::kProduct: return reduce_for_type<ReduceOp::kProduct>(type, layout);
    case ReduceOp::kSum: return reduce_for_type<ReduceOp::kSum>(type, layout);
    case ReduceOp::kSumSquare: return reduce_for_type<ReduceOp::kSumSquare>(type, layout);
  }
  throw_type_error("unknown reduction");
}

Kernel make_arg_min_max_kernel(bool is_max, DataType input_type, DataType output_type, AxisSplit split) {
  return visit_type(input_type, [&](auto tag) -> Kernel {
    using T = decltype(tag);
    if (output_type == DataType::kInt64) return arg_min_max_kernel<T, int64_t>(is_max, split);
    return arg_min_max_kernel<T, int32_t>(is_max, split);
  });
}

Kernel make_softmax_kernel(DataType type, AxisSplit split) { return softmax_kernel(type, split); }

Kernel make_cumulative_sum_kernel(DataType type, AxisSplit split, bool exclusive, bool reversed) {
  return visit_type(type, [&](auto tag) -> Kernel {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>)
      throw_type_error(str_cat("cumulativeSum: unsupported data type ", data_type_name(type)));
    else return cumulative_sum_kernel<T>(split, exclusive, reversed);
  });
}

}  // namespace webnn
