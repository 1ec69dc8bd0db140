// BatchRunner (webnn/batch.h): the engine under webnn.BatchRunner (python/webnn/batch.py), which
// prepares the arrays and keeps them alive until their job is done.
#include <webnn/batch.h>

#include <optional>

#include "convert.h"

namespace py = pybind11;
using namespace webnn;
using namespace webnn_py;

namespace {

struct PyBatchRunner {
  std::optional<BatchRunner> runner;

  BatchRunner& get() {
    if (!runner) throw Error(ErrorKind::kInvalidStateError, "batch: the runner is closed");
    return *runner;
  }
};

const void* array_data(const py::handle& value, const OperandDescriptor& d, size_t count, const std::string& what,
                       bool writable) {
  if (!py::isinstance<py::array>(value)) throw Error(ErrorKind::kTypeError, "batch: " + what + " is not a NumPy array");
  auto array = py::reinterpret_borrow<py::array>(value);
  if (!(array.flags() & py::array::c_style)) throw Error(ErrorKind::kTypeError, "batch: " + what + " is not C-contiguous");
  if (writable && !array.writeable()) throw Error(ErrorKind::kTypeError, "batch: " + what + " is read-only");
  if (!array.dtype().is(numpy_dtype(d.data_type)) && !array.dtype().equal(numpy_dtype(d.data_type)))
    throw Error(ErrorKind::kTypeError, "batch: " + what + " is " + std::string(py::str(array.dtype())) + ", expected " +
                                           std::string(py::str(numpy_dtype(d.data_type))));
  const size_t expected = d.byte_length() / d.shape[0] * count;
  if (size_t(array.nbytes()) != expected)
    throw Error(ErrorKind::kTypeError, "batch: " + what + " holds " + std::to_string(array.nbytes()) + " bytes, " +
                                           std::to_string(count) + " items need " + std::to_string(expected));
  return array.data();
}

py::dict descriptors(const std::map<std::string, OperandDescriptor>& m) {
  py::dict d;
  for (const auto& [k, v] : m) d[py::str(k)] = descriptor_dict(v);
  return d;
}

}  // namespace

void init_batch(py::module_& m) {
  m.def(
      "choose_batch_split",
      [](size_t items, uint32_t model_batch, uint32_t batch_size, int workers, int threads_per_worker, int cores) {
        BatchOptions options;
        options.batch_size = batch_size;
        options.workers = workers;
        options.threads_per_worker = threads_per_worker;
        BatchSplit s = choose_batch_split(options, items, model_batch, cores);
        return py::make_tuple(s.batch_size, s.workers, s.threads_per_worker);
      },
      py::arg("items"), py::arg("model_batch"), py::arg("batch_size"), py::arg("workers"),
      py::arg("threads_per_worker"), py::arg("cores"),
      "(batch_size, workers, threads_per_worker) for a run; 0 leaves a choice (and items=0: unknown).");

  py::class_<PyBatchRunner>(m, "BatchRunner", "Batches of one model over several contexts (webnn/batch.h).")
      .def(py::init([](const std::vector<Graph>& graphs) {
             auto r = std::make_unique<PyBatchRunner>();
             r->runner.emplace(graphs);
             return r;
           }),
           py::arg("graphs"))
      .def_property_readonly("batch_size", [](PyBatchRunner& r) { return r.get().batch_size(); })
      .def_property_readonly("workers", [](PyBatchRunner& r) { return r.get().workers(); })
      .def_property_readonly("threads_per_worker", [](PyBatchRunner& r) { return r.get().threads_per_worker(); })
      .def_property_readonly("input_descriptors", [](PyBatchRunner& r) { return descriptors(r.get().input_descriptors()); })
      .def_property_readonly("output_descriptors",
                             [](PyBatchRunner& r) { return descriptors(r.get().output_descriptors()); })
      .def(
          "submit",
          [](PyBatchRunner& r, size_t count, const py::dict& inputs, const py::dict& outputs, size_t first_item) {
            BatchRunner& runner = r.get();
            std::map<std::string, const void*> in;
            std::map<std::string, void*> out;
            for (auto [key, value] : inputs) {
              std::string name = py::str(key);
              auto it = runner.input_descriptors().find(name);
              if (it == runner.input_descriptors().end()) throw Error(ErrorKind::kTypeError, "batch: the model has no input '" + name + "'");
              in[name] = array_data(value, it->second, count, "input '" + name + "'", false);
            }
            for (auto [key, value] : outputs) {
              std::string name = py::str(key);
              auto it = runner.output_descriptors().find(name);
              if (it == runner.output_descriptors().end()) throw Error(ErrorKind::kTypeError, "batch: the model has no output '" + name + "'");
              out[name] = const_cast<void*>(array_data(value, it->second, count, "output '" + name + "'", true));
            }
            return runner.submit(count, in, out, first_item);
          },
          py::arg("count"), py::arg("inputs"), py::arg("outputs"), py::arg("first_item") = SIZE_MAX,
          "Queues `count` items; the arrays must stay alive until wait() reports the job done.")
      .def(
          "wait",
          [](PyBatchRunner& r, uint64_t id, int64_t timeout_ms) {
            BatchRunner& runner = r.get();
            py::gil_scoped_release release;
            return runner.wait(id, timeout_ms);
          },
          py::arg("id"), py::arg("timeout_ms") = -1)
      .def_property_readonly("items_done", [](PyBatchRunner& r) { return r.get().items_done(); })
      .def_property_readonly("items_submitted", [](PyBatchRunner& r) { return r.get().items_submitted(); })
      .def("take_latencies_ms", [](PyBatchRunner& r) { return r.get().take_latencies_ms(); },
           "Milliseconds per batch finished since the last call (taken -> results landed).")
      .def("cancel", [](PyBatchRunner& r, uint64_t id) { r.get().cancel(id); }, py::arg("id") = BatchRunner::kAllJobs,
           "Cancels a job (default: every job); wait() then reports it.")
      .def("close", [](PyBatchRunner& r) {
        std::optional<BatchRunner> closing = std::move(r.runner);
        r.runner.reset();
        py::gil_scoped_release release;
        closing.reset();  // waits for the batches in flight
      });
}
