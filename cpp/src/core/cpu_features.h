// CPU feature detection and the ISA level kernels run at.
#pragma once

namespace webnn {

enum class CpuIsa { kRef = 0, kAvx2 = 1, kAvx512 = 2 };

const char* isa_name(CpuIsa isa);
// The best level this CPU and OS support (cpuid + xgetbv), detected once.
CpuIsa detected_isa();
// The level in use: detected_isa(), lowered by WEBNN_CPU_ISA=ref|avx2|avx512 when set. A forced
// level above what the CPU supports falls back to the detected one.
CpuIsa active_isa();

}  // namespace webnn
