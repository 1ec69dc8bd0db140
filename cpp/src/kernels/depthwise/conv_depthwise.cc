// Depthwise conv2d: the plan and the weights in the loops' layout are made once, at kernel creation
// (the weights again per dispatch only when the filter is not a constant).
#include "kernels/depthwise/conv_depthwise.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/kernel_util.h"
#include "kernels/platform.h"
#include "kernels/unary/unary.h"
#include "core/thread_pool.h"

namespace webnn {

namespace {

constexpr size_t kScratchBudget = 8192;  // floats of NCHW scratch per thread: half of a 64 KB L1
constexpr size_t kChannelBlock = 64;     // NHWC channels per work item when rows are few
constexpr size_t kRowsForWholeRows = 16;  // NHWC: from this many output rows, an item is a whole row
constexpr size_t kMaxLanes = 16;

size_t round_up(size_t n, size_t multiple) { return (n + multiple - 1) / multiple * multiple; }

struct DepthwiseWeights {
  std::vector<float> weights;  // NCHW: [C][kH * kW]; NHWC: [kH * kW][channel_stride]
  std::vector<float> bias;     // C (NCHW) or channel_stride (NHWC) values
};

struct DepthwiseState {
  DepthwisePlan plan;
  const DepthwiseLoops* loops;
  std::vector<size_t> tap_offsets;
  std::shared_ptr<const DepthwiseWeights> constant;  // null for a dynamic filter or bias
  ActivationLoop activation;                         // a fused activation, after each work item
};

std::shared_ptr<const DepthwiseWeights> prepare_weights(const Conv2dParams& p, const DepthwisePlan& plan,
                                                        DataType type, const void* filter, const void* bias) {
  auto prepared = std::make_shared<DepthwiseWeights>();
  const FilterStrides fs = filter_strides(p);
  const size_t C = plan.channels, taps = plan.kernel_h * plan.kernel_w;
  const size_t channel_stride = plan.nhwc ? plan.channel_stride : C;
  prepared->weights.assign(taps * channel_stride, 0.0f);
  prepared->bias.assign(channel_stride, 0.0f);
  for (size_t c = 0; c < C; ++c) {
    for (size_t kh = 0; kh < plan.kernel_h; ++kh)
      for (size_t kw = 0; kw < plan.kernel_w; ++kw) {
        const size_t tap = kh * plan.kernel_w + kw;
        const float w = load_float(filter, type, c * fs.o + kh * fs.h + kw * fs.w) *
                        (p.filter_scale.empty() ? 1.0f : p.filter_scale[c]);
        prepared->weights[plan.nhwc ? tap * channel_stride + c : c * taps + tap] = w;
      }
    if (bias) prepared->bias[c] = load_float(bias, type, c);
  }
  return prepared;
}

std::shared_ptr<DepthwiseState> make_state(const Conv2dParams& p, const DepthwiseLoops& loops) {
  auto state = std::make_shared<DepthwiseState>();
  state->loops = &loops;
  DepthwisePlan& g = state->plan;
  g.batch = p.batch;
  g.channels = p.out_channels;
  g.in_h = p.in_h;
  g.in_w = p.in_w;
  g.out_h = p.out_h;
  g.out_w = p.out_w;
  g.kernel_h = p.kernel_h;
  g.kernel_w = p.kernel_w;
  g.stride_h = p.stride_h;
  g.stride_w = p.stride_w;
  g.dilation_h = p.dilation_h;
  g.dilation_w = p.dilation_w;
  g.pad_top = p.pad_top;
  g.pad_left = p.pad_left;
  g.activation_min = p.activation_min;
  g.activation_max = p.activation_max;
  g.nhwc = p.nhwc;
  state->activation = activation_loop(p.activation);
  g.round_to_half = state->activation.only_rounds();  // in registers, as each output is stored
  if (g.round_to_half) state->activation = ActivationLoop{};
  g.lanes = p.out_w > loops.narrow_lanes ? loops.lanes : loops.narrow_lanes;
  g.phase_len = round_up(round_up(p.out_w, g.lanes) + (p.kernel_w - 1) * p.dilation_w / p.stride_w, g.lanes);
  // Bands of output rows whose scratch rows fit the budget, evened out over the plane.
  const size_t rows_fit = std::max<size_t>(1, kScratchBudget / g.row_pitch());
  const size_t window = (p.kernel_h - 1) * p.dilation_h + 1;
  const size_t max_band = rows_fit > window ? (rows_fit - window) / p.stride_h + 1 : 1;
  g.bands = (p.out_h + max_band - 1) / max_band;
  g.band_rows = (p.out_h + g.bands - 1) / g.bands;
  for (size_t kh = 0; kh < p.kernel_h; ++kh)
    for (size_t kw = 0; kw < p.kernel_w; ++kw) {
      const size_t column = kw * p.dilation_w;
      state->tap_offsets.push_back(kh * p.dilation_h * g.row_pitch() + column % p.stride_w * g.phase_len +
                                   column / p.stride_w);
    }
  g.tap_offsets = state->tap_offsets.data();
  g.channel_stride = round_up(g.channels, kMaxLanes);
  // Whole rows stream each input row once, front to back; few rows split their channels too.
  g.channel_block = p.batch * p.out_h >= kRowsForWholeRows ? g.channel_stride : kChannelBlock;
  return state;
}

// A fused activation over the output of one work item: NCHW, a band of rows of a plane; NHWC, a
// block of channels of every pixel of an output row.
void activate_item(const DepthwisePlan& g, const ActivationLoop& activation, float* out, size_t item) {
  if (!g.nhwc) {
    const size_t plane = item / g.bands, oy0 = item % g.bands * g.band_rows;
    if (oy0 >= g.out_h) return;
    const size_t rows = std::min(g.out_h, oy0 + g.band_rows) - oy0;
    return activation(out + (plane * g.out_h + oy0) * g.out_w, rows * g.out_w);
  }
  const size_t blocks = g.channel_blocks(), row = item / blocks;
  const size_t c0 = item % blocks * g.channel_block, c1 = std::min(g.channels, c0 + g.channel_block);
  float* dst = out + row * g.out_w * g.channels + c0;
  if (c1 - c0 == g.channels) return activation(dst, g.out_w * g.channels);  // the row is contiguous
  for (size_t ox = 0; ox < g.out_w; ++ox) activation(dst + ox * g.channels, c1 - c0);
}

void run_depthwise(const DepthwiseState& state, const DepthwiseWeights& w, const float* in, float* out,
                   const float* residual, ThreadPool* pool) {
  const DepthwisePlan& plan = state.plan;
  const DepthwiseItemsFn items = state.loops->f32_items;
  const size_t scratch_floats = plan.scratch_floats();
  pool->parallel_for(plan.work_items(), 1, [&](size_t begin, size_t end) {
    thread_local std::vector<float> scratch;
    scratch.resize(scratch_floats + kMaxLanes);
    const size_t misalignment = reinterpret_cast<uintptr_t>(scratch.data()) / sizeof(float) % kMaxLanes;
    float* aligned = scratch.data() + (misalignment ? kMaxLanes - misalignment : 0);
    if (!state.activation) return items(plan, w.weights.data(), w.bias.data(), in, out, residual, begin, end, aligned);
    for (size_t item = begin; item < end; ++item) {  // the activation over each item's output while in cache
      items(plan, w.weights.data(), w.bias.data(), in, out, residual, item, item + 1, aligned);
      activate_item(plan, state.activation, out, item);
    }
  });
}

}  // namespace

Kernel make_depthwise_conv2d_kernel(DataType type, const Conv2dParams& p, const void* filter_constant,
                                    const void* bias_constant, const DepthwiseLoops* loops) {
  std::shared_ptr<DepthwiseState> state = make_state(p, loops ? *loops : *kernel_table().depthwise);
  if (filter_constant && (!p.has_bias || bias_constant))
    state->constant = prepare_weights(p, state->plan, type, filter_constant, p.has_bias ? bias_constant : nullptr);
  const bool f32 = type == DataType::kFloat32;
  const size_t in_count = p.batch * p.in_h * p.in_w * p.in_channels;
  const size_t out_count = p.batch * p.out_h * p.out_w * p.out_channels;
  return [=](const KernelArgs& args) {
    const DepthwisePlan& plan = state->plan;
    std::shared_ptr<const DepthwiseWeights> weights =
        state->constant ? state->constant
                        : prepare_weights(p, plan, type, args.inputs[1], p.has_bias ? args.inputs[2] : nullptr);
    const float* in = static_cast<const float*>(args.inputs[0]);
    float* out = static_cast<float*>(args.outputs[0]);
    const void* residual = p.has_residual ? args.inputs[p.has_bias ? 3 : 2] : nullptr;
    if (f32) return run_depthwise(*state, *weights, in, out, static_cast<const float*>(residual), args.pool);
    // float16 computes in float32: convert on the way in and out.
    thread_local std::vector<float> in_buffer, out_buffer, residual_buffer;
    in_buffer.resize(in_count);
    widen_halves(args.inputs[0], in_buffer.data(), in_count, args.pool);
    out_buffer.resize(out_count);
    if (residual) {
      residual_buffer.resize(out_count);
      widen_halves(residual, residual_buffer.data(), out_count, args.pool);
    }
    run_depthwise(*state, *weights, in_buffer.data(), out_buffer.data(), residual ? residual_buffer.data() : nullptr,
                  args.pool);
    narrow_to_halves(out_buffer.data(), args.outputs[0], out_count, args.pool);
  };
}

}  // namespace webnn
