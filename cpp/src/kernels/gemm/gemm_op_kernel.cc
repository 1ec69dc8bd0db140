// The gemm operation on the GEMM driver: B' packed once when constant (per dispatch otherwise), A'
// read in place (transposed or not) when float32. A linear layer's c (a row of N values, beta 1,
// alpha 1) is added in the GEMM epilogue; other alpha/beta/c combinations run as a pass over the
// product.
#include <algorithm>
#include <memory>

#include "kernels/gemm/gemm.h"
#include "kernels/gemm/gemm_op.h"
#include "kernels/gemm/pack_f32.h"
#include "core/thread_pool.h"

namespace webnn {

namespace {

// B' = b or b^T as a packed [K][N] operand.
template <class T>
PackedB pack_gemm_b(const GemmOpParams& p, const void* b) {
  std::vector<float> buffer;
  const float* values = as_f32(static_cast<const T*>(b), p.k * p.n, buffer);
  return pack_b_f32(p.k, p.n, values, p.b_transpose ? p.k : p.n, p.b_transpose);
}

// Whether c is a per-column bias added as is: alpha 1, beta 1, c broadcast along M.
bool c_is_column_bias(const GemmOpParams& p) {
  return p.has_c && p.alpha == 1.0f && p.beta == 1.0f && p.c_stride_m == 0 && p.c_stride_n == 1;
}

template <class T>
void gemm_op_run(const GemmOpParams& p, const PackedB* constant_b, const KernelArgs& args) {
  const size_t M = p.m, N = p.n, K = p.k;
  const PackedB b = constant_b ? *constant_b : pack_gemm_b<T>(p, args.inputs[1]);
  std::vector<float> a_buffer, c_buffer, product_buffer;
  const float* A = as_f32(static_cast<const T*>(args.inputs[0]), M * K, a_buffer);  // [M][K] or [K][M]
  const T* c = p.has_c ? static_cast<const T*>(args.inputs[2]) : nullptr;
  T* out = static_cast<T*>(args.outputs[0]);
  float* product = std::is_same_v<T, float> ? reinterpret_cast<float*>(out) : nullptr;
  if (!product) {
    product_buffer.resize(M * N);
    product = product_buffer.data();
  }
  GemmEpilogue epilogue;
  const bool fused_c = c_is_column_bias(p);
  if (fused_c) epilogue.bias = as_f32(c, N, c_buffer);
  gemm_f32_packed(M, N, K, A, p.a_transpose ? M : K, p.a_transpose, b, product, N, epilogue, args.pool);
  if (fused_c && std::is_same_v<T, float>) return;
  const bool scale = !fused_c && (p.alpha != 1.0f || c);
  const size_t grain = std::max<size_t>(1, (size_t(1) << 14) / std::max<size_t>(1, N));
  args.pool->parallel_for(M, grain, [&](size_t begin, size_t end) {
    for (size_t row = begin; row < end; ++row)
      for (size_t j = 0; j < N; ++j) {
        float v = product[row * N + j];
        if (scale) {
          v *= p.alpha;
          if (c) v += p.beta * float(load(c[row * p.c_stride_m + j * p.c_stride_n]));
        }
        store(out + row * N + j, v);
      }
  });
}

}  // namespace

Kernel make_gemm_op_kernel(DataType type, const GemmOpParams& params, const void* b_constant) {
  const bool half = type == DataType::kFloat16;
  std::shared_ptr<const PackedB> packed;
  if (b_constant)
    packed = std::make_shared<const PackedB>(share_packed(half ? pack_gemm_b<float16>(params, b_constant)
                                                               : pack_gemm_b<float>(params, b_constant)));
  if (half) return [params, packed](const KernelArgs& a) { gemm_op_run<float16>(params, packed.get(), a); };
  return [params, packed](const KernelArgs& a) { gemm_op_run<float>(params, packed.get(), a); };
}

}  // namespace webnn
