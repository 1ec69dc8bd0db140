// The unary family's kernels: threading around the inner loops of the active ISA level
// (unary_impl.h), and the ops' option handling.
#include <array>
#include <cstring>

#include "kernels/kernel_util.h"
#include "kernels/platform.h"
#include "kernels/unary/unary.h"
#include "core/thread_pool.h"

namespace webnn {

namespace {

constexpr size_t kElementGrain = 1 << 14;

const UnaryLoops& loops() { return *kernel_table().unary; }

// Runs loop(in + begin, out + begin, end - begin) over [0, count) in parallel chunks.
template <class Loop>
Kernel chunked_kernel(size_t count, size_t in_size, size_t out_size, Loop loop) {
  return [count, in_size, out_size, loop](const KernelArgs& args) {
    const char* in = static_cast<const char*>(args.inputs[0]);
    char* out = static_cast<char*>(args.outputs[0]);
    args.pool->parallel_for(count, kElementGrain, [&](size_t begin, size_t end) {
      loop(in + begin * in_size, out + begin * out_size, end - begin);
    });
  };
}

Kernel copy_kernel(size_t bytes) {
  constexpr size_t kByteGrain = size_t(1) << 20;
  return [bytes](const KernelArgs& args) {
    const uint8_t* in = static_cast<const uint8_t*>(args.inputs[0]);
    uint8_t* out = static_cast<uint8_t*>(args.outputs[0]);
    args.pool->parallel_for(bytes, kByteGrain, [&](size_t begin, size_t end) {
      std::memcpy(out + begin, in + begin, end - begin);
    });
  };
}

}  // namespace

ActivationLoop activation_loop(const FusedActivation& activation) {
  ActivationLoop loop;
  loop.scale = activation.scale;
  loop.shift = activation.shift;
  if (activation.round_to_half) loop.round = loops().unary(UnaryOp::kRoundToHalf, DataType::kFloat32);
  if (!activation.present) return loop;
  loop.fn = loops().unary(activation.op, DataType::kFloat32);
  if (!loop.fn) throw_type_error("internal: fused activation has no float32 variant");
  loop.params = activation.params;
  return loop;
}

Kernel make_unary_kernel(UnaryOp op, DataType type, size_t count, UnaryParams params) {
  const UnaryLoopFn fn = loops().unary(op, type);
  if (!fn) throw_type_error(str_cat("internal: unary kernel has no ", data_type_name(type), " variant"));
  const size_t size = data_type_size(type);
  return chunked_kernel(count, size, size,
                        [fn, params](const void* in, void* out, size_t n) { fn(in, out, n, params); });
}

Kernel make_clamp_kernel(DataType type, size_t count, const void* min_value, const void* max_value) {
  const ClampLoopFn fn = loops().clamp(type);
  const size_t size = data_type_size(type);
  std::array<uint8_t, 8> lo{}, hi{};
  std::memcpy(lo.data(), min_value, size);
  std::memcpy(hi.data(), max_value, size);
  return chunked_kernel(count, size, size,
                        [fn, lo, hi](const void* in, void* out, size_t n) { fn(in, out, n, lo.data(), hi.data()); });
}

namespace {
void convert_in_parallel(CastLoopFn fn, const void* in, size_t in_size, void* out, size_t out_size, size_t count,
                         ThreadPool* pool) {
  const auto run = [&](size_t begin, size_t end) {
    fn(static_cast<const char*>(in) + begin * in_size, static_cast<char*>(out) + begin * out_size, end - begin);
  };
  if (pool && count > kElementGrain) pool->parallel_for(count, kElementGrain, run);
  else run(0, count);
}
}  // namespace

void widen_halves(const void* in, float* out, size_t count, ThreadPool* pool) {
  convert_in_parallel(loops().cast(DataType::kFloat16, DataType::kFloat32), in, 2, out, 4, count, pool);
}

void narrow_to_halves(const float* in, void* out, size_t count, ThreadPool* pool) {
  convert_in_parallel(loops().cast(DataType::kFloat32, DataType::kFloat16), in, 4, out, 2, count, pool);
}

void round_to_halves(float* values, size_t count, ThreadPool* pool) {
  const UnaryLoopFn round = loops().unary(UnaryOp::kRoundToHalf, DataType::kFloat32);
  const auto run = [&](size_t begin, size_t end) { round(values + begin, values + begin, end - begin, {}); };
  if (pool && count > kElementGrain) pool->parallel_for(count, kElementGrain, run);
  else run(0, count);
}

Kernel make_cast_kernel(DataType from, DataType to, size_t count) {
  if (from == to) return copy_kernel(count * data_type_size(from));  // exact, NaN payloads too
  return chunked_kernel(count, data_type_size(from), data_type_size(to), loops().cast(from, to));
}

}  // namespace webnn
