// MLContext: tensors, reads and writes, dispatch, loss.
#include "convert.h"
#include "pending.h"

namespace py = pybind11;
using namespace webnn;
using namespace webnn_py;

void init_context(py::module_& m) {
  py::class_<Context>(m, "MLContext", "A WebNN context: a timeline, tensors and graphs on the CPU.", py::dynamic_attr())
      .def_static(
          "_create",
          [](const std::string& power_preference, bool accelerated, int num_threads) {
            ContextOptions o;
            o.power_preference = power_preference;
            o.accelerated = accelerated;
            o.num_threads = num_threads;
            return Context::create(o);
          },
          py::arg("power_preference"), py::arg("accelerated"), py::arg("num_threads"))
      .def_property_readonly("accelerated", &Context::accelerated,
                             "False: graphs run on the CPU, not a massively parallel accelerator.")
      .def_property_readonly("power_preference", &Context::power_preference)
      .def_property_readonly("num_threads", &Context::num_threads)
      .def_property_readonly("is_lost", &Context::lost_now)
      .def("_op_support_limits",
           [](const Context& c) {
             SupportLimits l = c.op_support_limits();
             py::dict out;
             out["preferredInputLayout"] = l.preferred_input_layout;
             out["maxTensorByteLength"] = l.max_tensor_byte_length;
             out["input"] = limits_dict(l.input);
             out["constant"] = limits_dict(l.constant);
             out["output"] = limits_dict(l.output);
             for (const auto& op : l.ops) {
               py::dict od;
               for (const auto& [name, tl] : op.operands) od[py::str(name)] = limits_dict(tl);
               out[py::str(op.op)] = od;
             }
             return out;
           })
      .def("_create_tensor",
           [](Context& c, const std::string& type, const py::object& shape, bool readable, bool writable) {
             TensorDescriptor d;
             d.data_type = to_data_type(type);
             d.shape = to_shape(shape);
             d.readable = readable;
             d.writable = writable;
             return c.create_tensor(d);
           })
      .def("_create_constant_tensor",
           [](Context& c, const std::string& type, const py::object& shape, const py::object& data) {
             OperandDescriptor d{to_data_type(type), to_shape(shape)};
             BufferArg b = get_buffer(data, d.data_type, "createConstantTensor", false);
             return c.create_constant_tensor(d, b.data(), b.bytes());
           })
      .def(
          "write_tensor",
          [](Context& c, const Tensor& tensor, const py::object& data) {
            BufferArg b = get_buffer(data, tensor.descriptor().data_type, "writeTensor", false);
            c.write_tensor(tensor, b.data(), b.bytes());
          },
          py::arg("tensor"), py::arg("data"),
          "Copies `data` (a numpy array or DLPack CPU tensor of the tensor's dtype, or raw bytes of its exact "
          "size) into the "
          "tensor, in timeline order. The bytes are copied before this returns.")
      .def(
          "read_tensor",
          [](Context& c, const Tensor& tensor, const py::object& out) -> py::object {
            if (!tensor.impl()) throw Error(ErrorKind::kTypeError, "readTensor: invalid MLTensor");
            if (out.is_none()) {
              py::array array = new_array_for(tensor);
              read_into(c, tensor, array.mutable_data(), size_t(array.nbytes()));
              return std::move(array);
            }
            BufferArg b = get_buffer(out, tensor.descriptor().data_type, "readTensor", true);
            read_into(c, tensor, const_cast<void*>(b.data()), b.bytes());
            return out;
          },
          py::arg("tensor"), py::arg("out") = py::none(),
          "Reads the tensor after all work queued before it. Returns a new numpy array of the tensor's "
          "dtype and shape, or fills and returns `out`.")
      .def("_read_tensor_start",
           [](Context& c, const Tensor& tensor, const py::object& out) -> std::shared_ptr<Pending> {
             if (!tensor.impl()) throw Error(ErrorKind::kTypeError, "readTensor: invalid MLTensor");
             py::object target = out.is_none() ? py::object(new_array_for(tensor)) : out;
             auto b = std::make_shared<BufferArg>(get_buffer(target, tensor.descriptor().data_type, "readTensor", true));
             Future<void> f = c.read_tensor(tensor, const_cast<void*>(b->data()), b->bytes());
             // The converter holds the array (and its buffer view) until the Python side drops it.
             // The pending object holds the array and its buffer view until Python drops it.
             return std::make_shared<PendingFuture<void>>(f, target, b);
           })
      .def(
          "dispatch",
          [](Context& c, const Graph& graph, const py::dict& inputs, const py::dict& outputs) {
            c.dispatch(graph, to_named_tensors(inputs, "input"), to_named_tensors(outputs, "output"));
          },
          py::arg("graph"), py::arg("inputs"), py::arg("outputs"),
          "Validates the call now and queues the graph's execution on the context's timeline.")
      .def("destroy", &Context::destroy, "Loses the context: graphs and tensors are destroyed, pending reads reject.")
      .def("_lost_start", [](Context& c) -> std::shared_ptr<Pending> {
        return std::make_shared<PendingFuture<std::string>>(c.lost());
      })
      .def("_lost_message", [](Context& c) -> py::object {
        Future<std::string> f = c.lost();
        if (!f.ready()) return py::none();
        return py::str(f.get());
      });
}
