// The normalization family: the kernels (the loops per ISA level are in norm_impl.h). The
// statistics take one pass of shifted moments in double (d = x - the group's first element: the
// variance's cancellation grows at most with the element count, and a constant group has exactly
// its value as mean and variance 0); the normalized value is computed in double and rounded once.
#include "kernels/norm/norm.h"
#include "kernels/platform.h"
#include "core/thread_pool.h"

namespace webnn {

namespace {

constexpr size_t kElementGrain = 1 << 15;
// Columns normalized together (their statistics live on the stack).
constexpr size_t kColumnTile = 256;

template <class T>
Kernel batch_norm_kernel(DataType type, const BatchNormParams& p) {
  const NormalizeFn normalize = kernel_table().norm->normalize(type);
  return [p, normalize](const KernelArgs& args) {
    const T* input = static_cast<const T*>(args.inputs[0]);
    const T* mean = static_cast<const T*>(args.inputs[1]);
    const T* variance = static_cast<const T*>(args.inputs[2]);
    const T* scale = p.scale_index >= 0 ? static_cast<const T*>(args.inputs[p.scale_index]) : nullptr;
    const T* bias = p.bias_index >= 0 ? static_cast<const T*>(args.inputs[p.bias_index]) : nullptr;
    T* output = static_cast<T*>(args.outputs[0]);
    const size_t channels = p.split.axis, inner = p.split.inner;
    // Channel c's mean and factor scale / sqrt(variance + epsilon).
    const auto channel_terms = [&](size_t c, double* m, double* f) {
      *m = load(mean[c]);
      *f = (scale ? double(load(scale[c])) : 1.0) / std::sqrt(double(load(variance[c])) + p.epsilon);
    };
    if (inner == 1) {  // channels innermost: rows of `channels` elements, normalized in column tiles
      args.pool->parallel_for(p.split.outer, std::max<size_t>(1, kElementGrain / channels), [&](size_t begin, size_t end) {
        double m[kColumnTile], f[kColumnTile];
        for (size_t c0 = 0; c0 < channels; c0 += kColumnTile) {
          const size_t width = std::min(kColumnTile, channels - c0);
          for (size_t k = 0; k < width; ++k) channel_terms(c0 + k, &m[k], &f[k]);
          const NormTerms terms{m, f, 1, nullptr, bias ? bias + c0 : nullptr, 0, 1};
          normalize(input + begin * channels + c0, output + begin * channels + c0, end - begin, channels, width, terms);
        }
      });
      return;
    }
    args.pool->parallel_for(p.split.outer * channels, std::max<size_t>(1, kElementGrain / inner),
                            [&](size_t begin, size_t end) {
                              for (size_t row = begin; row < end; ++row) {
                                const size_t c = row % channels;
                                double m, f;
                                channel_terms(c, &m, &f);
                                const NormTerms terms{&m, &f, 0, nullptr, bias ? bias + c : nullptr, 0, 0};
                                normalize(input + row * inner, output + row * inner, 1, 0, inner, terms);
                              }
                            });
  };
}

template <class T>
Kernel mean_variance_norm_kernel(DataType type, const MeanVarianceNormParams& p) {
  const NormLoops& loops = *kernel_table().norm;
  const MomentsRowFn moments_row = loops.moments_row(type);
  const MomentsColumnsFn moments_columns = loops.moments_columns(type);
  const NormalizeFn normalize = loops.normalize(type);
  return [=](const KernelArgs& args) {
    const T* input = static_cast<const T*>(args.inputs[0]);
    const T* scale = p.scale_index >= 0 ? static_cast<const T*>(args.inputs[p.scale_index]) : nullptr;
    const T* bias = p.bias_index >= 0 ? static_cast<const T*>(args.inputs[p.bias_index]) : nullptr;
    T* output = static_cast<T*>(args.outputs[0]);
    const ReductionLayout& layout = p.layout;
    const size_t block = layout.block, count = layout.reduced.count();
    const size_t step = layout.reduced.strides.back(), param_step = layout.reduced.param_strides.back();
    // Work units: column tiles of each group's block (the whole group when block is 1).
    const size_t tiles_per_group = (block + kColumnTile - 1) / kColumnTile;
    const size_t grain = std::max<size_t>(1, kElementGrain / (count * std::min(block, kColumnTile)));
    args.pool->parallel_for(layout.groups.count() * tiles_per_group, grain, [&](size_t begin, size_t end) {
      // Per column: the shift (the group's first element), then Σ d and Σ d^2 of d = x - shift,
      // which become the mean and the factor 1 / sqrt(variance + epsilon).
      double shift[kColumnTile], mean[kColumnTile], factor[kColumnTile];
      for (size_t t = begin; t < end; ++t) {
        const size_t k0 = tiles_per_group == 1 ? 0 : t % tiles_per_group * kColumnTile;
        const size_t width = std::min(kColumnTile, block - k0);
        size_t base, param_base;
        layout.groups.offsets(tiles_per_group == 1 ? t : t / tiles_per_group, &base, &param_base);
        base += k0;
        param_base += k0 * layout.block_param_stride;
        // Calls fn(x, run's parameter offset, run length) for each run of the tile's reduced walk.
        const auto for_each_run = [&](auto&& fn) {
          layout.reduced.for_each_run(0, count, [&](size_t offset, size_t param_offset, size_t length) {
            fn(input + base + offset, param_offset, length);
          });
        };
        for (size_t k = 0; k < width; ++k) {
          shift[k] = load(input[base + k]);
          mean[k] = factor[k] = 0.0;
        }
        for_each_run([&](const T* x, size_t, size_t length) {
          if (block == 1) {
            double sums[2] = {mean[0], factor[0]};
            moments_row(x, length, shift[0], sums);
            mean[0] = sums[0];
            factor[0] = sums[1];
          } else {
            moments_columns(x, length, step, width, shift, mean, factor);
          }
        });
        for (size_t k = 0; k < width; ++k) {
          const double mean_shift = mean[k] / double(count);
          const double variance = std::max(0.0, factor[k] / double(count) - mean_shift * mean_shift);
          mean[k] = shift[k] + mean_shift;
          factor[k] = 1.0 / std::sqrt(variance + p.epsilon);
        }
        for_each_run([&](const T* x, size_t param_offset, size_t length) {
          T* y = output + (x - input);
          const size_t param = param_base + param_offset;
          const T* s = scale ? scale + param : nullptr;
          const T* b = bias ? bias + param : nullptr;
          if (block == 1) normalize(x, y, 1, 0, length, NormTerms{mean, factor, 0, s, b, 0, param_step});
          else normalize(x, y, length, step, width, NormTerms{mean, factor, 1, s, b, param_step, layout.block_param_stride});
        });
      }
    });
  };
}

}  // namespace

Kernel make_batch_norm_kernel(DataType type, const BatchNormParams& params) {
  if (type == DataType::kFloat16) return batch_norm_kernel<float16>(type, params);
  return batch_norm_kernel<float>(type, params);
}

Kernel make_mean_variance_norm_kernel(DataType type, const MeanVarianceNormParams& params) {
  if (type == DataType::kFloat16) return mean_variance_norm_kernel<float16>(type, params);
  return mean_variance_norm_kernel<float>(type, params);
}

}  // namespace webnn
