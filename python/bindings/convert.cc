// Conversions between Python objects and the C++ API: errors, data types, buffers, shapes,
// argument values and descriptors.
#include "convert.h"

#include <climits>

namespace py = pybind11;
using namespace webnn;

namespace webnn_py {

namespace {
Value to_value_unchecked(py::handle obj, int depth);
bool is_dynamic_dimension(py::handle item) {
  return !PyIndex_Check(item.ptr()) && py::hasattr(item, "max_size") && py::hasattr(item, "name");
}
}  // namespace

// ---------------------------------------------------------------- errors
py::object g_error_classes[6];

void raise_error(const Error& e) {
  py::object cls = g_error_classes[int(e.kind())];
  PyErr_SetString(cls.ptr(), e.what());
}

// ---------------------------------------------------------------- dtypes and buffers
// NumPy holds int4/uint4 one value per int8/uint8 element.
DataType storage_type(DataType type) {
  if (type == DataType::kInt4) return DataType::kInt8;
  if (type == DataType::kUint4) return DataType::kUint8;
  return type;
}

// One dtype object per DataType, made once (parsing a dtype name costs more than a small read).
// Made at import (PYBIND11_MODULE): making them runs NumPy's Python code, which may hand the GIL
// to another thread, and a second thread entering this static's initializer then would wait for
// it while holding the GIL (a deadlock TSan found with 8 threads making their first calls).
py::dtype numpy_dtype(DataType type) {
  static py::dtype* dtypes = [] {
    auto* out = new py::dtype[kDataTypeCount];  // never freed: outlives the interpreter's teardown
    for (int i = 0; i < kDataTypeCount; ++i) out[i] = py::dtype(data_type_name(storage_type(DataType(i))));
    return out;
  }();
  return dtypes[int(type)];
}

DataType to_data_type(const std::string& name) {
  auto t = parse_data_type(name);
  if (!t) throw Error(ErrorKind::kTypeError, "'" + name + "' is not an MLOperandDataType");
  return *t;
}

// What element type a buffer format describes: returns false for formats no MLOperandDataType has.
bool format_data_type(const std::string& format, size_t itemsize, DataType* out, bool* is_bytes) {
  // One optional native-order prefix, then one type code ("<f", "=i", "l", ...).
  std::string code = format;
  if (!code.empty() && (code[0] == '@' || code[0] == '=' || code[0] == '<')) code.erase(0, 1);
  *is_bytes = false;
  if (code.size() > 1) return false;  // big-endian ('>', '!'), structs, sub-arrays
  char c = code.empty() ? 'B' : code[0];
  *is_bytes = (c == 'B' || c == 'c') && itemsize == 1;
  switch (c) {
    case 'f': if (itemsize == 4) { *out = DataType::kFloat32; return true; } return false;
    case 'e': if (itemsize == 2) { *out = DataType::kFloat16; return true; } return false;
    case 'b': *out = DataType::kInt8; return itemsize == 1;
    case 'B': case 'c': *out = DataType::kUint8; return itemsize == 1;
    case 'i': case 'l': case 'q': case 'n':
      if (itemsize == 4) { *out = DataType::kInt32; return true; }
      if (itemsize == 8) { *out = DataType::kInt64; return true; }
      return false;
    case 'I': case 'L': case 'Q': case 'N':
      if (itemsize == 4) { *out = DataType::kUint32; return true; }
      if (itemsize == 8) { *out = DataType::kUint64; return true; }
      return false;
  }
  return false;
}

BufferArg get_buffer(py::handle obj, DataType expected, const char* what, bool writable) {
  BufferArg arg;
  if (!PyObject_CheckBuffer(obj.ptr()) && py::hasattr(obj, "__dlpack__")) {
    // A DLPack producer without the buffer protocol (a PyTorch CPU tensor, a JAX array): NumPy's view
    // of its memory, no copy.
    try {
      arg.keep = py::module_::import("numpy").attr("from_dlpack")(obj);
    } catch (py::error_already_set& e) {
      throw Error(ErrorKind::kTypeError, std::string(what) + ": the DLPack producer's memory cannot be read as a CPU "
                                                             "array: " + e.what());
    }
    obj = arg.keep;
  }
  if (!PyObject_CheckBuffer(obj.ptr()))
    throw Error(ErrorKind::kTypeError, std::string(what) + ": expected a buffer, numpy array or DLPack tensor, got " +
                                           std::string(py::str(py::type::handle_of(obj).attr("__name__"))));
  py::buffer buffer = py::reinterpret_borrow<py::buffer>(obj);
  try {
    arg.info = buffer.request(writable);
  } catch (py::error_already_set& e) {  // read-only memory for an output, object arrays, ...
    const auto numpy_before = [](const char* version) {
      py::module_ np = py::module_::import("numpy");
      return np.attr("lib").attr("NumpyVersion")(np.attr("__version__")) < py::str(version);
    };
    const bool old_numpy = writable && arg.keep && numpy_before("2.1.0");
    throw Error(ErrorKind::kTypeError, std::string(what) + ": unusable buffer: " + e.what() +
                                           (old_numpy ? " (NumPy before 2.1 imports DLPack memory read-only)" : ""));
  }
  bool contiguous = true;
  py::ssize_t expect = arg.info.itemsize;
  for (py::ssize_t d = arg.info.ndim - 1; d >= 0; --d) {
    if (arg.info.shape[d] != 1 && arg.info.strides[d] != expect) contiguous = false;
    expect *= arg.info.shape[d];
  }
  DataType type;
  bool is_bytes;
  bool known = format_data_type(arg.info.format, size_t(arg.info.itemsize), &type, &is_bytes);
  if (!is_bytes && (!known || type != storage_type(expected)))
    throw Error(ErrorKind::kTypeError,
                std::string(what) + ": the buffer's element type (format '" + arg.info.format + "', " +
                    std::to_string(arg.info.itemsize) + " bytes) does not match " + data_type_name(expected) +
                    (expected != storage_type(expected)
                         ? std::string(" (held as ") + data_type_name(storage_type(expected)) + ")" : ""));
  if (!contiguous) {
    if (writable) throw Error(ErrorKind::kTypeError, std::string(what) + ": the output array must be C-contiguous");
    arg.keep = py::module_::import("numpy").attr("ascontiguousarray")(obj);
    arg.info = py::reinterpret_borrow<py::buffer>(arg.keep).request();
  }
  return arg;
}

std::vector<uint32_t> to_shape(const py::handle& shape) {
  std::vector<uint32_t> out;
  for (py::handle item : py::iter(shape)) {
    if (is_dynamic_dimension(item))
      throw Error(ErrorKind::kTypeError, "dynamic dimensions are only allowed in graph inputs");
    if (PyBool_Check(item.ptr()) || !PyIndex_Check(item.ptr()))
      throw Error(ErrorKind::kTypeError, "a shape must be a sequence of integers");
    py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(item.ptr()));
    long long v = index ? PyLong_AsLongLong(index.ptr()) : -1;
    if (v == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      throw Error(ErrorKind::kTypeError, "a shape dimension is out of range");
    }
    if (v < 0 || v > 4294967295ll) throw Error(ErrorKind::kTypeError, "a shape dimension is out of range");
    out.push_back(uint32_t(v));
  }
  return out;
}

