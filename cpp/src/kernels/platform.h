// The kernel table: per-ISA kernels picked once, at first use, for the active ISA level
// (core/cpu_features.h; WEBNN_CPU_ISA forces a lower level).
#pragma once
#include "core/cpu_features.h"
#include "kernels/gemm/gemm_ukernel.h"

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
};

const KernelTable& kernel_table();
// The table for a given level (for tests and benchmarks that compare levels).
KernelTable kernel_table_for(CpuIsa isa);

}  // namespace webnn
