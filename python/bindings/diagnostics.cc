// Bindings for native diagnostics used by the benchmarks and tests (kernels/diagnostics/diagnostics.h, the
// compiled plan).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>

#include "compiler/plan.h"
#include "core/shared_constants.h"
#include "kernels/diagnostics/diagnostics.h"
#include "runtime/objects.h"
#include "webnn/webnn.h"

namespace py = pybind11;

namespace {
std::shared_ptr<webnn::Plan> plan_of(const webnn::Graph& graph) {
  auto plan = webnn::detail::current_plan(*graph.impl());
  if (!plan)
    throw webnn::Error(webnn::ErrorKind::kInvalidStateError,
                       "the graph has dynamic dimensions and no plan has run yet (dispatch it first)");
  return plan;
}
}  // namespace

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
  m.def(
      "plan_steps",
      [](const webnn::Graph& graph) {
        py::list steps;
        if (graph.destroyed()) return steps;
        for (const auto& step : plan_of(graph)->steps) {
          std::string name = step.def->name;
          for (const auto& op : step.fused) name += "+" + op;
          steps.append(name);
        }
        return steps;
      },
      py::arg("graph"),
      "The compiled graph's kernels in run order, each as its op name joined by '+' to the ops fused "
      "into it (for example 'conv2d+add+relu').");
  m.def(
      "plan_passes",
      [](const webnn::Graph& graph) {
        py::list passes;
        if (graph.destroyed()) return passes;
        for (const auto& record : plan_of(graph)->pass_log) passes.append(py::make_tuple(record.pass, record.summary));
        return passes;
      },
      py::arg("graph"), "What each compiler pass did when the graph was built: (pass name, summary) pairs, in order.");
  m.def(
      "shared_constant_stats",
      [] {
        const webnn::SharedConstantStats stats = webnn::shared_constant_stats();
        return py::make_tuple(stats.buffers, stats.bytes);
      },
      "(buffers, bytes) of constant data (packed weights, run-time constants) the process's graphs share: "
      "a model built again, in any context, adds no bytes.");
  m.def("compiler_pass_names", &webnn::compiler_pass_names, "The compiler's passes, in the order they run.");
  m.def(
      "plan_arena_bytes",
      [](const webnn::Graph& graph) -> size_t {
        if (graph.destroyed()) return 0;
        return plan_of(graph)->arena_bytes;
      },
      py::arg("graph"), "The size of the compiled graph's arena for intermediate values, in bytes.");
  m.def(
      "plan_constant_bytes",
      [](const webnn::Graph& graph) -> size_t {
        size_t total = 0;
        if (graph.destroyed()) return total;
        for (const auto& c : plan_of(graph)->constants) total += c->size();
        return total;
      },
      py::arg("graph"),
      "The bytes of raw constants the compiled graph keeps (weights a kernel packed are held only "
      "in its packed form and are not counted).");
  m.def("release_free_memory", &webnn::release_free_memory,
        "Returns freed heap memory to the operating system (glibc's malloc_trim).");
  m.def("fma_peak_isa", [] { return std::string(webnn::fma_peak_loop().isa); },
        "The ISA of the loop measure_fma_peak runs.");
}
