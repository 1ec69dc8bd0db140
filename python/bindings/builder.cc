// MLGraphBuilder: inputs, constants, op calls and build.
#include "convert.h"
#include "pending.h"

namespace py = pybind11;
using namespace webnn;
using namespace webnn_py;

void init_builder(py::module_& m) {
  py::class_<GraphBuilder>(m, "MLGraphBuilder", "Builds a graph; every call validates at once.")
      .def(py::init<const Context&>(), py::arg("context"))
      .def_property_readonly("context", &GraphBuilder::context)
      .def("_input",
           [](GraphBuilder& b, const std::string& name, const std::string& type, const py::object& shape) {
             return b.input(name, input_descriptor(type, shape));
           })
      .def("_constant_buffer",
           [](GraphBuilder& b, const std::string& type, const py::object& shape, const py::object& data) {
             OperandDescriptor d{to_data_type(type), to_shape(shape)};
             BufferArg buf = get_buffer(data, d.data_type, "constant", false);
             return b.constant(d, buf.data(), buf.bytes());
           })
      .def("_constant_scalar",
           [](GraphBuilder& b, const std::string& type, const py::object& value) {
             if (PyBool_Check(value.ptr()) || !is_number(value) || PyUnicode_Check(value.ptr()))
               throw Error(ErrorKind::kTypeError, "constant: the value must be a number");
             return b.constant(to_data_type(type), to_number(value));
           })
      .def("_constant_tensor", [](GraphBuilder& b, const Tensor& t) { return b.constant(t); })
      .def("_call",
           [](GraphBuilder& b, const std::string& op, const py::list& args, const py::dict& options,
              const std::string& label) {
             std::vector<Value> values;
             Options opts;
             try {
               for (py::handle a : args) values.push_back(to_value(a));
               for (auto item : options) {
                 std::string key = utf8(item.first, "an option name");
                 try {
                   opts[key] = to_value(item.second);
                 } catch (const Error& e) {
                   throw Error(e.kind(), key + ": " + e.what());
                 }
               }
             } catch (const Error& e) {
               throw Error(e.kind(), (label.empty() ? op : "[" + label + "] " + op) + ": " + e.what());
             }
             return b.call(op, values, opts, label);
           })
      .def("_build_start", [](GraphBuilder& b, const py::dict& outputs) -> std::shared_ptr<Pending> {
        std::map<std::string, Operand> outs;
        for (auto item : outputs) {
          if (!PyUnicode_Check(item.first.ptr())) throw Error(ErrorKind::kTypeError, "build: output names must be strings");
          std::string name = utf8(item.first, "build: an output name");
          if (!py::isinstance<Operand>(item.second))
            throw Error(ErrorKind::kTypeError, "build: output '" + name + "' is not an MLOperand");
          outs[name] = item.second.cast<Operand>();
        }
        return std::make_shared<PendingFuture<Graph>>(b.build_async(outs));
      });
}