py::list shape_list(const std::vector<uint32_t>& shape) {
  py::list out;
  for (uint32_t d : shape) out.append(d);
  return out;
}


OperandDescriptor input_descriptor(const std::string& type, const py::handle& shape) {
  OperandDescriptor d{to_data_type(type), {}};
  bool dynamic = false;
  std::vector<DynamicDimension> dims;
  py::list plain;
  for (py::handle item : py::iter(shape)) {
    if (!is_dynamic_dimension(item)) {
      plain.append(item);
      dims.push_back({});
      continue;
    }
    dynamic = true;
    py::object name = item.attr("name"), max_size = item.attr("max_size");
    DynamicDimension dim;
    if (!name.is_none()) dim.name = utf8(name, "a dynamic dimension's name");
    dim.max_size = kUnboundedDimension;
    if (!max_size.is_none()) {
      long long v = py::cast<long long>(max_size);
      if (v < 1 || v > (long long)kUnboundedDimension)
        throw Error(ErrorKind::kTypeError, "a dynamic dimension's max_size must be in [1, 2^31-1]");
      dim.max_size = uint32_t(v);
    }
    dims.push_back(dim);
    plain.append(dim.max_size);
  }
  d.shape = to_shape(plain);
  if (dynamic) d.dynamic = std::move(dims);
  return d;
}

