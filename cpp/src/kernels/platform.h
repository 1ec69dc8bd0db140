// The kernel table: each slot's kernel picked once, at first use, by the CPU features it needs
// (core/cpu_features.h: the active level's, and the extensions it allows; WEBNN_CPU_ISA forces a
// lower level, WEBNN_CPU_DISABLE turns extensions off).
#pragma once
#include "core/cpu_features.h"
#include "kernels/gemm/gemm_ukernel.h"
#include "kernels/int8/int8_gemm.h"

namespace webnn {

struct ElementwiseLoops;   // kernels/elementwise/elementwise.h
struct UnaryLoops;         // kernels/unary/unary.h
struct DataMovementLoops;  // kernels/data_movement/data_movement.h
struct ReduceLoops;        // kernels/reduce/reduce.h
struct NormLoops;          // kernels/norm/norm.h
struct PoolLoops;          // kernels/pool/pool.h
struct DepthwiseLoops;     // kernels/depthwise/conv_depthwise.h

struct KernelTable {
  CpuIsa isa;
  GemmUkernel gemm_f32;
  const ElementwiseLoops* elementwise;
  const UnaryLoops* unary;
  const DataMovementLoops* data_movement;
  const ReduceLoops* reduce;
  const NormLoops* norm;
  const PoolLoops* pool;
  const DepthwiseLoops* depthwise;
  // The level's int8 kernels, with the uint8 x int8 dot products of the CPU's best extension for
  // them (AMX, else AVX-512 VNNI, else AVX-VNNI) when it has one.
  Int8Kernels int8;
};

const KernelTable& kernel_table();
// The table for a given level (for tests and benchmarks that compare levels).
KernelTable kernel_table_for(CpuIsa isa);

}  // namespace webnn
