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

namespace {

// A table slot's kernel and the CPU features it needs. A slot takes the first of its candidates
// (best first) whose features the CPU has; the last needs none.
template <class T>
struct Candidate {
  uint32_t needs;
  T (*make)();
};

template <class T, size_t N>
T pick(const CpuFeatures& features, const Candidate<T> (&candidates)[N]) {
  for (const Candidate<T>& c : candidates)
    if (features.has(c.needs)) return c.make();
  return candidates[N - 1].make();
}

// Pointers to a family's loops, as candidates.
template <class Loops, const Loops& (*kLoops)()>
const Loops* loops() {
  return &kLoops();
}

#if WEBNN_HAS_AVX512_KERNELS
#define WEBNN_AVX512(...) {kCpuAvx512, __VA_ARGS__},
#else
#define WEBNN_AVX512(...)
#endif
#if WEBNN_HAS_AVX2_KERNELS
#define WEBNN_AVX2(...) {kCpuAvx2, __VA_ARGS__},
#else
#define WEBNN_AVX2(...)
#endif
// A family's loops at each level, as candidates: `family`_candidates.
#define WEBNN_LOOPS(Loops, family)                                                                  \
  const Candidate<const Loops*> family##_candidates[] = {WEBNN_AVX512(loops<Loops, family##_loops_avx512>) \
                                                             WEBNN_AVX2(loops<Loops, family##_loops_avx2>){ \
                                                                 0, loops<Loops, family##_loops_ref>}}

Int8GemmUkernel no_int8_gemm() { return {}; }

}  // namespace

KernelTable kernel_table_for(CpuIsa isa) {
  const CpuFeatures f = features_for(isa);
  const Candidate<GemmUkernel> gemm[] = {WEBNN_AVX512(f32_gemm_14x32_avx512) WEBNN_AVX2(f32_gemm_6x16_avx2){
      0, f32_gemm_4x16_ref}};
  const Candidate<Int8Kernels> int8[] = {
      WEBNN_AVX512([] { return int8_kernels_avx512(); }) WEBNN_AVX2([] { return int8_kernels_avx2(); }){
          0, [] { return int8_kernels_ref(); }}};
  // The uint8 x int8 dot products: AMX, else AVX-512 VNNI, else AVX-VNNI, else none (int16 only).
  const Candidate<Int8GemmUkernel> dot4[] = {
#if WEBNN_HAS_AMX_KERNELS
      {kCpuAmxInt8, u8s8_gemm_32x32_amx},
#endif
#if WEBNN_HAS_AVX512_KERNELS
      {kCpuAvx512Vnni, u8s8_gemm_12x32_avx512vnni},
#endif
#if WEBNN_HAS_AVX2_KERNELS
      {kCpuAvxVnni, u8s8_gemm_6x16_avxvnni},
#endif
      {0, no_int8_gemm}};
  WEBNN_LOOPS(ElementwiseLoops, elementwise);
  WEBNN_LOOPS(UnaryLoops, unary);
  WEBNN_LOOPS(DataMovementLoops, data_movement);
  WEBNN_LOOPS(ReduceLoops, reduce);
  WEBNN_LOOPS(NormLoops, norm);
  WEBNN_LOOPS(PoolLoops, pool);
  WEBNN_LOOPS(DepthwiseLoops, depthwise);
  KernelTable t{f.has(kCpuAvx512) ? CpuIsa::kAvx512 : f.has(kCpuAvx2) ? CpuIsa::kAvx2 : CpuIsa::kRef,
                pick(f, gemm),
                pick(f, elementwise_candidates),
                pick(f, unary_candidates),
                pick(f, data_movement_candidates),
                pick(f, reduce_candidates),
                pick(f, norm_candidates),
                pick(f, pool_candidates),
                pick(f, depthwise_candidates),
                pick(f, int8)};
  t.int8.dot4 = pick(f, dot4);
#if WEBNN_HAS_AVX512_KERNELS
  if (f.has(kCpuAvx512Vbmi)) t.int8.lookup = u8_lookup_avx512vbmi;
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
std::vector<std::string> cpu_feature_names() { return feature_names(active_features()); }
std::string int8_kernel_name() {
  const Int8Kernels& int8 = kernel_table().int8;
  return int8.dot4.fn ? int8.dot4.name : int8.dot2.name;
}

}  // namespace webnn
