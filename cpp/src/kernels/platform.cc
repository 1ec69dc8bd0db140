#include "kernels/platform.h"

#include <webnn/webnn.h>

#include "kernels/data_movement/data_movement.h"
#include "kernels/depthwise/conv_depthwise.h"
#include "kernels/elementwise/elementwise.h"
#include "kernels/norm/norm.h"
#include "kernels/pool/pool.h"
#include "kernels/reduce/reduce.h"
#include "kernels/unary/unary.h"

namespace webnn {

KernelTable kernel_table_for(CpuIsa isa) {
  KernelTable t{CpuIsa::kRef,         f32_gemm_4x16_ref(), &elementwise_loops_ref(), &unary_loops_ref(),
                &data_movement_loops_ref(), &reduce_loops_ref(), &norm_loops_ref(), &pool_loops_ref(),
                &depthwise_loops_ref(), int8_kernels_ref()};
#if WEBNN_HAS_AVX2_KERNELS
  if (isa >= CpuIsa::kAvx2 && detected_isa() >= CpuIsa::kAvx2) {
    t.isa = CpuIsa::kAvx2;
    t.gemm_f32 = f32_gemm_6x16_avx2();
    t.elementwise = &elementwise_loops_avx2();
    t.unary = &unary_loops_avx2();
    t.data_movement = &data_movement_loops_avx2();
    t.reduce = &reduce_loops_avx2();
    t.norm = &norm_loops_avx2();
    t.pool = &pool_loops_avx2();
    t.depthwise = &depthwise_loops_avx2();
    t.int8 = int8_kernels_avx2();
  }
#endif
#if WEBNN_HAS_AVX512_KERNELS
  if (isa >= CpuIsa::kAvx512 && detected_isa() >= CpuIsa::kAvx512) {
    t.isa = CpuIsa::kAvx512;
    t.gemm_f32 = f32_gemm_14x32_avx512();
    t.elementwise = &elementwise_loops_avx512();
    t.unary = &unary_loops_avx512();
    t.data_movement = &data_movement_loops_avx512();
    t.reduce = &reduce_loops_avx512();
    t.norm = &norm_loops_avx512();
    t.pool = &pool_loops_avx512();
    t.depthwise = &depthwise_loops_avx512();
    t.int8 = int8_kernels_avx512();
  }
#endif
  // Feature bits, not levels: a forced level also drops the extensions above it.
  [[maybe_unused]] const CpuFeatures& features = active_features();
#if WEBNN_HAS_AVX512_KERNELS
  if (t.isa == CpuIsa::kAvx512 && features.avx512_vnni) t.int8.dot4 = u8s8_gemm_12x32_avx512vnni();
  if (t.isa == CpuIsa::kAvx512 && features.avx512_vbmi) t.int8.lookup = u8_lookup_avx512vbmi;
#endif
#if WEBNN_HAS_AMX_KERNELS
  if (t.isa == CpuIsa::kAvx512 && features.amx_int8) t.int8.dot4 = u8s8_gemm_32x32_amx();
#endif
#if WEBNN_HAS_AVX2_KERNELS
  if (t.isa >= CpuIsa::kAvx2 && !t.int8.dot4.fn && features.avx_vnni) t.int8.dot4 = u8s8_gemm_6x16_avxvnni();
#endif
  return t;
}

const KernelTable& kernel_table() {
  static const KernelTable table = kernel_table_for(active_isa());
  return table;
}

std::string detected_cpu_isa() { return isa_name(detected_isa()); }
std::string active_cpu_isa() { return isa_name(kernel_table().isa); }
std::string gemm_kernel_name() { return kernel_table().gemm_f32.name; }
std::string int8_kernel_name() {
  const Int8Kernels& int8 = kernel_table().int8;
  return int8.dot4.fn ? int8.dot4.name : int8.dot2.name;
}

}  // namespace webnn
