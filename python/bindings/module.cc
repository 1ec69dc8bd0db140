// The Python extension: thin conversions around the public C++ API. The GIL is released around
// every wait and every computation; no Python object is touched off the calling thread.
// One file per object: operand.cc, tensor.cc, graph.cc, context.cc, builder.cc; conversions in
// convert.h, asynchronous operations in pending.h.
#include <thread>

#include "convert.h"
#include "pending.h"

namespace py = pybind11;
using namespace webnn;
using namespace webnn_py;

// Each registers its classes or functions on the module, in this order (a class is registered
// before the signatures that name it).
void init_operand(py::module_& m);
void init_tensor(py::module_& m);
void init_graph(py::module_& m);
void init_context(py::module_& m);
void init_builder(py::module_& m);
void init_formats(py::module_& m);      // formats.cc: .webnn models
void init_diagnostics(py::module_& m);  // diagnostics.cc: the compiled plan, benchmark diagnostics
void init_batch(py::module_& m);        // batch.cc: BatchRunner


PYBIND11_MODULE(_core, m) {
  m.doc() = "webnn native core";
  {
    py::module_ errors = py::module_::import("webnn._errors");
    g_error_classes[int(ErrorKind::kTypeError)] = py::module_::import("builtins").attr("TypeError");
    g_error_classes[int(ErrorKind::kDataError)] = errors.attr("DataError");
    g_error_classes[int(ErrorKind::kInvalidStateError)] = errors.attr("InvalidStateError");
    g_error_classes[int(ErrorKind::kNotSupportedError)] = errors.attr("NotSupportedError");
    g_error_classes[int(ErrorKind::kOperationError)] = errors.attr("OperationError");
    g_error_classes[int(ErrorKind::kUnknownError)] = errors.attr("UnknownError");
  }
  numpy_dtype(DataType::kFloat32);  // the dtype table, before any thread can race for it
  completions();
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      raise_error(e);
    }
  });

  m.def("version", &webnn::version);
  m.def("detected_isa", &webnn::detected_cpu_isa,
        "The best CPU ISA level this machine supports: 'ref', 'avx2' or 'avx512'.");
  m.def("active_isa", &webnn::active_cpu_isa,
        "The ISA level kernels run at (WEBNN_CPU_ISA can force a lower one).");
  m.def("gemm_kernel", &webnn::gemm_kernel_name, "The float32 GEMM microkernel in use.");
  m.def("int8_kernel", &webnn::int8_kernel_name,
        "The 8-bit GEMM microkernel in use for filters whose w - zw fit int8 (AMX, VNNI, or 16-bit).");
  m.def("cpu_features", &webnn::cpu_feature_names,
        "The CPU features the kernels were picked by: the active level's ('avx2', 'avx512') and the "
        "extensions it allows ('avx512vnni', 'avxvnni', 'avx512vbmi', 'amx').");
  m.def("completion_wait", [](int64_t timeout_ms) {
    py::gil_scoped_release release;
    return completions().wait(timeout_ms);
  });
  m.def("completion_post", [](uint64_t id) { completions().post(id); });
  m.def("hardware_threads", [] { return int(std::max(1u, std::thread::hardware_concurrency())); });
  m.def("op_infos", [] {
    py::list out;
    for (const OpInfo& info : op_infos()) {
      py::dict d;
      d["name"] = info.name;
      auto params = [](const std::vector<ParamInfo>& ps) {
        py::list l;
        for (const auto& p : ps) {
          py::dict pd;
          pd["name"] = p.name;
          pd["kind"] = p.kind;
          pd["has_default"] = p.has_default;
          pd["default"] = value_to_py(p.default_value);
          pd["enum_values"] = p.enum_values;
          l.append(pd);
        }
        return l;
      };
      d["arguments"] = params(info.arguments);
      d["options"] = params(info.options);
      d["output_count"] = info.output_count;
      py::dict limits;
      for (const auto& [name, l] : info.operands) limits[py::str(name)] = limits_dict(l);
      d["limits"] = limits;
      out.append(d);
    }
    return out;
  });

  py::class_<Pending, std::shared_ptr<Pending>>(m, "Pending")
      .def_property_readonly("id", [](const Pending& p) { return p.id; })
      .def("ready", &Pending::ready)
      .def("arm", &Pending::arm)
      .def("wait", &Pending::wait)
      .def("result", &Pending::result);
  init_operand(m);
  init_tensor(m);
  init_graph(m);
  init_context(m);
  init_builder(m);
  init_formats(m);
  init_diagnostics(m);
  init_batch(m);
}
