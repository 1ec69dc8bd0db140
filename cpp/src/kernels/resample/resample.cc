// Portable reference resample2d: per-axis tap tables (two input offsets and a weight per output
// coordinate) are built once, so the loop over the output is only table lookups.
#include <algorithm>
#include <cmath>

#include "kernels/kernel_util.h"
#include "kernels/resample/resample.h"
#include "core/thread_pool.h"

namespace webnn {

namespace {

// For one dim: per output coordinate, the input offsets of the two taps and the second's weight.
// Dims that are not resampled map o to o with weight 0.
struct AxisTaps {
  std::vector<size_t> first, second;
  std::vector<float> weight;
};

AxisTaps axis_taps(size_t in, size_t out, size_t stride, bool resampled, double scale, bool linear) {
  AxisTaps taps;
  taps.first.resize(out);
  taps.second.resize(out);
  taps.weight.assign(out, 0.0f);
  for (size_t o = 0; o < out; ++o) {
    if (!resampled) {
      taps.first[o] = taps.second[o] = o * stride;
      continue;
    }
    const double u = std::clamp((double(o) + 0.5) / scale - 0.5, 0.0, double(in - 1));
    if (linear) {
      const double lower = std::floor(u);
      taps.first[o] = size_t(lower) * stride;
      taps.second[o] = size_t(std::ceil(u)) * stride;
      taps.weight[o] = float(u - lower);
    } else {
      taps.first[o] = taps.second[o] = size_t(std::ceil(u - 0.5)) * stride;
    }
  }
  return taps;
}

template <class T>
inline void store_interpolated(T* p, float v) {
  if constexpr (std::is_integral_v<T>) *p = T(std::nearbyint(v));  // v lies between two T values
  else store(p, v);
}

template <class T>
Kernel resample2d_kernel(const Resample2dParams& p) {
  std::vector<AxisTaps> taps;
  size_t stride = 1;
  std::vector<size_t> strides(4);
  for (size_t d = 4; d-- > 0;) {
    strides[d] = stride;
    stride *= p.input_shape[d];
  }
  for (size_t d = 0; d < 4; ++d) {
    const int which = d == p.axes[0] ? 0 : d == p.axes[1] ? 1 : -1;
    taps.push_back(axis_taps(p.input_shape[d], p.output_shape[d], strides[d], which >= 0,
                             which >= 0 ? p.scales[which] : 1.0, p.linear));
  }
  const size_t a = std::min(p.axes[0], p.axes[1]), b = std::max(p.axes[0], p.axes[1]);
  const std::vector<uint32_t> out_shape = p.output_shape;
  const bool linear = p.linear;
  return [taps, a, b, out_shape, linear](const KernelArgs& args) {
    const T* input = static_cast<const T*>(args.inputs[0]);
    T* output = static_cast<T*>(args.outputs[0]);
    const size_t rows = size_t(out_shape[0]) * out_shape[1] * out_shape[2], width = out_shape[3];
    args.pool->parallel_for(rows, std::max<size_t>(1, (size_t(1) << 14) / width), [&](size_t begin, size_t end) {
      size_t o[4];
      for (size_t row = begin; row < end; ++row) {
        o[0] = row / (size_t(out_shape[1]) * out_shape[2]);
        o[1] = row / out_shape[2] % out_shape[1];
        o[2] = row % out_shape[2];
        T* out = output + row * width;
        if (!linear) {
          const size_t base = taps[0].first[o[0]] + taps[1].first[o[1]] + taps[2].first[o[2]];
          for (size_t x = 0; x < width; ++x) out[x] = input[base + taps[3].first[x]];
          continue;
        }
        // The four taps are (first|second along a) x (first|second along b); other dims use first.
        auto column = [&](size_t d, int i, int j) -> const std::vector<size_t>& {
          const bool second = d == a ? i : d == b ? j : false;
          return second ? taps[d].second : taps[d].first;
        };
        size_t row_offsets[2][2] = {{0, 0}, {0, 0}};
        for (size_t d = 0; d < 3; ++d)
          for (int i = 0; i < 2; ++i)
            for (int j = 0; j < 2; ++j) row_offsets[i][j] += column(d, i, j)[o[d]];
        const std::vector<size_t>* last[2][2] = {{&column(3, 0, 0), &column(3, 0, 1)}, {&column(3, 1, 0), &column(3, 1, 1)}};
        for (o[3] = 0; o[3] < width; ++o[3]) {
          auto tap = [&](int i, int j) { return float(load(input[row_offsets[i][j] + (*last[i][j])[o[3]]])); };
          const float wa = taps[a].weight[o[a]], wb = taps[b].weight[o[b]];
          const float top = tap(0, 0) * (1 - wb) + tap(0, 1) * wb;
          const float bottom = tap(1, 0) * (1 - wb) + tap(1, 1) * wb;
          store_interpolated(out + o[3], top * (1 - wa) + bottom * wa);
        }
      }
    });
  };
}

}  // namespace

Kernel make_resample2d_kernel(DataType type, const Resample2dParams& params) {
  switch (type) {
    case DataType::kFloat16: return resample2d_kernel<float16>(params);
    case DataType::kInt8: return resample2d_kernel<int8_t>(params);
    case DataType::kUint8: return resample2d_kernel<uint8_t>(params);
    default: return resample2d_kernel<float>(params);
  }
}

}  // namespace webnn
