// The data-movement family's kernels: copy plans and threading around the inner loops of the
// active ISA level (data_movement_impl.h).
#include <algorithm>
#include <cstring>

#include "kernels/data_movement/data_movement.h"
#include "kernels/kernel_util.h"
#include "kernels/platform.h"
#include "core/thread_pool.h"

namespace webnn {

namespace {

constexpr int64_t kElementGrain = 1 << 15;

// Drops size-1 dims and merges a dim into the next inner one when both sides are contiguous
// across the pair. Leaves at least one dim.
void simplify(StridedCopy& c) {
  StridedCopy out;
  out.input = c.input;
  out.output = c.output;
  out.src_offset = c.src_offset;
  out.dst_offset = c.dst_offset;
  for (size_t d = 0; d < c.shape.size(); ++d) {
    if (c.shape[d] == 1) continue;
    if (!out.shape.empty() && out.src_strides.back() == c.src_strides[d] * c.shape[d] &&
        out.dst_strides.back() == c.dst_strides[d] * c.shape[d]) {
      out.shape.back() *= c.shape[d];
      out.src_strides.back() = c.src_strides[d];
      out.dst_strides.back() = c.dst_strides[d];
      continue;
    }
    out.shape.push_back(c.shape[d]);
    out.src_strides.push_back(c.src_strides[d]);
    out.dst_strides.push_back(c.dst_strides[d]);
  }
  if (out.shape.empty()) {
    out.shape = {1};
    out.src_strides = out.dst_strides = {1};
  }
  c = std::move(out);
}

// Walks the outer dims (all but the last) of a shape with two running offsets.
struct Odometer {
  const std::vector<int64_t>& shape;
  const std::vector<int64_t>& src_strides;
  const std::vector<int64_t>& dst_strides;
  std::vector<int64_t> coord;
  int64_t src, dst;