py::list descriptor_shape(const OperandDescriptor& d) {
  if (!d.is_dynamic()) return shape_list(d.shape);
  static py::object* cls = new py::object(py::module_::import("webnn._dynamic").attr("DynamicDimension"));
  py::list out;
  for (size_t i = 0; i < d.shape.size(); ++i) {
    const DynamicDimension& dim = d.dynamic[i];
    if (!dim.dynamic()) {
      out.append(d.shape[i]);
      continue;
    }
    out.append((*cls)(dim.name.empty() ? py::none() : py::object(py::str(dim.name)),
                      dim.max_size == kUnboundedDimension ? py::none() : py::object(py::int_(dim.max_size))));
  }
  return out;
}

// ---------------------------------------------------------------- argument conversion
std::string type_name_of(py::handle obj) { return Py_TYPE(obj.ptr())->tp_name; }

// The Python error in flight, cleared, as text ("ValueError: ...").
std::string take_python_error() {
  py::error_already_set e;  // fetches and clears
  return e.what();
}

// A str's UTF-8 bytes; a str that cannot be encoded (a lone surrogate) is a TypeError.
std::string utf8(py::handle s, const std::string& what) {
  if (!PyUnicode_Check(s.ptr())) throw Error(ErrorKind::kTypeError, what + " must be a string, got " + type_name_of(s));
  Py_ssize_t size = 0;
  const char* p = PyUnicode_AsUTF8AndSize(s.ptr(), &size);
  if (!p) {
    PyErr_Clear();
    throw Error(ErrorKind::kTypeError, what + " is not valid Unicode text (it holds a lone surrogate)");
  }
  return std::string(p, size_t(size));
}

Number to_number(py::handle obj) {
  if (PyFloat_Check(obj.ptr())) return Number::from_double(PyFloat_AS_DOUBLE(obj.ptr()));
  if (PyIndex_Check(obj.ptr())) {
    py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(obj.ptr()));
    if (!index)
      throw Error(ErrorKind::kTypeError, "a " + type_name_of(obj) + " could not be read as an integer (" +
                                             take_python_error() + ")");
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
    if (!overflow) return Number::from_int(v);
    if (overflow > 0) {
      unsigned long long u = PyLong_AsUnsignedLongLong(index.ptr());
      if (!PyErr_Occurred()) return Number::from_uint(u);
      PyErr_Clear();
    }
    // Beyond 64 bits: keep the value as a double, infinite beyond its range (conversions
    // saturate or reject it).
    double d = PyLong_AsDouble(index.ptr());
    if (d == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
      d = overflow > 0 ? HUGE_VAL : -HUGE_VAL;
    }
    return Number::from_double(d);
  }
  double d = PyFloat_AsDouble(obj.ptr());
  if (d == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    throw Error(ErrorKind::kTypeError, "expected a number, got " + type_name_of(obj));
  }
  return Number::from_double(d);
}

bool is_number(py::handle obj) {
  return PyFloat_Check(obj.ptr()) || PyIndex_Check(obj.ptr()) || PyNumber_Check(obj.ptr());
}


// An argument or option value. Python errors raised while reading it (a failing __iter__,
// __index__ or tolist) become TypeErrors that say so.
Value to_value(py::handle obj) {
  try {
    return to_value_unchecked(obj, 0);
  } catch (py::error_already_set& e) {
    throw Error(ErrorKind::kTypeError, std::string("a ") + type_name_of(obj) + " argument could not be read (" +
                                           e.what() + ")");
  }
}

