// The Python extension: thin conversions around the public C++ API. The GIL is released around
// every wait and every computation; no Python object is touched off the calling thread.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <webnn/webnn.h>

#include <atomic>
#include <climits>
#include <condition_variable>
#include <deque>
#include <mutex>

namespace py = pybind11;
using namespace webnn;

namespace {

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

// A validated view of a caller's buffer: C-contiguous, of `expected` type (or raw bytes).
struct BufferArg {
  py::buffer_info info;
  py::object keep;  // a contiguous copy, when the caller's array was strided
  const void* data() const { return info.ptr; }
  size_t bytes() const { return size_t(info.size) * size_t(info.itemsize); }
};

BufferArg get_buffer(py::handle obj, DataType expected, const char* what, bool writable) {
  if (!PyObject_CheckBuffer(obj.ptr()))
    throw Error(ErrorKind::kTypeError, std::string(what) + ": expected a buffer or numpy array, got " +
                                           std::string(py::str(py::type::handle_of(obj).attr("__name__"))));
  BufferArg arg;
  py::buffer buffer = py::reinterpret_borrow<py::buffer>(obj);
  try {
    arg.info = buffer.request(writable);
  } catch (py::error_already_set& e) {  // read-only memory for an output, object arrays, ...
    throw Error(ErrorKind::kTypeError, std::string(what) + ": unusable buffer: " + e.what());
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

Value to_value_unchecked(py::handle obj, int depth);

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

// ---------------------------------------------------------------- async completions
// Futures settle on the timeline; their callbacks only post an id here. A Python thread waits on
// this queue (GIL released) and resolves asyncio futures with call_soon_threadsafe.
struct CompletionQueue {
  std::mutex mutex;
  std::condition_variable cv;
  std::deque<uint64_t> ids;
  void post(uint64_t id) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      ids.push_back(id);
    }
    cv.notify_one();
  }
  std::vector<uint64_t> wait(int64_t timeout_ms) {
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return !ids.empty(); });
    std::vector<uint64_t> out(ids.begin(), ids.end());
    ids.clear();
    return out;
  }
};
CompletionQueue& completions() {
  static CompletionQueue* q = new CompletionQueue();
  return *q;
}
std::atomic<uint64_t> g_next_pending{1};

// A started asynchronous operation, as seen from Python.
class Pending {
 public:
  virtual ~Pending() = default;
  uint64_t id = g_next_pending++;
  virtual bool ready() const = 0;
  virtual void arm() = 0;  // post `id` to the completion queue once settled
  virtual py::object result() = 0;
  // Waits with the GIL released, helping the context's timeline.
  virtual void wait() = 0;
};

template <class T>
class PendingFuture : public Pending {
 public:
  explicit PendingFuture(Future<T> f, py::object keep = py::none(), std::shared_ptr<void> extra = nullptr)
      : future(std::move(f)), keep_(std::move(keep)), extra_(std::move(extra)) {}
  bool ready() const override { return future.ready(); }
  void arm() override {
    uint64_t my_id = id;
    future.on_ready([my_id] { completions().post(my_id); });
  }
  py::object result() override {
    wait();
    if constexpr (std::is_void_v<T>) {
      future.get();
      return keep_;
    } else {
      return py::cast(future.get());
    }
  }
  void wait() override {
    py::gil_scoped_release release;
    future.wait();
  }
  Future<T> future;

 private:
  py::object keep_;
  std::shared_ptr<void> extra_;
};

// ---------------------------------------------------------------- helpers
py::dict descriptor_dict(const OperandDescriptor& d) {
  py::dict out;
  out["dataType"] = data_type_name(d.data_type);
  out["shape"] = shape_list(d.shape);
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

}  // namespace

void init_formats(py::module_& m);  // formats.cc: .webnn models
void init_diagnostics(py::module_& m);  // diagnostics.cc: benchmark diagnostics

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

  py::class_<Operand>(m, "MLOperand", "An operand of a graph under construction.")
      .def_property_readonly("data_type", [](const Operand& o) { return data_type_name(o.data_type()); })
      .def_property_readonly("shape", [](const Operand& o) { return shape_list(o.shape()); })
      .def("__repr__", [](const Operand& o) {
        return "MLOperand(data_type='" + std::string(data_type_name(o.data_type())) + "', shape=" +
               std::string(py::str(shape_list(o.shape()))) + ")";
      });

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

  py::class_<Graph>(m, "MLGraph", "A compiled graph, dispatched on its context's timeline.", py::dynamic_attr())
      .def_property_readonly("context", &Graph::context)
      .def_property_readonly("input_descriptors",
                             [](const Graph& g) {
                               py::dict d;
                               for (auto& [k, v] : g.input_descriptors()) d[py::str(k)] = descriptor_dict(v);
                               return d;
                             })
      .def_property_readonly("output_descriptors",
                             [](const Graph& g) {
                               py::dict d;
                               for (auto& [k, v] : g.output_descriptors()) d[py::str(k)] = descriptor_dict(v);
                               return d;
                             })
      .def_property_readonly("destroyed", &Graph::destroyed)
      .def("destroy", &Graph::destroy, "Releases the graph; later dispatches raise InvalidStateError.");

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
          "Copies `data` (a numpy array of the tensor's dtype, or raw bytes of its exact size) into the "
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

  py::class_<GraphBuilder>(m, "MLGraphBuilder", "Builds a graph; every call validates at once.")
      .def(py::init<const Context&>(), py::arg("context"))
      .def_property_readonly("context", &GraphBuilder::context)
      .def("_input",
           [](GraphBuilder& b, const std::string& name, const std::string& type, const py::object& shape) {
             return b.input(name, OperandDescriptor{to_data_type(type), to_shape(shape)});
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

  init_formats(m);
  init_diagnostics(m);
}
