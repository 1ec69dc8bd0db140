// MLTensor: a tensor owned by a context; exported zero-copy through DLPack.
#include <cstring>

#include "convert.h"
#include "dlpack.h"

namespace py = pybind11;
using namespace webnn;
using namespace webnn_py;

namespace {

// What one export owns: the tensor's bytes (pinned: alive until the consumer calls the deleter) and
// the shape and strides the DLPack tensor points at.
struct Export {
  std::shared_ptr<void> storage;
  std::vector<int64_t> shape, strides;
  dlpack::ManagedTensor legacy{};
  dlpack::ManagedTensorVersioned versioned{};
};

dlpack::DataType dlpack_type(DataType type) {
  switch (storage_type(type)) {
    case DataType::kFloat32: return {dlpack::kFloat, 32, 1};
    case DataType::kFloat16: return {dlpack::kFloat, 16, 1};
    case DataType::kInt64: return {dlpack::kInt, 64, 1};
    case DataType::kUint64: return {dlpack::kUInt, 64, 1};
    case DataType::kInt32: return {dlpack::kInt, 32, 1};
    case DataType::kUint32: return {dlpack::kUInt, 32, 1};
    case DataType::kInt8: return {dlpack::kInt, 8, 1};
    default: return {dlpack::kUInt, 8, 1};  // uint8
  }
}

// `value` as a (major, minor) or (device type, id) pair of integers, else TypeError naming it.
py::tuple int_pair(const py::object& value, const char* name) {
  if (!py::isinstance<py::tuple>(value) || py::len(value) != 2 || !py::isinstance<py::int_>(value[py::int_(0)]) ||
      !py::isinstance<py::int_>(value[py::int_(1)]))
    throw Error(ErrorKind::kTypeError, std::string("__dlpack__: ") + name + " must be a pair of integers, got " +
                                           std::string(py::repr(value)));
  return py::reinterpret_borrow<py::tuple>(value);
}

void check_cpu_device(const py::object& device) {
  if (device.is_none()) return;
  if (!int_pair(device, "dl_device").equal(py::make_tuple(dlpack::kDeviceCpu, 0)))
    throw py::buffer_error("__dlpack__: an MLTensor lives in CPU memory (device (1, 0)), not " +
                           std::string(py::str(device)));
}

template <class Managed>
void fill(Export& e, Managed& managed, void* data, DataType type) {
  managed.manager_ctx = &e;
  managed.dl_tensor = dlpack::Tensor{data,          {dlpack::kDeviceCpu, 0}, int32_t(e.shape.size()), dlpack_type(type),
                                     e.shape.data(), e.strides.data(),        0};
}

// DLPack export of `tensor` (see MLTensor.__dlpack__).
py::capsule export_tensor(const Tensor& tensor, const py::object& stream, const py::object& max_version,
                          const py::object& dl_device, const py::object& copy) {
  if (!stream.is_none()) throw py::buffer_error("__dlpack__: an MLTensor has no streams (CPU memory): pass stream=None");
  check_cpu_device(dl_device);
  const bool versioned = !max_version.is_none() &&
                         PyObject_RichCompareBool(int_pair(max_version, "max_version")[0].ptr(), py::int_(1).ptr(), Py_GE) == 1;
  if (!copy.is_none() && !py::isinstance<py::bool_>(copy))
    throw Error(ErrorKind::kTypeError, "__dlpack__: copy must be True, False or None, got " + std::string(py::repr(copy)));
  const bool copied = !copy.is_none() && py::cast<bool>(copy);
  auto e = std::make_unique<Export>();
  {
    py::gil_scoped_release release;  // waits for the work queued before it
    e->storage = tensor.export_storage();
  }
  const TensorDescriptor& desc = tensor.descriptor();
  if (copied) {  // a copy the consumer owns
    auto bytes = std::make_shared<std::vector<uint8_t>>(desc.byte_length());
    std::memcpy(bytes->data(), e->storage.get(), bytes->size());
    e->storage = std::shared_ptr<void>(bytes, bytes->data());
  }
  int64_t stride = 1;
  e->shape.assign(desc.shape.begin(), desc.shape.end());
  e->strides.assign(desc.shape.size(), 1);
  for (size_t d = desc.shape.size(); d-- > 0;) {
    e->strides[d] = stride;
    stride *= int64_t(desc.shape[d]);
  }
  Export* owner = e.release();
  if (versioned) {
    dlpack::ManagedTensorVersioned& m = owner->versioned;
    m.version = {dlpack::kMajorVersion, dlpack::kMinorVersion};
    m.deleter = [](dlpack::ManagedTensorVersioned* self) { delete static_cast<Export*>(self->manager_ctx); };
    m.flags = desc.writable || copied ? 0 : dlpack::kFlagReadOnly;
    fill(*owner, m, owner->storage.get(), desc.data_type);
    return py::capsule(&m, "dltensor_versioned", [](PyObject* capsule) {
      // Not consumed (still named so): the deleter is ours to call.
      if (PyCapsule_IsValid(capsule, "dltensor_versioned")) {
        auto* m = static_cast<dlpack::ManagedTensorVersioned*>(PyCapsule_GetPointer(capsule, "dltensor_versioned"));
        m->deleter(m);
      }
    });
  }
  dlpack::ManagedTensor& m = owner->legacy;
  m.deleter = [](dlpack::ManagedTensor* self) { delete static_cast<Export*>(self->manager_ctx); };
  fill(*owner, m, owner->storage.get(), desc.data_type);
  return py::capsule(&m, "dltensor", [](PyObject* capsule) {
    if (PyCapsule_IsValid(capsule, "dltensor")) {
      auto* m = static_cast<dlpack::ManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
      m->deleter(m);
    }
  });
}

}  // namespace

void init_tensor(py::module_& m) {
  py::class_<Tensor>(m, "MLTensor", "A tensor owned by an MLContext, read and written on its timeline.")
      .def_property_readonly("data_type", [](const Tensor& t) { return data_type_name(t.descriptor().data_type); })
      .def_property_readonly("shape", [](const Tensor& t) { return shape_list(t.descriptor().shape); })
      .def_property_readonly("readable", &Tensor::readable)
      .def_property_readonly("writable", &Tensor::writable)
      .def_property_readonly("constant", &Tensor::constant)
      .def_property_readonly("destroyed", &Tensor::destroyed)
      .def("destroy", &Tensor::destroy, "Releases the tensor; pending reads reject with InvalidStateError.")
      .def("__dlpack__", &export_tensor, py::kw_only(), py::arg("stream") = py::none(),
           py::arg("max_version") = py::none(), py::arg("dl_device") = py::none(), py::arg("copy") = py::none(),
           "DLPack export (``numpy.from_dlpack(tensor)``, ``torch.from_dlpack(tensor)``): after the work queued "
           "before it, the consumer gets the tensor's own bytes (no copy unless copy=True), pinned until it "
           "releases them, even if the tensor is destroyed meanwhile. Work queued later that writes the tensor "
           "changes what the consumer sees. The tensor must be readable; a tensor that is not writable is "
           "exported read-only (DLPack 1.x). int4/uint4 are exported as the int8/uint8 values they are held in.")
      .def("__dlpack_device__", [](const Tensor&) { return py::make_tuple(dlpack::kDeviceCpu, 0); },
           "(1, 0): CPU memory, device 0.")
      .def("__repr__", [](const Tensor& t) {
        return "MLTensor(data_type='" + std::string(data_type_name(t.descriptor().data_type)) +
               "', shape=" + std::string(py::str(shape_list(t.descriptor().shape))) + ")";
      });
}