namespace {
Value to_value_unchecked(py::handle obj, int depth) {
  if (obj.is_none()) return std::monostate{};
  if (PyBool_Check(obj.ptr())) return obj.ptr() == Py_True;
  if (py::isinstance<Operand>(obj)) return obj.cast<Operand>();
  if (PyUnicode_Check(obj.ptr())) return utf8(obj, "a string argument");
  if (PyFloat_Check(obj.ptr()) || PyLong_Check(obj.ptr())) return to_number(obj);
  if (PySequence_Check(obj.ptr()) || py::hasattr(obj, "__iter__")) {
    // numpy arrays and lists of numbers; a 0-d numpy array is a number. tolist() is followed
    // once: an array whose tolist() gives another array (or itself) is not a value.
    if (py::hasattr(obj, "ndim") && py::hasattr(obj, "tolist")) {
      if (depth > 0)
        throw Error(ErrorKind::kTypeError, "an array holding arrays (" + type_name_of(obj) + ") is not a valid argument");
      py::object as_list = obj.attr("tolist")();
      return to_value_unchecked(as_list, depth + 1);
    }
    py::list items = py::list(py::iter(obj));
    if (items.empty()) return std::vector<Number>{};
    py::handle first = items[0];
    if (py::isinstance<Operand>(first)) {
      std::vector<Operand> ops;
      for (py::handle item : items) {
        if (!py::isinstance<Operand>(item))
          throw Error(ErrorKind::kTypeError, "a sequence mixes MLOperand and other values");
        ops.push_back(item.cast<Operand>());
      }
      return ops;
    }
    if (PyUnicode_Check(first.ptr())) {
      std::vector<std::string> strs;
      for (py::handle item : items) {
        if (!PyUnicode_Check(item.ptr())) throw Error(ErrorKind::kTypeError, "a sequence mixes strings and other values");
        strs.push_back(utf8(item, "a string in a sequence"));
      }
      return strs;
    }
    std::vector<Number> nums;
    for (py::handle item : items) {
      if (is_dynamic_dimension(item)) {  // a shape argument's dynamic entry (reshape, expand)
        py::object name = item.attr("name");
        if (name.is_none()) throw Error(ErrorKind::kTypeError, "a dynamic dimension in a shape needs a name");
        nums.push_back(Number::from_dimension(utf8(name, "a dynamic dimension's name")));
        continue;
      }
      if (PyBool_Check(item.ptr())) {
        nums.push_back(Number::from_int(item.ptr() == Py_True));
        continue;
      }
      if (!is_number(item) || PyUnicode_Check(item.ptr()))
        throw Error(ErrorKind::kTypeError, "expected a sequence of numbers");
      nums.push_back(to_number(item));
    }
    return nums;
  }
  if (is_number(obj)) return to_number(obj);
  throw Error(ErrorKind::kTypeError, "unsupported argument of type " + type_name_of(obj));
}
}  // namespace

py::object value_to_py(const Value& v) {
  struct Visitor {
    py::object operator()(std::monostate) const { return py::none(); }
    py::object operator()(bool b) const { return py::bool_(b); }
    py::object operator()(const Number& n) const {
      if (n.kind == Number::Kind::kFloat) return py::float_(n.f);
      if (n.kind == Number::Kind::kInt) return py::int_(n.i);
      return py::int_(n.u);
    }
    py::object operator()(const std::string& s) const { return py::str(s); }
    py::object operator()(const std::vector<Number>& v) const {
      py::list l;
      for (auto& n : v) l.append((*this)(n));
      return l;
    }
    py::object operator()(const Operand&) const { return py::none(); }
    py::object operator()(const std::vector<Operand>&) const { return py::list(); }
    py::object operator()(const std::vector<std::string>& v) const { return py::cast(v); }
  };
  return std::visit(Visitor{}, v);
}

// ---------------------------------------------------------------- helpers
py::dict descriptor_dict(const OperandDescriptor& d) {
  py::dict out;
  out["dataType"] = data_type_name(d.data_type);
  out["shape"] = descriptor_shape(d);
  return out;
}

py::dict limits_dict(const TensorLimits& l) {
  py::dict out;
  py::list types;
  for (DataType t : l.data_types) types.append(data_type_name(t));
  out["dataTypes"] = types;
  py::dict range;
  range["min"] = l.rank_min;
  range["max"] = l.rank_max;
  out["rankRange"] = range;
  return out;
}

NamedTensors to_named_tensors(const py::dict& d, const char* what) {
  NamedTensors out;
  for (auto item : d) {
    if (!PyUnicode_Check(item.first.ptr()))
      throw Error(ErrorKind::kTypeError, std::string("dispatch: ") + what + " names must be strings");
    std::string name = utf8(item.first, std::string("dispatch: an ") + what + " name");
    if (!py::isinstance<Tensor>(item.second))
      throw Error(ErrorKind::kTypeError, std::string("dispatch: ") + what + " '" + name + "' is not an MLTensor");
    out.emplace(std::move(name), item.second.cast<Tensor>());
  }
  return out;
}

// Reads into `destination` (already validated), waiting with the GIL released.
void read_into(Context& ctx, const Tensor& tensor, void* destination, size_t byte_length) {
  py::gil_scoped_release release;
  ctx.read_tensor_sync(tensor, destination, byte_length);
}

py::array new_array_for(const Tensor& tensor) {
  const auto& d = tensor.descriptor();
  std::vector<py::ssize_t> shape(d.shape.begin(), d.shape.end());
  return py::array(numpy_dtype(d.data_type), shape);
}

}  // namespace webnn_py
