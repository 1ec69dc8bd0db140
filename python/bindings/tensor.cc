// MLTensor: a tensor owned by a context.
#include "convert.h"

namespace py = pybind11;
using namespace webnn;
using namespace webnn_py;

void init_tensor(py::module_& m) {
  py::class_<Tensor>(m, "MLTensor", "A tensor owned by an MLContext, read and written on its timeline.")
      .def_property_readonly("data_type", [](const Tensor& t) { return data_type_name(t.descriptor().data_type); })
      .def_property_readonly("shape", [](const Tensor& t) { return shape_list(t.descriptor().shape); })
      .def_property_readonly("readable", &Tensor::readable)
      .def_property_readonly("writable", &Tensor::writable)
      .def_property_readonly("constant", &Tensor::constant)
      .def_property_readonly("destroyed", &Tensor::destroyed)
      .def("destroy", &Tensor::destroy, "Releases the tensor; pending reads reject with InvalidStateError.")
      .def("__repr__", [](const Tensor& t) {
        return "MLTensor(data_type='" + std::string(data_type_name(t.descriptor().data_type)) +
               "', shape=" + std::string(py::str(shape_list(t.descriptor().shape))) + ")";
      });
}
