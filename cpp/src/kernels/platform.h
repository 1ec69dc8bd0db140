// The kernel table: per-ISA kernels picked once, at first use, for the active ISA level
// (core/cpu_features.h; WEBNN_CPU_ISA forces a lower level).
#pragma once
#include "core/cpu_features.h"
#include "kernels/gemm_ukernel.h"

namespace webnn {

struct KernelTable {
  CpuIsa isa;
  GemmUkernel gemm_f32;
};

const KernelTable& kernel_table();
// The table for a given level (for tests and benchmarks that compare levels).
KernelTable kernel_table_for(CpuIsa isa);

}  // namespace webnn
