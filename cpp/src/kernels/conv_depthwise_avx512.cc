// The depthwise row loops compiled with this file's ISA flags (see CMakeLists.txt).
#include "kernels/conv_depthwise.h"

#if defined(__x86_64__) || defined(_M_X64)
namespace webnn {
namespace avx512 {
#include "kernels/conv_depthwise_impl.h"
}  // namespace avx512
}  // namespace webnn
#endif
