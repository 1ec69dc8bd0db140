// Reference gemm operation: A' and B' as float32 row-major matrices, the product from gemm_f32
// in row blocks, then the alpha/beta/c epilogue.
#include <algorithm>

#include "kernels/gemm.h"
#include "kernels/gemm_op.h"
#include "kernels/pack_f32.h"
#include "runtime/thread_pool.h"

namespace webnn {

namespace {

template <class T>
void gemm_op_run(const GemmOpParams& p, const KernelArgs& args) {
  const T* a = static_cast<const T*>(args.inputs[0]);
  const T* b = static_cast<const T*>(args.inputs[1]);
  const T* c = p.has_c ? static_cast<const T*>(args.inputs[2]) : nullptr;
  T* out = static_cast<T*>(args.outputs[0]);
  const size_t M = p.m, N = p.n, K = p.k;
  std::vector<float> a_buf, b_buf;
  const float* A = matrix_as_f32(a, M, K, p.a_transpose, a_buf);
  const float* B = matrix_as_f32(b, K, N, p.b_transpose, b_buf);

  const size_t grain = std::max<size_t>(1, (size_t(1) << 16) / std::max<size_t>(1, N * K));
  args.pool->parallel_for(M, grain, [&](size_t begin, size_t end) {
    const size_t rows = end - begin;
    // float32 products land in the output itself; float16 ones in a float32 block.
    std::vector<float> block;
    float* product;
    if constexpr (std::is_same_v<T, float>) {
      product = out + begin * N;
    } else {
      block.resize(rows * N);
      product = block.data();
    }
    gemm_f32(rows, N, K, A + begin * K, K, B, N, product, N);
    for (size_t i = 0; i < rows; ++i) {
      const size_t row = begin + i;
      for (size_t j = 0; j < N; ++j) {
        float v = p.alpha * product[i * N + j];
        if (c) v += p.beta * float(load(c[row * p.c_stride_m + j * p.c_stride_n]));
        store(out + row * N + j, v);
      }
    }
  });
}

}  // namespace

Kernel make_gemm_op_kernel(DataType type, const GemmOpParams& params) {
  if (type == DataType::kFloat16) return [params](const KernelArgs& a) { gemm_op_run<float16>(params, a); };
  return [params](const KernelArgs& a) { gemm_op_run<float>(params, a); };
}

}  // namespace webnn
