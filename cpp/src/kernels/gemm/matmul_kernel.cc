// matmul on the GEMM driver: batches broadcast, a constant B packed once.
#include <cstring>

#include "kernels/gemm/gemm.h"
#include "kernels/kernel_util.h"
#include "kernels/unary/unary.h"
#include "core/thread_pool.h"

namespace webnn {

namespace {

void to_float(const void* in, DataType type, float* out, size_t n) {
  if (type == DataType::kFloat32) {
    std::memcpy(out, in, n * sizeof(float));
    return;
  }
  widen_halves(in, out, n, nullptr);
}

}  // namespace

Kernel make_matmul_kernel(DataType type, const std::vector<uint32_t>& a_shape, const std::vector<uint32_t>& b_shape,
                          const std::vector<uint32_t>& out_shape, const void* b_constant,
                          const MatmulEpilogue& fused) {
  const size_t rank = out_shape.size();
  const size_t M = out_shape[rank - 2], N = out_shape[rank - 1], K = a_shape[a_shape.size() - 1];
  std::vector<uint32_t> batch(out_shape.begin(), out_shape.end() - 2);
  std::vector<uint32_t> a_batch(a_shape.begin(), a_shape.end() - 2), b_batch(b_shape.begin(), b_shape.end() - 2);
  BroadcastLoop loop = make_broadcast_loop(batch, {a_batch, b_batch});
  const size_t batches = element_count(batch), b_batches = element_count(b_batch);
  // Per output batch: which A and B matrices it multiplies.
  std::vector<size_t> a_index(batches), b_index(batches);
  {
    size_t inner = loop.inner(), off[2];
    for (size_t r = 0; r < loop.outer(); ++r) {
      loop.offsets(r, off);
      for (size_t i = 0; i < inner; ++i) {
        a_index[r * inner + i] = off[0] + i * loop.strides[0].back();
        b_index[r * inner + i] = off[1] + i * loop.strides[1].back();
      }
    }
  }
  const bool half = type == DataType::kFloat16;
  const size_t elem = data_type_size(type);

  // B matrix i packed into `packed`.
  auto pack_one = [=](const void* b, size_t i, PackedB& packed) {
    const uint8_t* src = static_cast<const uint8_t*>(b) + i * K * N * elem;
    if (!half) return pack_b_f32_into(K, N, reinterpret_cast<const float*>(src), N, false, packed);
    std::vector<float> tmp(K * N);
    to_float(src, type, tmp.data(), K * N);
    pack_b_f32_into(K, N, tmp.data(), N, false, packed);
  };
  std::shared_ptr<std::vector<PackedB>> constant_b;
  if (b_constant) {
    constant_b = std::make_shared<std::vector<PackedB>>(b_batches);
    for (size_t i = 0; i < b_batches; ++i) {
      pack_one(b_constant, i, (*constant_b)[i]);
      (*constant_b)[i] = share_packed(std::move((*constant_b)[i]));
    }
  }

  const ActivationLoop activation = activation_loop(fused.activation);
  return [=](const KernelArgs& args) {
    const uint8_t* a = static_cast<const uint8_t*>(args.inputs[0]);
    uint8_t* out = static_cast<uint8_t*>(args.outputs[0]);
    const float* extra = fused.residual || fused.column_bias ? static_cast<const float*>(args.inputs[2]) : nullptr;
    // A B operand of this dispatch is packed by the thread that multiplies by it, into that
    // thread's scratch (kept across calls), right before its GEMM.
    auto b_of = [&](size_t bi) -> const PackedB& {
      if (constant_b) return (*constant_b)[b_index[bi]];
      thread_local PackedB scratch;
      pack_one(args.inputs[1], b_index[bi], scratch);
      return scratch;
    };
    auto one_batch = [&](size_t bi, ThreadPool* pool) {
      const PackedB& b_packed = b_of(bi);
      const uint8_t* a_mat = a + a_index[bi] * M * K * elem;
      uint8_t* c_mat = out + bi * M * N * elem;
      if (!half) {
        GemmEpilogue epilogue;
        epilogue.min = fused.min;
        epilogue.max = fused.max;
        epilogue.activation = activation;
        if (fused.column_bias) epilogue.bias = extra;
        if (fused.residual) epilogue.residual = extra + bi * M * N, epilogue.residual_ld = N;
        gemm_f32_packed(M, N, K, reinterpret_cast<const float*>(a_mat), K, false, b_packed,
                        reinterpret_cast<float*>(c_mat), N, epilogue, pool);
        return;
      }
      std::vector<float> fa(M * K), fc(M * N);
      to_float(a_mat, type, fa.data(), M * K);
      gemm_f32_packed(M, N, K, fa.data(), K, false, b_packed, fc.data(), N, GemmEpilogue{}, pool);
      narrow_to_halves(fc.data(), c_mat, M * N, nullptr);
    };
    if (batches == 1) {
      one_batch(0, args.pool);
      return;
    }
    args.pool->parallel_for(batches, 1, [&](size_t begin, size_t end) {
      for (size_t bi = begin; bi < end; ++bi) one_batch(bi, nullptr);
    });
  };
}

}  // namespace webnn
