// Portable reference GEMM and matmul.
#include <cstring>

#include "kernels/gemm.h"
#include "kernels/kernel_util.h"
#include "runtime/thread_pool.h"

namespace webnn {

void gemm_f32_ref(size_t M, size_t N, size_t K, const float* A, size_t lda, const float* B, size_t ldb, float* C,
                  size_t ldc) {
  for (size_t i = 0; i < M; ++i) {
    float* c = C + i * ldc;
    std::memset(c, 0, N * sizeof(float));
    const float* a = A + i * lda;
    for (size_t k = 0; k < K; ++k) {
      const float aik = a[k];
      const float* b = B + k * ldb;
      for (size_t j = 0; j < N; ++j) c[j] += aik * b[j];
    }
  }
}

void gemm_f32(size_t M, size_t N, size_t K, const float* A, size_t lda, const float* B, size_t ldb, float* C,
              size_t ldc) {
  gemm_f32_ref(M, N, K, A, lda, B, ldb, C, ldc);
}

namespace {

void half_to_float_n(const float16* in, float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = half_to_float(in[i].bits);
}
void float_to_half_n(const float* in, float16* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i].bits = float_to_half(in[i]);
}

}  // namespace

Kernel make_matmul_kernel(DataType type, const std::vector<uint32_t>& a_shape, const std::vector<uint32_t>& b_shape,
                          const std::vector<uint32_t>& out_shape) {
  const size_t rank = out_shape.size();
  const size_t M = out_shape[rank - 2], N = out_shape[rank - 1], K = a_shape[a_shape.size() - 1];
  std::vector<uint32_t> batch(out_shape.begin(), out_shape.end() - 2);
  std::vector<uint32_t> a_batch(a_shape.begin(), a_shape.end() - 2), b_batch(b_shape.begin(), b_shape.end() - 2);
  BroadcastLoop loop = make_broadcast_loop(batch, {a_batch, b_batch});
  // Per output batch: the batch offsets of A and B (in matrices).
  const size_t batches = element_count(batch);
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
  return [=](const KernelArgs& args) {
    const size_t grain = std::max<size_t>(1, (1 << 16) / std::max<size_t>(1, N * K));
    if (!half) {
      const float* a = static_cast<const float*>(args.inputs[0]);
      const float* b = static_cast<const float*>(args.inputs[1]);
      float* out = static_cast<float*>(args.outputs[0]);
      args.pool->parallel_for(batches * M, grain, [&](size_t begin, size_t end) {
        for (size_t row = begin; row < end;) {
          size_t bi = row / M, i = row % M;
          size_t rows = std::min(M - i, end - row);
          gemm_f32(rows, N, K, a + a_index[bi] * M * K + i * K, K, b + b_index[bi] * K * N, N,
                       out + bi * M * N + i * N, N);
          row += rows;
        }
      });
      return;
    }
    const float16* a = static_cast<const float16*>(args.inputs[0]);
    const float16* b = static_cast<const float16*>(args.inputs[1]);
    float16* out = static_cast<float16*>(args.outputs[0]);
    args.pool->parallel_for(batches * M, grain, [&](size_t begin, size_t end) {
      std::vector<float> fa, fb(K * N), fc;
      size_t loaded_b = SIZE_MAX;
      for (size_t row = begin; row < end;) {
        size_t bi = row / M, i = row % M;
        size_t rows = std::min(M - i, end - row);
        fa.resize(rows * K);
        fc.resize(rows * N);
        half_to_float_n(a + a_index[bi] * M * K + i * K, fa.data(), rows * K);
        if (loaded_b != b_index[bi]) {
          half_to_float_n(b + b_index[bi] * K * N, fb.data(), K * N);
          loaded_b = b_index[bi];
        }
        gemm_f32(rows, N, K, fa.data(), K, fb.data(), N, fc.data(), N);
        float_to_half_n(fc.data(), out + bi * M * N + i * N, rows * N);
        row += rows;
      }
    });
  };
}

}  // namespace webnn