  Odometer(const StridedCopy& c, int64_t row)
      : shape(c.shape), src_strides(c.src_strides), dst_strides(c.dst_strides), coord(c.shape.size(), 0),
        src(c.src_offset), dst(c.dst_offset) {
    for (size_t d = shape.size() - 1; d-- > 0;) {
      coord[d] = row % shape[d];
      row /= shape[d];
      src += coord[d] * src_strides[d];
      dst += coord[d] * dst_strides[d];
    }
  }
  // k >= 1 rows along the innermost walked dim, not past its end.
  void advance(int64_t k) {
    const size_t d = shape.size() - 2;
    src += (k - 1) * src_strides[d];
    dst += (k - 1) * dst_strides[d];
    coord[d] += k - 1;
    next();
  }
  void next() {
    for (size_t d = shape.size() - 1; d-- > 0;) {
      src += src_strides[d];
      dst += dst_strides[d];
      if (++coord[d] < shape[d]) return;
      src -= shape[d] * src_strides[d];
      dst -= shape[d] * dst_strides[d];
      coord[d] = 0;
    }
  }
};

constexpr int64_t kTile = 32;

// A simplified copy, ready to run. When the source is strided along the innermost dim but
// contiguous along another (a transpose), that dim leaves the walk and the (tiled dim, inner dim)
// plane is copied in kTile x kTile tiles, which keeps both sides in cache.
struct PreparedCopy {
  StridedCopy c;
  int64_t tiled = 1, tiled_src = 0, tiled_dst = 0;  // the tiled dim's size and strides (1: none)
  int64_t strips = 1;  // work units per row of the walk: strips of kTile along the tiled dim
  int64_t units = 1;
  int64_t elements = 1;
};

PreparedCopy prepare(StridedCopy c) {
  simplify(c);
  PreparedCopy p;
  const size_t last = c.shape.size() - 1;
  if (c.src_strides[last] != 0 && c.src_strides[last] != 1) {
    for (size_t d = last; d-- > 0;) {
      if (c.src_strides[d] != 1) continue;
      p.tiled = c.shape[d];
      p.tiled_src = 1;
      p.tiled_dst = c.dst_strides[d];
      p.strips = (p.tiled + kTile - 1) / kTile;
      c.shape.erase(c.shape.begin() + d);
      c.src_strides.erase(c.src_strides.begin() + d);
      c.dst_strides.erase(c.dst_strides.begin() + d);
      break;
    }
  }
  for (int64_t n : c.shape) p.elements *= n;
  p.elements *= p.tiled;
  p.units = p.elements / c.shape.back() / p.tiled * p.strips;
  p.c = std::move(c);
  return p;
}

// The inner loops for elements of type E.
struct CopyLoops {
  TransposeTileFn transpose_tile;
  FillFn fill;
  CopyRowsFn copy_rows;
};
template <class E>
CopyLoops copy_loops() {
  const DataMovementLoops& loops = *kernel_table().data_movement;
  const size_t log2_size = sizeof(E) == 1 ? 0 : sizeof(E) == 2 ? 1 : sizeof(E) == 4 ? 2 : 3;
  return {loops.transpose_tile[log2_size], loops.fill[log2_size], loops.copy_rows};
}

// Runs work units [first, last) of one copy.
template <class E>
void copy_units(const PreparedCopy& p, const CopyLoops& loops, const E* src, E* dst, int64_t first, int64_t last) {
  const StridedCopy& c = p.c;
  const int64_t inner = c.shape.back(), ss = c.src_strides.back(), ds = c.dst_strides.back();
  const size_t walked = c.shape.size() - 1;  // dims the odometer walks
  if (p.tiled == 1 && ss == 1 && ds == 1 && walked > 0) {
    // Contiguous rows: each run along the innermost walked dim in one call (a concat's or split's
    // channel slices in NHWC are many short rows).
    Odometer walk(c, first);
    const int64_t run_length = c.shape[walked - 1], src_step = c.src_strides[walked - 1] * int64_t(sizeof(E));
    const int64_t dst_step = c.dst_strides[walked - 1] * int64_t(sizeof(E));
    for (int64_t u = first; u < last;) {
      const int64_t run = std::min(last - u, run_length - walk.coord[walked - 1]);
      loops.copy_rows(dst + walk.dst, dst_step, src + walk.src, src_step, run, inner * int64_t(sizeof(E)));
      u += run;
      walk.advance(run);
    }
    return;
  }
  int64_t row = first / p.strips, strip = first % p.strips;
  Odometer walk(c, row);
  for (int64_t u = first; u < last; ++u) {
    if (strip == p.strips) {
      strip = 0;
      ++row;
      walk.next();
    }
    const E* s = src + walk.src;
    E* d = dst + walk.dst;
    const int64_t i0 = strip++ * kTile;
    if (p.tiled == 1) {
      if (ss == 1 && ds == 1) {
        std::memcpy(d, s, size_t(inner) * sizeof(E));
      } else if (ss == 0 && ds == 1) {
        loops.fill(d, s, inner);
      } else {
        for (int64_t j = 0; j < inner; ++j) d[j * ds] = s[j * ss];
      }
      continue;
    }
    const int64_t rows = std::min(kTile, p.tiled - i0);
    s += i0 * p.tiled_src;
    d += i0 * p.tiled_dst;
    for (int64_t j0 = 0; j0 < inner; j0 += kTile) {
      const int64_t cols = std::min(kTile, inner - j0);
      if (ds == 1) {  // a transpose: the tiled dim is contiguous in the source (tiled_src is 1)
        loops.transpose_tile(s + j0 * ss, d + j0, rows, cols, ss, p.tiled_dst);
        continue;
      }
      for (int64_t i = 0; i < rows; ++i) {
        const E* si = s + i * p.tiled_src + j0 * ss;
        E* di = d + i * p.tiled_dst + j0 * ds;
        for (int64_t j = 0; j < cols; ++j) di[j * ds] = si[j * ss];
      }
    }
  }
}

template <class E>
Kernel strided_copy_kernel(const std::vector<StridedCopy>& copies) {
  // The work units of all copies form one range; first_unit[k] is copy k's first.
  std::vector<PreparedCopy> prepared;
  std::vector<int64_t> first_unit = {0};
  int64_t elements = 0;
  for (const StridedCopy& c : copies) {
    prepared.push_back(prepare(c));
    first_unit.push_back(first_unit.back() + prepared.back().units);
    elements += prepared.back().elements;
  }
  const int64_t units = first_unit.back();
  const int64_t grain = std::max<int64_t>(1, kElementGrain * units / std::max<int64_t>(1, elements));
  const CopyLoops loops = copy_loops<E>();
  return [prepared = std::move(prepared), first_unit = std::move(first_unit), units, grain,
          loops](const KernelArgs& args) {
    args.pool->parallel_for(size_t(units), size_t(grain), [&](size_t begin, size_t end) {
      int64_t u = int64_t(begin);
      size_t k = size_t(std::upper_bound(first_unit.begin(), first_unit.end(), u) - first_unit.begin()) - 1;
      for (; u < int64_t(end); ++k) {
        const PreparedCopy& p = prepared[k];
        const int64_t stop = std::min<int64_t>(int64_t(end), first_unit[k + 1]);
        copy_units(p, loops, static_cast<const E*>(args.inputs[p.c.input]),
                   static_cast<E*>(args.outputs[p.c.output]), u - first_unit[k], stop - first_unit[k]);
        u = stop;
      }
    });
  };
}

// Where output coordinate `o` of a padded dim reads from, or -1 for the constant.
inline int64_t pad_source(int64_t o, int64_t begin, int64_t size, PadMode mode) {
  int64_t i = o - begin;
  if (i >= 0 && i < size) return i;
  switch (mode) {
    case PadMode::kConstant: return -1;
    case PadMode::kEdge: return i < 0 ? 0 : size - 1;
    case PadMode::kReflection: return i < 0 ? -i : 2 * (size - 1) - i;  // padding < size: one bounce
  }
  return -1;
}

template <class E>
Kernel pad_kernel(std::vector<uint32_t> in_shape, std::vector<int64_t> begin, std::vector<int64_t> end, PadMode mode,
                  E value) {
  if (in_shape.empty()) {  // a scalar pads to itself
    in_shape = {1};
    begin = end = {0};
  }
  const size_t rank = in_shape.size();
  std::vector<int64_t> out_shape(rank), in_strides = row_major_strides(in_shape);
  int64_t rows = 1;
  for (size_t d = 0; d < rank; ++d) {
    out_shape[d] = begin[d] + int64_t(in_shape[d]) + end[d];
    if (d + 1 < rank) rows *= out_shape[d];
  }
  const int64_t inner = out_shape.back();
  const int64_t grain = std::max<int64_t>(1, kElementGrain / inner);
  return [=](const KernelArgs& args) {
    const E* in = static_cast<const E*>(args.inputs[0]);
    E* out = static_cast<E*>(args.outputs[0]);
    const int64_t n = in_shape[rank - 1], b = begin[rank - 1];
    args.pool->parallel_for(size_t(rows), size_t(grain), [&](size_t first, size_t last) {
      for (int64_t row = int64_t(first); row < int64_t(last); ++row) {
        int64_t rest = row, src = 0;
        bool constant_row = false;
        for (size_t d = rank - 1; d-- > 0;) {
          int64_t i = pad_source(rest % out_shape[d], begin[d], in_shape[d], mode);
          rest /= out_shape[d];
          if (i < 0) constant_row = true;
          src += i * in_strides[d];
        }
        E* o = out + row * inner;
        if (constant_row) {
          std::fill(o, o + inner, value);
          continue;
        }
        const E* s = in + src;
        for (int64_t j = 0; j < b; ++j) {
          int64_t i = pad_source(j, b, n, mode);
          o[j] = i < 0 ? value : s[i];
        }
        std::memcpy(o + b, s, size_t(n) * sizeof(E));
        for (int64_t j = b + n; j < inner; ++j) {
          int64_t i = pad_source(j, b, n, mode);
          o[j] = i < 0 ? value : s[i];
        }
      }
    });
  };
}

}  // namespace

std::vector<int64_t> row_major_strides(const std::vector<uint32_t>& shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= shape[d];
  }
  return strides;
}

