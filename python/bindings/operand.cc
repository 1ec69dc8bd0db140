// MLOperand: an operand of a graph under construction.
#include "convert.h"

namespace py = pybind11;
using namespace webnn;
using namespace webnn_py;

void init_operand(py::module_& m) {
  py::class_<Operand>(m, "MLOperand", "An operand of a graph under construction.")
      .def_property_readonly("data_type", [](const Operand& o) { return data_type_name(o.data_type()); })
      .def_property_readonly("shape", [](const Operand& o) { return descriptor_shape(o.descriptor()); })
      .def("__repr__", [](const Operand& o) {
        return "MLOperand(data_type='" + std::string(data_type_name(o.data_type())) + "', shape=" +
               std::string(py::str(descriptor_shape(o.descriptor()))) + ")";
      });
}
