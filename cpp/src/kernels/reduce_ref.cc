// Portable reference kernels for the reduction family. Floating-point sums and products
// accumulate in double; integer ones wrap (two's complement).
#include <limits>

#include "kernels/reduce.h"
#include "runtime/thread_pool.h"

namespace webnn {

namespace {

constexpr size_t kElementGrain = 1 << 15;

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

// One reduction as a monoid: map each element, combine, finish. Floating-point inputs
// accumulate in double; `shift` is logSumExp's per-output maximum.
template <ReduceOp Op, class T>
struct Reduction {
  using Acc = std::conditional_t<kIsFloat<T>, double, T>;

  static Acc identity() {
    if constexpr (Op == ReduceOp::kMax) {
      if constexpr (kIsFloat<T>) return -INFINITY;
      else return std::numeric_limits<T>::lowest();
    } else if constexpr (Op == ReduceOp::kMin) {
      if constexpr (kIsFloat<T>) return INFINITY;
      else return std::numeric_limits<T>::max();
    } else if constexpr (Op == ReduceOp::kProduct) {
      return Acc(1);
    } else {
      return Acc(0);
    }
  }
  static Acc map(compute_t<T> x, double shift) {
    const Acc v = Acc(x);
    if constexpr (Op == ReduceOp::kL1) return abs_wrapping(v);
    if constexpr (Op == ReduceOp::kL2 || Op == ReduceOp::kSumSquare) return mul_wrapping(v, v);
    if constexpr (Op == ReduceOp::kLogSumExp) return Acc(std::exp(double(v) - shift));
    return v;
  }
  static Acc combine(Acc a, Acc b) {
    if constexpr (Op == ReduceOp::kMax || Op == ReduceOp::kMin) {
      if constexpr (kIsFloat<T>)
        if (a != a || b != b) return NAN;  // NaN propagates
      return (Op == ReduceOp::kMax ? a > b : a < b) ? a : b;
    }
    if constexpr (Op == ReduceOp::kProduct) return mul_wrapping(a, b);
    return add_wrapping(a, b);
  }
  static double finish(Acc a, size_t count, double shift) {
    if constexpr (Op == ReduceOp::kL2) return std::sqrt(double(a));
    if constexpr (Op == ReduceOp::kLogSum) return std::log(double(a));
    if constexpr (Op == ReduceOp::kLogSumExp) return shift + std::log(double(a));
    if constexpr (Op == ReduceOp::kMean) return double(a) / double(count);
    return double(a);
  }
};

// Accumulates positions [begin, end) of the reduced walk for output block g into acc[block].
template <class R, class T>
void accumulate(const ReductionLayout& layout, const T* input, size_t g, size_t begin, size_t end,
                const double* shift, typename R::Acc* acc) {
  size_t base, unused;
  layout.groups.offsets(g, &base, &unused);
  const size_t block = layout.block, step = layout.reduced.strides.back();
  layout.reduced.for_each_run(begin, end, [&](size_t offset, size_t, size_t length) {
    const T* p = input + base + offset;
    for (size_t j = 0; j < length; ++j, p += step)
      for (size_t k = 0; k < block; ++k) acc[k] = R::combine(acc[k], R::map(load(p[k]), shift ? shift[k] : 0.0));
  });
}

// Runs reduction R and calls sink(output index, accumulator) for every output element. Few
// outputs over many elements split the reduced range into a fixed number of slices (so the
// result does not depend on the thread count) combined in order.
template <class R, class T, class Sink>
void run_reduction(const ReductionLayout& layout, const T* input, const double* shift, ThreadPool* pool,
                   Sink&& sink) {
  using Acc = typename R::Acc;
  const size_t groups = layout.groups.count(), block = layout.block, count = layout.reduced.count();
  const size_t work = count * block;
  if (groups >= 8 || work < 2 * kElementGrain) {
    const size_t grain = std::max<size_t>(1, kElementGrain / std::max<size_t>(1, work));
    pool->parallel_for(groups, grain, [&](size_t begin, size_t end) {
      std::vector<Acc> acc(block);
      for (size_t g = begin; g < end; ++g) {
        std::fill(acc.begin(), acc.end(), R::identity());
        accumulate<R>(layout, input, g, 0, count, shift ? shift + g * block : nullptr, acc.data());
        for (size_t k = 0; k < block; ++k) sink(g * block + k, acc[k]);
      }
    });
    return;
  }
  const size_t slices = std::min<size_t>({64, count, work / kElementGrain});
  std::vector<Acc> partial(slices * block);
  for (size_t g = 0; g < groups; ++g) {
    std::fill(partial.begin(), partial.end(), R::identity());
    const double* group_shift = shift ? shift + g * block : nullptr;
    pool->parallel_for(slices, 1, [&](size_t begin, size_t end) {
      for (size_t s = begin; s < end; ++s)
        accumulate<R>(layout, input, g, count * s / slices, count * (s + 1) / slices, group_shift,
                      &partial[s * block]);
    });
    for (size_t k = 0; k < block; ++k) {
      Acc acc = partial[k];
      for (size_t s = 1; s < slices; ++s) acc = R::combine(acc, partial[s * block + k]);
      sink(g * block + k, acc);
    }
  }
}

template <ReduceOp Op, class T>
Kernel reduce_kernel(const ReductionLayout& layout) {
  return [layout](const KernelArgs& args) {
    using R = Reduction<Op, T>;
    const T* input = static_cast<const T*>(args.inputs[0]);
    T* output = static_cast<T*>(args.outputs[0]);
    const size_t count = layout.reduced.count();
    if constexpr (Op == ReduceOp::kLogSumExp) {
      // Pass 1: the maximum per output (0 when it is not finite, where shifting cannot help).
      std::vector<double> shift(layout.groups.count() * layout.block);
      run_reduction<Reduction<ReduceOp::kMax, T>>(layout, input, nullptr, args.pool, [&](size_t i, double m) {
        shift[i] = std::isfinite(m) ? m : 0.0;
      });
      run_reduction<R>(layout, input, shift.data(), args.pool, [&](size_t i, typename R::Acc acc) {
        store_rounded(output + i, R::finish(acc, count, shift[i]));
      });
    } else {
      run_reduction<R>(layout, input, nullptr, args.pool, [&](size_t i, typename R::Acc acc) {
        if constexpr (kIsFloat<T>) store_rounded(output + i, R::finish(acc, count, 0.0));
        else output[i] = acc;
      });
    }
  };
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
    if constexpr (reduce_supports<Op, T>()) return reduce_kernel<Op, T>(layout);
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

template <class T>
Kernel softmax_kernel(AxisSplit split) {
  return [split](const KernelArgs& args) {
    const T* input = static_cast<const T*>(args.inputs[0]);
    T* output = static_cast<T*>(args.outputs[0]);
    const size_t inner = split.inner, axis = split.axis;
    for_each_axis_tile(split, args.pool, [&](size_t row, size_t count) {
      const T* in = input + row;
      T* out = output + row;
      std::vector<float> max(count, -INFINITY);
      std::vector<double> sum(count, 0.0);
      for (size_t a = 0; a < axis; ++a)
        for (size_t i = 0; i < count; ++i) max[i] = std::max(max[i], float(load(in[a * inner + i])));
      for (size_t a = 0; a < axis; ++a)
        for (size_t i = 0; i < count; ++i) sum[i] += std::exp(float(load(in[a * inner + i])) - max[i]);
      for (size_t a = 0; a < axis; ++a)
        for (size_t i = 0; i < count; ++i)
          store_rounded(out + a * inner + i, std::exp(float(load(in[a * inner + i])) - max[i]) / sum[i]);
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

Kernel make_softmax_kernel(DataType type, AxisSplit split) {
  if (type == DataType::kFloat16) return softmax_kernel<float16>(split);
  return softmax_kernel<float>(split);
}

Kernel make_cumulative_sum_kernel(DataType type, AxisSplit split, bool exclusive, bool reversed) {
  return visit_type(type, [&](auto tag) -> Kernel {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>)
      throw_type_error(str_cat("cumulativeSum: unsupported data type ", data_type_name(type)));
    else return cumulative_sum_kernel<T>(split, exclusive, reversed);
  });
}

}  // namespace webnn