StridedCopy contiguous_copy(const std::vector<uint32_t>& shape) {
  StridedCopy c;
  c.shape.assign(shape.begin(), shape.end());
  c.src_strides = c.dst_strides = row_major_strides(shape);
  return c;
}

Kernel make_strided_copy_kernel(DataType type, std::vector<StridedCopy> copies) {
  return visit_type(type, [&](auto tag) { return strided_copy_kernel<decltype(tag)>(copies); });
}

Kernel make_pad_kernel(DataType type, const std::vector<uint32_t>& input_shape, const std::vector<int64_t>& begin,
                       const std::vector<int64_t>& end, PadMode mode, const Number& value) {
  uint8_t bytes[8] = {};
  cast_number_to(value, type, bytes);
  return visit_type(type, [&](auto tag) {
    using E = decltype(tag);
    E v;
    std::memcpy(&v, bytes, sizeof(E));
    return pad_kernel<E>(input_shape, begin, end, mode, v);
  });
}

Kernel make_triangular_kernel(DataType type, const std::vector<uint32_t>& shape, bool upper, int64_t diagonal) {
  const size_t esize = data_type_size(type);
  const int64_t height = shape[shape.size() - 2], width = shape.back();
  const int64_t rows = int64_t(element_count(shape)) / width;
  const int64_t grain = std::max<int64_t>(1, kElementGrain / width);
  return [=](const KernelArgs& args) {
    const uint8_t* in = static_cast<const uint8_t*>(args.inputs[0]);
    uint8_t* out = static_cast<uint8_t*>(args.outputs[0]);
    args.pool->parallel_for(size_t(rows), size_t(grain), [&](size_t first, size_t last) {
      for (int64_t row = int64_t(first); row < int64_t(last); ++row) {
        const int64_t i = row % height;
        // Kept columns [lo, hi): upper keeps j >= i + diagonal, lower keeps j <= i + diagonal.
        const int64_t lo = upper ? std::clamp<int64_t>(i + diagonal, 0, width) : 0;
        const int64_t hi = upper ? width : std::clamp<int64_t>(i + diagonal + 1, 0, width);
        const size_t base = size_t(row * width) * esize;
        std::memset(out + base, 0, size_t(lo) * esize);  // zero bits are 0 in every dtype
        std::memcpy(out + base + size_t(lo) * esize, in + base + size_t(lo) * esize, size_t(hi - lo) * esize);
        std::memset(out + base + size_t(hi) * esize, 0, size_t(width - hi) * esize);
      }
    });
  };
}

}  // namespace webnn
