// Portable reference normalization kernels: statistics and the normalized value in double,
// rounded once to the output type.
#include "kernels/norm.h"
#include "runtime/thread_pool.h"

namespace webnn {

namespace {

constexpr size_t kElementGrain = 1 << 15;

template <class T>
Kernel batch_norm_kernel(const BatchNormParams& p) {
  return [p](const KernelArgs& args) {
    const T* input = static_cast<const T*>(args.inputs[0]);
    const T* mean = static_cast<const T*>(args.inputs[1]);
    const T* variance = static_cast<const T*>(args.inputs[2]);
    const T* scale = p.scale_index >= 0 ? static_cast<const T*>(args.inputs[p.scale_index]) : nullptr;
    const T* bias = p.bias_index >= 0 ? static_cast<const T*>(args.inputs[p.bias_index]) : nullptr;
    T* output = static_cast<T*>(args.outputs[0]);
    const size_t channels = p.split.axis, inner = p.split.inner;
    const size_t grain = std::max<size_t>(1, kElementGrain / inner);
    args.pool->parallel_for(p.split.outer * channels, grain, [&](size_t begin, size_t end) {
      for (size_t row = begin; row < end; ++row) {
        const size_t c = row % channels;
        const double m = load(mean[c]);
        const double factor = (scale ? double(load(scale[c])) : 1.0) / std::sqrt(double(load(variance[c])) + p.epsilon);
        const double b = bias ? double(load(bias[c])) : 0.0;
        const T* in = input + row * inner;
        T* out = output + row * inner;
        for (size_t i = 0; i < inner; ++i) store_rounded(out + i, (double(load(in[i])) - m) * factor + b);
      }
    });
  };
}

template <class T>
Kernel mean_variance_norm_kernel(const MeanVarianceNormParams& p) {
  return [p](const KernelArgs& args) {
    const T* input = static_cast<const T*>(args.inputs[0]);
    const T* scale = p.scale_index >= 0 ? static_cast<const T*>(args.inputs[p.scale_index]) : nullptr;
    const T* bias = p.bias_index >= 0 ? static_cast<const T*>(args.inputs[p.bias_index]) : nullptr;
    T* output = static_cast<T*>(args.outputs[0]);
    const ReductionLayout& layout = p.layout;
    const size_t block = layout.block, count = layout.reduced.count();
    const size_t step = layout.reduced.strides.back(), param_step = layout.reduced.param_strides.back();
    const size_t block_param_stride = layout.block_param_stride;
    const size_t grain = std::max<size_t>(1, kElementGrain / (count * block));
    args.pool->parallel_for(layout.groups.count(), grain, [&](size_t begin, size_t end) {
      std::vector<double> mean(block), factor(block);
      for (size_t g = begin; g < end; ++g) {
        size_t base, param_base;
        layout.groups.offsets(g, &base, &param_base);
        // Calls fn(input offset, parameter offset, k) for every element of the group.
        auto for_each = [&](auto&& fn) {
          layout.reduced.for_each_run(0, count, [&](size_t offset, size_t param_offset, size_t length) {
            for (size_t j = 0; j < length; ++j)
              for (size_t k = 0; k < block; ++k)
                fn(base + offset + j * step + k, param_base + param_offset + j * param_step + k * block_param_stride, k);
          });
        };
        std::fill(mean.begin(), mean.end(), 0.0);
        for_each([&](size_t i, size_t, size_t k) { mean[k] += load(input[i]); });
        for (double& m : mean) m /= double(count);
        std::fill(factor.begin(), factor.end(), 0.0);
        for_each([&](size_t i, size_t, size_t k) {
          const double d = double(load(input[i])) - mean[k];
          factor[k] += d * d;
        });
        for (double& f : factor) f = 1.0 / std::sqrt(f / double(count) + p.epsilon);
        for_each([&](size_t i, size_t pi, size_t k) {
          double y = (double(load(input[i])) - mean[k]) * factor[k];
          if (scale) y *= double(load(scale[pi]));
          if (bias) y += double(load(bias[pi]));
          store_rounded(output + i, y);
        });
      }
    });
  };
}

}  // namespace

Kernel make_batch_norm_kernel(DataType type, const BatchNormParams& params) {
  if (type == DataType::kFloat16) return batch_norm_kernel<float16>(params);
  return batch_norm_kernel<float>(params);
}

Kernel make_mean_variance_norm_kernel(DataType type, const MeanVarianceNormParams& params) {
  if (type == DataType::kFloat16) return mean_variance_norm_kernel<float16>(params);
  return mean_variance_norm_kernel<float>(params);
}

}  // namespace webnn
