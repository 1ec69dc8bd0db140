// Conversions between Python objects and the C++ API, shared by the binding files.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <webnn/webnn.h>

#include <string>
#include <vector>

namespace webnn_py {

namespace py = pybind11;
using namespace webnn;

// ---- errors: the Python class of each ErrorKind (set at import), and raising one.
extern py::object g_error_classes[6];
void raise_error(const Error& e);

// ---- data types and buffers
DataType storage_type(DataType type);  // int4/uint4 are held one value per int8/uint8 element
py::dtype numpy_dtype(DataType type);
DataType to_data_type(const std::string& name);
bool format_data_type(const std::string& format, size_t itemsize, DataType* out, bool* is_bytes);

// A validated view of a caller's buffer: C-contiguous, of `expected` type (or raw bytes).
struct BufferArg {
  py::buffer_info info;
  py::object keep;  // a contiguous copy of a strided array, or NumPy's view of a DLPack producer
  const void* data() const { return info.ptr; }
  size_t bytes() const { return size_t(info.size) * size_t(info.itemsize); }
};
BufferArg get_buffer(py::handle obj, DataType expected, const char* what, bool writable);
py::array new_array_for(const Tensor& tensor);
// Reads into `destination` (already validated), waiting with the GIL released.
void read_into(Context& ctx, const Tensor& tensor, void* destination, size_t byte_length);

// ---- shapes, strings, numbers and argument values
std::vector<uint32_t> to_shape(const py::handle& shape);
py::list shape_list(const std::vector<uint32_t>& shape);
// A graph input's shape: integers and webnn.DynamicDimension objects (dynamic entries).
OperandDescriptor input_descriptor(const std::string& type, const py::handle& shape);
// A descriptor's shape with its dynamic dimensions as webnn.DynamicDimension objects.
py::list descriptor_shape(const OperandDescriptor& d);
std::string type_name_of(py::handle obj);
std::string take_python_error();
std::string utf8(py::handle s, const std::string& what);
Number to_number(py::handle obj);
bool is_number(py::handle obj);
Value to_value(py::handle obj);
py::object value_to_py(const Value& v);

// ---- descriptors and named tensors
py::dict descriptor_dict(const OperandDescriptor& d);
py::dict limits_dict(const TensorLimits& l);
NamedTensors to_named_tensors(const py::dict& d, const char* what);

}  // namespace webnn_py
