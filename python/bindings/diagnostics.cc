// Bindings for native diagnostics used by the benchmarks (kernels/diagnostics.h).
#include <pybind11/pybind11.h>

#include <string>

#include "../../cpp/src/kernels/diagnostics.h"

namespace py = pybind11;

void init_diagnostics(py::module_& m) {
  m.def(
      "measure_fma_peak",
      [](long long iterations) {
        if (iterations < 1) throw py::value_error("measure_fma_peak: iterations must be >= 1");
        py::gil_scoped_release release;
        return webnn::measure_fma_peak(uint64_t(iterations));
      },
      py::arg("iterations"),
      "Single-threaded float32 FMA throughput in GFLOP/s: `iterations` passes of independent FMA "
      "chains in the widest vector ISA the CPU has (detected_isa()).");
  m.def("fma_peak_isa", [] { return std::string(webnn::fma_peak_loop().isa); },
        "The ISA of the loop measure_fma_peak runs.");
}
